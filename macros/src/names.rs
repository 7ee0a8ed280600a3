//! Names of the generated items, derived from the fn name.

use proc_macro2::Span;
use syn::Ident;

/// `relu_add` → `ReluAdd`; `add_f32_v4` → `AddF32V4`. Keeps the fn name's span so errors about
/// the type point at the user's declaration.
pub(crate) fn upper_camel(fn_name: &Ident) -> Ident {
    Ident::new(&camel_text(&unraw(fn_name)), fn_name.span())
}

/// The fn name without a `r#` prefix: the symbol a kernel's author means by `fn r#type`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    match text.strip_prefix("r#") {
        Some(bare) => bare.to_owned(),
        None => text,
    }
}

fn camel_text(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper_next = true;
    for c in snake.chars() {
        if c == '_' {
            upper_next = true;
        } else if upper_next {
            out.extend(c.to_uppercase());
            upper_next = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `ReluAdd` → `ReluAddArgs`.
pub(crate) fn with_suffix(base: &Ident, suffix: &str) -> Ident {
    Ident::new(&format!("{base}{suffix}"), base.span())
}

/// A name no user-declared argument can clash with, for locals of generated code.
pub(crate) fn hidden(name: &str) -> Ident {
    Ident::new(&format!("__jitseam_{name}"), Span::mixed_site())
}

#[cfg(test)]
mod tests {
    use super::camel_text;

    #[test]
    fn camel_case() {
        assert_eq!(camel_text("relu_add"), "ReluAdd");
        assert_eq!(camel_text("add_f32_co_v4"), "AddF32CoV4");
        assert_eq!(camel_text("_private_add"), "PrivateAdd");
        assert_eq!(camel_text("x"), "X");
        assert_eq!(camel_text("AlreadyCamel"), "AlreadyCamel");
    }
}
