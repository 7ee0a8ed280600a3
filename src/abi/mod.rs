//! The three kernel ABIs (DESIGN §4): compile-time markers, the runtime [`AbiSpec`], the exact
//! parameter list each ABI implies, and the check of a PTX entry against that list.

mod contract;
mod kind;
mod layout;
mod params;
mod spec;
mod verify;

pub use kind::{Abi, AbiKind, Scalar, Strided, Vectorized};
pub use layout::{ParamLayout, PlacedParam};
pub use params::{ExpectedParam, ParamClass, ParamRole};
pub use spec::{AbiSpec, MAX_PARAM_BYTES, MAX_RANK};
pub(crate) use verify::verify_entry_params;
