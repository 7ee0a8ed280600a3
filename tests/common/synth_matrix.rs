//! Every kernel the reference elementwise synthesizer emits: ops × dtypes × ABIs (every vector
//! width, scalar, strided ranks 1 to 8). Shared by the ptxas test and the verifier's tests.

use jitseam::synth::elementwise::{OPS, op_signature, supports};
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, SynthDecline,
    Synthesizer,
};
use jitseam::{Artifact, ElementKind};

const DTYPES: [ElementKind; 4] = [
    ElementKind::F32,
    ElementKind::F64,
    ElementKind::F16,
    ElementKind::BF16,
];

fn widths(dtype: ElementKind) -> &'static [u32] {
    match dtype.size() {
        2 => &[8, 4, 2],
        4 => &[4, 2],
        _ => &[2],
    }
}

fn view(dtype: ElementKind, shape: &[u64], strides: &[i64], align: u32) -> OperandDesc {
    OperandDesc {
        dtype,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        align,
    }
}

/// Operand layouts (two inputs and the output) that steer the synthesizer to each ABI, and
/// whether every region is synthesized in them.
fn layouts(dtype: ElementKind) -> Vec<(Vec<OperandDesc>, bool)> {
    let size = dtype.size() as u32;
    let dense = |shape: &[u64], align| OperandDesc::contiguous(dtype, shape, align);
    let mut out: Vec<(Vec<OperandDesc>, bool)> = widths(dtype)
        .iter()
        .map(|&w| (vec![dense(&[3 * u64::from(w)], w * size); 3], true))
        .collect();
    out.push((vec![dense(&[3, 5], 16); 3], true));
    for rank in 1..=8usize {
        let shape = vec![2u64; rank];
        let mut transposed: Vec<i64> = jitseam::synth::row_major_strides(&shape);
        transposed.reverse();
        transposed[0] = -transposed[0];
        let mut broadcast = jitseam::synth::row_major_strides(&shape);
        broadcast[0] = 0;
        let operands = vec![
            view(dtype, &shape, &transposed, size),
            view(dtype, &shape, &broadcast, size),
            dense(&shape, size),
        ];
        out.push((operands, rank == 2));
    }
    out
}

/// Every op alone, plus a three-op region with two params; each with its input count.
fn regions() -> Vec<(Region, usize)> {
    let mut out: Vec<(Region, usize)> = OPS
        .iter()
        .map(|&name| {
            let (arity, scalars) = op_signature(name).unwrap_or((0, 0));
            let region = Region::op_with_scalars(
                name,
                (0..arity as u32).map(Region::bind).collect(),
                vec![1.5; scalars],
            );
            (region, arity)
        })
        .collect();
    let three = Region::op_with_scalars(
        "add_scalar",
        vec![Region::op(
            "max",
            vec![
                Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]),
                Region::bind(1),
            ],
        )],
        vec![3.0],
    );
    out.push((three, 2));
    out
}

/// One request of the matrix: its op (empty for a composite region), its dtype, and the
/// synthesizer's answer.
pub struct Outcome {
    pub op: String,
    pub dtype: ElementKind,
    pub result: Result<Artifact, SynthDecline>,
}

impl Outcome {
    /// Whether the synthesizer computes this op in this dtype (f64 transcendentals are not).
    pub fn supported(&self) -> bool {
        !OPS.contains(&self.op.as_str()) || supports(&self.op, self.dtype)
    }
}

/// Every request of the matrix, answered. Strided ranks other than 2 get only the three-op
/// region: the unravel code is what differs between ranks.
pub fn outcomes() -> Vec<Outcome> {
    let synth = ElementwiseSynthesizer::new();
    let mut out = Vec::new();
    for dtype in DTYPES {
        for (layout, all_regions) in layouts(dtype) {
            let regions = regions();
            let skip = if all_regions { 0 } else { regions.len() - 1 };
            for (region, arity) in regions.into_iter().skip(skip) {
                let op = match &region {
                    Region::Op { op, .. } => op.clone(),
                    Region::Bind { .. } => String::new(),
                };
                let mut operands: Vec<OperandDesc> = layout[..arity].to_vec();
                operands.extend(layout.last().cloned());
                let request = JitRequest {
                    region,
                    operands,
                    arch: Arch::sm(80),
                    budget: JitBudget::millis(10_000),
                };
                out.push(Outcome {
                    op,
                    dtype,
                    result: synth.synthesize(&request),
                });
            }
        }
    }
    out
}

/// Every artifact of the matrix (the supported requests).
pub fn artifacts() -> Vec<Artifact> {
    outcomes()
        .into_iter()
        .filter(Outcome::supported)
        .filter_map(|outcome| outcome.result.ok())
        .collect()
}
