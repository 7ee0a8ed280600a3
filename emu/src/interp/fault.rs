//! What a launch is given and how it can fail: [`LaunchDims`], and the typed [`ExecError`] with
//! its memory [`Fault`]s.

use thiserror::Error;

/// One range of memory: where it starts and how many bytes it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Allocation {
    /// Device address of the first byte.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
}

/// Grid and block extents of one launch, and its dynamic shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks per grid, `x y z`.
    pub grid: [u32; 3],
    /// Threads per block, `x y z`.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory each block has (the `extern .shared` arrays), besides
    /// the program's static shared variables.
    pub dynamic_shared_bytes: u32,
}

impl LaunchDims {
    /// A 1-D launch with no dynamic shared memory.
    pub fn linear(grid: u32, block: u32) -> Self {
        Self {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: 0,
        }
    }

    /// Threads of the whole launch.
    pub fn threads(&self) -> u128 {
        self.grid
            .iter()
            .chain(&self.block)
            .map(|&d| u128::from(d))
            .product()
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_dynamic_shared(self, bytes: u32) -> Self {
        Self {
            dynamic_shared_bytes: bytes,
            ..self
        }
    }
}

/// Whether a faulting access read or wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load.
    Load,
    /// A store.
    Store,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Load => "load",
            Self::Store => "store",
        })
    }
}

/// What was wrong with a faulting access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// Not wholly inside any allocation.
    OutOfBounds,
    /// Not aligned to the access's full width (the vector's, for `.v2`/`.v4`).
    Misaligned,
    /// A store or atomic into a range lent read-only (one of the launch's inputs).
    WriteToInput,
    /// Outside the block's shared memory: past its size, in shared space or in the generic
    /// window that maps it.
    OutsideShared,
    /// A read of shared memory that no thread of the block has written: the GPU leaves it
    /// holding whatever was there before.
    UninitializedShared,
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::OutOfBounds => "out of bounds",
            Self::Misaligned => "misaligned",
            Self::WriteToInput => "write to input",
            Self::OutsideShared => "outside shared memory",
            Self::UninitializedShared => "uninitialized shared memory",
        })
    }
}

/// A checked memory access that failed; the launch stopped at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The entry point.
    pub entry: String,
    /// `%ctaid` of the faulting thread.
    pub block: [u32; 3],
    /// `%tid` of the faulting thread.
    pub thread: [u32; 3],
    /// The instruction as written.
    pub instruction: String,
    /// Its 1-based line in the PTX.
    pub line: u32,
    /// The first byte accessed.
    pub address: u64,
    /// Bytes accessed.
    pub size: u32,
    /// Load or store.
    pub access: Access,
    /// Out of bounds or misaligned.
    pub kind: FaultKind,
    /// The allocation nearest to `address`, if there is any allocation.
    pub nearest: Option<Allocation>,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            "entry `{}`: {} {}-byte {} at {:#x} by block ({bx}, {by}, {bz}) thread ({tx}, {ty}, {tz}), line {}: `{}`",
            self.entry,
            self.kind,
            self.size,
            self.access,
            self.address,
            self.line,
            self.instruction
        )?;
        match self.nearest {
            Some(a) => write!(
                f,
                "; nearest allocation {:#x}..{:#x} ({} bytes)",
                a.base,
                a.base.saturating_add(a.size),
                a.size
            ),
            None => f.write_str("; no allocation exists"),
        }
    }
}

/// Why a launch did not complete.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExecError {
    /// A memory access was refused.
    #[error("{0}")]
    Fault(Box<Fault>),
    /// The argument packet is shorter than the entry's parameter list.
    #[error("entry `{entry}`: the argument packet has {found} bytes, the parameters need {needed}")]
    ShortPacket {
        /// The entry point.
        entry: String,
        /// Bytes the parameter list spans.
        needed: usize,
        /// Bytes given.
        found: usize,
    },
    /// A grid or block extent of zero.
    #[error("entry `{entry}`: empty launch geometry {dims:?}")]
    EmptyGeometry {
        /// The entry point.
        entry: String,
        /// The geometry.
        dims: LaunchDims,
    },
    /// The launch ran more instruction steps than its budget allows: most likely a loop that
    /// never ends (`L: bra L;`, or a grid-stride step that is zero).
    #[error(
        "entry `{}`: instruction budget of {budget} steps exceeded at line {}: `{}` (block ({}, {}, {}) thread ({}, {}, {})); a loop that never ends?",
        .at.entry, .at.line, .at.instruction,
        .at.block[0], .at.block[1], .at.block[2], .at.thread[0], .at.thread[1], .at.thread[2]
    )]
    BudgetExceeded {
        /// Where it was running when the budget ran out.
        at: Box<ThreadSite>,
        /// The budget, in steps (one step: one instruction for one group of up to
        /// [`LANES`](super::LANES) threads).
        budget: u64,
    },
    /// The launch ran past its deadline ([`RunOptions::timeout`](super::RunOptions::timeout)).
    #[error(
        "entry `{}`: the launch ran past its {timeout:?} deadline at line {}: `{}` (block ({}, {}, {}) thread ({}, {}, {}))",
        .at.entry, .at.line, .at.instruction,
        .at.block[0], .at.block[1], .at.block[2], .at.thread[0], .at.thread[1], .at.thread[2]
    )]
    DeadlineExceeded {
        /// Where it was running when the deadline passed.
        at: Box<ThreadSite>,
        /// The time the launch was given.
        timeout: std::time::Duration,
    },
    /// The launch was refused before it ran: starting its blocks and groups alone would cost
    /// more steps than its budget allows.
    #[error(
        "entry `{entry}`: a launch of {groups} thread groups costs at least {cost} steps before any of them finishes, more than its budget of {budget}"
    )]
    TooCostly {
        /// The entry point.
        entry: String,
        /// Lockstep groups the launch has.
        groups: u64,
        /// The least it costs, in steps.
        cost: u64,
        /// The budget, in steps.
        budget: u64,
    },
    /// The launch was cancelled through [`RunOptions::cancel`](super::RunOptions::cancel).
    #[error("entry `{entry}`: launch cancelled")]
    Cancelled {
        /// The entry point.
        entry: String,
    },
    /// A thread executed `trap` (or `brkpt`).
    #[error(
        "entry `{}`: `{}` at line {} by block ({}, {}, {}) thread ({}, {}, {})",
        .at.entry, .at.instruction, .at.line,
        .at.block[0], .at.block[1], .at.block[2], .at.thread[0], .at.thread[1], .at.thread[2]
    )]
    Trap {
        /// The trapping thread and instruction.
        at: Box<ThreadSite>,
    },
    /// A thread called CUDA's `__assertfail` (a failed `assert`).
    #[error("{0}")]
    AssertFailed(Box<AssertFailure>),
    /// The [`ModuleMemory`](super::ModuleMemory) given to the launch was not made for its
    /// program.
    #[error("entry `{entry}`: the module memory given to the launch belongs to another program")]
    ModuleMismatch {
        /// The entry point.
        entry: String,
    },
    /// A barrier or warp-level instruction used in a way the emulator cannot run exactly (the
    /// GPU would hang or give an undefined result): a thread of a member mask that is not
    /// converged at the instruction, a shuffle from a thread that does not take part, a
    /// barrier number out of range, a thread count that differs from the barrier's, …
    #[error(
        "entry `{}`: line {}: `{}` (block ({}, {}, {}) thread ({}, {}, {})): {reason}",
        .at.entry, .at.line, .at.instruction,
        .at.block[0], .at.block[1], .at.block[2], .at.thread[0], .at.thread[1], .at.thread[2]
    )]
    Collective {
        /// The thread and its instruction.
        at: Box<ThreadSite>,
        /// What was wrong.
        reason: &'static str,
    },
    /// The launch asks for more shared memory per block than a block may have.
    #[error(
        "entry `{entry}`: {bytes} bytes of shared memory per block ({static_bytes} static, {dynamic_bytes} dynamic) exceed the {limit}-byte limit"
    )]
    SharedTooLarge {
        /// The entry point.
        entry: String,
        /// Static and dynamic together, with the padding between them.
        bytes: u64,
        /// The program's static shared variables.
        static_bytes: u64,
        /// The launch's dynamic shared memory.
        dynamic_bytes: u32,
        /// The most a block may have.
        limit: u64,
    },
    /// A barrier was reached by only some threads of a block while the others had exited or
    /// wait at another barrier: on a GPU the block would hang.
    #[error(
        "entry `{}`: barrier deadlock at line {}: `{}` (block ({}, {}, {}) thread ({}, {}, {}) waits; other threads of its block exited or wait elsewhere)",
        .at.entry, .at.line, .at.instruction,
        .at.block[0], .at.block[1], .at.block[2], .at.thread[0], .at.thread[1], .at.thread[2]
    )]
    BarrierDeadlock {
        /// A waiting thread and its barrier instruction.
        at: Box<ThreadSite>,
    },
}

/// A failed CUDA `assert`: what `__assertfail` was called with, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertFailure {
    /// The calling thread and its `call` instruction.
    pub at: ThreadSite,
    /// The assertion's text (`srcIndex >= 0 && srcIndex < srcSelectDimSize`).
    pub message: String,
    /// The source file it is in.
    pub file: String,
    /// Its line in that file.
    pub line: u32,
    /// The function it is in.
    pub function: String,
}

impl std::fmt::Display for AssertFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = &self.at;
        write!(
            f,
            "entry `{}`: assertion `{}` failed at {}:{} in `{}` (PTX line {}: `{}`, block ({}, {}, {}) thread ({}, {}, {}))",
            at.entry,
            self.message,
            self.file,
            self.line,
            self.function,
            at.line,
            at.instruction,
            at.block[0],
            at.block[1],
            at.block[2],
            at.thread[0],
            at.thread[1],
            at.thread[2]
        )
    }
}

/// A thread and the instruction it was at, for diagnostics that are not memory faults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSite {
    /// The entry point.
    pub entry: String,
    /// `%ctaid` of the thread.
    pub block: [u32; 3],
    /// `%tid` of the thread.
    pub thread: [u32; 3],
    /// The instruction as written.
    pub instruction: String,
    /// Its 1-based line in the PTX (0 for the implicit return at the end of a body).
    pub line: u32,
}
