//! The kernel ABI model of jitseam, as pure data and rules: no driver, no device, no PTX.
//!
//! - [`ElementKind`]: the element types of buffers and by-value params, their sizes and names;
//! - [`AbiKind`] and [`AbiSpec`]: which ABI a kernel follows (scalar, vectorized, strided, or
//!   custom with its parameter table) and its operand and param types, with the limits a spec
//!   must keep ([`AbiSpec::validate`]);
//! - [`ExpectedParam`] and [`ParamLayout`]: the exact `.param` list a spec implies, compared by
//!   [`ParamClass`], and where each parameter sits in the argument packet;
//! - [`AbiSpec::cuda_prototype`]: the CUDA declaration that list corresponds to;
//! - the custom ABI: [`CustomAbi`], its text form ([`CustomAbi::parse`]), and its extents —
//!   parsed by one grammar ([`parse_extent`]) under one set of rules ([`ExtentCompiler`])
//!   whatever the front end lexes (signature text here, Rust tokens in `#[jitseam::kernel]`),
//!   and evaluated with [`eval_next`].
//!
//! The `jitseam` runtime and the `jitseam-macros` crate both validate with these rules, so a
//! declaration the macro accepts is one the runtime accepts. Use it through `jitseam`, which
//! re-exports all of it under `jitseam::abi`.
//!
//! ```
//! use jitseam_abi::{AbiKind, AbiSpec, ElementKind::F32, ParamRole};
//!
//! let spec = AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[F32]);
//! spec.validate()?;
//! let roles: Vec<ParamRole> = spec.expected_params().iter().map(|p| p.role).collect();
//! assert_eq!(
//!     roles,
//!     [ParamRole::Input(0), ParamRole::Input(1), ParamRole::Output(0), ParamRole::Count, ParamRole::Param(0)]
//! );
//!
//! let custom = AbiSpec::parse_custom("out: out f32[n], x: in f32[n], n: i32, a: f32", Some("n"))?;
//! let table = custom.abi.custom().ok_or("a custom spec has its table")?;
//! assert_eq!(table.extent_texts(), ["n", "n", "n"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Nothing here panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![forbid(unsafe_code)]

mod custom;
mod element;
mod kind;
mod layout;
mod params;
mod problem;
mod prototype;
mod spec;
mod value;

pub use custom::{
    BlockError, BlockShape, CustomAbi, CustomKind, CustomParam, ExtentCompiler, ExtentEnv,
    ExtentError, ExtentLexer, ExtentNames, ExtentOp, ExtentProblem, ExtentSite, ExtentToken,
    MAX_BLOCK, MAX_BLOCK_THREADS, MAX_EXTENT_DEPTH, MAX_EXTENT_NESTING, MAX_EXTENT_STEPS,
    SignatureError, SignatureProblem, eval_next, parse_extent, validate_block, vector_type,
};
pub use element::ElementKind;
pub use kind::{
    Abi, AbiKind, MAX_RANK, MAX_VECTOR_BYTES, Scalar, Strided, VECTOR_WIDTHS, Vectorized,
};
pub use layout::{DensePrefix, ParamLayout, PlacedParam};
pub use params::{ExpectedParam, ParamClass, ParamRole};
pub use problem::SpecProblem;
pub use spec::{AbiSpec, MAX_PARAM_BYTES};
pub use value::{ParamValue, copy_le};
