//! The text form of a custom signature, as the CLI's `--signature` and serde spell it:
//! `out: out f32[n], x: in f32[n], n: i32, a: f32`, extents in the same grammar as
//! `#[len(...)]`; after the parameters, clauses behind a `;`: `; block = (16, 16, 1)`.

use std::borrow::Cow;
use std::collections::HashSet;

use super::BlockError;
use super::grammar::{ExtentLexer, ExtentToken, parse_extent};
use super::param::vector_type;
use crate::{CustomKind, CustomParam, ElementKind, ExtentError, ExtentNames, ExtentOp, ExtentSite};

/// A signature or extent that does not parse, with the byte offset where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {problem}")]
pub struct SignatureError {
    /// Byte offset in the text (in the covered count's own text for an error there).
    pub offset: usize,
    /// What is wrong.
    pub problem: SignatureProblem,
}

/// What is wrong with a signature's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureProblem {
    /// The text does not follow the grammar.
    #[error("{0}")]
    Syntax(String),
    /// An extent breaks a rule of the extent language (the same rules `#[len(..)]` follows).
    #[error(transparent)]
    Extent(ExtentError),
    /// The parameter table as a whole is not one a kernel can have.
    #[error("{0}")]
    Table(String),
    /// The declared block (`; block = (x, y, z)`) is one no device launches.
    #[error(transparent)]
    Block(BlockError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'t> {
    Ident(&'t str),
    Int(u64),
    Punct(char),
    End,
}

struct Lexer<'t> {
    text: &'t str,
    pos: usize,
    /// Byte offset of the last token taken.
    at: usize,
}

impl<'t> Lexer<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            pos: 0,
            at: 0,
        }
    }

    fn error(&self, message: impl Into<String>) -> SignatureError {
        SignatureError {
            offset: self.at,
            problem: SignatureProblem::Syntax(message.into()),
        }
    }

    fn peek(&self) -> Result<Token<'t>, SignatureError> {
        let mut copy = Lexer {
            text: self.text,
            pos: self.pos,
            at: self.at,
        };
        copy.next()
    }

    fn next(&mut self) -> Result<Token<'t>, SignatureError> {
        let rest = self.text.get(self.pos..).unwrap_or("");
        let trimmed = rest.trim_start();
        self.pos += rest.len() - trimmed.len();
        self.at = self.pos;
        let Some(c) = trimmed.chars().next() else {
            return Ok(Token::End);
        };
        if c.is_ascii_alphabetic() || c == '_' {
            let len = trimmed
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(trimmed.len());
            self.pos += len;
            return Ok(Token::Ident(&trimmed[..len]));
        }
        if c.is_ascii_digit() {
            let len = trimmed
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(trimmed.len());
            let digits = trimmed[..len].replace('_', "");
            self.pos += len;
            return digits.parse::<u64>().map(Token::Int).map_err(|_| {
                self.error(format!(
                    "`{}` is not a 64-bit unsigned integer",
                    &trimmed[..len]
                ))
            });
        }
        // The operators an extent lacks are tokens too, so that it can say so.
        if ":;,[]()+-*/.%<>&|^=!".contains(c) {
            self.pos += c.len_utf8();
            return Ok(Token::Punct(c));
        }
        Err(self.error(format!("unexpected `{c}`")))
    }

    fn expect(&mut self, punct: char) -> Result<(), SignatureError> {
        match self.next()? {
            Token::Punct(c) if c == punct => Ok(()),
            other => Err(self.error(format!("expected `{punct}`, found {}", describe(&other)))),
        }
    }
}

fn describe(token: &Token<'_>) -> String {
    match token {
        Token::Ident(name) => format!("`{name}`"),
        Token::Int(value) => format!("`{value}`"),
        Token::Punct(c) => format!("`{c}`"),
        Token::End => "the end".to_owned(),
    }
}

/// One parsed item before extents are resolved (they may name params declared later).
struct Item<'t> {
    name: &'t str,
    kind: CustomKind,
    /// Elements per vector (`f32x4`), 1 for scalars.
    lanes: u8,
    /// Byte range of the extent's text, for pointers.
    extent: Option<(usize, usize)>,
}

/// What a signature's text declares; the caller validates the whole.
pub(super) struct Parsed {
    /// Every parameter, in order.
    pub(super) params: Vec<CustomParam>,
    /// The extent programs: pointers in order, then the covered count.
    pub(super) code: Vec<ExtentOp>,
    /// The declared block, with the byte offset of its `(` for errors about its values.
    pub(super) block: Option<([u32; 3], usize)>,
    /// Whether the last program is the declared least dynamic shared bytes.
    pub(super) shared: bool,
}

/// The clauses after the parameters.
#[derive(Default)]
struct Clauses {
    /// `block = (x, y, z)`, with the byte offset of its `(`.
    block: Option<([u32; 3], usize)>,
    /// `shared = EXPR`: the byte range of the expression.
    shared: Option<(usize, usize)>,
}

/// The parameters, the extent programs and the clauses of a signature in text.
pub(super) fn parse(signature: &str, covers: Option<&str>) -> Result<Parsed, SignatureError> {
    let mut lexer = Lexer::new(signature);
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut declared = HashSet::new();
    let has_clauses = loop {
        let name = match lexer.next()? {
            Token::Ident(name) => name,
            Token::End if items.is_empty() => return Err(lexer.error("the signature is empty")),
            other => {
                return Err(lexer.error(format!(
                    "expected a parameter name, found {}",
                    describe(&other)
                )));
            }
        };
        if !declared.insert(name) {
            return Err(lexer.error(format!("duplicate parameter `{name}`")));
        }
        lexer.expect(':')?;
        let mut word = match lexer.next()? {
            Token::Ident(word) => word,
            other => {
                return Err(lexer.error(format!(
                    "expected `in`, `out` or a type after `{name}:`, found {}",
                    describe(&other)
                )));
            }
        };
        let direction = match word {
            "in" | "out" => {
                let direction = word;
                word = match lexer.next()? {
                    Token::Ident(word) => word,
                    other => {
                        return Err(lexer.error(format!(
                            "expected an element type after `{direction}`, found {}",
                            describe(&other)
                        )));
                    }
                };
                Some(direction)
            }
            _ => None,
        };
        let (dtype, lanes) = match (ElementKind::from_name(word), vector_type(word)) {
            (Some(dtype), _) => (dtype, 1),
            (None, Some(_)) if direction.is_none() => {
                return Err(lexer.error(format!(
                    "`{name}: {word}`: a vector type is an element type of a pointer \
                     (`{name}: in {word}[n]`); params travel as one scalar"
                )));
            }
            (None, Some(vector)) => vector,
            (None, None) => {
                return Err(lexer.error(format!(
                    "unknown type `{word}`: expected one of {}, or a vector of one of them \
                     of at most 16 bytes (`f32x4`, `u32x2`, `f16x8`)",
                    ElementKind::names()
                )));
            }
        };
        let (kind, extent) = match direction {
            Some(direction) => {
                lexer.expect('[')?;
                let start = lexer.pos;
                let mut depth = 0usize;
                let end = loop {
                    match lexer.next()? {
                        Token::Punct('[') | Token::Punct('(') => depth += 1,
                        Token::Punct(')') => depth = depth.saturating_sub(1),
                        Token::Punct(']') if depth == 0 => break lexer.at,
                        Token::Punct(']') => depth = depth.saturating_sub(1),
                        Token::End => {
                            return Err(
                                lexer.error(format!("`{name}`'s extent has no closing `]`"))
                            );
                        }
                        _ => {}
                    }
                };
                let kind = if direction == "in" {
                    CustomKind::In(dtype)
                } else {
                    CustomKind::Out(dtype)
                };
                (kind, Some((start, end)))
            }
            None => (CustomKind::Value(dtype), None),
        };
        items.push(Item {
            name,
            kind,
            lanes,
            extent,
        });
        match lexer.next()? {
            Token::Punct(',') => continue,
            Token::Punct(';') => break true,
            Token::End => break false,
            other => {
                return Err(lexer.error(format!(
                    "expected `,`, `;` or the end after `{name}`, found {}",
                    describe(&other)
                )));
            }
        }
    };
    let clauses = if has_clauses {
        clauses(&mut lexer)?
    } else {
        Clauses::default()
    };
    let params: Vec<CustomParam> = items
        .iter()
        .map(|i| CustomParam {
            name: Cow::Owned(i.name.to_owned()),
            kind: i.kind,
            lanes: i.lanes,
        })
        .collect();
    let names = ExtentNames::of(&params);
    let mut code = Vec::new();
    for item in &items {
        if let Some((start, end)) = item.extent {
            let text = signature.get(start..end).unwrap_or("");
            expression(text, &names, ExtentSite::Len, &mut code).map_err(|mut e| {
                e.offset += start;
                e
            })?;
        }
    }
    if let Some(covers) = covers {
        expression(covers, &names, ExtentSite::Covers, &mut code)?;
    }
    if let Some((start, end)) = clauses.shared {
        let text = signature.get(start..end).unwrap_or("");
        expression(text, &names, ExtentSite::Shared, &mut code).map_err(|mut e| {
            e.offset += start;
            e
        })?;
    }
    Ok(Parsed {
        params,
        code,
        block: clauses.block,
        shared: clauses.shared.is_some(),
    })
}

/// The clauses after the parameters, each behind a `;` (the lexer has just taken the first),
/// each at most once: `block = (x, y, z)` and `shared = EXPR`.
fn clauses(lexer: &mut Lexer<'_>) -> Result<Clauses, SignatureError> {
    let mut out = Clauses::default();
    loop {
        let clause = match lexer.next()? {
            Token::Ident(clause @ ("block" | "shared")) => clause,
            // `a: u32;` with nothing after: a trailing `;` is fine.
            Token::End => return Ok(out),
            other => {
                return Err(lexer.error(format!(
                    "expected a clause after `;`, as in `block = (16, 16, 1)` or \
                     `shared = 4 * n`, found {}",
                    describe(&other)
                )));
            }
        };
        let again = match clause {
            "block" => out.block.is_some(),
            _ => out.shared.is_some(),
        };
        if again {
            return Err(lexer.error(format!(
                "duplicate `{clause}` clause: a kernel declares one {clause}"
            )));
        }
        lexer.expect('=')?;
        if clause == "shared" {
            out.shared = Some(shared_expression(lexer)?);
        } else {
            out.block = Some(block_shape(lexer)?);
        }
        match lexer.next()? {
            Token::Punct(';') => continue,
            Token::End => return Ok(out),
            other => {
                return Err(lexer.error(format!(
                    "expected `;` or the end after the `{clause}` clause, found {}",
                    describe(&other)
                )));
            }
        }
    }
}

/// `(x, y, z)` of a `block` clause, with the byte offset of its `(`.
fn block_shape(lexer: &mut Lexer<'_>) -> Result<([u32; 3], usize), SignatureError> {
    lexer.expect('(')?;
    let open = lexer.at;
    let mut dims = [0u32; 3];
    for (axis, dim) in dims.iter_mut().enumerate() {
        if axis > 0 {
            lexer.expect(',')?;
        }
        *dim = match lexer.next()? {
            Token::Int(value) => u32::try_from(value)
                .map_err(|_| lexer.error(format!("block extent `{value}` does not fit 32 bits")))?,
            other => {
                return Err(lexer.error(format!(
                    "`block` takes three integers, as in `block = (16, 16, 1)`, found {}",
                    describe(&other)
                )));
            }
        };
    }
    match lexer.next()? {
        Token::Punct(')') => Ok((dims, open)),
        other => Err(lexer.error(format!(
            "`block` takes three integers, as in `block = (16, 16, 1)`: expected `)`, found {}",
            describe(&other)
        ))),
    }
}

/// The byte range of a `shared` clause's expression: up to the next `;` outside parentheses,
/// or the end. The lexer is left before that `;`.
fn shared_expression(lexer: &mut Lexer<'_>) -> Result<(usize, usize), SignatureError> {
    let start = lexer.pos;
    let mut depth = 0usize;
    loop {
        match lexer.peek()? {
            Token::Punct(';') | Token::End if depth == 0 => break,
            Token::End => return Err(lexer.error("the `shared` expression has no closing `)`")),
            Token::Punct('(') => depth += 1,
            Token::Punct(')') => depth = depth.saturating_sub(1),
            _ => {}
        }
        lexer.next()?;
    }
    let end = lexer.pos;
    if lexer
        .text
        .get(start..end)
        .is_none_or(|s| s.trim().is_empty())
    {
        return Err(lexer.error("`shared` takes a size in bytes, as in `shared = 4 * (32 + n)`"));
    }
    Ok((start, end))
}

/// Parses one extent onto `code` (postfix, ending with `End`).
fn expression(
    text: &str,
    names: &ExtentNames<'_>,
    site: ExtentSite,
    code: &mut Vec<ExtentOp>,
) -> Result<(), SignatureError> {
    let mut lexer = ExtentText(Lexer::new(text));
    code.extend(parse_extent(&mut lexer, names, site)?);
    Ok(())
}

/// The lexer as the extent grammar reads it.
struct ExtentText<'t>(Lexer<'t>);

impl ExtentLexer for ExtentText<'_> {
    type Mark = usize;
    type Error = SignatureError;

    fn next(&mut self) -> Result<ExtentToken, SignatureError> {
        self.0.next().map(extent_token)
    }

    fn peek(&mut self) -> Result<ExtentToken, SignatureError> {
        self.0.peek().map(extent_token)
    }

    fn mark(&self) -> usize {
        self.0.at
    }

    fn error(&self, offset: usize, error: ExtentError) -> SignatureError {
        SignatureError {
            offset,
            problem: SignatureProblem::Extent(error),
        }
    }
}

fn extent_token(token: Token<'_>) -> ExtentToken {
    match token {
        Token::Ident(name) => ExtentToken::Ident(name.to_owned()),
        Token::Int(value) => ExtentToken::Int(value),
        Token::Punct('(') => ExtentToken::Open,
        Token::Punct(')') => ExtentToken::Close,
        Token::Punct(',') => ExtentToken::Comma,
        Token::Punct('.') => ExtentToken::Dot,
        Token::Punct(
            c @ ('+' | '-' | '*' | '/' | '%' | '<' | '>' | '&' | '|' | '^' | '=' | '!'),
        ) => ExtentToken::Op(c.to_string()),
        Token::Punct(c) => ExtentToken::Other(c.to_string()),
        Token::End => ExtentToken::End,
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        AbiKind, AbiSpec, CustomAbi, ExtentError, MAX_EXTENT_DEPTH, MAX_EXTENT_NESTING,
        MAX_EXTENT_STEPS, SignatureError, SignatureProblem,
    };

    #[test]
    fn round_trips_through_text() {
        let text = "a: in f32[m * k], b: in f32[k * n], c: out f32[(m + 1) * n - 1], m: u32, n: u32, k: u32";
        let custom = CustomAbi::parse(text, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(custom.signature_text(), text);
        assert_eq!(custom.extent_texts(), ["m * k", "k * n", "(m + 1) * n - 1"]);
        let saxpy = CustomAbi::parse(
            "out: out f32[n], x: in f32[div_ceil(n, 4) * block.x], n: i32, a: f32",
            Some("n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(saxpy.covers_text().as_deref(), Some("n"));
        let again = CustomAbi::parse(&saxpy.signature_text(), Some("n"));
        assert_eq!(again.as_ref(), Ok(&saxpy));
    }

    #[test]
    fn a_declared_block_round_trips_through_text_and_serde() {
        let text = "c: out f32[16 * grid.x], a: in f32[16 * grid.x], n: u32; block = (16, 16, 1)";
        let custom = CustomAbi::parse(text, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(custom.block, Some([16, 16, 1]));
        assert_eq!(custom.signature_text(), text);
        assert_eq!(custom.extent_texts(), ["16 * grid.x", "16 * grid.x"]);
        // Spacing is free, a trailing `;` too; the text prints back in one spelling.
        let loose = CustomAbi::parse(
            "c: out f32[16 * grid.x], a: in f32[16 * grid.x], n: u32 ;block=( 16,16 ,1 );",
            None,
        );
        assert_eq!(loose.as_ref(), Ok(&custom));
        let json = serde_json::to_string(&custom).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            json,
            format!(r#"{{"signature":"{text}"}}"#),
            "the serde form is the signature's text"
        );
        let back: CustomAbi = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, custom);
        // Without the clause there is no declared block, and the text has none either.
        let plain =
            CustomAbi::parse("c: out f32[n], n: u32", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain.block, None);
        assert_eq!(plain.signature_text(), "c: out f32[n], n: u32");
        // A kernel that covers a count takes a one-dimensional block.
        let covered = CustomAbi::parse("c: out f32[n], n: u32; block = (128, 1, 1)", Some("n"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(covered.block, Some([128, 1, 1]));
        assert_eq!(
            covered.to_string(),
            "c: out f32[n], n: u32; block = (128, 1, 1); covers n"
        );
    }

    #[test]
    fn a_declared_shared_size_round_trips_and_is_the_last_program() {
        let text = "x: in f32[rows * ncols], y: out f32[rows * ncols], rows: u32, ncols: i32; \
                    block = (128, 1, 1); shared = 4 * (32 + ncols)";
        let custom = CustomAbi::parse(text, Some("rows")).unwrap_or_else(|e| panic!("{e}"));
        assert!(custom.shared);
        assert_eq!(custom.shared_text().as_deref(), Some("4 * (32 + ncols)"));
        assert_eq!(custom.covers_text().as_deref(), Some("rows"));
        assert_eq!(
            custom.extent_texts(),
            ["rows * ncols", "rows * ncols", "rows", "4 * (32 + ncols)"]
        );
        assert_eq!(custom.signature_text(), text);
        let code = custom.shared_code().unwrap_or_default();
        assert_eq!(code.last(), Some(&crate::ExtentOp::End));
        assert_eq!(
            code.iter()
                .filter(|op| **op == crate::ExtentOp::End)
                .count(),
            1
        );
        let json = serde_json::to_string(&custom).unwrap_or_else(|e| panic!("{e}"));
        let back: CustomAbi = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, custom);
        // In either order, with the geometry named; without it, none.
        let first = CustomAbi::parse(
            "y: out f32[n], n: i32; shared = 4 * block.x; block = (64, 1, 1)",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.shared_text().as_deref(), Some("4 * block.x"));
        assert_eq!(first.block, Some([64, 1, 1]));
        let plain =
            CustomAbi::parse("y: out f32[n], n: i32", None).unwrap_or_else(|e| panic!("{e}"));
        assert!(!plain.shared && plain.shared_code().is_none() && plain.shared_text().is_none());
    }

    #[test]
    fn a_declared_shared_size_is_refused_with_a_reason() {
        let err = |sig: &str| {
            CustomAbi::parse(sig, None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err("y: out f32[n], n: i32; shared = ").contains("size in bytes"));
        assert!(err("y: out f32[n], n: i32; shared = 4 * (n").contains("no closing"));
        assert!(
            err("y: out f32[n], n: i32; shared = 4; shared = 8").contains("duplicate `shared`")
        );
        assert!(err("y: out f32[n], n: i32, a: f32; shared = 4 * a").contains("integer params"));
        assert!(err("y: out f32[n], n: i32; shared = 4 * m").contains("`m`"));
    }

    #[test]
    fn a_declared_block_is_refused_with_a_reason_and_where() {
        let err = |sig: &str, covers: Option<&str>| {
            CustomAbi::parse(sig, covers)
                .err()
                .map(|e| (e.offset, e.problem.to_string()))
                .unwrap_or_default()
        };
        let sig = "c: out f32[n], n: u32; block = (16, 0, 1)";
        assert_eq!(
            err(sig, None),
            (
                31,
                "block.y is 0: every block extent is at least 1".to_owned()
            )
        );
        assert_eq!(&sig[31..32], "(");
        assert!(
            err("c: out f32[n], n: u32; block = (32, 64, 1)", None)
                .1
                .contains("2048 threads")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (1, 1, 128)", None)
                .1
                .contains("block.z = 128 exceeds 64")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (16, 16, 1)", Some("n"))
                .1
                .contains("declare `block = (16, 1, 1)`")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (16, 16)", None)
                .1
                .contains("expected `,`, found `)`")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (16, 16, 1, 1)", None)
                .1
                .contains("expected `)`, found `,`")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (x, 1, 1)", None)
                .1
                .contains("three integers")
        );
        assert!(
            err("c: out f32[n], n: u32; grid = (1, 1, 1)", None)
                .1
                .contains("expected a clause")
        );
        assert!(
            err(
                "c: out f32[n], n: u32; block = (1, 1, 1); block = (2, 1, 1)",
                None
            )
            .1
            .contains("duplicate `block`")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (4294967296, 1, 1)", None)
                .1
                .contains("does not fit 32 bits")
        );
        assert!(
            err("c: out f32[n], n: u32; block = (1, 1, 1) x", None)
                .1
                .contains("after the `block` clause")
        );
    }

    #[test]
    fn refuses_with_a_reason() {
        let err = |sig: &str, covers: Option<&str>| {
            CustomAbi::parse(sig, covers)
                .err()
                .map(|e| e.problem.to_string())
                .unwrap_or_default()
        };
        assert!(err("x: in f32[m], n: i32", None).contains("unknown name `m`"));
        assert!(err("x: in f32[a], a: f32", None).contains("takes integer params only"));
        assert!(err("x: in f32[grid.w]", None).contains("not a launch dimension"));
        assert!(err("x: in f32[n % 2], n: i32", None).contains("unsupported operator `%`"));
        assert!(
            err("x: in f32[div_ceil(n % 2, 2)], n: i32", None).contains("unsupported operator `%`")
        );
        assert!(
            err("x: in f32[(n 2)], n: i32", None).contains("expected `)` in an extent, found `2`")
        );
        assert!(err("x: in f32[n # 2], n: i32", None).contains("unexpected `#`"));
        assert!(err("x: in f32[div_ceil(n)], n: i32", None).contains("two arguments"));
        assert!(err("x: in f32[max(n, 2)], n: i32", None).contains("unknown function `max`"));
        assert!(err("x: in f32[y], y: in f32[n], n: i32", None).contains("is a pointer"));
        assert!(err("x: out f32[n], n: i32", Some("grid.x")).contains("covered count"));
        assert!(err("x: in f33[n], n: i32", None).contains("unknown type"));
        assert!(err("x: in f32[n], x: i32", None).contains("duplicate"));
    }

    /// Runs `parse` on a thread with a 256 KiB stack: a parser that recursed once per level of
    /// its input with no limit would overflow it long before ten times the limit.
    fn on_a_small_stack(
        parse: impl FnOnce() -> Result<AbiSpec, SignatureError> + Send + 'static,
    ) -> Result<AbiSpec, SignatureError> {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(parse)
            .expect("a thread starts")
            .join()
            .expect("the parser returns instead of overflowing its stack")
    }

    fn nested(levels: usize, open: &str, inner: &str, close: &str) -> String {
        format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
    }

    fn refused_for(error: ExtentError) -> Option<SignatureProblem> {
        Some(SignatureProblem::Extent(error))
    }

    #[test]
    fn nesting_ten_times_the_limit_is_refused_while_parsing() {
        let too_nested = refused_for(ExtentError::TooNested {
            limit: MAX_EXTENT_NESTING,
        });
        let levels = 10 * MAX_EXTENT_NESTING;
        for extent in [
            nested(levels, "(", "n", ")"),
            nested(levels, "div_ceil(", "n", ", 2)"),
        ] {
            let signature = format!("x: in f32[{extent}], n: u32");
            let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&signature, None));
            assert_eq!(parsed.err().map(|e| e.problem), too_nested, "in an extent");
            let parsed = on_a_small_stack(move || {
                AbiSpec::parse_custom("x: out f32[n], n: u32", Some(&extent))
            });
            assert_eq!(parsed.err().map(|e| e.problem), too_nested, "in `covers`");
        }
        // The level past the limit is refused at its own `(`: byte 10 + 32 of the signature.
        let signature = format!("x: in f32[{}], n: u32", nested(levels, "(", "n", ")"));
        let err = AbiSpec::parse_custom(&signature, None).err();
        assert_eq!(err.map(|e| e.offset), Some(10 + MAX_EXTENT_NESTING));
        // At the limit, an extent still parses.
        let signature = format!(
            "x: in f32[{}], n: u32",
            nested(MAX_EXTENT_NESTING, "(", "n", ")")
        );
        assert!(AbiSpec::parse_custom(&signature, None).is_ok());
    }

    #[test]
    fn a_stack_ten_times_the_limit_is_refused_while_parsing() {
        // `n + (n + (n + …))`: every level keeps one value waiting, so the stack reaches the
        // limit long before the nesting does.
        let levels = 10 * MAX_EXTENT_DEPTH;
        let extent = nested(levels, "n + (", "n", ")");
        let signature = format!("x: in f32[{extent}], n: u32");
        let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&signature, None));
        assert_eq!(
            parsed.err().map(|e| e.problem),
            refused_for(ExtentError::TooDeep {
                limit: MAX_EXTENT_DEPTH
            })
        );
        let parsed =
            on_a_small_stack(move || AbiSpec::parse_custom("x: out f32[n], n: u32", Some(&extent)));
        assert!(matches!(
            parsed.err().map(|e| e.problem),
            Some(SignatureProblem::Extent(ExtentError::TooDeep { .. }))
        ));
    }

    /// The input of the report that found the overflow: 20,000 nested parentheses.
    #[test]
    fn twenty_thousand_parentheses_are_refused_on_a_small_stack() {
        let extent = nested(20_000, "(", "n", ")");
        let signature = format!("x: in f32[{extent}], n: u32");
        let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&signature, None));
        assert!(matches!(
            parsed.err().map(|e| e.problem),
            Some(SignatureProblem::Extent(ExtentError::TooNested { .. }))
        ));
        let parsed =
            on_a_small_stack(move || AbiSpec::parse_custom("x: out f32[n], n: u32", Some(&extent)));
        assert!(parsed.is_err());
    }

    /// The rest of the signature grammar is loops, not recursion: a signature with many
    /// parameters, or brackets nested deep inside an extent, is read without recursing.
    #[test]
    fn the_signature_grammar_does_not_recurse() {
        let many: Vec<String> = (0..20_000).map(|i| format!("p{i}: u32")).collect();
        let signature = format!("x: out f32[p0], {}", many.join(", "));
        let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&signature, None));
        assert_eq!(parsed.map(|spec| spec.params.len()).ok(), Some(20_000));
        let brackets = format!("x: out f32[{}], n: u32", nested(20_000, "[", "n", "]"));
        let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&brackets, None));
        assert!(parsed.is_err());
    }

    /// `n + n + … + n`: never deep, but a long program is printed back (the signature's text,
    /// serde) by rebuilding each subexpression's text, which costs the square of its length —
    /// 40,000 terms took a third of a second, 400,000 half a minute. Ten times the limit is
    /// refused while parsing; at the limit the text prints back and parses to the same spec.
    #[test]
    fn an_extent_ten_times_the_longest_is_refused_while_parsing() {
        let terms = |n: usize| vec!["n"; n].join(" + ");
        // Each term after the first adds two steps: the name and its `+`.
        let signature = format!("x: in f32[{}], n: u32", terms(10 * MAX_EXTENT_STEPS));
        let parsed = on_a_small_stack(move || AbiSpec::parse_custom(&signature, None));
        assert_eq!(
            parsed.err().map(|e| e.problem),
            refused_for(ExtentError::TooLong {
                limit: MAX_EXTENT_STEPS
            })
        );
        let covers = terms(10 * MAX_EXTENT_STEPS);
        let parsed =
            on_a_small_stack(move || AbiSpec::parse_custom("x: out f32[n], n: u32", Some(&covers)));
        assert!(matches!(
            parsed.err().map(|e| e.problem),
            Some(SignatureProblem::Extent(ExtentError::TooLong { .. }))
        ));
        let longest = terms(MAX_EXTENT_STEPS.div_ceil(2));
        let spec = AbiSpec::parse_custom(&format!("x: in f32[{longest}], n: u32"), None)
            .unwrap_or_else(|e| panic!("{e}"));
        let AbiKind::Custom(custom) = &spec.abi else {
            panic!("a custom spec")
        };
        assert_eq!(custom.code.len(), MAX_EXTENT_STEPS);
        assert_eq!(custom.extent_texts(), [longest]);
        let message = ExtentError::TooLong {
            limit: MAX_EXTENT_STEPS,
        }
        .to_string();
        assert_eq!(
            message,
            "this extent is too long: it has more than 256 values and operators"
        );
    }
}
