//! The element types a declaration may name, by their Rust spelling: every `ElementKind` of
//! jitseam-abi, each an element type and a by-value param type.

use jitseam_abi::ElementKind;
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;

/// Recognizes `f32`, `::core::primitive::f32`, `half::f16`, `::half::bf16`: a path whose last
/// segment is an element kind's name, with no generics. Half types are recognized by their last
/// segment because on stable Rust `f16` alone is not a usable type, so the user means
/// `half::f16` either way.
pub(crate) fn from_type(ty: &syn::Type) -> Option<ElementKind> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let mut segments = path.path.segments.iter().rev();
    let last = segments.next()?;
    if !last.arguments.is_none() {
        return None;
    }
    let kind = ElementKind::from_name(&last.ident.to_string())?;
    let parent_ok = match segments.next() {
        None => true,
        Some(parent) if is_half(kind) => parent.ident == "half",
        Some(parent) => parent.ident == "primitive",
    };
    parent_ok.then_some(kind)
}

/// Whether the kind is one of the `half` crate's types rather than a primitive.
fn is_half(kind: ElementKind) -> bool {
    matches!(kind, ElementKind::F16 | ElementKind::BF16)
}

/// The Rust type, by an absolute path, spanned at the user's tokens.
pub(crate) fn rust_type(kind: ElementKind, span: Span) -> TokenStream {
    let ident = syn::Ident::new(kind.name(), span);
    if is_half(kind) {
        quote_spanned!(span=> ::jitseam::__private::half::#ident)
    } else {
        quote_spanned!(span=> ::core::primitive::#ident)
    }
}

/// `::jitseam::__private::ElementKind::F32`.
pub(crate) fn kind_tokens(kind: ElementKind, span: Span) -> TokenStream {
    // A fieldless enum's derived `Debug` is its variant's name: the path the expansion needs.
    let variant = syn::Ident::new(&format!("{kind:?}"), span);
    quote_spanned!(span=> ::jitseam::__private::ElementKind::#variant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_recognized_by_its_spellings() {
        for kind in ElementKind::ALL {
            let name = kind.name();
            let parse = |text: &str| syn::parse_str::<syn::Type>(text).ok();
            assert_eq!(parse(name).as_ref().and_then(from_type), Some(kind));
            let qualified = if is_half(kind) {
                format!("::half::{name}")
            } else {
                format!("::core::primitive::{name}")
            };
            assert_eq!(parse(&qualified).as_ref().and_then(from_type), Some(kind));
            assert_eq!(
                parse(&format!("other::{name}"))
                    .as_ref()
                    .and_then(from_type),
                None
            );
            let tokens = kind_tokens(kind, Span::call_site()).to_string();
            assert!(tokens.ends_with(&format!(":: {kind:?}")), "{tokens}");
        }
    }
}
