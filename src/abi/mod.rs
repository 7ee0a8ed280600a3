//! The kernel ABIs (scalar, vectorized, strided and custom): compile-time markers, the runtime [`AbiSpec`], the exact parameter list
//! each ABI implies, where each parameter sits in the argument packet, and the packet itself with
//! the byte ranges its operands reach.

mod contract;
mod custom;
mod kind;
mod layout;
mod packet;
mod params;
mod prototype;
mod reach;
mod spec;
mod value;

pub use custom::{
    CustomAbi, CustomKind, CustomParam, ExtentEnv, ExtentOp, ExtentProblem, MAX_EXTENT_DEPTH,
    SignatureError, eval_next,
};
pub use kind::{Abi, AbiKind, Scalar, Strided, Vectorized};
pub use layout::{DensePrefix, ParamLayout, PlacedParam};
pub use packet::ArgPacket;
pub use params::{ExpectedParam, ParamClass, ParamRole};
pub use reach::{OperandRange, OperandReach};
pub use spec::{AbiSpec, MAX_PARAM_BYTES, MAX_RANK, SpecProblem};
pub use value::ParamValue;
pub(crate) use value::copy_le;
