//! Deciding the kernel before a line of PTX is written: `validate` the operands, `lower` the
//! region to a post-order program with its param map, and `choose_abi` from the operands.

use std::fmt::Write as _;

use super::builder::Compute;
use super::ops::Op;
use crate::abi::{AbiKind, AbiSpec, MAX_RANK};
use crate::artifact::{ParamSource, fnv1a};
use crate::dtype::ElementKind;
use crate::synth::{Arch, JitRequest, OperandDesc, OperandRole, Region, SynthDecline};

/// The oldest architecture the emitted PTX targets (`.target sm_80`, PTX ISA 8.0).
pub const MIN_ARCH: Arch = Arch::sm(80);

/// Most region nodes accepted; a fused elementwise region is a handful of ops, and the limit
/// bounds both synthesis time and kernel size.
pub const MAX_REGION_NODES: usize = 512;

/// Deepest region nesting accepted, which also bounds the lowering's recursion.
pub const MAX_REGION_DEPTH: usize = 64;

/// One instruction of the lowered program; values are numbered by position.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// The element of input `k`.
    Load(usize),
    /// `op` on earlier values, with runtime params (indices into the param list).
    Apply {
        op: Op,
        args: Vec<usize>,
        params: Vec<usize>,
    },
}

/// Everything the writer needs, decided before a line of PTX is written.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) entry: String,
    pub(crate) dtype: ElementKind,
    pub(crate) compute: Compute,
    pub(crate) spec: AbiSpec,
    pub(crate) steps: Vec<Step>,
    /// Which inputs the region reads.
    pub(crate) used: Vec<bool>,
    pub(crate) param_map: Vec<ParamSource>,
    pub(crate) region_text: String,
    pub(crate) structure_key: String,
}

pub(super) fn plan(request: &JitRequest) -> Result<Plan, SynthDecline> {
    if request.arch < MIN_ARCH {
        return Err(SynthDecline::UnsupportedArch {
            arch: request.arch,
            min: MIN_ARCH,
        });
    }
    let (dtype, compute) = validate(&request.operands)?;
    let inputs = request.inputs().len();
    let lowered = lower(&request.region, inputs, dtype, compute)?;
    let abi = choose_abi(&request.operands, dtype);
    let params = vec![compute.kind(); lowered.param_map.len()];
    let spec = AbiSpec::owned(abi.clone(), vec![dtype; inputs], vec![dtype], params);
    spec.validate()
        .map_err(|problem| SynthDecline::InvalidAbi {
            reason: problem.to_string(),
        })?;
    let abi_short = match &abi {
        AbiKind::Scalar => "scalar".to_owned(),
        AbiKind::Vectorized { width } => format!("v{width}"),
        AbiKind::Strided { rank } => format!("r{rank}"),
        AbiKind::Custom(_) => "custom".to_owned(),
    };
    let structure_key = format!("ew:{}:{dtype}:{abi}:in{inputs}", lowered.key);
    let entry = format!(
        "jitseam_ew_{:016x}_{dtype}_{abi_short}",
        fnv1a(structure_key.as_bytes())
    );
    Ok(Plan {
        entry,
        dtype,
        compute,
        spec,
        steps: lowered.steps,
        used: lowered.used,
        param_map: lowered.param_map,
        region_text: lowered.text,
        structure_key,
    })
}

/// The kernel's dtype and compute type, once every operand has been checked.
fn validate(operands: &[OperandDesc]) -> Result<(ElementKind, Compute), SynthDecline> {
    let count = operands.len();
    let Some(output) = operands.last() else {
        return Err(SynthDecline::NoOutput);
    };
    let role = |index: usize| OperandRole::of_index(index, count);
    let dtype = output.dtype;
    let compute = match dtype {
        ElementKind::F32 | ElementKind::F16 | ElementKind::BF16 => Compute::F32,
        ElementKind::F64 => Compute::F64,
        other => {
            return Err(SynthDecline::UnsupportedDtype {
                operand: role(count - 1),
                dtype: other,
            });
        }
    };
    for (index, operand) in operands.iter().enumerate() {
        let operand_role = role(index);
        if operand.dtype != dtype {
            return Err(if operand.dtype.is_float() {
                SynthDecline::MixedDtypes {
                    operand: operand_role,
                    expected: dtype,
                    found: operand.dtype,
                }
            } else {
                SynthDecline::UnsupportedDtype {
                    operand: operand_role,
                    dtype: operand.dtype,
                }
            });
        }
        if operand.strides.len() != operand.shape.len() {
            return Err(SynthDecline::StrideCount {
                operand: operand_role,
                shape_rank: operand.shape.len(),
                strides: operand.strides.len(),
            });
        }
        if operand.rank() > MAX_RANK {
            return Err(SynthDecline::RankTooHigh {
                operand: operand_role,
                rank: operand.rank(),
                max: MAX_RANK,
            });
        }
        let fits_i64 = |v: u64| i64::try_from(v).is_ok();
        if !operand.shape.iter().all(|&d| fits_i64(d)) || !operand.elements().is_some_and(fits_i64)
        {
            return Err(SynthDecline::TooLarge {
                operand: operand_role,
            });
        }
        let align = operand.align;
        if !align.is_power_of_two() || (align as usize) < dtype.size() {
            return Err(SynthDecline::Misaligned {
                operand: operand_role,
                dtype,
                align,
            });
        }
        if operand.shape != output.shape {
            return Err(SynthDecline::ShapeMismatch {
                operand: operand_role,
                expected: output.shape.clone(),
                found: operand.shape.clone(),
            });
        }
    }
    for (axis, (&extent, &stride)) in output.shape.iter().zip(&output.strides).enumerate() {
        if stride == 0 && extent > 1 {
            return Err(SynthDecline::OutputOverlaps { axis, extent });
        }
    }
    Ok((dtype, compute))
}

/// Vector widths worth trying for `dtype`, widest first: at most 16 bytes per vector.
pub(super) fn widths(dtype: ElementKind) -> &'static [u8] {
    match dtype.size() {
        2 => &[8, 4, 2],
        4 => &[4, 2],
        8 => &[2],
        _ => &[],
    }
}

/// Vectorized when every operand is dense, the element count divides into vectors and every
/// base is aligned to a whole vector (the widest width that fits all three); scalar when dense
/// otherwise; strided for anything else (transposed, broadcast, reversed, gapped views).
pub(crate) fn choose_abi(operands: &[OperandDesc], dtype: ElementKind) -> AbiKind {
    let Some(output) = operands.last() else {
        return AbiKind::Scalar;
    };
    if !operands.iter().all(OperandDesc::is_contiguous) {
        // Rank ≥ 1 here: a rank-0 operand is always contiguous, and validation fixed every
        // rank at the output's and at most MAX_RANK.
        let rank = u8::try_from(output.rank()).unwrap_or(u8::MAX);
        return AbiKind::Strided { rank };
    }
    let n = output.elements().unwrap_or(0);
    for &width in widths(dtype) {
        let vector_bytes = u64::from(width) * dtype.size() as u64;
        let aligned = operands
            .iter()
            .all(|o| u64::from(o.align) % vector_bytes == 0);
        if n % u64::from(width) == 0 && aligned {
            return AbiKind::Vectorized { width };
        }
    }
    AbiKind::Scalar
}

struct Lowered {
    steps: Vec<Step>,
    used: Vec<bool>,
    param_map: Vec<ParamSource>,
    /// Compact structural key (no scalar values: those are runtime params).
    key: String,
    /// The region as a comment: `add_scalar(mul_scalar(in0, p0), p1)`.
    text: String,
}

struct Lowering {
    inputs: usize,
    dtype: ElementKind,
    compute: Compute,
    /// Post-order number of the next node (binds included), as `Region::post_order` counts.
    next_node: u32,
    load_step: Vec<Option<usize>>,
    out: Lowered,
}

fn lower(
    region: &Region,
    inputs: usize,
    dtype: ElementKind,
    compute: Compute,
) -> Result<Lowered, SynthDecline> {
    check_size(region)?;
    let mut state = Lowering {
        inputs,
        dtype,
        compute,
        next_node: 0,
        load_step: vec![None; inputs],
        out: Lowered {
            steps: Vec::new(),
            used: vec![false; inputs],
            param_map: Vec::new(),
            key: String::new(),
            text: String::new(),
        },
    };
    let (key, text) = state.node(region)?;
    state.out.key = key;
    state.out.text = text;
    Ok(state.out)
}

/// Refuses an oversized region before recursing over it, with an explicit stack so that the
/// check itself cannot overflow on a pathological input.
fn check_size(region: &Region) -> Result<(), SynthDecline> {
    let mut nodes = 0usize;
    let mut depth = 0usize;
    let mut stack = vec![(region, 1usize)];
    while let Some((node, level)) = stack.pop() {
        nodes += 1;
        depth = depth.max(level);
        if nodes > MAX_REGION_NODES || depth > MAX_REGION_DEPTH {
            return Err(SynthDecline::RegionTooLarge {
                nodes,
                depth,
                max_nodes: MAX_REGION_NODES,
                max_depth: MAX_REGION_DEPTH,
            });
        }
        if let Region::Op { operands, .. } = node {
            stack.extend(operands.iter().map(|child| (child, level + 1)));
        }
    }
    Ok(())
}

impl Lowering {
    /// Lowers one node and returns its (key, text) spellings.
    fn node(&mut self, region: &Region) -> Result<(String, String), SynthDecline> {
        match region {
            Region::Bind { index } => {
                let k = *index as usize;
                if k >= self.inputs {
                    return Err(SynthDecline::BindOutOfRange {
                        index: *index,
                        inputs: self.inputs,
                    });
                }
                self.next_node += 1;
                // A bind read twice loads once.
                if self.load_step.get(k).copied().flatten().is_none() {
                    self.out.steps.push(Step::Load(k));
                    self.load_step[k] = Some(self.out.steps.len() - 1);
                    self.out.used[k] = true;
                }
                Ok((format!("in{k}"), format!("in{k}")))
            }
            Region::Op {
                op,
                operands,
                scalars,
            } => {
                let Some(parsed) = Op::from_name(op).filter(|o| o.supports(self.compute)) else {
                    return Err(SynthDecline::UnsupportedOp {
                        op: op.clone(),
                        dtype: self.dtype,
                    });
                };
                if operands.len() != parsed.arity() {
                    return Err(SynthDecline::Arity {
                        op: op.clone(),
                        expected: parsed.arity(),
                        found: operands.len(),
                    });
                }
                if scalars.len() != parsed.scalars() {
                    return Err(SynthDecline::ScalarCount {
                        op: op.clone(),
                        expected: parsed.scalars(),
                        found: scalars.len(),
                    });
                }
                let mut args = Vec::with_capacity(operands.len());
                let mut key = format!("{}(", parsed.name());
                let mut text = key.clone();
                for (i, child) in operands.iter().enumerate() {
                    let (child_key, child_text) = self.node(child)?;
                    args.push(self.step_of(child));
                    if i > 0 {
                        key.push(',');
                        text.push_str(", ");
                    }
                    key.push_str(&child_key);
                    text.push_str(&child_text);
                }
                let node = self.next_node;
                self.next_node += 1;
                let mut params = Vec::with_capacity(scalars.len());
                for scalar in 0..scalars.len() {
                    let p = self.out.param_map.len();
                    self.out.param_map.push(ParamSource {
                        node,
                        scalar: u32::try_from(scalar).unwrap_or(u32::MAX),
                    });
                    params.push(p);
                    key.push_str(",p");
                    let _ = write!(text, "{}p{p}", if operands.is_empty() { "" } else { ", " });
                }
                key.push(')');
                text.push(')');
                self.out.steps.push(Step::Apply {
                    op: parsed,
                    args,
                    params,
                });
                Ok((key, text))
            }
        }
    }

    /// The step holding the value of a child that was just lowered.
    fn step_of(&self, child: &Region) -> usize {
        match child {
            Region::Bind { index } => self
                .load_step
                .get(*index as usize)
                .copied()
                .flatten()
                .unwrap_or(usize::MAX),
            Region::Op { .. } => self.out.steps.len().saturating_sub(1),
        }
    }
}
