//! The module parser's failure vocabulary.

use thiserror::Error;

use crate::lexer::{LexError, LexErrorKind};
use crate::line_index::line_col;

/// A module that could not be parsed, with the position of the problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {col}: {kind}")]
pub struct ParseError {
    /// Byte offset of the problem in the parsed source.
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: u32,
    /// 1-based column (in characters) of `offset`.
    pub col: u32,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    /// Builds an error at `offset` of `src`; the line and column are computed here, only on
    /// failure, so successful parses never count lines.
    pub fn new(src: &str, offset: usize, kind: ParseErrorKind) -> Self {
        let (line, col) = line_col(src, offset);
        Self {
            offset,
            line,
            col,
            kind,
        }
    }

    pub(crate) fn from_lex(src: &str, error: LexError) -> Self {
        let kind = match error.kind {
            LexErrorKind::UnexpectedChar(ch) => ParseErrorKind::UnexpectedChar(ch),
            LexErrorKind::UnterminatedComment => ParseErrorKind::UnterminatedComment,
            LexErrorKind::UnterminatedString => ParseErrorKind::UnterminatedString,
            LexErrorKind::BadNumber => ParseErrorKind::BadNumber {
                text: excerpt(
                    src.get(error.offset..error.offset + error.len)
                        .unwrap_or(""),
                ),
            },
        };
        Self::new(src, error.offset, kind)
    }
}

/// What went wrong while parsing a module.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A token other than the one the grammar requires here.
    #[error("expected {expected}, found `{found}`")]
    UnexpectedToken {
        /// What the grammar required, e.g. "`;` after .version".
        expected: &'static str,
        /// The offending token's text (shortened when long).
        found: String,
    },
    /// The input ended where the grammar required more.
    #[error("expected {expected}, found end of input")]
    UnexpectedEof {
        /// What the grammar required.
        expected: &'static str,
    },
    /// A `{` without a matching `}` (the error points at the `{`).
    #[error("unterminated block: `{{` is never closed")]
    UnterminatedBlock,
    /// A `/*` without a matching `*/`.
    #[error("unterminated block comment")]
    UnterminatedComment,
    /// A `"` without a closing quote.
    #[error("unterminated string")]
    UnterminatedString,
    /// A character that starts no PTX token.
    #[error("unexpected character `{0}`")]
    UnexpectedChar(char),
    /// A malformed numeric literal, or one too large for its place.
    #[error("malformed number `{text}`")]
    BadNumber {
        /// The literal's text.
        text: String,
    },
    /// A `.param` whose type is not a PTX scalar type usable as a parameter.
    #[error("unknown parameter type `{found}`")]
    UnknownParamType {
        /// The directive found where the type belongs.
        found: String,
    },
    /// `.address_size` other than 32 or 64.
    #[error("invalid .address_size {0}, expected 32 or 64")]
    BadAddressSize(u64),
    /// A `.target` list that names no `sm_*` or `compute_*` architecture.
    #[error(".target names no architecture (sm_* or compute_*)")]
    MissingTargetArch,
    /// A header directive given twice (`.version`, `.target`, `.address_size`, or two
    /// architectures in one `.target`).
    #[error("duplicate {directive}")]
    Duplicate {
        /// The repeated directive.
        directive: &'static str,
    },
    /// The module has no `.version` directive.
    #[error("missing .version directive")]
    MissingVersion,
    /// The module has no `.target` directive.
    #[error("missing .target directive")]
    MissingTarget,
    /// A body names a register, parameter, label or function that is not declared.
    #[error("`{name}` is not declared")]
    Undeclared {
        /// The name.
        name: String,
    },
    /// A well-tokenized instruction whose operands do not fit its opcode.
    #[error("invalid instruction `{instruction}`: {reason}")]
    InvalidInstruction {
        /// The instruction's opcode with modifiers.
        instruction: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A label defined twice in one function.
    #[error("label `{name}` is defined twice")]
    DuplicateLabel {
        /// The label.
        name: String,
    },
    /// Operands or initializers nested deeper than any PTX form nests them.
    #[error("nested more than {limit} levels deep")]
    NestedTooDeep {
        /// The deepest nesting read.
        limit: usize,
    },
    /// A body that declares more registers than any compiler emits.
    #[error("more than {limit} registers in one body")]
    TooManyRegisters {
        /// The most registers a body may declare.
        limit: u64,
    },
    /// The named entry does not exist in the module.
    #[error("no entry `{name}` in the module")]
    NoSuchEntry {
        /// The entry looked for.
        name: String,
    },
}

/// Shortens token text quoted in a message so one huge token cannot flood a diagnostic.
pub fn excerpt(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    let mut chars = text.chars();
    let mut short: String = chars.by_ref().take(MAX_CHARS).collect();
    if chars.next().is_some() {
        short.push('…');
    }
    short
}
