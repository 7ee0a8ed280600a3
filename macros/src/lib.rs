//! jitseam's proc macros: `#[jitseam::kernel]` turns a bodiless fn declaration into a typed
//! kernel signature; `slot_table!` generates a build-time-sized bank of bare-fn dispatchers.
//!
//! Split like thiserror's: `parse.rs` reads syntax only, `model.rs` validates it and raises every
//! user-facing error at the user's tokens, `expand.rs` writes the code. The rules themselves —
//! element types, vector widths, ranks, the extent grammar and its limits — are jitseam-abi's,
//! the ones the runtime checks a spec with, never a copy. Use it through the
//! `jitseam` crate, which re-exports it; the generated code names only `::jitseam::__private`.

#![forbid(unsafe_code)]

mod expand;
mod extent;
mod model;
mod names;
mod parse;
mod scalars;
mod slot_table;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Declares a kernel signature from a bodiless fn:
///
/// ```ignore
/// #[jitseam::kernel(abi = vectorized(4))]
/// pub fn relu_add(a: In<f32>, b: In<f32>, out: Out<f32>, alpha: f32);
/// ```
///
/// Options: `abi = scalar | vectorized(W) | strided(R) | custom` (required), `symbol = "..."` (the
/// entry point; default: the fn name) and, for `custom`, `covers = EXPR`, `block = (x, y, z)`
/// and `shared = EXPR`. Arguments are inputs
/// (`In<T>`), then outputs (`Out<T>`, at least one), then by-value params (`f32`, `f64`, `f16`, `bf16`, `i8`, `u8`, `i16`, `u16`,
/// `i32`, `u32`, `i64`, `u64`).
///
/// `abi = custom` takes the kernel's own parameter order, pointers and params interleaved, with
/// each pointer's extent in `#[len(EXPR)]` (integer literals, integer params, `grid.x|y|z`,
/// `block.x|y|z`, `+ - * /`, `div_ceil(a, b)`, parentheses), and optionally
/// `covers = EXPR`, the element count the kernel covers with one thread each:
///
/// ```ignore
/// #[jitseam::kernel(abi = custom, covers = n)]
/// fn saxpy(#[len(n)] out: Out<f32>, #[len(n)] x: In<f32>, n: i32, a: f32);
/// ```
///
/// `block = (x, y, z)` is the exact block every launch uses (for a body written for a fixed
/// tile), and `shared = EXPR` the least dynamic shared bytes every launch gives (for a body
/// whose `extern __shared__` array its params size, `shared = 4 * (32 + ncols)`), over the
/// extent grammar; both are checked at every launch and are facts for the body verifier.
///
/// Generates `pub struct ReluAdd;` implementing `jitseam::Signature`, the argument struct
/// `ReluAddArgs<'a>` and its constructor `ReluAdd::args(..)`, so a bound kernel launches as
/// `kernel.launch(&stream, ReluAdd::args(&a, &b, &mut out, 1.0))`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::kernel(attr.into(), item.into()).into()
}

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
