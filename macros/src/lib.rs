//! Proc macros of jitseam. Use them through the `jitseam` crate, which re-exports them; the
//! generated code names only `::jitseam::__private`.

#![forbid(unsafe_code)]

mod slot_table;

use proc_macro::TokenStream;

/// Generates a slot table: `jitseam::slot_table!(pub static JIT_KERNELS: 64);`
///
/// Expands to a `static` of type `jitseam::SlotTable` with `N` slots and `N` distinct
/// monomorphized dispatcher functions, one per slot, each with its own address. `N` is an integer
/// literal, `1 ≤ N ≤ 4096`; anything else is a compile error at the literal. Attributes (doc
/// comments) and a visibility may precede `static`.
#[proc_macro]
pub fn slot_table(input: TokenStream) -> TokenStream {
    slot_table::expand(input.into()).into()
}
