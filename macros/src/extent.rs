//! Extent expressions of `abi = custom` kernels (`#[len(m * k)]`, `covers = n`): the user's
//! tokens lexed for jitseam-abi's extent grammar, which parses and checks them with the rules the
//! runtime's own signature parser uses. Every error is spanned at the offending token.

use std::iter::Peekable;

use jitseam_abi::{
    ExtentError, ExtentLexer, ExtentNames, ExtentOp, ExtentSite, ExtentToken, parse_extent,
};
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree, token_stream};

use crate::names;

/// Compiles one extent to its postfix program (ending with `End`), resolving names in `scope`;
/// `end` is where an extent that ends too early is reported.
pub(crate) fn compile(
    tokens: TokenStream,
    end: Span,
    scope: &ExtentNames<'_>,
    site: ExtentSite,
) -> syn::Result<Vec<ExtentOp>> {
    let mut lexer = Tokens::new(tokens, end, site);
    parse_extent(&mut lexer, scope, site)
}

/// One lexed token: what the grammar reads, or why the token is no part of an extent.
struct Lexed {
    token: Result<ExtentToken, String>,
    span: Span,
}

/// The extent's tokens, flattened: a parenthesized group becomes `(`, its tokens, `)`.
struct Tokens {
    lexed: Vec<Lexed>,
    next: usize,
    /// The span of the token taken last.
    last: Span,
    end: Span,
}

impl Tokens {
    fn new(stream: TokenStream, end: Span, site: ExtentSite) -> Self {
        let mut lexed = Vec::new();
        // An explicit stack of the groups open, with each one's closing span: flattening never
        // recurses, however deeply the user nests (the grammar refuses that, spanned).
        let mut open: Vec<(Peekable<token_stream::IntoIter>, Option<Span>)> =
            vec![(stream.into_iter().peekable(), None)];
        while let Some((trees, close)) = open.last_mut() {
            let Some(tree) = trees.next() else {
                if let Some(span) = *close {
                    lexed.push(Lexed {
                        token: Ok(ExtentToken::Close),
                        span,
                    });
                }
                open.pop();
                continue;
            };
            match tree {
                TokenTree::Group(group)
                    if matches!(group.delimiter(), Delimiter::Parenthesis | Delimiter::None) =>
                {
                    lexed.push(Lexed {
                        token: Ok(ExtentToken::Open),
                        span: group.span(),
                    });
                    open.push((
                        group.stream().into_iter().peekable(),
                        Some(group.span_close()),
                    ));
                }
                TokenTree::Group(group) => lexed.push(Lexed {
                    token: Ok(ExtentToken::Other(
                        match group.delimiter() {
                            Delimiter::Bracket => "[",
                            _ => "{",
                        }
                        .to_owned(),
                    )),
                    span: group.span_open(),
                }),
                TokenTree::Ident(ident) => lexed.push(Lexed {
                    token: Ok(ExtentToken::Ident(names::unraw(&ident))),
                    span: ident.span(),
                }),
                TokenTree::Literal(literal) => lexed.push(Lexed {
                    token: integer(literal.clone(), site),
                    span: literal.span(),
                }),
                TokenTree::Punct(first) => {
                    let mut run = vec![first];
                    while run
                        .last()
                        .is_some_and(|p| p.spacing() == proc_macro2::Spacing::Joint)
                    {
                        match trees.peek() {
                            Some(TokenTree::Punct(next)) => {
                                run.push(next.clone());
                                trees.next();
                            }
                            _ => break,
                        }
                    }
                    operators(&run, site, &mut lexed);
                }
            }
        }
        Self {
            lexed,
            next: 0,
            last: end,
            end,
        }
    }

    fn at(&self, index: usize) -> Result<(ExtentToken, Span), syn::Error> {
        match self.lexed.get(index) {
            Some(Lexed {
                token: Ok(token),
                span,
            }) => Ok((token.clone(), *span)),
            Some(Lexed {
                token: Err(message),
                span,
            }) => Err(syn::Error::new(*span, message)),
            None => Ok((ExtentToken::End, self.end)),
        }
    }
}

impl ExtentLexer for Tokens {
    type Mark = Span;
    type Error = syn::Error;

    fn next(&mut self) -> syn::Result<ExtentToken> {
        let (token, span) = self.at(self.next)?;
        self.next = self.next.saturating_add(1);
        self.last = span;
        Ok(token)
    }

    fn peek(&mut self) -> syn::Result<ExtentToken> {
        self.at(self.next).map(|(token, _)| token)
    }

    fn mark(&self) -> Span {
        self.last
    }

    fn error(&self, span: Span, error: ExtentError) -> syn::Error {
        syn::Error::new(span, error)
    }
}

/// An integer literal without a suffix, or why the literal is none.
fn integer(literal: proc_macro2::Literal, site: ExtentSite) -> Result<ExtentToken, String> {
    match syn::Lit::new(literal) {
        syn::Lit::Int(int) if int.suffix().is_empty() => int
            .base10_parse::<u64>()
            .map(ExtentToken::Int)
            .map_err(|_| "this literal does not fit a 64-bit unsigned extent".to_owned()),
        syn::Lit::Int(int) => Err(format!(
            "write extent literals without a suffix: `{}`",
            int.base10_digits()
        )),
        _ => Err(format!(
            "{site} counts elements: only integer literals, as in `256`"
        )),
    }
}

/// Rust's operators of more than one character, longest first.
const COMPOUND: [&str; 23] = [
    "<<=", ">>=", "..=", "...", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
    "/=", "%=", "^=", "&=", "|=", "::", "..", "->",
];

/// A run of joined punctuation, split into Rust's operators the way rustc reads them.
fn operators(run: &[proc_macro2::Punct], site: ExtentSite, lexed: &mut Vec<Lexed>) {
    let mut rest = run;
    while let Some(first) = rest.first() {
        let spelled: String = rest
            .iter()
            .take(3)
            .map(proc_macro2::Punct::as_char)
            .collect();
        let op = COMPOUND
            .iter()
            .find(|op| spelled.starts_with(**op))
            .map_or_else(|| first.as_char().to_string(), |op| (*op).to_owned());
        let token = match op.as_str() {
            "," => Ok(ExtentToken::Comma),
            "." => Ok(ExtentToken::Dot),
            "::" => Err(format!(
                "{site} names the kernel's integer params by their plain names"
            )),
            "#" | "$" | "@" | ";" | ":" | "?" | "~" | "'" | "->" | "=>" => {
                Ok(ExtentToken::Other(op.clone()))
            }
            _ => Ok(ExtentToken::Op(op.clone())),
        };
        lexed.push(Lexed {
            token,
            span: first.span(),
        });
        rest = rest.get(op.chars().count()..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use jitseam_abi::{MAX_EXTENT_DEPTH, MAX_EXTENT_NESTING};

    /// Expands `#[kernel(<attr>)] <item>` on a thread with a 256 KiB stack, and returns the
    /// expansion as text: an extent parser that recursed once per level of the user's nesting
    /// with no limit would overflow it long before ten times the limit.
    fn expand_on_a_small_stack(attr: String, item: String) -> String {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let attr: proc_macro2::TokenStream = attr.parse().expect("attr tokens");
                let item: proc_macro2::TokenStream = item.parse().expect("item tokens");
                crate::expand::kernel(attr, item).to_string()
            })
            .expect("a thread starts")
            .join()
            .expect("the expansion returns instead of overflowing its stack")
    }

    fn nested(levels: usize, open: &str, inner: &str, close: &str) -> String {
        format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
    }

    #[test]
    fn nesting_ten_times_the_limit_is_refused_while_parsing() {
        let too_nested = format!(
            "this extent nests parentheses and calls more than {MAX_EXTENT_NESTING} levels deep"
        );
        let levels = 10 * MAX_EXTENT_NESTING;
        for extent in [
            nested(levels, "(", "n", ")"),
            nested(levels, "div_ceil(", "n", ", 2)"),
        ] {
            let item = format!("fn k(#[len({extent})] out: Out<f32>, n: u32);");
            let expanded = expand_on_a_small_stack("abi = custom".to_owned(), item);
            assert!(expanded.contains("compile_error"), "{expanded}");
            assert!(expanded.contains(&too_nested), "in `#[len]`: {expanded}");
            let attr = format!("abi = custom, covers = {extent}");
            let item = "fn k(#[len(n)] out: Out<f32>, n: u32);".to_owned();
            let expanded = expand_on_a_small_stack(attr, item);
            assert!(expanded.contains(&too_nested), "in `covers`: {expanded}");
        }
        // At the limit, the kernel expands.
        let item = format!(
            "fn k(#[len({})] out: Out<f32>, n: u32);",
            nested(MAX_EXTENT_NESTING, "(", "n", ")")
        );
        let expanded = expand_on_a_small_stack("abi = custom".to_owned(), item);
        assert!(!expanded.contains("compile_error"), "{expanded}");
    }

    #[test]
    fn a_stack_ten_times_the_limit_is_refused_while_parsing() {
        let extent = nested(10 * MAX_EXTENT_DEPTH, "n + (", "n", ")");
        let item = format!("fn k(#[len({extent})] out: Out<f32>, n: u32);");
        let expanded = expand_on_a_small_stack("abi = custom".to_owned(), item);
        assert!(
            expanded.contains(&format!(
                "this extent is too deep to evaluate: it needs more than {MAX_EXTENT_DEPTH} values"
            )),
            "{expanded}"
        );
    }

    #[test]
    fn operators_are_read_as_rustc_reads_them() {
        let refused = |extent: &str| {
            let item = format!("fn k(#[len({extent})] out: Out<f32>, n: u32);");
            expand_on_a_small_stack("abi = custom".to_owned(), item)
        };
        assert!(refused("n << 2").contains("unsupported operator `<<`"));
        assert!(refused("n % 2").contains("unsupported operator `%`"));
        assert!(refused("n * -1").contains("unsupported expression in an extent: found `-`"));
        assert!(refused("self::n").contains("by their plain names"));
        assert!(refused("n[0]").contains("found `[`"));
        assert!(refused("n +").contains("found the end"));
        assert!(refused("4u32").contains("without a suffix"));
        assert!(!refused("div_ceil(n, 256,) * r#n").contains("compile_error"));
    }
}
