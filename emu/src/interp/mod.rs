//! The CPU interpreter behind jitseam's emulator device.
//!
//! [`run_with`] executes a pre-decoded [`Program`] over a grid on the exact argument packet a
//! GPU would receive. Every global access is checked against the [`Memory`]: [`Regions`] maps
//! exactly the byte ranges the owner lends, each read-only or read-write; an access outside
//! every range, a store into a read-only one, or an access not aligned to its full width stops
//! the launch at that instruction with a [`Fault`] naming the entry, the block and thread, the
//! instruction and its line, the address and the nearest range.
//!
//! Execution is SIMT-style. The grid is cut into chunks of whole blocks (a cut that depends only
//! on the geometry), which worker threads take in launch order (blocks in order, `x` fastest),
//! one per core by default ([`RunOptions::workers`]). Within a chunk, the threads, in launch
//! order (threads in order within a block, `x` fastest), are cut into groups of [`LANES`]
//! consecutive threads; a group may end one block and start the next. Within a group, each
//! decoded instruction is applied to every active lane, in lane order, before the next
//! instruction runs, so its dispatch is paid once per group rather than once per thread. Each
//! lane has its own pc: when a branch splits the lanes, the lanes at the lowest pc run first,
//! and lanes meet again when the running pc reaches a waiting lane's. A program without shared
//! memory, barriers or warp-level instructions has threads that never wait for one another, so
//! every thread runs exactly its own instruction sequence under any schedule: for a kernel
//! whose threads do not read what other threads of the launch write, the result is the same as
//! running the threads one at a time, whatever the number of workers.
//!
//! A program with any of those is *block-scoped*: a group then holds threads of one block only
//! (its lanes 0–31 and 32–63 are two warps: 32 consecutive threads of the block in linear
//! order), every block has its own `.shared` memory (static variables plus
//! [`LaunchDims::dynamic_shared_bytes`], at most [`MAX_SHARED_BYTES`]), and the groups of a
//! block take turns, in a fixed order, each running until its lanes exit or wait at a barrier
//! (`bar.sync`, `bar.arrive`, `bar.red`, with the ISA's counting of warps and of exited
//! threads; an aligned barrier must be reached by whole warps). A block runs on one worker, so
//! its result does not depend on the number of workers either. Shared memory starts unwritten and a read of an unwritten byte is a fault
//! ([`FaultKind::UninitializedShared`]): the GPU leaves it holding an earlier block's data.
//! What the GPU leaves undefined or would hang on is a typed error: a barrier that can never
//! complete ([`ExecError::BarrierDeadlock`]), a warp-level instruction whose member threads
//! are not converged at it or a misused barrier ([`ExecError::Collective`]).
//!
//! State spaces: every memory instruction names its space, and a generic address is resolved to
//! one of the windows of [`RESERVED`] (the thread's `.local` frame, the block's `.shared`
//! memory, the argument packet, the module's `.const` and `.global` variables) or, outside that
//! span, to the launch's [`Memory`]. Each lockstep group keeps its lanes' local frames with its
//! registers, so a group waiting at a barrier keeps them too. The module's `.global` variables
//! live in a [`ModuleMemory`], kept between launches by [`run_in_module`].
//!
//! Special registers: `%laneid` is the thread's lane in its warp, `%warpid` its warp's number
//! in the block and `%nwarpid` the block's warps (on the GPU `%warpid` is a hardware slot that
//! may change; the block's numbering is one of its values); `%lanemask_*` follow `%laneid`.
//!
//! A register that a thread reads before it ever wrote it reads zero (PTX leaves the value
//! undefined; the emulator defines it).
//!
//! Nothing hangs: every launch has a budget of steps ([`RunOptions::budget`], by default
//! [`default_budget`] of its threads), may have a deadline ([`RunOptions::timeout`]) and may be
//! cancelled ([`RunOptions::cancel`]); each ends it with a typed [`ExecError`] naming the
//! entry, a thread and the line it was running. Every piece of work is charged in steps — each
//! instruction a group runs, and the start of every group and block and each look of a block's
//! scheduler at a group — so the steps bound the time a launch takes; a launch whose groups and
//! blocks alone would cost more than its budget is refused before it runs
//! ([`ExecError::TooCostly`]).
//!
//! A fault stops the launch in that order, precisely:
//! - every thread of an earlier group (in launch order) has run to completion;
//! - in the faulting group, the lanes before the faulting lane (in lane order) have performed
//!   the faulting instruction, and neither the faulting lane nor any lane after it has; every
//!   instruction the group ran before that one stays done for all its lanes (so a lane after
//!   the faulting one may already have stored at an earlier instruction), and nothing later
//!   runs;
//! - with one worker, threads of later groups have not started; with several, threads of later
//!   chunks may have run, in part or wholly (their writes stay).
//!
//! In a block-scoped launch, "earlier group" reads "earlier block", and the other groups of
//! the faulting block may have run in part, up to a barrier or to the end.
//!
//! The reported fault is the same for any number of workers: the first lane, in lane order, to
//! fault at the first faulting instruction of the first faulting group in launch order.
//!
//! Numerics: integer and IEEE operations are exact (correctly rounded in the requested mode,
//! `fma` fused, f16/bf16 rounded once). The `.approx` instructions (`ex2`, `lg2`,
//! `sin`, `cos`, `tanh`, `rsqrt`, `div.approx`/`div.full`, `rcp.approx`, `sqrt.approx`) are
//! computed with Rust's `f32` functions, which are within 1 ulp of exact; the GPU guarantees
//! only its documented bound (2 ulp for `ex2.approx.f32`), so the two may differ by a few ulp.
//! `ex2.approx` and `tanh.approx` on f16/bf16 return the correctly rounded value of the exact
//! function, within the ISA's bounds. Half-precision arithmetic writes the canonical NaN
//! (`0x7fff`) where the ISA leaves the NaN unspecified; `.relu` turns any negative result, -0
//! included, into +0.
//!
//! `%clock`, `%clock64` and `%globaltimer` read nanoseconds since the process first read one of
//! them (`%clock` the low 32 bits): non-decreasing within a thread, not a cycle count.

mod access;
mod alu;
mod atomic;
mod barrier;
mod bits;
mod block;
mod exec;
mod fault;
mod float;
mod globals;
mod grid;
mod group;
mod half;
mod lanes;
mod local;
mod memory;
mod meter;
mod shared;
mod spaces;
mod trace;
mod warp;

pub use fault::{Access, Allocation, ExecError, Fault, FaultKind, LaunchDims, ThreadSite};
pub use globals::ModuleMemory;
pub use memory::{Memory, Region, Regions, merge_ranges};
pub use trace::{AccessEvent, AccessTrace, TracedKind, TracedSpace};

/// Generic addresses the interpreter keeps for its own windows (the thread's `.local` frame,
/// the block's `.shared` memory, the argument packet, the module's variables); a [`Memory`]
/// must lend nothing here.
pub use crate::space::RESERVED;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::decode::Program;

pub use crate::decode::MAX_SHARED_BYTES;
pub use lanes::LANES;
pub use meter::{BLOCK_STEPS, GROUP_STEPS, SHARED_BYTES_PER_STEP};

/// The least default budget of a launch, in steps (one step: one decoded instruction run by one
/// lockstep group of up to [`LANES`] threads): 2^25, a second or so of a loop that never ends
/// on one core.
pub const MIN_BUDGET: u64 = 1 << 25;

/// Steps of the default budget for each thread of a launch: 2^6, as many as 4096 instructions
/// of every thread in lockstep, or 64 with every thread diverging.
pub const BUDGET_PER_THREAD: u64 = 1 << 6;

/// The most default budget of a launch: 2^36 steps.
pub const MAX_BUDGET: u64 = 1 << 36;

/// The default budget of a launch of `threads` threads: [`BUDGET_PER_THREAD`] steps each, at
/// least [`MIN_BUDGET`] and at most [`MAX_BUDGET`]. A kernel that never ends stops within about a
/// second when it has up to 2^19 threads; a launch of 2^26 threads may run 2^32 steps.
pub fn default_budget(threads: u128) -> u64 {
    let scaled = threads.saturating_mul(u128::from(BUDGET_PER_THREAD));
    u64::try_from(scaled)
        .unwrap_or(u64::MAX)
        .clamp(MIN_BUDGET, MAX_BUDGET)
}

/// How a launch runs: its budget and deadline, its worker threads and a cancellation flag.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Steps the whole launch may run; `None` (the default) is [`default_budget`] of the
    /// launch's threads. Exceeding it ends the launch with [`ExecError::BudgetExceeded`].
    pub budget: Option<u64>,
    /// How long the launch may run, from when it starts; past it, the launch ends with
    /// [`ExecError::DeadlineExceeded`] (within a slice of steps: well under a millisecond).
    /// `None` (the default): no deadline.
    pub timeout: Option<Duration>,
    /// Worker threads; 0 means one per available core ([`available_workers`]).
    pub workers: usize,
    /// Set to `true` (from any thread) to end the launch with [`ExecError::Cancelled`]; the
    /// workers look at it every few thousand steps.
    pub cancel: Option<&'a AtomicBool>,
    /// Receives every load, store and atomic the launch makes (`None`, the default: no trace,
    /// and no cost).
    pub trace: Option<&'a dyn AccessTrace>,
}

/// The number of cores the process may use (at least one): the default worker count.
pub fn available_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `program` over the grid with argument packet `params` (laid out as
/// [`Program::param_layout`] says) on `memory`, with the default [`RunOptions`] (every core,
/// the default budget). Kept for callers that own their memory exclusively; see [`run_with`].
///
/// Every entry point takes [`Regions`], not any [`Memory`]: the interpreter is compiled once,
/// here, with this crate's optimizations, so that a caller's unoptimized (debug) build runs it
/// at the same speed as its release build.
pub fn run(
    program: &Program,
    params: &[u8],
    dims: LaunchDims,
    memory: &mut Regions<'_>,
) -> Result<(), ExecError> {
    run_with(program, params, dims, &*memory, &RunOptions::default())
}

/// Runs `program` over the grid with argument packet `params` on `memory`, shared by the
/// worker threads, under `options`; the first fault in launch order stops the launch (see the
/// module docs for exactly where). The module's `.global` variables start from their initial
/// values for this launch alone: see [`run_in_module`] to keep them between launches.
pub fn run_with(
    program: &Program,
    params: &[u8],
    dims: LaunchDims,
    memory: &Regions<'_>,
    options: &RunOptions<'_>,
) -> Result<(), ExecError> {
    let mut module = program.module_memory();
    run_in_module(program, params, dims, memory, &mut module, options)
}

/// [`run_with`] on the module `.global` variables held in `module` (made by
/// [`Program::module_memory`] of the same program), which keep what the launch stores in them,
/// as a GPU keeps a loaded module's variables from one launch to the next.
pub fn run_in_module(
    program: &Program,
    params: &[u8],
    dims: LaunchDims,
    memory: &Regions<'_>,
    module: &mut ModuleMemory,
    options: &RunOptions<'_>,
) -> Result<(), ExecError> {
    if dims.grid.contains(&0) || dims.block.contains(&0) {
        return Err(ExecError::EmptyGeometry {
            entry: program.entry.clone(),
            dims,
        });
    }
    if params.len() < program.param_bytes {
        return Err(ExecError::ShortPacket {
            entry: program.entry.clone(),
            needed: program.param_bytes,
            found: params.len(),
        });
    }
    if !module.fits(program) {
        return Err(ExecError::ModuleMismatch {
            entry: program.entry.clone(),
        });
    }
    if program.block_scoped {
        check_shared(program, dims)?;
    }
    let budget = options
        .budget
        .unwrap_or_else(|| default_budget(dims.threads()));
    let (groups, cost) = launch_cost(program, dims);
    if cost > budget {
        return Err(ExecError::TooCostly {
            entry: program.entry.clone(),
            groups,
            cost,
            budget,
        });
    }
    let workers = match options.workers {
        0 => available_workers(),
        n => n,
    };
    let meter =
        meter::Meter::new(budget, options.timeout, options.cancel).with_trace(options.trace);
    let windows = spaces::Windows {
        global: memory,
        module: module.regions(&program.module.consts),
        params,
    };
    grid::run_grid(program, params, dims, &windows, &meter, workers)
}

/// The lockstep groups of a launch of `program` over `dims`, and the least it costs in steps:
/// starting every group and running one instruction in it, and starting every block of a
/// block-scoped launch.
fn launch_cost(program: &Program, dims: LaunchDims) -> (u64, u64) {
    let lanes = LANES as u128;
    let per_block = dims.block.iter().map(|&d| u128::from(d)).product::<u128>();
    let blocks = dims.grid.iter().map(|&d| u128::from(d)).product::<u128>();
    let groups = if program.block_scoped {
        blocks.saturating_mul(per_block.div_ceil(lanes))
    } else {
        blocks.saturating_mul(per_block).div_ceil(lanes)
    };
    let mut cost = groups.saturating_mul(u128::from(meter::group_steps(program)) + 1);
    if program.block_scoped {
        let shared = program.shared_bytes(u64::from(dims.dynamic_shared_bytes));
        cost = cost.saturating_add(blocks.saturating_mul(u128::from(meter::block_steps(shared))));
    }
    let cap = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    (cap(groups), cap(cost))
}

/// Refuses a launch whose blocks would have more shared memory than a block may.
fn check_shared(program: &Program, dims: LaunchDims) -> Result<(), ExecError> {
    let dynamic = dims.dynamic_shared_bytes;
    let bytes = program.shared_bytes(u64::from(dynamic));
    if bytes > MAX_SHARED_BYTES {
        return Err(ExecError::SharedTooLarge {
            entry: program.entry.clone(),
            bytes,
            static_bytes: program.shared_static,
            dynamic_bytes: dynamic,
            limit: MAX_SHARED_BYTES,
        });
    }
    Ok(())
}
