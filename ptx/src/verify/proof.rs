//! What a successful verification establishes, and what a launch must still check.

use std::fmt;

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
}

impl LaunchCondition {
    /// Whether a launch with `count` (the `Count` param), `shape` (strided extents, unused by
    /// the present conditions) and `threads` (grid × block) satisfies the condition.
    pub fn holds(&self, count: u64, shape: &[u64], threads: u64) -> bool {
        let _ = shape;
        match *self {
            Self::CountPlusThreadsAtMost { limit } => {
                count.checked_add(threads).is_some_and(|sum| sum <= limit)
            }
            Self::ThreadsAtMost { limit } => threads <= limit,
        }
    }
}

impl fmt::Display for LaunchCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CountPlusThreadsAtMost { limit } => write!(f, "n + threads <= {limit}"),
            Self::ThreadsAtMost { limit } => write!(f, "threads <= {limit}"),
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
}

/// A body proven safe under `conditions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// How the body covers the index space.
    pub coverage: Coverage,
    /// What each launch must satisfy for the proof to hold.
    pub conditions: Vec<LaunchCondition>,
    /// One summary per pointer parameter, in parameter order.
    pub accesses: Vec<AccessSummary>,
}
