//! `slot_table!`: parse `ATTRS VIS static NAME: N;`, check `N`, expand to the table's `static`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitInt, LitStr, Token, Visibility};

/// The most slots a table may have (`jitseam::slot::MAX_SLOTS`).
const MAX_SLOTS: usize = 4096;

struct SlotTableInput {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    slots: LitInt,
}

impl Parse for SlotTableInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        input.parse::<Token![static]>()?;
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let slots = input.parse::<LitInt>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the number of slots as an integer literal, as in `static NAME: 64;`",
            )
        })?;
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the slot count"));
        }
        Ok(Self {
            attrs,
            vis,
            name,
            slots,
        })
    }
}

/// Reads the slot count, refusing 0 and anything above [`MAX_SLOTS`] at the user's literal.
fn slot_count(lit: &LitInt) -> syn::Result<usize> {
    let suffix = lit.suffix();
    if !suffix.is_empty() && suffix != "usize" {
        return Err(syn::Error::new(
            lit.span(),
            format!("the slot count is a `usize`, found a `{suffix}` literal"),
        ));
    }
    let count: usize = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("a slot table holds at most {MAX_SLOTS} slots"),
        )
    })?;
    if count == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "a slot table needs at least one slot",
        ));
    }
    if count > MAX_SLOTS {
        return Err(syn::Error::new(
            lit.span(),
            format!("a slot table holds at most {MAX_SLOTS} slots, found {count}"),
        ));
    }
    Ok(count)
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<SlotTableInput>(input).and_then(|input| {
        let count = slot_count(&input.slots)?;
        Ok(table(&input, count))
    }) {
        Ok(tokens) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

fn table(input: &SlotTableInput, count: usize) -> TokenStream {
    let SlotTableInput {
        attrs, vis, name, ..
    } = input;
    let private = quote!(::jitseam::__private);
    let n = Literal::usize_unsuffixed(count);
    let label = LitStr::new(&name.to_string(), name.span());
    let dispatchers = (0..count).map(|i| {
        let i = Literal::usize_unsuffixed(i);
        quote!(#private::dispatch_slot::<__JitseamTable, #i>)
    });
    quote! {
        #(#attrs)*
        #vis static #name: #private::SlotTable = {
            // Names this table to its dispatchers: `dispatch_slot::<__JitseamTable, I>` is one distinct
            // function per slot.
            // The items inside are named so that no user's table name shadows them (a table
            // called `SLOTS` must still name itself, not its slot array).
            struct __JitseamTable;
            impl #private::SlotTableMarker for __JitseamTable {
                #[inline(always)]
                fn table() -> &'static #private::SlotTable {
                    &#name
                }
            }
            static __JITSEAM_SLOTS: #private::Slots<[#private::Slot; #n]> =
                #private::empty_slots::<#n>();
            static __JITSEAM_DISPATCHERS: [#private::SlotFn; #n] = [#(#dispatchers),*];
            #private::SlotTable::__new(#label, &__JITSEAM_SLOTS, &__JITSEAM_DISPATCHERS)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(tokens: TokenStream) -> String {
        match syn::parse2::<SlotTableInput>(tokens).and_then(|i| slot_count(&i.slots)) {
            Ok(n) => format!("ok {n}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn counts_in_range_are_accepted() {
        assert_eq!(error_of(quote!(static T: 1;)), "ok 1");
        assert_eq!(error_of(quote!(pub static T: 4096usize;)), "ok 4096");
        assert_eq!(
            error_of(quote!(#[doc = "x"] pub(crate) static T: 0x10)),
            "ok 16"
        );
    }

    #[test]
    fn counts_out_of_range_are_refused() {
        assert_eq!(
            error_of(quote!(static T: 0;)),
            "a slot table needs at least one slot"
        );
        assert_eq!(
            error_of(quote!(static T: 4097;)),
            "a slot table holds at most 4096 slots, found 4097"
        );
        assert_eq!(
            error_of(quote!(static T: 99999999999999999999999;)),
            "a slot table holds at most 4096 slots"
        );
        assert_eq!(
            error_of(quote!(static T: 8u8;)),
            "the slot count is a `usize`, found a `u8` literal"
        );
    }

    #[test]
    fn expansion_has_one_dispatcher_per_slot() {
        let out = expand(quote!(pub static T: 3;)).to_string();
        for i in 0..3 {
            assert!(
                out.contains(&format!("dispatch_slot :: < __JitseamTable , {i} >")),
                "{out}"
            );
        }
        assert!(!out.contains("dispatch_slot :: < __JitseamTable , 3 >"));
    }
}
