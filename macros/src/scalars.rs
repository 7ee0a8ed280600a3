//! The scalar types a declaration may name, by their Rust spelling: every one is an element
//! type and may be a by-value param.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;

/// A scalar type the macro recognizes by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scalar {
    /// The Rust spelling (`f32`, `bf16`).
    pub(crate) name: &'static str,
    /// The `jitseam::ElementKind` variant.
    pub(crate) variant: &'static str,
    /// Bytes per value.
    pub(crate) size: usize,
}

/// Every supported scalar, in the order errors list them.
pub(crate) const SCALARS: [Scalar; 12] = [
    scalar("f32", "F32", 4),
    scalar("f64", "F64", 8),
    scalar("f16", "F16", 2),
    scalar("bf16", "BF16", 2),
    scalar("i8", "I8", 1),
    scalar("u8", "U8", 1),
    scalar("i16", "I16", 2),
    scalar("u16", "U16", 2),
    scalar("i32", "I32", 4),
    scalar("u32", "U32", 4),
    scalar("i64", "I64", 8),
    scalar("u64", "U64", 8),
];

const fn scalar(name: &'static str, variant: &'static str, size: usize) -> Scalar {
    Scalar {
        name,
        variant,
        size,
    }
}

/// `f32, f64, f16, …` for error messages.
pub(crate) fn supported_list() -> String {
    SCALARS.map(|s| s.name).join(", ")
}

impl Scalar {
    /// Recognizes `f32`, `::core::primitive::f32`, `half::f16`, `::half::bf16`: a path whose
    /// last segment is a supported name, with no generics. Half types are recognized by their
    /// last segment because on stable Rust `f16` alone is not a usable type, so the user means
    /// `half::f16` either way.
    pub(crate) fn from_type(ty: &syn::Type) -> Option<Self> {
        let syn::Type::Path(path) = ty else {
            return None;
        };
        if path.qself.is_some() {
            return None;
        }
        let last = path.path.segments.last()?;
        if !last.arguments.is_none() {
            return None;
        }
        let name = last.ident.to_string();
        let scalar = SCALARS.into_iter().find(|s| s.name == name)?;
        let segments = path.path.segments.len();
        let qualified_ok = match scalar.name {
            "f16" | "bf16" => segments == 1 || path.path.segments[segments - 2].ident == "half",
            _ => segments == 1 || path.path.segments[segments - 2].ident == "primitive",
        };
        qualified_ok.then_some(scalar)
    }

    /// The Rust type, by an absolute path, spanned at the user's tokens.
    pub(crate) fn rust_type(self, span: Span) -> TokenStream {
        let ident = syn::Ident::new(self.name, span);
        match self.name {
            "f16" | "bf16" => quote_spanned!(span=> ::jitseam::__private::half::#ident),
            _ => quote_spanned!(span=> ::core::primitive::#ident),
        }
    }

    /// `::jitseam::__private::ElementKind::F32`.
    pub(crate) fn kind(self, span: Span) -> TokenStream {
        let variant = syn::Ident::new(self.variant, span);
        quote_spanned!(span=> ::jitseam::__private::ElementKind::#variant)
    }
}
