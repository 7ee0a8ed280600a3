//! The benches' synthesizer request: `add_scalar(max(mul_scalar(x, 2), y), 3)`, three ops and
//! two params, over the given operands for the given architecture.

use jitseam::synth::{Arch, JitBudget, JitRequest, OperandDesc, Region};

pub(crate) fn three_op(operands: Vec<OperandDesc>, arch: Arch) -> JitRequest {
    JitRequest {
        region: Region::op_with_scalars(
            "add_scalar",
            vec![Region::op(
                "max",
                vec![
                    Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]),
                    Region::bind(1),
                ],
            )],
            vec![3.0],
        ),
        operands,
        arch,
        budget: JitBudget::millis(1000),
    }
}
