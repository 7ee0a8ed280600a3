//! The carrier: the trigger that turns a fused graph node no kernel here can run into a
//! [`JitRequest`], or says — typed — why it does not ask.
//!
//! The question it answers is narrow on purpose: *this fused op has no kernel on this backend;
//! can its region go to a synthesizer instead?* Lowering to primitives would need every
//! primitive of the recipe bound on the backend; handing the region over needs none of them.
//! So the trigger keys on the fused op's absence, not on the recipe's placeability.
//!
//! Declining is the norm and producing a request the exception, so a decline is a
//! [`NotRequested`] reason rather than an [`Error`](crate::Error): not fused, already runnable
//! here, no recipe, an operand dtype with no seam spelling, a rank above the strided ABI's, an
//! operand whose strides do not match its shape.
//!
//! The carrier is honest about operands. A dtype without a seam spelling declines the *whole*
//! request instead of being approximated: typing a `U32` index as `I32` would ask the
//! synthesizer about a different kernel than the one the runtime has (it can flip a
//! "mixed dtypes" decline into a false acceptance). Shapes, strides and alignment are the
//! runtime's own, not assumed row-major.

use std::fmt;

use crate::abi::MAX_RANK;
use crate::dtype::ElementKind;
use crate::synth::{Arch, JitBudget, JitRequest, OperandDesc, OperandRole, Region};

/// A read-only view of a runtime's graph, implemented by the runtime.
pub trait GraphView {
    /// A node handle.
    type NodeId: Copy + fmt::Debug;
    /// The runtime's fused-op identity, as its kernel registry keys on it.
    type Op;
    /// The runtime's own dtype type.
    type DType: Copy + fmt::Debug;

    /// The fused op of `node`; `None` if the node is not a fused node.
    fn fused_op(&self, node: Self::NodeId) -> Option<Self::Op>;

    /// The fused node's recipe as a region over its inputs (`Bind { index }` is
    /// `inputs(node)[index]`); `None` if the op does not expose one.
    fn recipe(&self, node: Self::NodeId) -> Option<Region>;

    /// The node's inputs, in bind order.
    fn inputs(&self, node: Self::NodeId) -> Vec<Self::NodeId>;

    /// The node's shape, outermost axis first.
    fn shape(&self, node: Self::NodeId) -> Vec<u64>;

    /// The node's strides in elements (signed: 0 broadcasts, negative reverses), one per axis.
    fn strides(&self, node: Self::NodeId) -> Vec<i64>;

    /// The node's dtype, in the runtime's own type.
    fn dtype(&self, node: Self::NodeId) -> Self::DType;

    /// Alignment in bytes of the node's first element (the largest power of two dividing its
    /// address, or what the runtime guarantees of it).
    fn base_align(&self, node: Self::NodeId) -> u32;

    /// The seam's spelling of a runtime dtype; `None` when it has none. Must be exact: a
    /// runtime type without an identical [`ElementKind`] has no spelling.
    fn seam_dtype(&self, dtype: Self::DType) -> Option<ElementKind>;
}

/// A runtime's kernel registry: is there a kernel for this op, these dtypes, this backend?
pub trait KernelRegistry {
    /// The fused-op identity (the graph's [`GraphView::Op`]).
    type Op;
    /// The runtime's dtype type (the graph's [`GraphView::DType`]).
    type DType;
    /// The runtime's backend identity.
    type Backend;

    /// Whether `backend` already has a kernel for `op` over `dtypes` (inputs in bind order,
    /// then the output) — the same question the runtime's planner asks.
    fn has_kernel(&self, op: &Self::Op, dtypes: &[Self::DType], backend: &Self::Backend) -> bool;
}

/// Why the carrier did not produce a request. `D` is the runtime's dtype type, so an
/// unspellable dtype is reported as the runtime knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRequested<D> {
    /// The node is not a fused node: only fused nodes have a region to hand over.
    NotFused,
    /// The backend already has a kernel for this op and these dtypes: nothing to synthesize.
    AlreadyRunnable,
    /// The fused op does not expose its recipe as data.
    NoRecipe,
    /// An operand's dtype has no seam spelling; the whole request is declined rather than
    /// approximated.
    UnspellableDtype {
        /// Which operand.
        operand: OperandRole,
        /// Its dtype, as the runtime has it.
        dtype: D,
    },
    /// An operand has more axes than the strided ABI carries.
    RankTooHigh {
        /// Which operand.
        operand: OperandRole,
        /// Its rank.
        rank: usize,
        /// The limit.
        max: usize,
    },
    /// The runtime reported a different number of strides than axes for an operand, so the
    /// operand cannot be described honestly.
    StrideCount {
        /// Which operand.
        operand: OperandRole,
        /// Axes.
        shape_rank: usize,
        /// Strides.
        strides: usize,
    },
}

impl<D: fmt::Debug> fmt::Display for NotRequested<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFused => f.write_str("the node is not fused"),
            Self::AlreadyRunnable => f.write_str("a kernel for it already exists on the backend"),
            Self::NoRecipe => f.write_str("the fused op exposes no recipe"),
            Self::UnspellableDtype { operand, dtype } => {
                write!(
                    f,
                    "{operand} has dtype {dtype:?}, which has no seam spelling"
                )
            }
            Self::RankTooHigh { operand, rank, max } => {
                write!(f, "{operand} has rank {rank}, above the limit of {max}")
            }
            Self::StrideCount {
                operand,
                shape_rank,
                strides,
            } => write!(f, "{operand} has {shape_rank} axes but {strides} strides"),
        }
    }
}

impl<D: fmt::Debug> std::error::Error for NotRequested<D> {}

/// A [`JitRequest`] for `node` if — and only if — it is a fused node that no kernel on
/// `backend` can run and whose region and operands can be described honestly; otherwise the
/// first reason not to ask, checked in the order of [`NotRequested`]'s variants.
///
/// Operands are the inputs in bind order, then the output, with the runtime's own shapes,
/// strides and alignment.
pub fn request_for<G, R>(
    graph: &G,
    node: G::NodeId,
    backend: &R::Backend,
    registry: &R,
    arch: Arch,
    budget: JitBudget,
) -> Result<JitRequest, NotRequested<G::DType>>
where
    G: GraphView + ?Sized,
    R: KernelRegistry<Op = G::Op, DType = G::DType> + ?Sized,
{
    let Some(op) = graph.fused_op(node) else {
        return Err(NotRequested::NotFused);
    };
    let inputs = graph.inputs(node);
    let mut nodes = inputs;
    nodes.push(node);
    let dtypes: Vec<G::DType> = nodes.iter().map(|&n| graph.dtype(n)).collect();
    if registry.has_kernel(&op, &dtypes, backend) {
        return Err(NotRequested::AlreadyRunnable);
    }
    let Some(region) = graph.recipe(node) else {
        return Err(NotRequested::NoRecipe);
    };
    let count = nodes.len();
    let mut operands = Vec::with_capacity(count);
    for (index, (&operand, &dtype)) in nodes.iter().zip(&dtypes).enumerate() {
        let role = OperandRole::of_index(index, count);
        let Some(kind) = graph.seam_dtype(dtype) else {
            return Err(NotRequested::UnspellableDtype {
                operand: role,
                dtype,
            });
        };
        let shape = graph.shape(operand);
        if shape.len() > MAX_RANK {
            return Err(NotRequested::RankTooHigh {
                operand: role,
                rank: shape.len(),
                max: MAX_RANK,
            });
        }
        let strides = graph.strides(operand);
        if strides.len() != shape.len() {
            return Err(NotRequested::StrideCount {
                operand: role,
                shape_rank: shape.len(),
                strides: strides.len(),
            });
        }
        operands.push(OperandDesc {
            dtype: kind,
            shape,
            strides,
            align: graph.base_align(operand),
        });
    }
    Ok(JitRequest {
        region,
        operands,
        arch,
        budget,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime's dtype, with one type that has no seam spelling.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Dt {
        F32,
        U32,
        I32,
        /// An 8-bit float: real in runtimes, absent from the seam.
        F8E4M3,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum FusedOp {
        PagedAttn,
        AddRelu,
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Backend {
        Cuda,
        Cpu,
    }

    struct Node {
        fused: Option<FusedOp>,
        recipe: Option<Region>,
        inputs: Vec<usize>,
        shape: Vec<u64>,
        strides: Option<Vec<i64>>,
        dtype: Dt,
        align: u32,
    }

    #[derive(Default)]
    struct Graph {
        nodes: Vec<Node>,
    }

    impl Graph {
        fn leaf(&mut self, shape: &[u64], dtype: Dt) -> usize {
            self.push(Node {
                fused: None,
                recipe: None,
                inputs: Vec::new(),
                shape: shape.to_vec(),
                strides: None,
                dtype,
                align: 256,
            })
        }

        fn push(&mut self, node: Node) -> usize {
            self.nodes.push(node);
            self.nodes.len() - 1
        }
    }

    impl GraphView for Graph {
        type NodeId = usize;
        type Op = FusedOp;
        type DType = Dt;

        fn fused_op(&self, node: usize) -> Option<FusedOp> {
            self.nodes[node].fused
        }
        fn recipe(&self, node: usize) -> Option<Region> {
            self.nodes[node].recipe.clone()
        }
        fn inputs(&self, node: usize) -> Vec<usize> {
            self.nodes[node].inputs.clone()
        }
        fn shape(&self, node: usize) -> Vec<u64> {
            self.nodes[node].shape.clone()
        }
        fn strides(&self, node: usize) -> Vec<i64> {
            let n = &self.nodes[node];
            n.strides
                .clone()
                .unwrap_or_else(|| crate::synth::row_major_strides(&n.shape))
        }
        fn dtype(&self, node: usize) -> Dt {
            self.nodes[node].dtype
        }
        fn base_align(&self, node: usize) -> u32 {
            self.nodes[node].align
        }
        fn seam_dtype(&self, dtype: Dt) -> Option<ElementKind> {
            match dtype {
                Dt::F32 => Some(ElementKind::F32),
                Dt::U32 => Some(ElementKind::U32),
                Dt::I32 => Some(ElementKind::I32),
                Dt::F8E4M3 => None,
            }
        }
    }

    /// Kernels the runtime has: (op, dtypes, backend).
    #[derive(Default)]
    struct Registry {
        kernels: Vec<(FusedOp, Vec<Dt>, Backend)>,
    }

    impl KernelRegistry for Registry {
        type Op = FusedOp;
        type DType = Dt;
        type Backend = Backend;

        fn has_kernel(&self, op: &FusedOp, dtypes: &[Dt], backend: &Backend) -> bool {
            self.kernels
                .iter()
                .any(|(o, d, b)| o == op && d == dtypes && b == backend)
        }
    }

    fn paged_recipe() -> Region {
        // Not elementwise: the carrier does not judge the region, the synthesizer does.
        Region::op("paged_attn", (0..5).map(Region::bind).collect())
    }

    /// A paged-attention node: f32 data operands, U32 index operands. `index_dtype` replaces the
    /// block table's dtype.
    fn paged(g: &mut Graph, index_dtype: Dt) -> usize {
        let q = g.leaf(&[1, 4, 1, 4], Dt::F32);
        let k = g.leaf(&[32, 4, 4, 4], Dt::F32);
        let v = g.leaf(&[32, 4, 4, 4], Dt::F32);
        let table = g.leaf(&[1, 8], index_dtype);
        let lens = g.leaf(&[1], Dt::U32);
        g.push(Node {
            fused: Some(FusedOp::PagedAttn),
            recipe: Some(paged_recipe()),
            inputs: vec![q, k, v, table, lens],
            shape: vec![1, 4, 1, 4],
            strides: None,
            dtype: Dt::F32,
            align: 256,
        })
    }

    fn ask(g: &Graph, node: usize, registry: &Registry) -> Result<JitRequest, NotRequested<Dt>> {
        request_for(
            g,
            node,
            &Backend::Cuda,
            registry,
            Arch::sm(89),
            JitBudget::millis(1000),
        )
    }

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn builds_a_well_formed_request_for_a_fused_node_with_no_kernel_here() -> TestResult {
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        // The kernel exists, but on another backend: it does not make the node runnable here.
        let registry = Registry {
            kernels: vec![(
                FusedOp::PagedAttn,
                vec![Dt::F32, Dt::F32, Dt::F32, Dt::U32, Dt::U32, Dt::F32],
                Backend::Cpu,
            )],
        };
        // A fused node with no kernel here must yield a request.
        let req = ask(&g, id, &registry)?;
        assert_eq!(
            req.operands.len(),
            6,
            "5 inputs in bind order, then the output"
        );
        let dtypes: Vec<_> = req.operands.iter().map(|o| o.dtype).collect();
        assert_eq!(
            dtypes,
            [
                ElementKind::F32,
                ElementKind::F32,
                ElementKind::F32,
                // Never widened to I32: that would describe a different kernel.
                ElementKind::U32,
                ElementKind::U32,
                ElementKind::F32,
            ]
        );
        assert_eq!(req.operands[1].shape, [32, 4, 4, 4], "bind order kept");
        assert_eq!(req.operands[3].shape, [1, 8]);
        assert_eq!(req.operands[3].strides, [8, 1]);
        assert_eq!(
            req.output().map(|o| o.shape.clone()),
            Some(vec![1, 4, 1, 4])
        );
        assert_eq!(req.inputs().len(), 5);
        assert!(matches!(&req.region, Region::Op { op, .. } if op == "paged_attn"));
        assert_eq!(req.arch, Arch::sm(89));
        assert_eq!(req.budget, JitBudget::millis(1000));
        Ok(())
    }

    #[test]
    fn operands_carry_the_runtimes_real_strides_and_alignment() -> TestResult {
        let mut g = Graph::default();
        let x = g.leaf(&[3, 2], Dt::F32);
        g.nodes[x].strides = Some(vec![1, 3]); // a transposed view
        g.nodes[x].align = 4; // at an element offset
        let y = g.leaf(&[3, 2], Dt::F32);
        g.nodes[y].strides = Some(vec![0, 1]); // broadcast rows
        let id = g.push(Node {
            fused: Some(FusedOp::AddRelu),
            recipe: Some(Region::op(
                "relu",
                vec![Region::op("add", vec![Region::bind(0), Region::bind(1)])],
            )),
            inputs: vec![x, y],
            shape: vec![3, 2],
            strides: None,
            dtype: Dt::F32,
            align: 16,
        });
        let req = ask(&g, id, &Registry::default())?;
        assert_eq!(req.operands[0].strides, [1, 3]);
        assert_eq!(req.operands[0].align, 4);
        assert_eq!(req.operands[1].strides, [0, 1]);
        assert_eq!(req.operands[2].strides, [2, 1]);
        assert_eq!(req.operands[2].align, 16);
        Ok(())
    }

    #[test]
    fn declines_a_node_that_is_not_fused() {
        let mut g = Graph::default();
        let leaf = g.leaf(&[4], Dt::F32);
        assert_eq!(
            ask(&g, leaf, &Registry::default()),
            Err(NotRequested::NotFused)
        );
    }

    #[test]
    fn declines_a_node_already_runnable_on_the_backend() {
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        let registry = Registry {
            kernels: vec![(
                FusedOp::PagedAttn,
                vec![Dt::F32, Dt::F32, Dt::F32, Dt::U32, Dt::U32, Dt::F32],
                Backend::Cuda,
            )],
        };
        assert_eq!(ask(&g, id, &registry), Err(NotRequested::AlreadyRunnable));
    }

    #[test]
    fn the_registry_is_asked_with_the_real_dtypes() {
        // A kernel for I32 indices does not run U32 indices: still a request.
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        let registry = Registry {
            kernels: vec![(
                FusedOp::PagedAttn,
                vec![Dt::F32, Dt::F32, Dt::F32, Dt::I32, Dt::U32, Dt::F32],
                Backend::Cuda,
            )],
        };
        assert!(ask(&g, id, &registry).is_ok());
    }

    #[test]
    fn declines_a_fused_op_without_a_recipe() {
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        g.nodes[id].recipe = None;
        assert_eq!(
            ask(&g, id, &Registry::default()),
            Err(NotRequested::NoRecipe)
        );
    }

    #[test]
    fn declines_the_whole_request_for_an_unspellable_dtype() {
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::F8E4M3);
        assert_eq!(
            ask(&g, id, &Registry::default()),
            Err(NotRequested::UnspellableDtype {
                operand: OperandRole::Input(3),
                dtype: Dt::F8E4M3,
            })
        );
        // The output is checked too, and named as the output.
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        g.nodes[id].dtype = Dt::F8E4M3;
        assert_eq!(
            ask(&g, id, &Registry::default()),
            Err(NotRequested::UnspellableDtype {
                operand: OperandRole::Output(0),
                dtype: Dt::F8E4M3,
            })
        );
    }

    #[test]
    fn declines_rank_above_eight() {
        let mut g = Graph::default();
        let x = g.leaf(&[1; 9], Dt::F32);
        let id = g.push(Node {
            fused: Some(FusedOp::AddRelu),
            recipe: Some(Region::op("relu", vec![Region::bind(0)])),
            inputs: vec![x],
            shape: vec![1; 8],
            strides: None,
            dtype: Dt::F32,
            align: 16,
        });
        assert_eq!(
            ask(&g, id, &Registry::default()),
            Err(NotRequested::RankTooHigh {
                operand: OperandRole::Input(0),
                rank: 9,
                max: 8,
            })
        );
    }

    #[test]
    fn declines_strides_that_do_not_match_the_shape() {
        let mut g = Graph::default();
        let id = paged(&mut g, Dt::U32);
        g.nodes[0].strides = Some(vec![1]);
        let got = ask(&g, id, &Registry::default());
        assert_eq!(
            got,
            Err(NotRequested::StrideCount {
                operand: OperandRole::Input(0),
                shape_rank: 4,
                strides: 1,
            })
        );
        assert!(got.is_err_and(|e| e.to_string().contains("input 0 has 4 axes but 1 strides")));
    }
}
