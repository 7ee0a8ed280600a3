//! The text form of a custom signature, as the CLI's `--signature` and serde spell it:
//! `out: out f32[n], x: in f32[n], n: i32, a: f32`, extents in the same grammar as
//! `#[len(...)]`.

use std::borrow::Cow;

use super::extent::ExtentOp;
use super::param::{CustomKind, CustomParam};
use crate::dtype::ElementKind;

/// A signature or extent that does not parse, with the byte offset where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {message}")]
pub struct SignatureError {
    /// Byte offset in the text.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
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
            message: message.into(),
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
        if ":,[]()+-*/.".contains(c) {
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
    /// Byte range of the extent's text, for pointers.
    extent: Option<(usize, usize)>,
}

/// The parameters and the extent programs (pointers in order, then the covered count) of a
/// signature in text; the caller validates the whole.
pub(super) fn parse(
    signature: &str,
    covers: Option<&str>,
) -> Result<(Vec<CustomParam>, Vec<ExtentOp>), SignatureError> {
    let mut lexer = Lexer::new(signature);
    let mut items: Vec<Item<'_>> = Vec::new();
    loop {
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
        if items.iter().any(|i| i.name == name) {
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
        let dtype = ElementKind::from_name(word).ok_or_else(|| {
            lexer.error(format!(
                "unknown type `{word}`: expected one of f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64"
            ))
        })?;
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
        items.push(Item { name, kind, extent });
        match lexer.next()? {
            Token::Punct(',') => continue,
            Token::End => break,
            other => {
                return Err(lexer.error(format!(
                    "expected `,` or the end after `{name}`, found {}",
                    describe(&other)
                )));
            }
        }
    }
    let values: Vec<(&str, ElementKind)> = items
        .iter()
        .filter_map(|i| match i.kind {
            CustomKind::Value(d) => Some((i.name, d)),
            _ => None,
        })
        .collect();
    let mut code = Vec::new();
    for item in &items {
        if let Some((start, end)) = item.extent {
            let text = signature.get(start..end).unwrap_or("");
            expression(text, &values, false, &mut code).map_err(|mut e| {
                e.offset += start;
                e
            })?;
        }
    }
    if let Some(covers) = covers {
        expression(covers, &values, true, &mut code)?;
    }
    let params = items
        .iter()
        .map(|i| CustomParam {
            name: Cow::Owned(i.name.to_owned()),
            kind: i.kind,
        })
        .collect();
    Ok((params, code))
}

/// Parses one extent into `code` (postfix, ending with `End`).
fn expression(
    text: &str,
    values: &[(&str, ElementKind)],
    covers: bool,
    code: &mut Vec<ExtentOp>,
) -> Result<(), SignatureError> {
    let mut parser = Parser {
        lexer: Lexer::new(text),
        values,
        covers,
        code,
    };
    parser.sum()?;
    match parser.lexer.next()? {
        Token::End => {}
        other => {
            return Err(parser
                .lexer
                .error(format!("unexpected {} in an extent", describe(&other))));
        }
    }
    parser.code.push(ExtentOp::End);
    Ok(())
}

struct Parser<'t, 'v, 'c> {
    lexer: Lexer<'t>,
    values: &'v [(&'v str, ElementKind)],
    covers: bool,
    code: &'c mut Vec<ExtentOp>,
}

impl Parser<'_, '_, '_> {
    fn sum(&mut self) -> Result<(), SignatureError> {
        self.product()?;
        loop {
            let op = match self.lexer.peek()? {
                Token::Punct('+') => ExtentOp::Add,
                Token::Punct('-') => ExtentOp::Sub,
                _ => return Ok(()),
            };
            self.lexer.next()?;
            self.product()?;
            self.code.push(op);
        }
    }

    fn product(&mut self) -> Result<(), SignatureError> {
        self.factor()?;
        loop {
            let op = match self.lexer.peek()? {
                Token::Punct('*') => ExtentOp::Mul,
                Token::Punct('/') => ExtentOp::Div,
                _ => return Ok(()),
            };
            self.lexer.next()?;
            self.factor()?;
            self.code.push(op);
        }
    }

    fn factor(&mut self) -> Result<(), SignatureError> {
        match self.lexer.next()? {
            Token::Int(value) => self.code.push(ExtentOp::Lit(value)),
            Token::Punct('(') => {
                self.sum()?;
                self.lexer.expect(')')?;
            }
            Token::Ident(dim @ ("grid" | "block")) => {
                if self.covers {
                    return Err(self.lexer.error(format!(
                        "the covered count cannot name `{dim}`: it decides the launch geometry"
                    )));
                }
                self.lexer.expect('.')?;
                let axis = match self.lexer.next()? {
                    Token::Ident("x") => 0,
                    Token::Ident("y") => 1,
                    Token::Ident("z") => 2,
                    other => {
                        return Err(self.lexer.error(format!(
                            "`{dim}.{}` is not a launch dimension: use {dim}.x, {dim}.y or {dim}.z",
                            describe(&other).trim_matches('`')
                        )));
                    }
                };
                self.code.push(if dim == "grid" {
                    ExtentOp::Grid(axis)
                } else {
                    ExtentOp::Block(axis)
                });
            }
            Token::Ident("div_ceil") => {
                self.lexer.expect('(')?;
                self.sum()?;
                match self.lexer.next()? {
                    Token::Punct(',') => {}
                    _ => {
                        return Err(self
                            .lexer
                            .error("`div_ceil` takes two arguments: div_ceil(a, b)"));
                    }
                }
                self.sum()?;
                match self.lexer.next()? {
                    Token::Punct(')') => {}
                    _ => {
                        return Err(self
                            .lexer
                            .error("`div_ceil` takes two arguments: div_ceil(a, b)"));
                    }
                }
                self.code.push(ExtentOp::DivCeil);
            }
            Token::Ident(name) => {
                let Some(index) = self.values.iter().position(|(n, _)| *n == name) else {
                    return Err(self.lexer.error(format!(
                        "unknown name `{name}` in an extent: extents name integer by-value params, grid.x/y/z and block.x/y/z"
                    )));
                };
                if let Some((_, dtype)) = self.values.get(index)
                    && dtype.is_float()
                {
                    return Err(self.lexer.error(format!(
                        "`{name}` is a {dtype} param: extents take integer params"
                    )));
                }
                let index =
                    u16::try_from(index).map_err(|_| self.lexer.error("too many params"))?;
                self.code.push(ExtentOp::Param(index));
            }
            other => {
                return Err(self.lexer.error(format!(
                    "expected a number, a param, grid.x/y/z, block.x/y/z, `div_ceil(` or `(` in an extent, found {}",
                    describe(&other)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::abi::CustomAbi;

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
    fn refuses_with_a_reason() {
        let err = |sig: &str, covers: Option<&str>| {
            CustomAbi::parse(sig, covers)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        assert!(err("x: in f32[m], n: i32", None).contains("unknown name `m`"));
        assert!(err("x: in f32[a], a: f32", None).contains("extents take integer params"));
        assert!(err("x: in f32[grid.w]", None).contains("not a launch dimension"));
        assert!(err("x: in f32[n % 2], n: i32", None).contains("unexpected"));
        assert!(err("x: in f32[div_ceil(n)], n: i32", None).contains("two arguments"));
        assert!(err("x: out f32[n], n: i32", Some("grid.x")).contains("covered count"));
        assert!(err("x: in f33[n], n: i32", None).contains("unknown type"));
        assert!(err("x: in f32[n], x: i32", None).contains("duplicate"));
    }
}
