//! The token cursor shared by the module parser ([`crate::module`]) and the body parser
//! ([`crate::body`]): the one [`Lexer`] plus the kind of its current token, and the small
//! token tests and positioned errors both grammars are written in.
//!
//! Only the kind of the current token is kept here; its extent is read from the lexer on
//! demand, so the hot loop never copies token structs around (copying a value right after its
//! fields were stored one by one stalls store forwarding). The fields are open to the parsers
//! so that their fast paths can move the lexer themselves (`seek`, `set_scanned_lbrace`).

use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::lexer::{LexError, LexErrorKind, Lexer, Punct, TokenKind, parse_int};

/// Errors are boxed inside the parsers so that the success path moves only small values.
pub(crate) type PResult<T> = Result<T, Box<ParseError>>;

/// The current token of a [`Lexer`] over `src`.
#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    /// The whole source; offsets and errors are absolute in it.
    pub(crate) src: &'a str,
    pub(crate) lexer: Lexer<'a>,
    /// Kind of the current token; `None` at the end of input (and before the first
    /// [`Cursor::advance`]).
    pub(crate) kind: Option<TokenKind>,
}

impl<'a> Cursor<'a> {
    /// A cursor over `lexer`, which reads `src`; no token is current yet.
    pub(crate) fn new(src: &'a str, lexer: Lexer<'a>) -> Self {
        Self {
            src,
            lexer,
            kind: None,
        }
    }

    /// Moves to the next token.
    #[inline]
    pub(crate) fn advance(&mut self) -> PResult<()> {
        match self.lexer.next_kind() {
            Ok(kind) => {
                self.kind = kind;
                Ok(())
            }
            Err(kind) => Err(self.lex_error(kind)),
        }
    }

    /// Text of the current token.
    #[inline]
    pub(crate) fn text(&self) -> &'a str {
        self.lexer.scanned_text()
    }

    /// Byte offset of the current token.
    #[inline]
    pub(crate) fn start(&self) -> usize {
        self.lexer.scanned_start()
    }

    #[inline]
    pub(crate) fn at_punct(&self, punct: Punct) -> bool {
        self.kind == Some(TokenKind::Punct(punct))
    }

    #[inline]
    pub(crate) fn at_directive(&self, name: &str) -> bool {
        self.kind == Some(TokenKind::Directive) && self.text() == name
    }

    /// Moves past the current token if it is `punct`; says whether it was.
    #[inline]
    pub(crate) fn eat_punct(&mut self, punct: Punct) -> PResult<bool> {
        if self.at_punct(punct) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Moves past the current token, which must be `punct`.
    pub(crate) fn expect_punct(&mut self, punct: Punct, expected: &'static str) -> PResult<()> {
        if self.at_punct(punct) {
            self.advance()
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// The current token, which must be an identifier, and moves past it.
    pub(crate) fn ident(&mut self, expected: &'static str) -> PResult<&'a str> {
        if self.kind != Some(TokenKind::Ident) {
            return Err(self.unexpected(expected));
        }
        let name = self.text();
        self.advance()?;
        Ok(name)
    }

    /// The current token, which must be an integer that fits a `u32`, and moves past it.
    pub(crate) fn u32_value(&mut self, expected: &'static str) -> PResult<u32> {
        if self.kind != Some(TokenKind::Int) {
            return Err(self.unexpected(expected));
        }
        let value = parse_int(self.text())
            .and_then(|value| u32::try_from(value).ok())
            .ok_or_else(|| self.bad_number())?;
        self.advance()?;
        Ok(value)
    }

    /// An error of `kind` at `offset`.
    #[cold]
    pub(crate) fn error(&self, offset: usize, kind: ParseErrorKind) -> Box<ParseError> {
        Box::new(ParseError::new(self.src, offset, kind))
    }

    /// The current token is not what the grammar requires.
    #[cold]
    pub(crate) fn unexpected(&self, expected: &'static str) -> Box<ParseError> {
        match self.kind {
            None => self.error(self.start(), ParseErrorKind::UnexpectedEof { expected }),
            Some(_) => {
                let found = excerpt(self.text());
                self.error(
                    self.start(),
                    ParseErrorKind::UnexpectedToken { expected, found },
                )
            }
        }
    }

    /// The current token is a number that does not parse or does not fit.
    #[cold]
    pub(crate) fn bad_number(&self) -> Box<ParseError> {
        let text = excerpt(self.text());
        self.error(self.start(), ParseErrorKind::BadNumber { text })
    }

    /// The lexer failed on the token it just scanned.
    #[cold]
    fn lex_error(&self, kind: LexErrorKind) -> Box<ParseError> {
        let range = self.lexer.scanned_range();
        let error = LexError {
            offset: range.start,
            len: range.len(),
            kind,
        };
        Box::new(ParseError::from_lex(self.src, error))
    }
}
