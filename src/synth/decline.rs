//! [`SynthDecline`]: every reason a synthesizer gives for not producing a kernel.
//!
//! Declining is the ordinary outcome, not a failure of jitseam, so this is its own
//! enum rather than a variant of [`crate::Error`]; it is serde so an out-of-process synthesizer
//! can send its reason back as data.

use serde::{Deserialize, Serialize};

use super::request::{Arch, OperandRole};
use crate::dtype::ElementKind;

/// Why a synthesizer produced no artifact for a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "decline")]
#[non_exhaustive]
pub enum SynthDecline {
    /// The synthesizer has no implementation of `op` for `dtype` (an unknown name, or a known
    /// one it cannot compute exactly enough in that dtype).
    #[error("unsupported op `{op}` for {dtype}")]
    UnsupportedOp {
        /// The op name from the region.
        op: String,
        /// The dtype it was asked in.
        dtype: ElementKind,
    },
    /// An operand's element type is not one the synthesizer computes in.
    #[error("{operand} has dtype {dtype}, which this synthesizer does not support")]
    UnsupportedDtype {
        /// Which operand.
        operand: OperandRole,
        /// Its dtype.
        dtype: ElementKind,
    },
    /// Operands of different dtypes in a synthesizer that needs one dtype throughout.
    #[error("{operand} has dtype {found}, the other operands {expected}")]
    MixedDtypes {
        /// Which operand differs.
        operand: OperandRole,
        /// The first operand's dtype.
        expected: ElementKind,
        /// This operand's dtype.
        found: ElementKind,
    },
    /// An op node with the wrong number of operand subtrees.
    #[error("op `{op}` takes {expected} operands, the region gives it {found}")]
    Arity {
        /// The op.
        op: String,
        /// Operands it takes.
        expected: usize,
        /// Operands given.
        found: usize,
    },
    /// An op node with the wrong number of scalars.
    #[error("op `{op}` takes {expected} scalars, the region gives it {found}")]
    ScalarCount {
        /// The op.
        op: String,
        /// Scalars it takes.
        expected: usize,
        /// Scalars given.
        found: usize,
    },
    /// A `Bind` names an input the request does not have.
    #[error("the region binds input {index}, the request has {inputs} inputs")]
    BindOutOfRange {
        /// The bind index.
        index: u32,
        /// Inputs in the request.
        inputs: usize,
    },
    /// The request has no operands, so no output.
    #[error("the request has no output operand")]
    NoOutput,
    /// The region has more nodes or nesting than the synthesizer accepts.
    #[error(
        "the region has {nodes} nodes and depth {depth}; the limit is {max_nodes} nodes, depth {max_depth}"
    )]
    RegionTooLarge {
        /// Nodes in the region (counted up to the limit).
        nodes: usize,
        /// Nesting depth (counted up to the limit).
        depth: usize,
        /// Node limit.
        max_nodes: usize,
        /// Depth limit.
        max_depth: usize,
    },
    /// An operand's shape differs from the output's. Broadcasting is spelled as stride 0 at the
    /// output's shape, so that the kernel never reads past a smaller operand.
    #[error("{operand} has shape {found:?}, the output has shape {expected:?}")]
    ShapeMismatch {
        /// Which operand.
        operand: OperandRole,
        /// The output's shape.
        expected: Vec<u64>,
        /// The operand's shape.
        found: Vec<u64>,
    },
    /// An operand whose stride list and shape have different lengths.
    #[error("{operand} has {shape_rank} axes but {strides} strides")]
    StrideCount {
        /// Which operand.
        operand: OperandRole,
        /// Axes in the shape.
        shape_rank: usize,
        /// Entries in the strides.
        strides: usize,
    },
    /// More axes than the strided ABI carries.
    #[error("{operand} has rank {rank}, more than the {max} the strided abi carries")]
    RankTooHigh {
        /// Which operand.
        operand: OperandRole,
        /// Its rank.
        rank: usize,
        /// The ABI's limit.
        max: usize,
    },
    /// An operand so large that its element count or extent does not fit a `long long`.
    #[error("{operand} is too large for 64-bit signed indexing")]
    TooLarge {
        /// Which operand.
        operand: OperandRole,
    },
    /// The output has a stride-0 axis of extent above one: two indices would write one element.
    #[error("the output overlaps itself: stride 0 on axis {axis} of extent {extent}")]
    OutputOverlaps {
        /// The axis.
        axis: usize,
        /// Its extent.
        extent: u64,
    },
    /// An operand's base alignment is not a power of two of at least its element size: no
    /// element load of that dtype is legal there.
    #[error("{operand} is aligned to {align} bytes; a {dtype} element needs a power of two of at least {}", dtype.size())]
    Misaligned {
        /// Which operand.
        operand: OperandRole,
        /// Its dtype.
        dtype: ElementKind,
        /// The declared alignment.
        align: u32,
    },
    /// The request's architecture is older than the kernels this synthesizer emits.
    #[error("the request targets {arch}; this synthesizer emits kernels for {min} and later")]
    UnsupportedArch {
        /// Requested.
        arch: Arch,
        /// The oldest the synthesizer supports.
        min: Arch,
    },
    /// The kernel would take more parameter bytes than a launch can pass, or otherwise
    /// describe no valid ABI.
    #[error("the kernel's abi would be invalid: {reason}")]
    InvalidAbi {
        /// What the ABI check said.
        reason: String,
    },
    /// Synthesis took longer than the caller's budget; the result was discarded.
    #[error("synthesis took {spent_us} us, over the budget of {budget_us} us")]
    OverBudget {
        /// Time spent.
        spent_us: u64,
        /// The budget.
        budget_us: u64,
    },
}
