//! The body parser: the statements between an entry's or function's braces.
//!
//! It reads the byte range [`crate::parse_module`] recorded for a body with the one
//! [`Lexer`] (via [`Lexer::with_range`], so offsets stay absolute) and yields a flat list of
//! [`Statement`]s: labels, `.reg`/`.param` declarations (ranges like `%r<8>` included), scope
//! braces, and instructions with their guard predicate, modifiers and operands. It knows nothing
//! of what an instruction means; the interpreter and the verifier do.

use std::ops::Range;

use crate::cursor::{Cursor, PResult};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{FloatValue, Lexer, Punct, TokenKind, parse_float, parse_int};
use crate::model::{ScalarType, StateSpace};
use crate::variable::declaration;

pub use crate::variable::{Initializer, MAX_INITIALIZER_NESTING, Variable};

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
        /// Array length, when written (`Some(0)` for `[]`).
        array_len: Option<u32>,
        /// Byte offset of `.param`.
        offset: usize,
    },
    /// `.local`, `.shared`, `.global` or `.const` variables: one declaration, every name it
    /// declares.
    Variables(Vec<Variable>),
    /// Another directive statement, kept by name so that the interpreter can refuse it
    /// precisely.
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
    /// `[tex, {x, y}]` or `[tex, sampler, {x, y}]`: a texture or surface and its coordinates.
    Texture(Vec<Operand<'a>>),
}

/// Parses the body whose contents span `range` of `src` (as recorded by `parse_module`).
pub fn parse_body(src: &str, range: Range<usize>) -> Result<Vec<Statement<'_>>, ParseError> {
    BodyParser::new(src, range).statements()
}

/// The deepest operand nesting read: PTX nests a vector inside a texture operand, or a list in
/// a call, never deeper. A limit keeps the recursive descent's stack small on any input.
pub const MAX_OPERAND_NESTING: usize = 4;

struct BodyParser<'a> {
    cur: Cursor<'a>,
    /// How many `{`, `(` or `[`-with-items the operand being read is inside.
    depth: usize,
}

impl<'a> BodyParser<'a> {
    fn new(src: &'a str, range: Range<usize>) -> Self {
        Self {
            cur: Cursor::new(src, Lexer::with_range(src, range)),
            depth: 0,
        }
    }

    fn statements(mut self) -> Result<Vec<Statement<'a>>, ParseError> {
        self.run().map_err(|e| *e)
    }

    fn run(&mut self) -> PResult<Vec<Statement<'a>>> {
        let mut out = Vec::new();
        self.cur.advance()?;
        while let Some(kind) = self.cur.kind {
            let offset = self.cur.start();
            match kind {
                TokenKind::Punct(Punct::LBrace) => {
                    out.push(Statement::Open { offset });
                    self.cur.advance()?;
                }
                TokenKind::Punct(Punct::RBrace) => {
                    out.push(Statement::Close { offset });
                    self.cur.advance()?;
                }
                TokenKind::Punct(Punct::Semi) => self.cur.advance()?,
                TokenKind::Directive => {
                    if let Some(statement) = self.directive()? {
                        out.push(statement);
                    }
                }
                TokenKind::Ident => {
                    let name = self.cur.text();
                    self.cur.advance()?;
                    if self.cur.at_punct(Punct::Colon) {
                        self.cur.advance()?;
                        out.push(Statement::Label { name, offset });
                    } else {
                        let instruction = self.instruction(None, name, offset)?;
                        out.push(Statement::Instruction(instruction));
                    }
                }
                TokenKind::Punct(Punct::At) => {
                    self.cur.advance()?;
                    let negated = self.cur.eat_punct(Punct::Bang)?;
                    let pred = self.cur.ident("a predicate register after `@`")?;
                    let opcode = self.cur.ident("an opcode after the guard")?;
                    let guard = Some(Guard { pred, negated });
                    out.push(Statement::Instruction(
                        self.instruction(guard, opcode, offset)?,
                    ));
                }
                _ => return Err(self.cur.unexpected("an instruction, label or declaration")),
            }
        }
        Ok(out)
    }

    fn directive(&mut self) -> PResult<Option<Statement<'a>>> {
        let offset = self.cur.start();
        let name = self.cur.text();
        self.cur.advance()?;
        match name {
            ".reg" => self.reg(offset).map(Some),
            ".param" => self.param(offset).map(Some),
            ".local" | ".shared" | ".global" | ".const" => {
                let space = StateSpace::from_directive(name).unwrap_or(StateSpace::Local);
                let vars = declaration(&mut self.cur, space, false, offset)?;
                Ok(Some(Statement::Variables(vars)))
            }
            ".pragma" => {
                while !self.cur.at_punct(Punct::Semi) && self.cur.kind.is_some() {
                    self.cur.advance()?;
                }
                self.cur.eat_punct(Punct::Semi)?;
                Ok(None)
            }
            ".loc" | ".file" => {
                self.skip_line();
                self.cur.advance()?;
                Ok(None)
            }
            _ => {
                let mut depth = 0usize;
                let mut end = self.cur.start();
                while let Some(kind) = self.cur.kind {
                    match kind {
                        TokenKind::Punct(Punct::LBrace) => depth += 1,
                        TokenKind::Punct(Punct::RBrace) if depth > 0 => depth -= 1,
                        TokenKind::Punct(Punct::RBrace) => break,
                        TokenKind::Punct(Punct::Semi) if depth == 0 => {
                            end = self.cur.lexer.scanned_end();
                            self.cur.advance()?;
                            break;
                        }
                        _ => {}
                    }
                    end = self.cur.lexer.scanned_end();
                    self.cur.advance()?;
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
        let from = self.cur.lexer.scanned_start();
        let rest = self.cur.src.as_bytes().get(from..).unwrap_or_default();
        let end = memchr::memchr(b'\n', rest).map_or(self.cur.src.len(), |i| from + i);
        self.cur.lexer.seek(end);
    }

    fn reg(&mut self, offset: usize) -> PResult<Statement<'a>> {
        let mut vector = None;
        let mut ty = None;
        while self.cur.kind == Some(TokenKind::Directive) {
            match self.cur.text() {
                ".v2" => vector = Some(2),
                ".v4" => vector = Some(4),
                ".v8" => vector = Some(8),
                text => match ScalarType::from_directive(text) {
                    Some(parsed) if ty.is_none() => ty = Some(parsed),
                    _ => return Err(self.cur.unexpected("a register type")),
                },
            }
            self.cur.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.cur.unexpected("a register type after .reg"));
        };
        let mut names = Vec::new();
        loop {
            let name = self.cur.ident("a register name")?;
            let count = if self.cur.eat_punct(Punct::Lt)? {
                let n = self.cur.u32_value("a register count")?;
                self.cur
                    .expect_punct(Punct::Gt, "`>` after the register count")?;
                Some(n)
            } else {
                None
            };
            names.push(RegName { name, count });
            if !self.cur.eat_punct(Punct::Comma)? {
                break;
            }
        }
        self.cur.expect_punct(Punct::Semi, "`;` after .reg")?;
        Ok(Statement::Reg {
            ty,
            vector,
            names,
            offset,
        })
    }

    fn param(&mut self, offset: usize) -> PResult<Statement<'a>> {
        let mut align = None;
        let mut ty = None;
        while self.cur.kind == Some(TokenKind::Directive) {
            if self.cur.text() == ".align" {
                self.cur.advance()?;
                align = Some(self.cur.u32_value("an alignment")?);
                continue;
            }
            match ScalarType::from_directive(self.cur.text()) {
                Some(parsed) if ty.is_none() => ty = Some(parsed),
                _ => return Err(self.cur.unexpected("a parameter type")),
            }
            self.cur.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.cur.unexpected("a parameter type after .param"));
        };
        let name = self.cur.ident("a parameter name")?;
        let array_len = if self.cur.eat_punct(Punct::LBracket)? {
            if self.cur.eat_punct(Punct::RBracket)? {
                Some(0)
            } else {
                let n = self.cur.u32_value("an array length")?;
                self.cur
                    .expect_punct(Punct::RBracket, "`]` after the array length")?;
                Some(n)
            }
        } else {
            None
        };
        self.cur.expect_punct(Punct::Semi, "`;` after .param")?;
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
    ) -> PResult<Instruction<'a>> {
        let mut modifiers = Vec::new();
        while self.cur.kind == Some(TokenKind::Directive) {
            modifiers.push(self.cur.text());
            self.cur.advance()?;
        }
        let mut operands = Vec::new();
        if !self.cur.at_punct(Punct::Semi) {
            loop {
                operands.push(self.operand()?);
                if !self.cur.eat_punct(Punct::Comma)? {
                    break;
                }
            }
        }
        if !self.cur.at_punct(Punct::Semi) {
            return Err(self.cur.unexpected("`,` or `;` after an operand"));
        }
        let end = self.cur.lexer.scanned_end();
        self.cur.advance()?;
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            range: start..end,
        })
    }

    fn operand(&mut self) -> PResult<Operand<'a>> {
        match self.cur.kind {
            Some(TokenKind::Ident) => {
                let name = self.cur.text();
                let end = self.cur.lexer.scanned_end();
                self.cur.advance()?;
                // `%tid.x`: the component is glued to the name.
                if self.cur.kind == Some(TokenKind::Directive) && self.cur.start() == end {
                    let dim = match self.cur.text() {
                        ".x" | ".r" => 0,
                        ".y" | ".g" => 1,
                        ".z" | ".b" => 2,
                        ".w" | ".a" => 3,
                        _ => return Err(self.cur.unexpected("a vector component such as `.x`")),
                    };
                    self.cur.advance()?;
                    return Ok(Operand::Special(name, dim));
                }
                if self.cur.at_punct(Punct::Pipe) {
                    self.cur.advance()?;
                    let second = self.cur.ident("a predicate after `|`")?;
                    return Ok(Operand::PredPair(name, second));
                }
                Ok(Operand::Name(name))
            }
            Some(TokenKind::Punct(Punct::Bang)) => {
                self.cur.advance()?;
                Ok(Operand::Not(self.cur.ident("a predicate after `!`")?))
            }
            Some(TokenKind::Punct(Punct::Minus)) => {
                self.cur.advance()?;
                match self.number()? {
                    Operand::Int(v) => Ok(Operand::Int(v.wrapping_neg())),
                    Operand::Float(FloatValue::F32(f)) => Ok(Operand::Float(FloatValue::F32(-f))),
                    Operand::Float(FloatValue::F64(f)) => Ok(Operand::Float(FloatValue::F64(-f))),
                    _ => Err(self.cur.unexpected("a number after `-`")),
                }
            }
            Some(TokenKind::Int | TokenKind::Float) => self.number(),
            Some(TokenKind::Punct(Punct::LBracket)) => {
                let open = self.cur.start();
                self.cur.advance()?;
                self.address(open)
            }
            Some(TokenKind::Punct(Punct::LBrace)) => {
                let open = self.cur.start();
                self.cur.advance()?;
                let items = self.items(open, Punct::RBrace)?;
                Ok(Operand::Vector(items))
            }
            Some(TokenKind::Punct(Punct::LParen)) => {
                let open = self.cur.start();
                self.cur.advance()?;
                let items = self.items(open, Punct::RParen)?;
                Ok(Operand::List(items))
            }
            _ => Err(self.cur.unexpected("an operand")),
        }
    }

    /// The items of a list whose opening token is at `open`, through `close`; refused at `open`
    /// one level past the limit, before descending into it.
    fn items(&mut self, open: usize, close: Punct) -> PResult<Vec<Operand<'a>>> {
        if self.depth >= MAX_OPERAND_NESTING {
            return Err(self.cur.error(
                open,
                ParseErrorKind::NestedTooDeep {
                    limit: MAX_OPERAND_NESTING,
                },
            ));
        }
        self.depth += 1;
        let items = self.items_inside(close);
        self.depth -= 1;
        items
    }

    fn items_inside(&mut self, close: Punct) -> PResult<Vec<Operand<'a>>> {
        let mut items = Vec::new();
        if self.cur.eat_punct(close)? {
            return Ok(items);
        }
        loop {
            items.push(self.operand()?);
            if self.cur.eat_punct(close)? {
                return Ok(items);
            }
            self.cur
                .expect_punct(Punct::Comma, "`,` between list items")?;
        }
    }

    fn number(&mut self) -> PResult<Operand<'a>> {
        let text = self.cur.text();
        let operand = match self.cur.kind {
            Some(TokenKind::Int) => parse_int(text).map(Operand::Int),
            Some(TokenKind::Float) => parse_float(text).map(Operand::Float),
            _ => return Err(self.cur.unexpected("a number")),
        };
        let Some(operand) = operand else {
            return Err(self.cur.bad_number());
        };
        self.cur.advance()?;
        Ok(operand)
    }

    /// After `[`: `base`, `base+imm`, `base-imm`, `base+-imm` or `imm`, then `]`; or a
    /// texture/surface operand `[tex, sampler, {coordinates}]`; `open` is the `[`.
    fn address(&mut self, open: usize) -> PResult<Operand<'a>> {
        let base = if self.cur.kind == Some(TokenKind::Ident) {
            let name = self.cur.text();
            self.cur.advance()?;
            Some(name)
        } else {
            None
        };
        if let Some(name) = base
            && self.cur.at_punct(Punct::Comma)
        {
            self.cur.advance()?;
            let mut items = vec![Operand::Name(name)];
            items.extend(self.items(open, Punct::RBracket)?);
            return Ok(Operand::Texture(items));
        }
        let mut offset: i64 = 0;
        let mut sign: i64 = 1;
        let mut need_number = base.is_none();
        loop {
            match self.cur.kind {
                Some(TokenKind::Punct(Punct::Plus)) => {
                    need_number = true;
                    self.cur.advance()?;
                }
                Some(TokenKind::Punct(Punct::Minus)) => {
                    sign = -sign;
                    need_number = true;
                    self.cur.advance()?;
                }
                Some(TokenKind::Int) if need_number => {
                    let value = parse_int(self.cur.text()).ok_or_else(|| self.cur.bad_number())?;
                    offset = (value as i64).wrapping_mul(sign);
                    self.cur.advance()?;
                    break;
                }
                _ if !need_number => break,
                _ => return Err(self.cur.unexpected("an address offset")),
            }
        }
        self.cur
            .expect_punct(Punct::RBracket, "`]` after an address")?;
        Ok(Operand::Address { base, offset })
    }
}
