//! The kernel ABIs (scalar, vectorized, strided and custom): the model from `jitseam-abi` —
//! compile-time markers, the runtime [`AbiSpec`], the exact parameter list each ABI implies,
//! where each parameter sits in the argument packet, the custom ABI's signatures and extents —
//! and what joins it to the rest of jitseam: the verifier's view of a spec ([`AbiContract`]),
//! the class of a parsed PTX parameter ([`ptx_param_class`]), and the packet a backend receives
//! with the byte ranges its operands reach.
//!
#![doc = include_str!("../../docs/abi.md")]

mod contract;
mod hidden;
mod packet;
mod ptx;
mod reach;

pub use contract::AbiContract;
pub(crate) use hidden::{HiddenWords, LimitOf, LimitWord};
pub(crate) use jitseam_abi::copy_le;
pub use jitseam_abi::{
    Abi, AbiKind, AbiSpec, BlockError, BlockShape, CustomAbi, CustomKind, CustomParam, DensePrefix,
    ExpectedParam, ExtentCompiler, ExtentEnv, ExtentError, ExtentLexer, ExtentNames, ExtentOp,
    ExtentProblem, ExtentSite, ExtentToken, MAX_BLOCK, MAX_BLOCK_THREADS, MAX_EXTENT_DEPTH,
    MAX_EXTENT_NESTING, MAX_EXTENT_STEPS, MAX_PARAM_BYTES, MAX_RANK, MAX_VECTOR_BYTES, ParamClass,
    ParamLayout, ParamRole, ParamValue, PlacedParam, Scalar, SignatureError, SignatureProblem,
    SpecProblem, Strided, VECTOR_WIDTHS, Vectorized, eval_next, parse_extent, validate_block,
};
pub use packet::ArgPacket;
pub use ptx::ptx_param_class;
pub use reach::{OperandRange, OperandReach};
