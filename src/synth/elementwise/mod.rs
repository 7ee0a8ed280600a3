//! The reference [`ElementwiseSynthesizer`]: elementwise regions to PTX text, no NVRTC.
//!
//! One request goes through three steps, each its own function:
//! 1. `validate` the operands: one supported float dtype, every shape equal to the output's
//!    (broadcast is a stride of 0, never a smaller shape, so no index can run past an operand),
//!    sane alignment and rank, an output that never writes one element twice;
//! 2. `lower` the region to a post-order program, numbering its scalars as runtime params
//!    and recording that numbering as the artifact's param map;
//! 3. `choose_abi` from the operands, then write the PTX (`emit`).
//!
//! Params take the compute type (f32 for f32/f16/bf16 kernels, f64 for f64): a scalar applied
//! to a half is applied in f32 like the rest of the arithmetic.

mod builder;
mod emit;
mod ops;
mod plan;

pub use plan::{MAX_REGION_DEPTH, MAX_REGION_NODES, MIN_ARCH};

use std::time::Instant;

use crate::artifact::Artifact;
use crate::dtype::ElementKind;
use crate::synth::{JitRequest, SynthDecline, Synthesizer};
use builder::Compute;
use ops::Op;

/// Identifies the emitted code's generation, recorded in every artifact's link entry.
pub const REVISION: &str = "jitseam-elementwise-1";

/// Every op name the synthesizer knows, in region spelling.
pub const OPS: [&str; 17] = [
    "add",
    "sub",
    "mul",
    "div",
    "max",
    "min",
    "neg",
    "abs",
    "relu",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sigmoid",
    "silu",
    "add_scalar",
    "mul_scalar",
];

/// `(operands, scalars)` that op `name` takes, `None` for a name the synthesizer does not know.
pub fn op_signature(name: &str) -> Option<(usize, usize)> {
    Op::from_name(name).map(|op| (op.arity(), op.scalars()))
}

/// Whether the synthesizer computes op `name` in `dtype` (f64 transcendentals are declined).
pub fn supports(name: &str, dtype: ElementKind) -> bool {
    let compute = match dtype {
        ElementKind::F32 | ElementKind::F16 | ElementKind::BF16 => Compute::F32,
        ElementKind::F64 => Compute::F64,
        _ => return false,
    };
    Op::from_name(name).is_some_and(|op| op.supports(compute))
}

/// Synthesizes elementwise kernels for `add sub mul div max min neg abs relu exp log sqrt tanh
/// sigmoid silu add_scalar mul_scalar` over f32, f64, f16 and bf16 (halves compute in f32) in
/// the scalar, vectorized and strided ABIs.
///
/// f64 `exp log tanh sigmoid silu` are declined: PTX has no f64 approximations of them, and
/// answering through f32 would be silently imprecise.
#[derive(Debug, Clone, Copy, Default)]
pub struct ElementwiseSynthesizer;

impl ElementwiseSynthesizer {
    /// The synthesizer.
    pub const fn new() -> Self {
        Self
    }
}

impl Synthesizer for ElementwiseSynthesizer {
    fn synthesize(&self, request: &JitRequest) -> Result<Artifact, SynthDecline> {
        let started = Instant::now();
        let plan = plan::plan(request)?;
        let text = emit::module(&plan);
        let spent = started.elapsed();
        let spent_us = u64::try_from(spent.as_micros()).unwrap_or(u64::MAX);
        // Checked after the work because synthesis is far below any sensible budget; a caller
        // who set a smaller one still gets exactly the answer it asked for.
        if spent_us > request.budget.max_compile_us {
            return Err(SynthDecline::OverBudget {
                spent_us,
                budget_us: request.budget.max_compile_us,
            });
        }
        let mut artifact = Artifact::ptx(text, plan.entry, plan.spec);
        artifact.param_map = plan.param_map;
        artifact.link.structure_key = Some(plan.structure_key);
        artifact.link.revision_hash = Some(REVISION.to_owned());
        Ok(artifact)
    }
}

#[cfg(test)]
mod tests;
