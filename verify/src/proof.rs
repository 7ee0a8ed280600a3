//! What a successful verification establishes, and what a launch must still check.

use std::fmt;
use std::sync::Arc;

use crate::reject::RejectKind;

/// How the body covers the index space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coverage {
    /// A loop whose induction variable steps by the total thread count: any grid covers `[0, n)`.
    GridStride,
    /// Each thread handles (at most) one index: the grid must provide one thread per element.
    OneThreadPerElement,
}

/// A fact about the launch that the proof relies on and the launcher must check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LaunchCondition {
    /// `n + grid × block ≤ limit` (an index that steps past `n` by one stride must not wrap).
    CountPlusThreadsAtMost {
        /// The bound.
        limit: u64,
    },
    /// `grid × block ≤ limit`.
    ThreadsAtMost {
        /// The bound.
        limit: u64,
    },
    /// `grid.a × block.a ≤ limit` along every axis `a` of a three-dimensional launch (a
    /// coordinate `%ctaid.a · %ntid.a + %tid.a` that must read exactly at 32 bits).
    AxisThreadsAtMost {
        /// The bound.
        limit: u64,
    },
    /// Every declared extent's value is at most `limit` (an index below an extent that must
    /// read exactly at 32 bits).
    ExtentsAtMost {
        /// The bound.
        limit: u64,
    },
    /// Every declared extent's value plus `grid.a × block.a` is at most `limit` along every
    /// axis `a` (an index below an extent, stepped once more by a grid or a block stride,
    /// that must still read exactly at 32 bits: `for (int i = …; i < n; i += stride)`).
    ExtentsPlusAxisThreadsAtMost {
        /// The bound.
        limit: u64,
    },
    /// `grid.x × grid.y × grid.z ≤ limit` (the block's linear index `(blockIdx.z · gridDim.y +
    /// blockIdx.y) · gridDim.x + blockIdx.x`, a row of a batched row kernel, that must read
    /// exactly at 32 bits).
    BlocksAtMost {
        /// The bound.
        limit: u64,
    },
    /// The launch's dynamic shared memory is at least `bytes_per_thread_x × block.x` bytes (a
    /// dynamic shared array indexed by `%tid.x`, one slot of up to that many bytes per thread).
    DynamicSharedAtLeast {
        /// Bytes per thread along x.
        bytes_per_thread_x: u32,
    },
    /// `block.x ≤ x`, `block.y ≤ y` and `block.z ≤ z` (a static shared array indexed by
    /// `%tid`, whose size fixes the block shape it serves).
    BlockAtMost {
        /// The bound on `block.x`.
        x: u32,
        /// The bound on `block.y`.
        y: u32,
        /// The bound on `block.z`.
        z: u32,
    },
}

impl LaunchCondition {
    /// Whether a launch with `count` (the `Count` param), `shape` (strided extents, unused by
    /// the present conditions) and `threads` (grid × block) satisfies the condition.
    ///
    /// A one-dimensional launch has one axis of `threads`; it knows no declared extents, so an
    /// [`LaunchCondition::ExtentsAtMost`] does not hold there (use
    /// [`LaunchCondition::holds_declared`]).
    pub fn holds(&self, count: u64, shape: &[u64], threads: u64) -> bool {
        let _ = shape;
        match *self {
            Self::CountPlusThreadsAtMost { limit } => {
                count.checked_add(threads).is_some_and(|sum| sum <= limit)
            }
            Self::ThreadsAtMost { limit } | Self::AxisThreadsAtMost { limit } => threads <= limit,
            Self::ExtentsAtMost { .. }
            | Self::ExtentsPlusAxisThreadsAtMost { .. }
            | Self::BlocksAtMost { .. }
            | Self::DynamicSharedAtLeast { .. }
            | Self::BlockAtMost { .. } => false,
        }
    }

    /// Whether a launch of a contract with declared extents satisfies the condition: `grid` and
    /// `block` its geometry, `largest_extent` the largest declared extent's value. Conditions
    /// over a count do not hold: such a launch has none; nor do conditions over the dynamic
    /// shared memory, which this launch does not state (see
    /// [`LaunchCondition::holds_custom`]).
    pub fn holds_declared(&self, grid: [u32; 3], block: [u32; 3], largest_extent: u64) -> bool {
        if matches!(self, Self::DynamicSharedAtLeast { .. }) {
            return false;
        }
        self.holds_custom(grid, block, 0, largest_extent)
    }

    /// Whether a custom launch satisfies the condition: `grid` and `block` its geometry,
    /// `dynamic_shared_bytes` its dynamic shared memory, `largest_extent` the largest declared
    /// extent's value. Conditions over a count do not hold: such a launch has none.
    pub fn holds_custom(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        largest_extent: u64,
    ) -> bool {
        match *self {
            Self::DynamicSharedAtLeast { bytes_per_thread_x } => {
                u64::from(bytes_per_thread_x) * u64::from(block[0])
                    <= u64::from(dynamic_shared_bytes)
            }
            Self::BlockAtMost { x, y, z } => block[0] <= x && block[1] <= y && block[2] <= z,
            Self::AxisThreadsAtMost { limit } => grid
                .iter()
                .zip(&block)
                .all(|(&g, &b)| u64::from(g) * u64::from(b) <= limit),
            Self::ExtentsAtMost { limit } => largest_extent <= limit,
            Self::BlocksAtMost { limit } => grid
                .iter()
                .try_fold(1u64, |acc, &g| acc.checked_mul(u64::from(g)))
                .is_some_and(|blocks| blocks <= limit),
            Self::ExtentsPlusAxisThreadsAtMost { limit } => {
                grid.iter().zip(&block).all(|(&g, &b)| {
                    largest_extent
                        .checked_add(u64::from(g) * u64::from(b))
                        .is_some_and(|sum| sum <= limit)
                })
            }
            Self::ThreadsAtMost { limit } => {
                let threads = grid
                    .iter()
                    .chain(&block)
                    .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)));
                threads.is_some_and(|t| t <= limit)
            }
            Self::CountPlusThreadsAtMost { .. } => false,
        }
    }
}

impl fmt::Display for LaunchCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CountPlusThreadsAtMost { limit } => write!(f, "n + threads <= {limit}"),
            Self::ThreadsAtMost { limit } => write!(f, "threads <= {limit}"),
            Self::AxisThreadsAtMost { limit } => {
                write!(f, "grid.a * block.a <= {limit} along every axis a")
            }
            Self::ExtentsAtMost { limit } => write!(f, "every declared extent <= {limit}"),
            Self::ExtentsPlusAxisThreadsAtMost { limit } => write!(
                f,
                "every declared extent + grid.a * block.a <= {limit} along every axis a"
            ),
            Self::BlocksAtMost { limit } => write!(f, "grid.x * grid.y * grid.z <= {limit}"),
            Self::DynamicSharedAtLeast { bytes_per_thread_x } => {
                write!(f, "dynamic shared bytes >= {bytes_per_thread_x} * block.x")
            }
            Self::BlockAtMost { x, y, z } => write!(f, "block <= ({x}, {y}, {z})"),
        }
    }
}

/// The accesses proven through one pointer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AccessSummary {
    /// Index of the `.param`.
    pub param: u32,
    /// Load instructions.
    pub loads: u32,
    /// Store instructions.
    pub stores: u32,
    /// Atomic and reduction instructions.
    pub atomics: u32,
    /// Bytes per access (0 when there is none).
    pub width: u32,
    /// The widest access, in bytes (0 when there is none): every access is at an offset that
    /// is a multiple of its width, so the operand's base address must be a multiple of this
    /// for every address to be aligned. A launch checks it where it exceeds the element's own
    /// alignment (a `float4` access of an `f32` pointer).
    pub align: u32,
}

/// What an access does to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// An atomic or a reduction (reads and writes).
    Atomic,
}

/// What an access goes through.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClaimTarget {
    /// The operand of pointer `.param` `index`.
    Param(u32),
    /// The `.shared` variable of that name.
    Shared(String),
    /// The `.local` variable of that name, the thread's own.
    Local(String),
    /// The module `.const` or `.global` table of that name, only read.
    Table(String),
}

/// What the proof establishes about every execution of one access instruction: it goes
/// through `target`, moves `bytes`, at a byte offset `o` from the target's start with
/// `o ≡ 0 (mod bytes)` and `0 ≤ o ≤ reach − bytes`, where `reach` is what the contract and the
/// launch give the target (`n` or the declared extent times the access size for a pointer, the
/// strided view's elements, the variable's size or the launch's dynamic shared bytes); and a
/// store or atomic only through an output.
///
/// One instruction of a `.func` inlined at several calls may make several claims, one per
/// target it reaches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccessClaim {
    /// 1-based PTX line of the instruction.
    pub line: u32,
    /// The operand or shared variable.
    pub target: ClaimTarget,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Bytes the access moves.
    pub bytes: u32,
}

/// A body proven safe under `conditions` — as written, or with run-time guards on the
/// accesses the proof does not cover ([`Proof::guards`]), whose rewritten PTX
/// ([`Proof::guarded`]) is what the proof is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// How the body covers the index space.
    pub coverage: Coverage,
    /// What each launch must satisfy for the proof to hold.
    pub conditions: Vec<LaunchCondition>,
    /// One summary per pointer parameter, in parameter order.
    pub accesses: Vec<AccessSummary>,
    /// Every access instruction's claim, by line: for a guarded entry, of the rewritten PTX
    /// (the same lines; each guard's fault-record words are claims through its hidden
    /// parameter).
    pub claims: Vec<AccessClaim>,
    pub(crate) guards: Vec<Guard>,
    pub(crate) guarded: Option<Arc<Guarded>>,
}

impl Proof {
    /// The accesses checked at run time instead of proven, in the order of the body: empty
    /// for a body proven as written.
    pub fn guards(&self) -> &[Guard] {
        &self.guards
    }

    /// The entry's PTX with its guards, and its hidden parameters: what a backend runs in
    /// place of the artifact's PTX. `None` for a body proven as written.
    pub fn guarded(&self) -> Option<&Guarded> {
        self.guarded.as_deref()
    }

    /// The proof with each guard through pointer `.param` `i` naming it `declared[i]` (the
    /// caller's declaration of the parameter list) in [`Guard::name`] and [`Guard::why`],
    /// where the verifier wrote the PTX's name; a parameter past `declared` keeps it.
    pub fn with_declared_names(mut self, declared: &[&str]) -> Self {
        for guard in &mut self.guards {
            let ClaimTarget::Param(i) = guard.target else {
                continue;
            };
            let Some(name) = declared.get(i as usize) else {
                continue;
            };
            guard.why = guard
                .why
                .replace(&format!("`{}`", guard.name), &format!("`{name}`"));
            guard.name = (*name).to_owned();
        }
        self
    }
}

/// What a hidden parameter of a guarded entry carries (`.u64` each).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GuardParam {
    /// The device address of the launch's fault record: [`crate::FAULT_RECORD_BYTES`] bytes,
    /// written only by a guard that fails (32- and 64-bit words at fixed offsets, the first
    /// word by an atomic compare-and-swap).
    FaultRecord,
    /// Tag word `i` (0 or 1): a value the launcher chooses, written into the fault record by
    /// a failing guard so that the host can tell whose fault it reads (see
    /// [`crate::FaultRecord`]); data, never an address ingredient.
    Tag(u8),
    /// `floor(reach / bytes)`: how many `bytes`-wide slots the launch lets `target` reach —
    /// for a pointer, `n` (dense) or its declared extent times its access bytes; for a dynamic
    /// shared array, the launch's dynamic shared bytes.
    Limit {
        /// The operand (`ClaimTarget::Param`) or dynamic shared array (`ClaimTarget::Shared`).
        target: ClaimTarget,
        /// The width of the guarded accesses, a power of two.
        bytes: u32,
    },
}

/// How far a guard lets its access reach, in slots of the access's width.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Limit {
    /// Fixed by the body: a static shared variable's bytes over the width.
    Const(u64),
    /// Set by each launch: the hidden parameter with this role.
    Param(GuardParam),
}

/// One access the proof does not cover, checked at run time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Guard {
    /// 1-based PTX line of the access (the guard is on the same line of the rewritten PTX).
    pub line: u32,
    /// What it goes through.
    pub target: ClaimTarget,
    /// The pointer parameter's declared name, or the shared variable's.
    pub name: String,
    /// Load, store or atomic.
    pub kind: AccessKind,
    /// Bytes it moves (a power of two).
    pub bytes: u32,
    /// Why the proof does not cover it.
    pub reason: RejectKind,
    /// The same, in words.
    pub why: String,
    /// Byte range of the instruction in the module's text.
    pub(crate) span: (usize, usize),
    pub(crate) limit: Limit,
}

/// The rewritten PTX of a guarded entry: what a backend loads in place of the artifact's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    /// The whole module, the entry's guards in place: every line keeps its number, so lines a
    /// proof or a fault names are the artifact's lines.
    pub ptx: String,
    /// The hidden parameters appended to the entry's declared ones, in order (each `.u64`).
    pub params: Vec<GuardParam>,
}
