//! Every kernel the reference elementwise synthesizer emits: ops × dtypes × ABIs (every vector
//! width, scalar, strided ranks 1 to 8), as in `tests/synth_ptxas.rs`.

use jitseam::synth::elementwise::{OPS, op_signature, supports};
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, Synthesizer,
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

/// Every artifact of the matrix.
pub fn artifacts() -> Vec<Artifact> {
    let synth = ElementwiseSynthesizer::new();
    let mut out = Vec::new();
    for dtype in DTYPES {
        for (layout, all_regions) in layouts(dtype) {
            let regions = regions();
            let skip = if all_regions { 0 } else { regions.len() - 1 };
            for (region, arity) in regions.into_iter().skip(skip) {
                let name = match &region {
                    Region::Op { op, .. } => op.clone(),
                    Region::Bind { .. } => String::new(),
                };
                if OPS.contains(&name.as_str()) && !supports(&name, dtype) {
                    continue;
                }
                let mut operands: Vec<OperandDesc> = layout[..arity].to_vec();
                operands.extend(layout.last().cloned());
                let request = JitRequest {
                    region,
                    operands,
                    arch: Arch::sm(80),
                    budget: JitBudget::millis(10_000),
                };
                if let Ok(artifact) = synth.synthesize(&request) {
                    out.push(artifact);
                }
            }
        }
    }
    out
}
