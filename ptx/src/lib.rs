//! PTX syntax for jitseam: the lexer, the module parser, the typed instruction model and its
//! resolver — one reading of PTX for every reader (the emulator's decoder in `jitseam-emu`,
//! the body verifier in `jitseam-verify`), with no pass of its own.
//!
//! [`parse_module`] reads what `load()` needs from PTX text without a driver: the `.version`,
//! the `.target` architecture, and every `.entry` with its `.param` list (type, alignment, array
//! length, `.ptr` attribute) and performance directives. Bodies are not parsed then; their byte
//! ranges are recorded, and [`resolve::ResolvedModule::entry`] reads one entry's body (and those
//! of the functions it calls) into typed [`inst::Instruction`]s with every name resolved.
//!
//! ```
//! let ptx = "
//! .version 8.8
//! .target sm_80
//! .address_size 64
//! .visible .entry add(.param .u64 add_param_0, .param .f32 add_param_1)
//! {
//!     ret;
//! }
//! ";
//! let module = jitseam_ptx::parse_module(ptx)?;
//! let entry = module.entry("add").ok_or("no entry")?;
//! assert_eq!(module.target.sm(), Some(80));
//! assert_eq!(entry.params.len(), 2);
//! assert_eq!(entry.params[1].ty, jitseam_ptx::ScalarType::F32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`scan_module`] does the same work and validation without building the owned model: it
//! returns a [`ModuleIndex`] whose names borrow the text and whose parameters live in one shared
//! vector, so a caller that needs one kernel converts only that one ([`EntryRef::to_owned`]).
//!
//! ```
//! # let ptx = ".version 8.8\n.target sm_80\n.entry k(.param .u64 k_param_0) { ret; }";
//! let index = jitseam_ptx::scan_module(ptx)?;
//! let entry = index.entry("k").ok_or("no entry")?;
//! assert_eq!(entry.params[0].name, "k_param_0");
//! assert_eq!(index.to_module(), jitseam_ptx::parse_module(ptx)?);
//! let owned: jitseam_ptx::Entry = entry.to_owned();
//! # assert_eq!(owned.params.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//! [`body::parse_body`] reads the statements of one body. What they mean is given by the
//! crates built on this one: `jitseam-emu` runs them, `jitseam-verify` proves them.
//!
//! [`cubin`] and [`fatbin`] read compiled artifacts: a cubin's architecture, kernels and their
//! parameters (offsets and sizes only: a cubin does not record types), and a fatbin's images
//! with the choice of one for a device.
//!
//! Nothing here panics on any input; every failure is a [`ParseError`] with a byte offset and the
//! 1-based line and column derived from it.

// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod body;
pub mod cubin;
mod cursor;
mod error;
mod fast;
pub mod fatbin;
mod index;
pub mod inst;
mod lexer;
mod line_index;
mod marks;
mod model;
mod module;
pub mod resolve;
mod skip;
mod variable;

/// The integration tests' PTX samples, shared with the unit tests.
#[cfg(test)]
#[path = "../tests/common/mod.rs"]
mod test_samples;

pub use cubin::{Cubin, CubinEntry, CubinError, CubinParam, SmArch, parse_cubin};
pub use error::{ParseError, ParseErrorKind, excerpt};
pub use fatbin::{Fatbin, FatbinError, FatbinImage, ImageKind, parse_fatbin};
pub use index::{Dims, DirectiveRef, EntryRef, FunctionRef, ModuleIndex, ParamRef};
pub use lexer::{
    FloatValue, LexError, LexErrorKind, Lexer, Punct, Token, TokenKind, is_ident_continue,
    is_ident_start, parse_float, parse_int,
};
pub use line_index::{LineIndex, line_col};
pub use model::{
    Entry, Function, Linkage, Module, Param, PerfDirective, PtrAttr, ScalarType, StateSpace,
    Target, Version,
};
pub use module::{parse_module, scan_module};
pub use variable::module_variables;
