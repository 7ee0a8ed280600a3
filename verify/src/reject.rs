//! Why a body was not proven safe, naming the first offending PTX line.

use std::fmt;

/// The kind of a violation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectKind {
    /// A store or atomic through an input pointer.
    StoreThroughInput,
    /// An address not derived from exactly one pointer parameter.
    UnattributedAddress,
    /// An access that may fall outside its operand.
    OutOfBounds,
    /// An access whose size is not one element (or one vector).
    WrongWidth,
    /// An access whose offset is not a multiple of its width.
    Misaligned,
    /// A strided access whose axis is paired with another axis's (or operand's) stride.
    CrossedStride,
    /// An address computed from loaded data or a runtime value parameter.
    DataDependentIndex,
    /// Index arithmetic that may wrap, with no launch condition that rules it out.
    MayWrap,
    /// Something the verifier does not model.
    Unsupported,
    /// An instruction with an opcode or modifier the typed instruction model does not know:
    /// the interpreter refuses it with the same words.
    UnknownForm,
}

impl RejectKind {
    /// The snake_case name used in manifests.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::StoreThroughInput => "store_through_input",
            Self::UnattributedAddress => "unattributed_address",
            Self::OutOfBounds => "out_of_bounds",
            Self::WrongWidth => "wrong_width",
            Self::Misaligned => "misaligned",
            Self::CrossedStride => "crossed_stride",
            Self::DataDependentIndex => "data_dependent_index",
            Self::MayWrap => "may_wrap",
            Self::Unsupported => "unsupported",
            Self::UnknownForm => "unknown_form",
        }
    }
}

impl fmt::Display for RejectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A body the verifier could not prove safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// 1-based line of the first violating instruction (0 when no line applies).
    pub line: u32,
    /// That line's text, trimmed.
    pub instruction: String,
    /// What is wrong.
    pub kind: RejectKind,
    /// Why, in words.
    pub reason: String,
}

impl Rejection {
    /// The rejection of a body that does not parse or resolve: the verifier cannot read it.
    pub fn unparsed(error: &jitseam_ptx::ParseError) -> Self {
        Self {
            line: error.line,
            instruction: String::new(),
            kind: RejectKind::Unsupported,
            reason: format!("the module does not parse: {error}"),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: `{}`: {} ({})",
            self.line, self.instruction, self.reason, self.kind
        )
    }
}

impl std::error::Error for Rejection {}
