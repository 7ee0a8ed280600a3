//! The module parser: header directives, `.entry`/`.func` signatures, and body extents.
//!
//! Signatures go through the lexer token by token; bodies and other braced blocks are skipped
//! by [`crate::skip`] and only their byte ranges are kept, so a large module costs little more
//! than a byte scan. Module-level directives the model does not describe (variables, `.file`,
//! `.section`, …) are skipped to their end.

use std::ops::Range;

use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::lexer::{Lexer, Punct, Token, TokenKind};
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
    Parser::new(src).module()
}

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

struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    peeked: Option<Token<'a>>,
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
            peeked: None,
        }
    }

    fn module(mut self) -> Result<Module, ParseError> {
        let mut version = None;
        let mut target = None;
        let mut address_size = None;
        let mut entries = Vec::new();
        let mut functions = Vec::new();
        let mut linkage = Linkage::Default;
        while let Some(token) = self.bump()? {
            if token.kind != TokenKind::Directive {
                return Err(self.unexpected(token, "a module-level directive"));
            }
            match token.text {
                ".visible" | ".weak" | ".extern" => {
                    linkage = match token.text {
                        ".visible" => Linkage::Visible,
                        ".weak" => Linkage::Weak,
                        _ => Linkage::Extern,
                    };
                    continue;
                }
                ".version" => {
                    let parsed = self.version()?;
                    set_once(&mut version, parsed, self.src, token, ".version")?;
                }
                ".target" => {
                    let parsed = self.target(token)?;
                    set_once(&mut target, parsed, self.src, token, ".target")?;
                }
                ".address_size" => {
                    let parsed = self.address_size()?;
                    set_once(&mut address_size, parsed, self.src, token, ".address_size")?;
                }
                ".entry" => entries.push(self.entry(token, linkage)?),
                ".func" => functions.push(self.function(token, linkage)?),
                // These end at the line's end, not at a `;`.
                ".file" | ".loc" => self.skip_line(token),
                _ => self.skip_statement()?,
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

    fn version(&mut self) -> Result<Version, ParseError> {
        const EXPECTED: &str = "a version number MAJOR.MINOR after .version";
        let token = self.expect(EXPECTED)?;
        if token.kind != TokenKind::Float {
            return Err(self.unexpected(token, EXPECTED));
        }
        let parsed = token.text.split_once('.').and_then(|(major, minor)| {
            let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !all_digits(major) || !all_digits(minor) {
                return None;
            }
            Some(Version {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        });
        let version = parsed.ok_or_else(|| self.bad_number(token))?;
        self.eat_punct(Punct::Semi)?;
        Ok(version)
    }

    fn target(&mut self, directive: Token<'a>) -> Result<Target, ParseError> {
        let mut arch: Option<String> = None;
        let mut modifiers = Vec::new();
        loop {
            let token = self.expect("an architecture or modifier in .target")?;
            if token.kind != TokenKind::Ident {
                return Err(self.unexpected(token, "an architecture or modifier in .target"));
            }
            if token.text.starts_with("sm_") || token.text.starts_with("compute_") {
                let name = token.text.to_owned();
                set_once(&mut arch, name, self.src, token, "architecture in .target")?;
            } else {
                modifiers.push(token.text.to_owned());
            }
            if !self.eat_punct(Punct::Comma)? {
                break;
            }
        }
        self.eat_punct(Punct::Semi)?;
        let arch =
            arch.ok_or_else(|| self.error(directive.offset, ParseErrorKind::MissingTargetArch))?;
        Ok(Target { arch, modifiers })
    }

    fn address_size(&mut self) -> Result<u32, ParseError> {
        const EXPECTED: &str = "32 or 64 after .address_size";
        let token = self.expect(EXPECTED)?;
        if token.kind != TokenKind::Int {
            return Err(self.unexpected(token, EXPECTED));
        }
        let value = token.int_value().ok_or_else(|| self.bad_number(token))?;
        let size = match value {
            32 => 32,
            64 => 64,
            other => return Err(self.error(token.offset, ParseErrorKind::BadAddressSize(other))),
        };
        self.eat_punct(Punct::Semi)?;
        Ok(size)
    }

    fn entry(&mut self, directive: Token<'a>, linkage: Linkage) -> Result<Entry, ParseError> {
        let name = self.ident("an entry name after .entry")?;
        let params = if self.eat_punct(Punct::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        let Trailer { directives, body } = self.trailer()?;
        Ok(Entry {
            name,
            linkage,
            params,
            directives,
            body,
            offset: directive.offset,
        })
    }

    fn function(&mut self, directive: Token<'a>, linkage: Linkage) -> Result<Function, ParseError> {
        let returns = if self.eat_punct(Punct::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        let name = self.ident("a function name after .func")?;
        let params = if self.eat_punct(Punct::LParen)? {
            self.param_list()?
        } else {
            Vec::new()
        };
        // Performance directives on a function are tolerated but not part of the model.
        let Trailer { body, .. } = self.trailer()?;
        Ok(Function {
            name,
            linkage,
            returns,
            params,
            body,
            offset: directive.offset,
        })
    }

    /// Parses the parameters after an opening `(`, through the closing `)`.
    fn param_list(&mut self) -> Result<Vec<Param>, ParseError> {
        let mut params = Vec::new();
        if self.eat_punct(Punct::RParen)? {
            return Ok(params);
        }
        loop {
            params.push(self.param()?);
            let token = self.expect("`,` or `)` after a parameter")?;
            match token.kind {
                TokenKind::Punct(Punct::Comma) => {}
                TokenKind::Punct(Punct::RParen) => return Ok(params),
                _ => return Err(self.unexpected(token, "`,` or `)` after a parameter")),
            }
        }
    }

    fn param(&mut self) -> Result<Param, ParseError> {
        let directive = self.expect("`.param`")?;
        if !directive.is_directive(".param") {
            return Err(self.unexpected(directive, "`.param`"));
        }
        let mut ty = None;
        let mut align = None;
        let mut ptr: Option<PtrAttr> = None;
        loop {
            let token = self.expect("a parameter type")?;
            if token.kind == TokenKind::Ident {
                self.peeked = Some(token);
                break;
            }
            if token.kind != TokenKind::Directive {
                let expected = if ty.is_some() {
                    "a parameter name"
                } else {
                    "a parameter type"
                };
                return Err(self.unexpected(token, expected));
            }
            match (token.text, &mut ptr) {
                (".align", Some(ptr)) => ptr.align = Some(self.u32_value("an alignment")?),
                (".align", None) => align = Some(self.u32_value("an alignment")?),
                (".ptr", None) => {
                    ptr = Some(PtrAttr {
                        space: None,
                        align: None,
                    });
                }
                (text, Some(ptr))
                    if ptr.space.is_none() && StateSpace::from_directive(text).is_some() =>
                {
                    ptr.space = StateSpace::from_directive(text);
                }
                (text, _) => match ScalarType::from_directive(text) {
                    Some(parsed) if parsed != ScalarType::Pred && ty.is_none() => ty = Some(parsed),
                    Some(_) if ty.is_some() => {
                        return Err(self.unexpected(token, "a parameter name"));
                    }
                    _ => {
                        let found = excerpt(text);
                        return Err(
                            self.error(token.offset, ParseErrorKind::UnknownParamType { found })
                        );
                    }
                },
            }
        }
        let name_token = self.expect("a parameter name")?;
        let Some(ty) = ty else {
            return Err(self.unexpected(name_token, "a parameter type before the parameter name"));
        };
        let array_len = if self.eat_punct(Punct::LBracket)? {
            let len = self.u32_value("an array length")?;
            self.expect_punct(Punct::RBracket, "`]` after the array length")?;
            Some(len)
        } else {
            None
        };
        Ok(Param {
            name: name_token.text.to_owned(),
            ty,
            align,
            array_len,
            ptr,
            offset: directive.offset,
        })
    }

    /// Performance directives, then a `{ body }` or a `;`.
    fn trailer(&mut self) -> Result<Trailer, ParseError> {
        const EXPECTED: &str = "a body `{`, `;` or a performance directive";
        let mut directives = Vec::new();
        loop {
            let token = self.expect(EXPECTED)?;
            match token.kind {
                TokenKind::Punct(Punct::LBrace) => {
                    let body = self.skip_block(token)?;
                    return Ok(Trailer {
                        directives,
                        body: Some(body),
                    });
                }
                TokenKind::Punct(Punct::Semi) => {
                    return Ok(Trailer {
                        directives,
                        body: None,
                    });
                }
                TokenKind::Directive => match token.text {
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
                },
                _ => return Err(self.unexpected(token, EXPECTED)),
            }
        }
    }

    /// `x[, y[, z]]` of `.maxntid`/`.reqntid`.
    fn dims(&mut self) -> Result<Vec<u32>, ParseError> {
        let mut dims = vec![self.u32_value("a thread count")?];
        while let Some(comma) = self.peek()?.filter(|t| t.is_punct(Punct::Comma)) {
            if dims.len() == 3 {
                return Err(self.unexpected(comma, "at most three dimensions"));
            }
            self.peeked = None;
            dims.push(self.u32_value("a thread count")?);
        }
        Ok(dims)
    }

    /// `.pragma "a", "b";` — the strings and the `;`.
    fn skip_pragma(&mut self) -> Result<(), ParseError> {
        loop {
            let token = self.expect("`;` after .pragma")?;
            match token.kind {
                TokenKind::Str | TokenKind::Punct(Punct::Comma) => {}
                TokenKind::Punct(Punct::Semi) => return Ok(()),
                _ => return Err(self.unexpected(token, "`;` after .pragma")),
            }
        }
    }

    fn skip_numbers(&mut self) -> Result<(), ParseError> {
        while self
            .peek()?
            .is_some_and(|t| matches!(t.kind, TokenKind::Int | TokenKind::Punct(Punct::Comma)))
        {
            self.peeked = None;
        }
        Ok(())
    }

    /// Skips an unknown module-level statement after its directive: through its `;`, through
    /// its block (`.section .x { … }`), or through `= { … };` for an initialized variable.
    fn skip_statement(&mut self) -> Result<(), ParseError> {
        let mut initializer = false;
        while let Some(token) = self.peek()? {
            match token.kind {
                TokenKind::Directive if starts_top_level(token.text) => return Ok(()),
                TokenKind::Punct(Punct::Semi) => {
                    self.peeked = None;
                    return Ok(());
                }
                TokenKind::Punct(Punct::LBrace) => {
                    self.peeked = None;
                    self.skip_block(token)?;
                    if !initializer {
                        return Ok(());
                    }
                }
                TokenKind::Punct(Punct::Eq) => {
                    initializer = true;
                    self.peeked = None;
                }
                _ => self.peeked = None,
            }
        }
        Ok(())
    }

    fn skip_line(&mut self, directive: Token<'a>) {
        let rest = self
            .src
            .as_bytes()
            .get(directive.end()..)
            .unwrap_or_default();
        let end = memchr::memchr(b'\n', rest).map_or(self.src.len(), |i| directive.end() + i);
        self.peeked = None;
        self.lexer.seek(end);
    }

    /// Skips the block opened by `open` (already consumed); returns its interior byte range.
    fn skip_block(&mut self, open: Token<'a>) -> Result<Range<usize>, ParseError> {
        let end = skip_block(self.src.as_bytes(), open.offset).map_err(|error| match error {
            Unterminated::Block(at) => self.error(at, ParseErrorKind::UnterminatedBlock),
            Unterminated::Comment(at) => self.error(at, ParseErrorKind::UnterminatedComment),
            Unterminated::String(at) => self.error(at, ParseErrorKind::UnterminatedString),
        })?;
        self.peeked = None;
        self.lexer.seek(end);
        Ok(open.end()..end.saturating_sub(1).max(open.end()))
    }

    fn ident(&mut self, expected: &'static str) -> Result<String, ParseError> {
        let token = self.expect(expected)?;
        if token.kind != TokenKind::Ident {
            return Err(self.unexpected(token, expected));
        }
        Ok(token.text.to_owned())
    }

    fn u32_value(&mut self, expected: &'static str) -> Result<u32, ParseError> {
        let token = self.expect(expected)?;
        if token.kind != TokenKind::Int {
            return Err(self.unexpected(token, expected));
        }
        token
            .int_value()
            .and_then(|value| u32::try_from(value).ok())
            .ok_or_else(|| self.bad_number(token))
    }

    fn peek(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        if self.peeked.is_none() {
            self.peeked = self.lex()?;
        }
        Ok(self.peeked)
    }

    fn bump(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        match self.peeked.take() {
            Some(token) => Ok(Some(token)),
            None => self.lex(),
        }
    }

    fn lex(&mut self) -> Result<Option<Token<'a>>, ParseError> {
        match self.lexer.next_token() {
            None => Ok(None),
            Some(Ok(token)) => Ok(Some(token)),
            Some(Err(error)) => Err(ParseError::from_lex(self.src, error)),
        }
    }

    fn expect(&mut self, expected: &'static str) -> Result<Token<'a>, ParseError> {
        self.bump()?
            .ok_or_else(|| self.error(self.src.len(), ParseErrorKind::UnexpectedEof { expected }))
    }

    fn expect_punct(
        &mut self,
        punct: Punct,
        expected: &'static str,
    ) -> Result<Token<'a>, ParseError> {
        let token = self.expect(expected)?;
        if token.is_punct(punct) {
            Ok(token)
        } else {
            Err(self.unexpected(token, expected))
        }
    }

    fn eat_punct(&mut self, punct: Punct) -> Result<bool, ParseError> {
        let matched = self.peek()?.is_some_and(|t| t.is_punct(punct));
        if matched {
            self.peeked = None;
        }
        Ok(matched)
    }

    fn error(&self, offset: usize, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.src, offset, kind)
    }

    fn unexpected(&self, token: Token<'a>, expected: &'static str) -> ParseError {
        let found = excerpt(token.text);
        self.error(
            token.offset,
            ParseErrorKind::UnexpectedToken { expected, found },
        )
    }

    fn bad_number(&self, token: Token<'a>) -> ParseError {
        let text = excerpt(token.text);
        self.error(token.offset, ParseErrorKind::BadNumber { text })
    }
}

/// Stores a header value, refusing a second occurrence.
fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    src: &str,
    token: Token<'_>,
    directive: &'static str,
) -> Result<(), ParseError> {
    if slot.is_some() {
        return Err(ParseError::new(
            src,
            token.offset,
            ParseErrorKind::Duplicate { directive },
        ));
    }
    *slot = Some(value);
    Ok(())
}
