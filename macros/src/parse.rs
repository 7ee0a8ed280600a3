//! Syntax only: the attribute's `key = value` list and the declaration it sits on. Nothing here
//! knows what an ABI or a param type is; [`crate::model`] judges what was written.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Block, Ident, Lit, Token, Visibility, parenthesized};

/// `#[kernel(<options>)]`: comma-separated `key = value` pairs, in the order written.
pub(crate) struct AttrArgs {
    pub(crate) options: Vec<RawOption>,
}

/// One `key = value`.
pub(crate) struct RawOption {
    pub(crate) key: Ident,
    pub(crate) value: RawValue,
}

/// The right-hand side of an option, as written.
pub(crate) enum RawValue {
    /// A literal: `"name"`, `4`.
    Lit(Lit),
    /// A word with an optional parenthesized argument list: `scalar`, `vectorized(4)`.
    Word {
        name: Ident,
        args: Option<Punctuated<Lit, Token![,]>>,
        /// The parentheses, for errors about the argument list as a whole.
        parens: Option<proc_macro2::Span>,
    },
    /// The tokens of an extent over the kernel's params (the value of `covers` or `shared`), up
    /// to the next `,`: their grammar is jitseam-abi's, read in the model.
    Tokens(TokenStream),
    /// A parenthesized list of expressions: `(16, 16, 1)`.
    Tuple {
        elems: Punctuated<syn::Expr, Token![,]>,
        /// The parentheses, for errors about the list as a whole.
        parens: proc_macro2::Span,
    },
}

impl Parse for AttrArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let options = Punctuated::<RawOption, Token![,]>::parse_terminated(input)?;
        Ok(Self {
            options: options.into_iter().collect(),
        })
    }
}

impl Parse for RawOption {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key: Ident = input.call(Ident::parse_any)?;
        input.parse::<Token![=]>()?;
        // `covers` and `shared` take an extent expression (`covers = m * n`); every other
        // option a word, a literal or a parenthesized list (`block = (16, 16, 1)`). A group is
        // one token tree, so collecting them never recurses into the user's nesting.
        let value = if key == "covers" || key == "shared" {
            let mut tokens = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                tokens.extend([input.parse::<proc_macro2::TokenTree>()?]);
            }
            RawValue::Tokens(tokens)
        } else if input.peek(syn::token::Paren) {
            let content;
            let paren = parenthesized!(content in input);
            RawValue::Tuple {
                elems: Punctuated::parse_terminated(&content)?,
                parens: paren.span.join(),
            }
        } else if input.peek(Lit) {
            RawValue::Lit(input.parse()?)
        } else if input.peek(Ident::peek_any) {
            let name = input.call(Ident::parse_any)?;
            let (args, parens) = if input.peek(syn::token::Paren) {
                let content;
                let paren = parenthesized!(content in input);
                (
                    Some(Punctuated::parse_terminated(&content)?),
                    Some(paren.span.join()),
                )
            } else {
                (None, None)
            };
            RawValue::Word { name, args, parens }
        } else {
            return Err(input.error("expected a value after `=`"));
        };
        Ok(Self { key, value })
    }
}

/// The item under the attribute: a fn signature, ending in `;` or (wrongly) in a body, which is
/// kept so the model can say what to remove.
pub(crate) struct Declaration {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: syn::Signature,
    pub(crate) body: Option<Block>,
}

impl Parse for Declaration {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body = if input.peek(syn::token::Brace) {
            Some(input.parse()?)
        } else {
            input.parse::<Token![;]>()?;
            None
        };
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// Parses the item again, for the stub emitted after an error; `None` when it is not even a
/// fn declaration.
pub(crate) fn stub_target(item: &TokenStream) -> Option<Declaration> {
    syn::parse2::<Declaration>(item.clone()).ok()
}
