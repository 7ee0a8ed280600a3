//! The module parser: header directives, `.entry`/`.func` signatures, and body extents.
//!
//! Signatures go through the lexer token by token; bodies and other braced blocks are skipped
//! by [`crate::skip`] and only their byte ranges are kept, so a large module costs little more
//! than a byte scan. Module-level directives the model does not describe (variables, `.file`,
//! `.section`, …) are skipped to their end.

use std::ops::Range;

use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::lexer::{Lexer, Punct, TokenKind};
use crate::model::{
    Entry, Function, Linkage, Module, Param, PerfDirective, PtrAttr, ScalarType, StateSpace,
    Target, Version,
};
use crate::skip::{Unterminated, skip_block};

/// Parses a PTX module's header, entries and functions.
///
/// Fails with a positioned [`ParseError`] on malformed signatures, unterminated blocks, comments
/// or strings, and when `.version` or `.target` is missing. Never panics.
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    Parser::new(src).module().map_err(|error| *error)
}

/// Errors are boxed inside the parser so that the success path moves only small values.
type PResult<T> = Result<T, Box<ParseError>>;

/// Directives that begin a top-level construct; skipping an unknown statement stops before one,
/// so a statement missing its `;` cannot swallow the next kernel.
fn starts_top_level(directive: &str) -> bool {
    matches!(
        directive,
        ".entry"
            | ".func"
            | ".visible"
            | ".weak"
            | ".extern"
            | ".version"
            | ".target"
            | ".address_size"
    )
}

/// Recursive descent over one current token: its kind is kept here and its extent is read from
/// the lexer on demand, so the hot loop never copies token structs around (copying a value
/// right after its fields were stored one by one stalls store forwarding).
struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    /// Kind of the current token; `None` at the end of input.
    kind: Option<TokenKind>,
    /// Parameters are gathered here and then moved into an exactly sized `Vec`, which saves the
    /// regrowth of a fresh `Vec` per signature.
    scratch: Vec<Param>,
}

/// What follows a parameter list: performance directives and a body or `;`.
struct Trailer {
    directives: Vec<PerfDirective>,
    body: Option<Range<usize>>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            lexer: Lexer::new(src),
            kind: None,
            scratch: Vec::new(),
        }
    }

    fn module(mut self) -> PResult<Module> {
        let mut version = None;
        let mut target = None;
        let mut address_size = None;
        let mut entries = Vec::new();
        let mut functions = Vec::new();
        let mut linkage = Linkage::Default;
        self.advance()?;
        while let Some(kind) = self.kind {
            if kind != TokenKind::Directive {
                return Err(self.unexpected("a module-level directive"));
            }
            let directive = self.start();
            match self.text() {
                ".visible" | ".weak" | ".extern" => {
                    linkage = match self.text() {
                        ".visible" => Linkage::Visible,
                        ".weak" => Linkage::Weak,
                        _ => Linkage::Extern,
                    };
                    self.advance()?;
                    continue;
                }
                ".version" => {
                    self.advance()?;
                    let parsed = self.version()?;
                    self.set_once(&mut version, parsed, directive, ".version")?;
                }
                ".target" => {
                    self.advance()?;
                    let parsed = self.target(directive)?;
                    self.set_once(&mut target, parsed, directive, ".target")?;
                }
                ".address_size" => {
                    self.advance()?;
                    let parsed = self.address_size()?;
                    self.set_once(&mut address_size, parsed, directive, ".address_size")?;
                }
                ".entry" => {
                    self.advance()?;
                    entries.push(self.entry(directive, linkage)?);
                }
                ".func" => {
                    self.advance()?;
                    functions.push(self.function(directive, linkage)?);
                }
                // These end at the line's end, not at a `;`.
                ".file" | ".loc" => self.skip_line()?,
                _ => {
                    self.advance()?;
                    self.skip_statement()?;
                }
            }
            linkage = Linkage::Default;
        }
        let version = version.ok_or_else(|| self.error(0, ParseErrorKind::MissingVersion))?;
        let target = target.ok_or_else(|| self.error(0, ParseErrorKind::MissingTarget))?;
        Ok(Module {
            version,
            target,
            address_size,
            entries,
            functions,
        })
    }

    fn version(&mut self) -> PResult<Version> {
        const EXPECTED: &str = "a version number MAJOR.MINOR after .version";
        if self.kind != Some(TokenKind::Float) {
            return Err(self.unexpected(EXPECTED));
        }
        let parsed = self.text().split_once('.').and_then(|(major, minor)| {
            let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !all_digits(major) || !all_digits(minor) {
                return None;
            }
            Some(Version {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        });
        let version = parsed.ok_or_else(|| self.bad_number())?;
        self.advance()?;
        self.eat_punct(Punct::Semi)?;
        Ok(version)
    }

    fn target(&mut self, directive: usize) -> PResult<Target> {
        const EXPECTED: &str = "an architecture or modifier in .target";
        let mut arch: Option<String> = None;
        let mut modifiers = Vec::new();
        loop {
            if self.kind != Some(TokenKind::Ident) {
                return Err(self.unexpected(EXPECTED));
            }
            let item = self.text();
            if item.starts_with("sm_") || item.starts_with("compute_") {
                let item_start = self.start();
                self.set_once(
                    &mut arch,
                    item.to_owned(),
                    item_start,
                    "architecture in .target",
                )?;
            } else {
                modifiers.push(item.to_owned());
            }
            self.advance()?;
            if !self.eat_punct(Punct::Comma)? {
                break;
            }
        }
        self.eat_punct(Punct::Semi)?;
        let arch = arch.ok_or_else(|| self.error(directive, ParseErrorKind::MissingTargetArch))?;
        Ok(Target { arch, modifiers })
    }

    fn address_size(&mut self) -> PResult<u32> {
        const EXPECTED: &str = "32 or 64 after .address_size";
        if self.kind != Some(TokenKind::Int) {
            return Err(self.unexpected(EXPECTED));
        }
        let value = crate::lexer::parse_int(self.text()).ok_or_else(|| self.bad_number())?;
        let size = match value {
            32 => 32,
            64 => 64,
            other => return Err(self.error(self.start(), ParseErrorKind::BadAddressSize(other))),
        };
        self.advance()?;
        self.eat_punct(Punct::Semi)?;
        Ok(size)
    }

    fn entry(&mut self, directive: usize, linkage: Linkage) -> PResult<Entry> {
        let name = self.ident("an entry name after .entry")?;
        let params = self.optional_param_list()?;
        let Trailer { directives, body } = self.trailer()?;
        Ok(Entry {
            name,
            linkage,
            params,
            directives,
            body,
            offset: directive,
        })
    }

    fn function(&mut self, directive: usize, linkage: Linkage) -> PResult<Function> {
        let returns = self.optional_param_list()?;
        let name = self.ident("a function name after .func")?;
        let params = self.optional_param_list()?;
        // Performance directives on a function are tolerated but not part of the model.
        let Trailer { body, .. } = self.trailer()?;
        Ok(Function {
            name,
            linkage,
            returns,
            params,
            body,
            offset: directive,
        })
    }

    /// `( param, … )` if the current token is `(`; otherwise no parameters.
    fn optional_param_list(&mut self) -> PResult<Vec<Param>> {
        if !self.eat_punct(Punct::LParen)? {
            return Ok(Vec::new());
        }
        if self.eat_punct(Punct::RParen)? {
            return Ok(Vec::new());
        }
        self.scratch.clear();
        loop {
            let param = self.param()?;
            self.scratch.push(param);
            if self.eat_punct(Punct::RParen)? {
                return Ok(self.scratch.drain(..).collect());
            }
            self.expect_punct(Punct::Comma, "`,` or `)` after a parameter")?;
        }
    }

    fn param(&mut self) -> PResult<Param> {
        if !self.at_directive(".param") {
            return Err(self.unexpected("`.param`"));
        }
        let directive = self.start();
        self.advance()?;
        let mut ty = None;
        let mut align = None;
        let mut ptr: Option<PtrAttr> = None;
        while self.kind == Some(TokenKind::Directive) {
            let text = self.text();
            match (text, &mut ptr) {
                (".align", _) => {
                    self.advance()?;
                    let value = Some(self.u32_value("an alignment")?);
                    match &mut ptr {
                        Some(ptr) => ptr.align = value,
                        None => align = value,
                    }
                    continue;
                }
                (".ptr", None) => {
                    ptr = Some(PtrAttr {
                        space: None,
                        align: None,
                    });
                }
                (
                    _,
                    Some(PtrAttr {
                        space: space @ None,
                        ..
                    }),
                ) if StateSpace::from_directive(text).is_some() => {
                    *space = StateSpace::from_directive(text);
                }
                _ => match ScalarType::from_directive(text) {
                    Some(parsed) if parsed != ScalarType::Pred && ty.is_none() => ty = Some(parsed),
                    Some(_) if ty.is_some() => return Err(self.unexpected("a parameter name")),
                    _ => {
                        let found = excerpt(text);
                        let kind = ParseErrorKind::UnknownParamType { found };
                        return Err(self.error(self.start(), kind));
                    }
                },
            }
            self.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("a parameter type"));
        };
        let name = self.ident("a parameter name")?;
        let array_len = if self.eat_punct(Punct::LBracket)? {
            let len = self.u32_value("an array length")?;
            self.expect_punct(Punct::RBracket, "`]` after the array length")?;
            Some(len)
        } else {
            None
        };
        Ok(Param {
            name,
            ty,
            align,
            array_len,
            ptr,
            offset: directive,
        })
    }

    /// Performance directives, then a `{ body }` or a `;`.
    fn trailer(&mut self) -> PResult<Trailer> {
        const EXPECTED: &str = "a body `{`, `;` or a performance directive";
        let mut directives = Vec::new();
        loop {
            match self.kind {
                Some(TokenKind::Punct(Punct::LBrace)) => {
                    let body = self.skip_block()?;
                    return Ok(Trailer {
                        directives,
                        body: Some(body),
                    });
                }
                Some(TokenKind::Punct(Punct::Semi)) => {
                    self.advance()?;
                    return Ok(Trailer {
                        directives,
                        body: None,
                    });
                }
                Some(TokenKind::Directive) => {
                    let directive = self.text();
                    self.advance()?;
                    match directive {
                        ".maxntid" => directives.push(PerfDirective::MaxNtid(self.dims()?)),
                        ".reqntid" => directives.push(PerfDirective::ReqNtid(self.dims()?)),
                        ".minnctapersm" => {
                            let n = self.u32_value("a count after .minnctapersm")?;
                            directives.push(PerfDirective::MinNctaPerSm(n));
                        }
                        ".maxnreg" => {
                            let n = self.u32_value("a count after .maxnreg")?;
                            directives.push(PerfDirective::MaxNreg(n));
                        }
                        ".pragma" => self.skip_pragma()?,
                        // `.noreturn`, `.explicitcluster`, `.maxclusterrank n`,
                        // `.reqnctapercluster x, y, z`, and directives newer than this parser.
                        _ => self.skip_numbers()?,
                    }
                }
                _ => return Err(self.unexpected(EXPECTED)),
            }
        }
    }

    /// `x[, y[, z]]` of `.maxntid`/`.reqntid`.
    fn dims(&mut self) -> PResult<Vec<u32>> {
        let mut dims = Vec::with_capacity(3);
        dims.push(self.u32_value("a thread count")?);
        while self.at_punct(Punct::Comma) {
            if dims.len() == 3 {
                return Err(self.unexpected("at most three dimensions"));
            }
            self.advance()?;
            dims.push(self.u32_value("a thread count")?);
        }
        Ok(dims)
    }

    /// `.pragma "a", "b";` — the strings and the `;`.
    fn skip_pragma(&mut self) -> PResult<()> {
        loop {
            match self.kind {
                Some(TokenKind::Str | TokenKind::Punct(Punct::Comma)) => self.advance()?,
                Some(TokenKind::Punct(Punct::Semi)) => return self.advance(),
                _ => return Err(self.unexpected("`;` after .pragma")),
            }
        }
    }

    fn skip_numbers(&mut self) -> PResult<()> {
        while matches!(
            self.kind,
            Some(TokenKind::Int | TokenKind::Punct(Punct::Comma))
        ) {
            self.advance()?;
        }
        Ok(())
    }

    /// Skips an unknown module-level statement after its directive: through its `;`, through
    /// its block (`.section .x { … }`), or through `= { … };` for an initialized variable.
    fn skip_statement(&mut self) -> PResult<()> {
        let mut initializer = false;
        while let Some(kind) = self.kind {
            match kind {
                TokenKind::Directive if starts_top_level(self.text()) => return Ok(()),
                TokenKind::Punct(Punct::Semi) => return self.advance(),
                TokenKind::Punct(Punct::LBrace) => {
                    self.skip_block()?;
                    if !initializer {
                        return Ok(());
                    }
                }
                TokenKind::Punct(Punct::Eq) => {
                    initializer = true;
                    self.advance()?;
                }
                _ => self.advance()?,
            }
        }
        Ok(())
    }

    /// Skips the current directive through the end of its line.
    fn skip_line(&mut self) -> PResult<()> {
        let rest = self
            .src
            .as_bytes()
            .get(self.lexer.scanned_end()..)
            .unwrap_or_default();
        let line_end =
            memchr::memchr(b'\n', rest).map_or(self.src.len(), |i| self.lexer.scanned_end() + i);
        self.lexer.seek(line_end);
        self.advance()
    }

    /// Skips the block whose `{` is the current token; returns its interior byte range.
    fn skip_block(&mut self) -> PResult<Range<usize>> {
        let open = self.start();
        let end = skip_block(self.src.as_bytes(), open).map_err(|error| match error {
            Unterminated::Block(at) => self.error(at, ParseErrorKind::UnterminatedBlock),
            Unterminated::Comment(at) => self.error(at, ParseErrorKind::UnterminatedComment),
            Unterminated::String(at) => self.error(at, ParseErrorKind::UnterminatedString),
        })?;
        self.lexer.seek(end);
        self.advance()?;
        Ok(open + 1..end.saturating_sub(1).max(open + 1))
    }

    fn ident(&mut self, expected: &'static str) -> PResult<String> {
        if self.kind != Some(TokenKind::Ident) {
            return Err(self.unexpected(expected));
        }
        let name = self.text().to_owned();
        self.advance()?;
        Ok(name)
    }

    fn u32_value(&mut self, expected: &'static str) -> PResult<u32> {
        if self.kind != Some(TokenKind::Int) {
            return Err(self.unexpected(expected));
        }
        let value = crate::lexer::parse_int(self.text())
            .and_then(|value| u32::try_from(value).ok())
            .ok_or_else(|| self.bad_number())?;
        self.advance()?;
        Ok(value)
    }

    /// Moves to the next token.
    #[inline]
    fn advance(&mut self) -> PResult<()> {
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
    fn text(&self) -> &'a str {
        self.lexer.scanned_text()
    }

    /// Byte offset of the current token.
    #[inline]
    fn start(&self) -> usize {
        self.lexer.scanned_start()
    }

    #[inline]
    fn at_punct(&self, punct: Punct) -> bool {
        self.kind == Some(TokenKind::Punct(punct))
    }

    #[inline]
    fn at_directive(&self, name: &str) -> bool {
        self.kind == Some(TokenKind::Directive) && self.text() == name
    }

    #[inline]
    fn eat_punct(&mut self, punct: Punct) -> PResult<bool> {
        if self.at_punct(punct) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect_punct(&mut self, punct: Punct, expected: &'static str) -> PResult<()> {
        if self.at_punct(punct) {
            self.advance()
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Stores a header value, refusing a second occurrence.
    fn set_once<T>(
        &self,
        slot: &mut Option<T>,
        value: T,
        offset: usize,
        directive: &'static str,
    ) -> PResult<()> {
        if slot.is_some() {
            return Err(self.error(offset, ParseErrorKind::Duplicate { directive }));
        }
        *slot = Some(value);
        Ok(())
    }

    #[cold]
    fn error(&self, offset: usize, kind: ParseErrorKind) -> Box<ParseError> {
        Box::new(ParseError::new(self.src, offset, kind))
    }

    /// The current token is not what the grammar requires.
    #[cold]
    fn unexpected(&self, expected: &'static str) -> Box<ParseError> {
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

    #[cold]
    fn bad_number(&self) -> Box<ParseError> {
        let text = excerpt(self.text());
        self.error(self.start(), ParseErrorKind::BadNumber { text })
    }

    #[cold]
    fn lex_error(&self, kind: crate::lexer::LexErrorKind) -> Box<ParseError> {
        let range = self.lexer.scanned_range();
        let error = crate::lexer::LexError {
            offset: range.start,
            len: range.len(),
            kind,
        };
        Box::new(ParseError::from_lex(self.src, error))
    }
}
