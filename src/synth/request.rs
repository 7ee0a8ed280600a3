//! What a synthesizer is asked: [`JitRequest`], its [`Region`] and its [`OperandDesc`]s.
//!
//! Pure serde data, so a synthesizer can run out of process: the request is the whole question,
//! nothing refers back into the runtime that asked it.

use serde::{Deserialize, Serialize};

use crate::artifact::ParamSource;
use crate::dtype::ElementKind;

/// A region the runtime cannot run, described well enough to synthesize a kernel for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JitRequest {
    /// What to compute, as a tree over the inputs.
    pub region: Region,
    /// The inputs in bind order (`Region::Bind { index }` names `operands[index]`), then the
    /// output. The region is one tree, so there is exactly one output: the last operand.
    pub operands: Vec<OperandDesc>,
    /// The architecture the kernel must run on.
    pub arch: Arch,
    /// How long the caller is willing to wait for a kernel.
    pub budget: JitBudget,
}

impl JitRequest {
    /// The inputs: every operand but the last (empty if there are no operands at all).
    pub fn inputs(&self) -> &[OperandDesc] {
        match self.operands.split_last() {
            Some((_, inputs)) => inputs,
            None => &[],
        }
    }

    /// The output: the last operand, if any.
    pub fn output(&self) -> Option<&OperandDesc> {
        self.operands.last()
    }
}

/// A fused computation as data: an operation tree whose leaves bind inputs.
///
/// `op` is a name, not a closed enum, because the region comes from the runtime's own recipe
/// vocabulary; a synthesizer declines the names it does not know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Region {
    /// Apply `op` to the values of `operands`, with compile-time-unknown `scalars`
    /// (they become runtime params of the kernel).
    Op {
        /// Operation name (`add`, `mul_scalar`, …).
        op: String,
        /// Argument subtrees, in the op's argument order.
        operands: Vec<Region>,
        /// The op's scalar arguments (`mul_scalar`'s factor). Their values are not baked into
        /// the kernel: the artifact's param map says which param each one feeds.
        #[serde(default)]
        scalars: Vec<f64>,
    },
    /// The value of input `index` at the current element.
    Bind {
        /// Index into the request's inputs.
        index: u32,
    },
}

impl Region {
    /// A leaf reading input `index`.
    pub fn bind(index: u32) -> Self {
        Self::Bind { index }
    }

    /// An op without scalars.
    pub fn op(op: impl Into<String>, operands: Vec<Region>) -> Self {
        Self::Op {
            op: op.into(),
            operands,
            scalars: Vec::new(),
        }
    }

    /// An op with scalars.
    pub fn op_with_scalars(
        op: impl Into<String>,
        operands: Vec<Region>,
        scalars: Vec<f64>,
    ) -> Self {
        Self::Op {
            op: op.into(),
            operands,
            scalars,
        }
    }

    /// Every node in post-order (children left to right, then the node): the numbering
    /// [`ParamSource::node`] uses. Iterative, so a deep region cannot overflow the stack.
    pub fn post_order(&self) -> Vec<&Region> {
        let mut order = Vec::new();
        // (node, whether its children have been pushed already)
        let mut stack = vec![(self, false)];
        while let Some((node, expanded)) = stack.pop() {
            match node {
                Region::Op { operands, .. } if !expanded => {
                    stack.push((node, true));
                    stack.extend(operands.iter().rev().map(|child| (child, false)));
                }
                _ => order.push(node),
            }
        }
        order
    }

    /// The scalar value each param takes, in param order, for an artifact's param map; `None`
    /// if the map names a node or scalar this region does not have (the map belongs to another
    /// region).
    pub fn param_values(&self, map: &[ParamSource]) -> Option<Vec<f64>> {
        let nodes = self.post_order();
        map.iter()
            .map(
                |source| match nodes.get(usize::try_from(source.node).ok()?)? {
                    Region::Op { scalars, .. } => {
                        scalars.get(usize::try_from(source.scalar).ok()?).copied()
                    }
                    Region::Bind { .. } => None,
                },
            )
            .collect()
    }
}

/// One operand as the kernel will see it: element type, logical shape, strides and where its
/// first element sits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OperandDesc {
    /// Element type, exactly as the runtime has it (never approximated).
    pub dtype: ElementKind,
    /// Extent of each axis, outermost first.
    pub shape: Vec<u64>,
    /// Signed stride of each axis in elements: 0 broadcasts, negative reverses.
    pub strides: Vec<i64>,
    /// Largest power of two that divides the address of the first element, in bytes.
    pub align: u32,
}

impl OperandDesc {
    /// A row-major contiguous operand.
    pub fn contiguous(dtype: ElementKind, shape: &[u64], align: u32) -> Self {
        Self {
            dtype,
            strides: row_major_strides(shape),
            shape: shape.to_vec(),
            align,
        }
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements, `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// True when element `i` (row-major) lives at offset `i` from the base: every axis of extent
    /// above one has the row-major stride. Axes of extent one may carry any stride, since no
    /// index ever moves along them.
    pub fn is_contiguous(&self) -> bool {
        if self.strides.len() != self.shape.len() {
            return false;
        }
        let mut expected: i128 = 1;
        for (&extent, &stride) in self.shape.iter().zip(&self.strides).rev() {
            if extent > 1 && i128::from(stride) != expected {
                return false;
            }
            expected = expected.saturating_mul(i128::from(extent));
        }
        true
    }
}

/// Row-major strides for `shape`, saturating (a shape that large describes no real buffer and is
/// refused by validation anyway).
pub fn row_major_strides(shape: &[u64]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut acc: i64 = 1;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = acc;
        acc = acc.saturating_mul(i64::try_from(extent).unwrap_or(i64::MAX));
    }
    strides
}

/// Which operand of a request a reason is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperandRole {
    /// Input `k` (bind index `k`).
    Input(u32),
    /// Output `m`.
    Output(u32),
}

impl OperandRole {
    /// The role of `operands[index]` in a request with `count` operands, the last the output.
    pub fn of_index(index: usize, count: usize) -> Self {
        let as_u32 = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        if index + 1 >= count {
            Self::Output(as_u32(index + 1 - count))
        } else {
            Self::Input(as_u32(index))
        }
    }
}

impl std::fmt::Display for OperandRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(k) => write!(f, "input {k}"),
            Self::Output(m) => write!(f, "output {m}"),
        }
    }
}

/// A GPU architecture as its SM number (`sm_89` is `Arch { sm: 89 }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Arch {
    /// `10 * major + minor` of the compute capability.
    pub sm: u32,
}

impl Arch {
    /// `sm_<sm>`.
    pub const fn sm(sm: u32) -> Self {
        Self { sm }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sm_{}", self.sm)
    }
}

/// How much synthesis time the caller accepts before it would rather fall back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct JitBudget {
    /// Wall-clock microseconds for the whole synthesis.
    pub max_compile_us: u64,
}

impl JitBudget {
    /// A budget of `ms` milliseconds.
    pub const fn millis(ms: u64) -> Self {
        Self {
            max_compile_us: ms.saturating_mul(1000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_order_numbers_children_first() {
        // add_scalar(mul_scalar(x, 2), 3): x = 0, mul_scalar = 1, add_scalar = 2.
        let inner = Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]);
        let region = Region::op_with_scalars("add_scalar", vec![inner], vec![3.0]);
        let order = region.post_order();
        assert_eq!(order.len(), 3);
        assert_eq!(order[0], &Region::bind(0));
        assert!(matches!(order[1], Region::Op { op, .. } if op == "mul_scalar"));
        let map = [
            ParamSource { node: 1, scalar: 0 },
            ParamSource { node: 2, scalar: 0 },
        ];
        assert_eq!(region.param_values(&map), Some(vec![2.0, 3.0]));
        assert_eq!(
            region.param_values(&[ParamSource { node: 0, scalar: 0 }]),
            None
        );
        assert_eq!(
            region.param_values(&[ParamSource { node: 1, scalar: 1 }]),
            None
        );
    }

    #[test]
    fn contiguity_ignores_unit_axes_and_sees_reversal() {
        let mut d = OperandDesc::contiguous(ElementKind::F32, &[2, 1, 3], 16);
        assert_eq!(d.strides, [3, 3, 1]);
        assert!(d.is_contiguous());
        d.strides[1] = 99;
        assert!(d.is_contiguous());
        d.strides[2] = -1;
        assert!(!d.is_contiguous());
        let transposed = OperandDesc {
            strides: vec![1, 2],
            ..OperandDesc::contiguous(ElementKind::F32, &[2, 2], 16)
        };
        assert!(!transposed.is_contiguous());
    }

    #[test]
    fn serde_round_trips() {
        let req = JitRequest {
            region: Region::op("add", vec![Region::bind(0), Region::bind(1)]),
            operands: vec![OperandDesc::contiguous(ElementKind::U32, &[4], 4); 3],
            arch: Arch::sm(80),
            budget: JitBudget::millis(5),
        };
        let json = serde_json::to_string(&req).unwrap_or_default();
        assert!(json.contains(r#""kind":"op""#), "{json}");
        assert!(json.contains(r#""dtype":"u32""#), "{json}");
        let back: Option<JitRequest> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(req));
    }

    /// A region is a tree, so its JSON can nest without end: serde_json refuses it past its
    /// recursion limit (128) before recursing further, so a request nested 100,000 levels deep
    /// is an error on a 256 KiB stack, not an overflow.
    #[test]
    fn a_region_nested_past_serde_json_s_limit_is_an_error_on_a_small_stack() {
        let levels = 100_000;
        let json = format!(
            r#"{{"region":{}{{"kind":"bind","index":0}}{},"operands":[],"arch":{{"sm":80}},"budget":{{"max_compile_us":5000}}}}"#,
            r#"{"kind":"op","op":"neg","operands":["#.repeat(levels),
            "]}".repeat(levels)
        );
        let parsed = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || serde_json::from_str::<JitRequest>(&json).map_err(|e| e.to_string()))
            .map(|thread| thread.join());
        let error = match parsed {
            Ok(Ok(Err(error))) => error,
            other => format!("{other:?}"),
        };
        assert!(error.contains("recursion limit exceeded"), "{error}");
        // Within the limit, a nested region reads back whole.
        let mut region = Region::bind(0);
        for _ in 0..40 {
            region = Region::op("neg", vec![region]);
        }
        let req = JitRequest {
            region,
            operands: vec![OperandDesc::contiguous(ElementKind::F32, &[4], 4); 2],
            arch: Arch::sm(80),
            budget: JitBudget::millis(5),
        };
        let json = serde_json::to_string(&req).unwrap_or_default();
        let back: Option<JitRequest> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(req));
    }
}
