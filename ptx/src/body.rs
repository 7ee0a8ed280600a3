//! The body parser: the statements between an entry's or function's braces.
//!
//! It reads the byte range [`crate::parse_module`] recorded for a body with the one
//! [`Lexer`] (via [`Lexer::with_range`], so offsets stay absolute) and yields a flat list of
//! [`Statement`]s: labels, `.reg`/`.param` declarations (ranges like `%r<8>` included), scope
//! braces, and instructions with their guard predicate, modifiers and operands. It knows nothing
//! of what an instruction means; [`crate::decode`] does.

use std::ops::Range;

use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::lexer::{FloatValue, LexError, Lexer, Punct, TokenKind, parse_float, parse_int};
use crate::model::ScalarType;

/// One statement of a body.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement<'a> {
    /// `{`: a nested scope opens (call sequences, inline-asm blocks).
    Open {
        /// Byte offset of the brace.
        offset: usize,
    },
    /// `}`: the innermost scope closes.
    Close {
        /// Byte offset of the brace.
        offset: usize,
    },
    /// `name:`.
    Label {
        /// The label.
        name: &'a str,
        /// Byte offset of the label.
        offset: usize,
    },
    /// `.reg .ty a, b<4>, c;`.
    Reg {
        /// The register type.
        ty: ScalarType,
        /// `.v2`/`.v4` vector registers (which the interpreter does not support).
        vector: Option<u8>,
        /// The names declared; `count` is `Some(n)` for a range `name<n>` (`name0..name{n-1}`).
        names: Vec<RegName<'a>>,
        /// Byte offset of `.reg`.
        offset: usize,
    },
    /// `.param [.align A] .ty name[[N]];` inside a body (call sequences).
    Param {
        /// Element type.
        ty: ScalarType,
        /// Alignment, when written.
        align: Option<u32>,
        /// The name.
        name: &'a str,
        /// Array length, when written.
        array_len: Option<u32>,
        /// Byte offset of `.param`.
        offset: usize,
    },
    /// Another directive statement (`.local`, `.shared`, `.global`, `.const`, …), kept by name
    /// so that the interpreter can refuse it precisely.
    Directive {
        /// The directive, including its dot.
        name: &'a str,
        /// Byte offset of the directive.
        offset: usize,
        /// Byte range of the whole statement.
        range: Range<usize>,
    },
    /// An instruction.
    Instruction(Instruction<'a>),
}

/// A name declared by `.reg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegName<'a> {
    /// The name, or the prefix of a range.
    pub name: &'a str,
    /// `Some(n)` for `name<n>`.
    pub count: Option<u32>,
}

/// `@%p` or `@!%p` before an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'a> {
    /// The predicate register.
    pub pred: &'a str,
    /// `@!%p`.
    pub negated: bool,
}

/// One instruction: `[@guard] opcode.mod.mod operand, …;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction<'a> {
    /// The guard predicate, if any.
    pub guard: Option<Guard<'a>>,
    /// The opcode without modifiers (`ld`).
    pub opcode: &'a str,
    /// The modifiers in order, each with its dot (`.global`, `.nc`, `.f32`).
    pub modifiers: Vec<&'a str>,
    /// The operands in order.
    pub operands: Vec<Operand<'a>>,
    /// Byte range from the guard (or opcode) through the `;`.
    pub range: Range<usize>,
}

impl Instruction<'_> {
    /// The opcode with its modifiers, as written (`ld.global.nc.f32`).
    pub fn full_opcode(&self) -> String {
        let mut text = self.opcode.to_owned();
        for modifier in &self.modifiers {
            text.push_str(modifier);
        }
        text
    }
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand<'a> {
    /// A register, label, function or parameter name; `_` is the sink.
    Name(&'a str),
    /// `%tid.x` and friends: the name and the component (0 = x, 1 = y, 2 = z).
    Special(&'a str, u8),
    /// `!%p`: a negated predicate.
    Not(&'a str),
    /// `%p|%q`: the two destinations of `setp`.
    PredPair(&'a str, &'a str),
    /// An integer immediate (a leading `-` already applied, two's complement).
    Int(u64),
    /// A float immediate (a leading `-` already applied).
    Float(FloatValue),
    /// `[base+offset]`, `[base]` or `[imm]`.
    Address {
        /// The base register or symbol; `None` for an absolute address.
        base: Option<&'a str>,
        /// The byte offset (or the absolute address).
        offset: i64,
    },
    /// `{a, b, c, d}`.
    Vector(Vec<Operand<'a>>),
    /// `(a, b)` in a call.
    List(Vec<Operand<'a>>),
}

/// Parses the body whose contents span `range` of `src` (as recorded by `parse_module`).
pub fn parse_body(src: &str, range: Range<usize>) -> Result<Vec<Statement<'_>>, ParseError> {
    BodyParser::new(src, range).statements()
}

type BResult<T> = Result<T, Box<ParseError>>;

struct BodyParser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    kind: Option<TokenKind>,
}

impl<'a> BodyParser<'a> {
    fn new(src: &'a str, range: Range<usize>) -> Self {
        Self {
            src,
            lexer: Lexer::with_range(src, range),
            kind: None,
        }
    }

    fn statements(mut self) -> Result<Vec<Statement<'a>>, ParseError> {
        self.run().map_err(|e| *e)
    }

    fn run(&mut self) -> BResult<Vec<Statement<'a>>> {
        let mut out = Vec::new();
        self.advance()?;
        while let Some(kind) = self.kind {
            let offset = self.start();
            match kind {
                TokenKind::Punct(Punct::LBrace) => {
                    out.push(Statement::Open { offset });
                    self.advance()?;
                }
                TokenKind::Punct(Punct::RBrace) => {
                    out.push(Statement::Close { offset });
                    self.advance()?;
                }
                TokenKind::Punct(Punct::Semi) => self.advance()?,
                TokenKind::Directive => {
                    if let Some(statement) = self.directive()? {
                        out.push(statement);
                    }
                }
                TokenKind::Ident => {
                    let name = self.text();
                    self.advance()?;
                    if self.at_punct(Punct::Colon) {
                        self.advance()?;
                        out.push(Statement::Label { name, offset });
                    } else {
                        let instruction = self.instruction(None, name, offset)?;
                        out.push(Statement::Instruction(instruction));
                    }
                }
                TokenKind::Punct(Punct::At) => {
                    self.advance()?;
                    let negated = self.eat_punct(Punct::Bang)?;
                    let pred = self.name("a predicate register after `@`")?;
                    let opcode = self.name("an opcode after the guard")?;
                    let guard = Some(Guard { pred, negated });
                    out.push(Statement::Instruction(
                        self.instruction(guard, opcode, offset)?,
                    ));
                }
                _ => return Err(self.unexpected("an instruction, label or declaration")),
            }
        }
        Ok(out)
    }

    fn directive(&mut self) -> BResult<Option<Statement<'a>>> {
        let offset = self.start();
        let name = self.text();
        self.advance()?;
        match name {
            ".reg" => self.reg(offset).map(Some),
            ".param" => self.param(offset).map(Some),
            ".pragma" => {
                while !self.at_punct(Punct::Semi) && self.kind.is_some() {
                    self.advance()?;
                }
                self.eat_punct(Punct::Semi)?;
                Ok(None)
            }
            ".loc" | ".file" => {
                self.skip_line();
                self.advance()?;
                Ok(None)
            }
            _ => {
                let mut depth = 0usize;
                let mut end = self.start();
                while let Some(kind) = self.kind {
                    match kind {
                        TokenKind::Punct(Punct::LBrace) => depth += 1,
                        TokenKind::Punct(Punct::RBrace) if depth > 0 => depth -= 1,
                        TokenKind::Punct(Punct::RBrace) => break,
                        TokenKind::Punct(Punct::Semi) if depth == 0 => {
                            end = self.lexer.scanned_end();
                            self.advance()?;
                            break;
                        }
                        _ => {}
                    }
                    end = self.lexer.scanned_end();
                    self.advance()?;
                }
                Ok(Some(Statement::Directive {
                    name,
                    offset,
                    range: offset..end,
                }))
            }
        }
    }

    fn skip_line(&mut self) {
        let from = self.lexer.scanned_start();
        let rest = self.src.as_bytes().get(from..).unwrap_or_default();
        let end = memchr::memchr(b'\n', rest).map_or(self.src.len(), |i| from + i);
        self.lexer.seek(end);
    }

    fn reg(&mut self, offset: usize) -> BResult<Statement<'a>> {
        let mut vector = None;
        let mut ty = None;
        while self.kind == Some(TokenKind::Directive) {
            match self.text() {
                ".v2" => vector = Some(2),
                ".v4" => vector = Some(4),
                ".v8" => vector = Some(8),
                text => match ScalarType::from_directive(text) {
                    Some(parsed) if ty.is_none() => ty = Some(parsed),
                    _ => return Err(self.unexpected("a register type")),
                },
            }
            self.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("a register type after .reg"));
        };
        let mut names = Vec::new();
        loop {
            let name = self.name("a register name")?;
            let count = if self.eat_punct(Punct::Lt)? {
                let n = self.u32_value("a register count")?;
                self.expect_punct(Punct::Gt, "`>` after the register count")?;
                Some(n)
            } else {
                None
            };
            names.push(RegName { name, count });
            if !self.eat_punct(Punct::Comma)? {
                break;
            }
        }
        self.expect_punct(Punct::Semi, "`;` after .reg")?;
        Ok(Statement::Reg {
            ty,
            vector,
            names,
            offset,
        })
    }

    fn param(&mut self, offset: usize) -> BResult<Statement<'a>> {
        let mut align = None;
        let mut ty = None;
        while self.kind == Some(TokenKind::Directive) {
            if self.text() == ".align" {
                self.advance()?;
                align = Some(self.u32_value("an alignment")?);
                continue;
            }
            match ScalarType::from_directive(self.text()) {
                Some(parsed) if ty.is_none() => ty = Some(parsed),
                _ => return Err(self.unexpected("a parameter type")),
            }
            self.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("a parameter type after .param"));
        };
        let name = self.name("a parameter name")?;
        let array_len = if self.eat_punct(Punct::LBracket)? {
            let n = self.u32_value("an array length")?;
            self.expect_punct(Punct::RBracket, "`]` after the array length")?;
            Some(n)
        } else {
            None
        };
        self.expect_punct(Punct::Semi, "`;` after .param")?;
        Ok(Statement::Param {
            ty,
            align,
            name,
            array_len,
            offset,
        })
    }

    fn instruction(
        &mut self,
        guard: Option<Guard<'a>>,
        opcode: &'a str,
        start: usize,
    ) -> BResult<Instruction<'a>> {
        let mut modifiers = Vec::new();
        while self.kind == Some(TokenKind::Directive) {
            modifiers.push(self.text());
            self.advance()?;
        }
        let mut operands = Vec::new();
        if !self.at_punct(Punct::Semi) {
            loop {
                operands.push(self.operand()?);
                if !self.eat_punct(Punct::Comma)? {
                    break;
                }
            }
        }
        if !self.at_punct(Punct::Semi) {
            return Err(self.unexpected("`,` or `;` after an operand"));
        }
        let end = self.lexer.scanned_end();
        self.advance()?;
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            range: start..end,
        })
    }

    fn operand(&mut self) -> BResult<Operand<'a>> {
        match self.kind {
            Some(TokenKind::Ident) => {
                let name = self.text();
                let end = self.lexer.scanned_end();
                self.advance()?;
                // `%tid.x`: the component is glued to the name.
                if self.kind == Some(TokenKind::Directive) && self.start() == end {
                    let dim = match self.text() {
                        ".x" => 0,
                        ".y" => 1,
                        ".z" => 2,
                        _ => return Err(self.unexpected("`.x`, `.y` or `.z`")),
                    };
                    self.advance()?;
                    return Ok(Operand::Special(name, dim));
                }
                if self.at_punct(Punct::Pipe) {
                    self.advance()?;
                    let second = self.name("a predicate after `|`")?;
                    return Ok(Operand::PredPair(name, second));
                }
                Ok(Operand::Name(name))
            }
            Some(TokenKind::Punct(Punct::Bang)) => {
                self.advance()?;
                Ok(Operand::Not(self.name("a predicate after `!`")?))
            }
            Some(TokenKind::Punct(Punct::Minus)) => {
                self.advance()?;
                match self.number()? {
                    Operand::Int(v) => Ok(Operand::Int(v.wrapping_neg())),
                    Operand::Float(FloatValue::F32(f)) => Ok(Operand::Float(FloatValue::F32(-f))),
                    Operand::Float(FloatValue::F64(f)) => Ok(Operand::Float(FloatValue::F64(-f))),
                    _ => Err(self.unexpected("a number after `-`")),
                }
            }
            Some(TokenKind::Int | TokenKind::Float) => self.number(),
            Some(TokenKind::Punct(Punct::LBracket)) => {
                self.advance()?;
                self.address()
            }
            Some(TokenKind::Punct(Punct::LBrace)) => {
                self.advance()?;
                let items = self.items(Punct::RBrace)?;
                Ok(Operand::Vector(items))
            }
            Some(TokenKind::Punct(Punct::LParen)) => {
                self.advance()?;
                let items = self.items(Punct::RParen)?;
                Ok(Operand::List(items))
            }
            _ => Err(self.unexpected("an operand")),
        }
    }

    fn items(&mut self, close: Punct) -> BResult<Vec<Operand<'a>>> {
        let mut items = Vec::new();
        if self.eat_punct(close)? {
            return Ok(items);
        }
        loop {
            items.push(self.operand()?);
            if self.eat_punct(close)? {
                return Ok(items);
            }
            self.expect_punct(Punct::Comma, "`,` between list items")?;
        }
    }

    fn number(&mut self) -> BResult<Operand<'a>> {
        let text = self.text();
        let operand = match self.kind {
            Some(TokenKind::Int) => parse_int(text).map(Operand::Int),
            Some(TokenKind::Float) => parse_float(text).map(Operand::Float),
            _ => return Err(self.unexpected("a number")),
        };
        let Some(operand) = operand else {
            let kind = ParseErrorKind::BadNumber {
                text: excerpt(text),
            };
            return Err(self.error(self.start(), kind));
        };
        self.advance()?;
        Ok(operand)
    }

    /// After `[`: `base`, `base+imm`, `base-imm`, `base+-imm` or `imm`, then `]`.
    fn address(&mut self) -> BResult<Operand<'a>> {
        let base = if self.kind == Some(TokenKind::Ident) {
            let name = self.text();
            self.advance()?;
            Some(name)
        } else {
            None
        };
        let mut offset: i64 = 0;
        let mut sign: i64 = 1;
        let mut need_number = base.is_none();
        loop {
            match self.kind {
                Some(TokenKind::Punct(Punct::Plus)) => {
                    need_number = true;
                    self.advance()?;
                }
                Some(TokenKind::Punct(Punct::Minus)) => {
                    sign = -sign;
                    need_number = true;
                    self.advance()?;
                }
                Some(TokenKind::Int) if need_number => {
                    let value = parse_int(self.text()).ok_or_else(|| self.bad_number())?;
                    offset = (value as i64).wrapping_mul(sign);
                    self.advance()?;
                    break;
                }
                _ if !need_number => break,
                _ => return Err(self.unexpected("an address offset")),
            }
        }
        self.expect_punct(Punct::RBracket, "`]` after an address")?;
        Ok(Operand::Address { base, offset })
    }

    fn name(&mut self, expected: &'static str) -> BResult<&'a str> {
        if self.kind != Some(TokenKind::Ident) {
            return Err(self.unexpected(expected));
        }
        let name = self.text();
        self.advance()?;
        Ok(name)
    }

    fn u32_value(&mut self, expected: &'static str) -> BResult<u32> {
        if self.kind != Some(TokenKind::Int) {
            return Err(self.unexpected(expected));
        }
        let value = parse_int(self.text())
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| self.bad_number())?;
        self.advance()?;
        Ok(value)
    }

    fn advance(&mut self) -> BResult<()> {
        match self.lexer.next_kind() {
            Ok(kind) => {
                self.kind = kind;
                Ok(())
            }
            Err(kind) => {
                let range = self.lexer.scanned_range();
                let error = LexError {
                    offset: range.start,
                    len: range.len(),
                    kind,
                };
                Err(Box::new(ParseError::from_lex(self.src, error)))
            }
        }
    }

    fn text(&self) -> &'a str {
        self.lexer.scanned_text()
    }

    fn start(&self) -> usize {
        self.lexer.scanned_start()
    }

    fn at_punct(&self, punct: Punct) -> bool {
        self.kind == Some(TokenKind::Punct(punct))
    }

    fn eat_punct(&mut self, punct: Punct) -> BResult<bool> {
        if self.at_punct(punct) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect_punct(&mut self, punct: Punct, expected: &'static str) -> BResult<()> {
        if self.at_punct(punct) {
            self.advance()
        } else {
            Err(self.unexpected(expected))
        }
    }

    #[cold]
    fn error(&self, offset: usize, kind: ParseErrorKind) -> Box<ParseError> {
        Box::new(ParseError::new(self.src, offset, kind))
    }

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
}
