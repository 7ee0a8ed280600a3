//! Variable declarations in the `.global`, `.const`, `.local` and `.shared` state spaces, in a
//! body or at module scope, with their initializers:
//!
//! ```text
//! [.extern|.visible|.weak|.common] .space [.align N] [.v2|.v4] .type name[N]…[= init] [, name…];
//! ```
//!
//! An initializer is a number, or a `{…}` list of initializers (one level per array dimension,
//! and one for a vector); anything else (an address such as `gvar`, `generic(gvar)` or
//! `gvar+4`) is kept as [`Initializer::Other`] for the decoder to evaluate or refuse.

use crate::cursor::{Cursor, PResult};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{FloatValue, Lexer, Punct, TokenKind, parse_float, parse_int};
use crate::model::{ScalarType, StateSpace};
use crate::skip::{Unterminated, skip_block};

/// One declared variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Its state space.
    pub space: StateSpace,
    /// `.extern`: declared here, defined in another module.
    pub external: bool,
    /// `.align N`, when written.
    pub align: Option<u32>,
    /// `.v2`/`.v4`: elements per vector.
    pub vector: Option<u8>,
    /// The element type (`.b64` for an opaque handle).
    pub ty: ScalarType,
    /// A `.texref`, `.samplerref` or `.surfref` handle rather than data.
    pub opaque: bool,
    /// The name.
    pub name: String,
    /// Each `[N]` in order; `None` for `[]` (its length comes from the initializer, or the
    /// variable is an `.extern` array of unknown size).
    pub dims: Vec<Option<u32>>,
    /// `= …`, when written.
    pub init: Option<Initializer>,
    /// Byte offset of the declaration's first directive.
    pub offset: usize,
}

impl Variable {
    /// Bytes of one element (a whole vector for `.v2`/`.v4`).
    pub fn element_bytes(&self) -> u64 {
        u64::from(self.ty.bytes()) * u64::from(self.vector.unwrap_or(1))
    }

    /// Size in bytes; `None` when an array length is unknown (`[]` without an initializer
    /// that gives it).
    pub fn size_bytes(&self) -> Option<u64> {
        let mut size = self.element_bytes();
        for (i, dim) in self.dims.iter().enumerate() {
            let len = match (dim, &self.init) {
                (Some(len), _) => u64::from(*len),
                (None, Some(Initializer::List(items))) if i == 0 => items.len() as u64,
                _ => return None,
            };
            size = size.checked_mul(len)?;
        }
        Some(size)
    }

    /// Its alignment: `.align` when written, else the element's size.
    pub fn alignment(&self) -> u64 {
        self.align.map_or(self.element_bytes(), u64::from).max(1)
    }
}

/// The value after `=`.
#[derive(Debug, Clone, PartialEq)]
pub enum Initializer {
    /// An integer (a leading `-` already applied, two's complement).
    Int(u64),
    /// A float (a leading `-` already applied).
    Float(FloatValue),
    /// `{a, b, …}`.
    List(Vec<Initializer>),
    /// The address of a variable: `name`, `generic(name)`, either optionally followed by
    /// `+ n` or `- n`.
    Address {
        /// The variable named.
        name: String,
        /// Written `generic(name)`.
        generic: bool,
        /// The byte offset added (negative for `- n`).
        offset: i64,
    },
    /// Any other expression (arithmetic, a function's address in a form not above); the byte
    /// offset where it starts.
    Other(usize),
}

/// Reads the rest of a declaration whose space directive (at `offset`) was just consumed:
/// every variable it declares, through its `;`.
pub(crate) fn declaration<'a>(
    cur: &mut Cursor<'a>,
    space: StateSpace,
    external: bool,
    offset: usize,
) -> PResult<Vec<Variable>> {
    let mut align = None;
    let mut vector = None;
    let mut ty = None;
    let mut opaque = false;
    while cur.kind == Some(TokenKind::Directive) {
        match cur.text() {
            ".align" => {
                cur.advance()?;
                align = Some(cur.u32_value("an alignment")?);
                continue;
            }
            ".v2" => vector = Some(2),
            ".v4" => vector = Some(4),
            ".v8" => vector = Some(8),
            ".attribute" => {
                // `.attribute(.managed)` and friends: kept out of the model.
                cur.advance()?;
                skip_group(cur)?;
                continue;
            }
            ".texref" | ".samplerref" | ".surfref" if ty.is_none() => {
                opaque = true;
                ty = Some(ScalarType::B64);
            }
            text => match ScalarType::from_directive(text) {
                Some(parsed) if ty.is_none() => ty = Some(parsed),
                _ => return Err(cur.unexpected("a variable type")),
            },
        }
        cur.advance()?;
    }
    let Some(ty) = ty else {
        return Err(cur.unexpected("a variable type"));
    };
    let mut out = Vec::new();
    loop {
        let name = cur.ident("a variable name")?;
        let mut dims = Vec::new();
        while cur.eat_punct(Punct::LBracket)? {
            if cur.eat_punct(Punct::RBracket)? {
                dims.push(None);
                continue;
            }
            dims.push(Some(cur.u32_value("an array length")?));
            cur.expect_punct(Punct::RBracket, "`]` after the array length")?;
        }
        let init = if cur.eat_punct(Punct::Eq)? {
            Some(initializer(cur, 0)?)
        } else {
            None
        };
        out.push(Variable {
            space,
            external,
            align,
            vector,
            ty,
            opaque,
            name: name.to_owned(),
            dims,
            init,
            offset,
        });
        if !cur.eat_punct(Punct::Comma)? {
            break;
        }
    }
    cur.expect_punct(Punct::Semi, "`;` after a variable declaration")?;
    Ok(out)
}

/// Skips a parenthesized group that starts at the current token, if there is one.
fn skip_group(cur: &mut Cursor<'_>) -> PResult<()> {
    if !cur.eat_punct(Punct::LParen)? {
        return Ok(());
    }
    let mut depth = 1usize;
    while depth > 0 {
        match cur.kind {
            None => return Err(cur.unexpected("`)`")),
            Some(TokenKind::Punct(Punct::LParen)) => depth += 1,
            Some(TokenKind::Punct(Punct::RParen)) => depth -= 1,
            _ => {}
        }
        cur.advance()?;
    }
    Ok(())
}

/// The deepest `{ }` nesting of an initializer: one level per array dimension and one for a
/// vector. A limit keeps the recursive descent's stack small on any input.
pub const MAX_INITIALIZER_NESTING: usize = 16;

fn initializer(cur: &mut Cursor<'_>, depth: usize) -> PResult<Initializer> {
    let start = cur.start();
    let value = match cur.kind {
        Some(TokenKind::Punct(Punct::LBrace)) => {
            if depth >= MAX_INITIALIZER_NESTING {
                return Err(cur.error(
                    start,
                    ParseErrorKind::NestedTooDeep {
                        limit: MAX_INITIALIZER_NESTING,
                    },
                ));
            }
            cur.advance()?;
            let mut items = Vec::new();
            if !cur.eat_punct(Punct::RBrace)? {
                loop {
                    items.push(initializer(cur, depth + 1)?);
                    if cur.eat_punct(Punct::RBrace)? {
                        break;
                    }
                    cur.expect_punct(Punct::Comma, "`,` or `}` in an initializer")?;
                }
            }
            return Ok(Initializer::List(items));
        }
        Some(TokenKind::Punct(Punct::Minus)) => {
            cur.advance()?;
            match number(cur)? {
                Some(Initializer::Int(v)) => Some(Initializer::Int(v.wrapping_neg())),
                Some(Initializer::Float(FloatValue::F32(f))) => {
                    Some(Initializer::Float(FloatValue::F32(-f)))
                }
                Some(Initializer::Float(FloatValue::F64(f))) => {
                    Some(Initializer::Float(FloatValue::F64(-f)))
                }
                _ => None,
            }
        }
        Some(TokenKind::Ident) => address(cur)?,
        _ => number(cur)?,
    };
    let at_end = matches!(
        cur.kind,
        Some(TokenKind::Punct(Punct::Comma | Punct::RBrace | Punct::Semi))
    );
    match value {
        Some(value) if at_end => Ok(value),
        _ => {
            skip_expression(cur)?;
            Ok(Initializer::Other(start))
        }
    }
}

/// An address initializer at the current identifier, `name`, `generic(name)`, with an optional
/// `+ n` or `- n`; `None` when what follows the name is not of that form (the caller then skips
/// the expression from its start).
fn address(cur: &mut Cursor<'_>) -> PResult<Option<Initializer>> {
    let mut name = cur.text();
    cur.advance()?;
    let mut generic = false;
    if name == "generic" && cur.at_punct(Punct::LParen) {
        cur.advance()?;
        if cur.kind != Some(TokenKind::Ident) {
            return Ok(None);
        }
        name = cur.text();
        cur.advance()?;
        if !cur.eat_punct(Punct::RParen)? {
            return Ok(None);
        }
        generic = true;
    }
    let sign: i64 = match cur.kind {
        Some(TokenKind::Punct(Punct::Plus)) => 1,
        Some(TokenKind::Punct(Punct::Minus)) => -1,
        _ => {
            return Ok(Some(Initializer::Address {
                name: name.to_owned(),
                generic,
                offset: 0,
            }));
        }
    };
    cur.advance()?;
    if cur.kind != Some(TokenKind::Int) {
        return Ok(None);
    }
    let Some(value) = parse_int(cur.text()) else {
        return Ok(None);
    };
    cur.advance()?;
    Ok(Some(Initializer::Address {
        name: name.to_owned(),
        generic,
        offset: (value as i64).wrapping_mul(sign),
    }))
}

/// The current token as a number (and past it), or `None` (not moved) if it is none.
fn number(cur: &mut Cursor<'_>) -> PResult<Option<Initializer>> {
    let value = match cur.kind {
        Some(TokenKind::Int) => parse_int(cur.text()).map(Initializer::Int),
        Some(TokenKind::Float) => parse_float(cur.text()).map(Initializer::Float),
        _ => return Ok(None),
    };
    let value = value.ok_or_else(|| cur.bad_number())?;
    cur.advance()?;
    Ok(Some(value))
}

/// Skips an expression through (not past) the `,`, `}` or `;` that ends it.
fn skip_expression(cur: &mut Cursor<'_>) -> PResult<()> {
    let mut depth = 0usize;
    loop {
        match cur.kind {
            None => return Err(cur.unexpected("`;` after an initializer")),
            Some(TokenKind::Punct(Punct::LParen | Punct::LBrace)) => depth += 1,
            Some(TokenKind::Punct(Punct::RParen)) if depth > 0 => depth -= 1,
            Some(TokenKind::Punct(Punct::RBrace)) if depth > 0 => depth -= 1,
            Some(TokenKind::Punct(Punct::Comma | Punct::RBrace | Punct::Semi)) if depth == 0 => {
                return Ok(());
            }
            _ => {}
        }
        cur.advance()?;
    }
}

/// The directives after which a module-scope statement ends even without a `;`.
fn starts_statement(directive: &str) -> bool {
    matches!(
        directive,
        ".entry"
            | ".func"
            | ".visible"
            | ".weak"
            | ".extern"
            | ".common"
            | ".version"
            | ".target"
            | ".address_size"
            | ".global"
            | ".const"
            | ".shared"
            | ".local"
            | ".file"
            | ".loc"
    )
}

/// Every variable declared at module scope in `src`, in source order. Bodies are skipped
/// unread.
pub fn module_variables(src: &str) -> Result<Vec<Variable>, ParseError> {
    scan(&mut Cursor::new(src, Lexer::new(src))).map_err(|e| *e)
}

fn scan<'a>(cur: &mut Cursor<'a>) -> PResult<Vec<Variable>> {
    let mut out = Vec::new();
    let mut external = false;
    let mut start = None;
    cur.advance()?;
    while let Some(kind) = cur.kind {
        if kind != TokenKind::Directive {
            skip_other(cur)?;
            continue;
        }
        let offset = cur.start();
        match cur.text() {
            ".extern" | ".visible" | ".weak" | ".common" => {
                external |= cur.text() == ".extern";
                start.get_or_insert(offset);
                cur.advance()?;
                continue;
            }
            text => {
                if let Some(space) = StateSpace::from_directive(text) {
                    cur.advance()?;
                    let first = start.unwrap_or(offset);
                    out.extend(declaration(cur, space, external, first)?);
                } else if matches!(text, ".entry" | ".func") {
                    skip_function(cur)?;
                } else if matches!(text, ".file" | ".loc") {
                    skip_line(cur)?;
                } else {
                    cur.advance()?;
                    skip_other(cur)?;
                }
            }
        }
        external = false;
        start = None;
    }
    Ok(out)
}

/// Skips a signature and its body (or its `;`).
fn skip_function(cur: &mut Cursor<'_>) -> PResult<()> {
    loop {
        match cur.kind {
            None => return Ok(()),
            Some(TokenKind::Punct(Punct::Semi)) => return cur.advance(),
            Some(TokenKind::Punct(Punct::LBrace)) => return skip_braces(cur),
            _ => cur.advance()?,
        }
    }
}

/// Skips the rest of a statement: through its `;` or its `{…}`, or up to the next statement.
fn skip_other(cur: &mut Cursor<'_>) -> PResult<()> {
    loop {
        match cur.kind {
            None => return Ok(()),
            Some(TokenKind::Directive) if starts_statement(cur.text()) => return Ok(()),
            Some(TokenKind::Punct(Punct::Semi)) => return cur.advance(),
            Some(TokenKind::Punct(Punct::LBrace)) => return skip_braces(cur),
            _ => cur.advance()?,
        }
    }
}

fn skip_braces(cur: &mut Cursor<'_>) -> PResult<()> {
    let open = cur.start();
    let end = skip_block(cur.src.as_bytes(), open).map_err(|error| {
        let at = match error {
            Unterminated::Block(at) | Unterminated::Comment(at) | Unterminated::String(at) => at,
        };
        cur.error(at, crate::error::ParseErrorKind::UnterminatedBlock)
    })?;
    cur.lexer.seek(end);
    cur.advance()
}

fn skip_line(cur: &mut Cursor<'_>) -> PResult<()> {
    let from = cur.lexer.scanned_end();
    let rest = cur.src.as_bytes().get(from..).unwrap_or_default();
    let end = memchr::memchr(b'\n', rest).map_or(cur.src.len(), |i| from + i);
    cur.lexer.seek(end);
    cur.advance()
}
