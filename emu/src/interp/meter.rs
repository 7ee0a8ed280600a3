//! The launch's budget, deadline and cancellation, shared by every worker: each worker charges
//! its work in slices of [`SLICE`] steps, so the shared counter is touched once per slice, and
//! the deadline, the cancellation flag and the other workers' failures are looked at the same
//! moment.
//!
//! A step is the unit every piece of work is charged in: one decoded instruction run by one
//! lockstep group, and for the work around instructions the steps it costs about as much time
//! as ([`GROUP_STEPS`] to start a group, [`BLOCK_STEPS`] to start a block, one step for each
//! group a block's scheduler looks at), so that no work goes uncharged and the steps a launch
//! runs bound its time.

use super::trace::AccessTrace;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::fault::{ExecError, ThreadSite};
use crate::decode::Program;

/// `(%ctaid, %tid)` of a lane.
pub(crate) type LaneId = ([u32; 3], [u32; 3]);

/// Why a group stopped before all its lanes returned.
pub(crate) enum Halt {
    /// The launch failed here.
    Fail(ExecError),
    /// Another worker failed or the launch was stopped: this group's work no longer matters.
    Stopped,
}

impl From<ExecError> for Halt {
    fn from(e: ExecError) -> Self {
        Self::Fail(e)
    }
}

/// Steps a worker runs between two charges (and two looks at the deadline and the
/// cancellation flag).
pub(crate) const SLICE: u64 = 1 << 12;

/// Steps charged for starting a lockstep group: placing its up to [`LANES`](super::LANES)
/// threads and resetting its state (plus one step per [`SHARED_BYTES_PER_STEP`] bytes of the
/// registers it clears and the local frames it resets).
pub const GROUP_STEPS: u64 = 16;

/// Steps charged for starting a block of a block-scoped launch: its barriers and its shared
/// memory (plus one step per [`SHARED_BYTES_PER_STEP`] bytes of it).
pub const BLOCK_STEPS: u64 = 32;

/// Bytes of shared memory, local frames or cleared registers reset per step charged.
pub const SHARED_BYTES_PER_STEP: u64 = 4096;

/// What starting a group of `program` costs, in steps: [`GROUP_STEPS`], and one step for each
/// [`SHARED_BYTES_PER_STEP`] bytes of registers cleared and local frames reset.
pub(crate) fn group_steps(program: &Program) -> u64 {
    let lanes = super::LANES as u64;
    let cleared = (program.zero_slots.len() as u64).saturating_mul(8 * lanes);
    let frames = (program.local_bytes as u64).saturating_mul(lanes);
    GROUP_STEPS.saturating_add(cleared.saturating_add(frames) / SHARED_BYTES_PER_STEP)
}

/// What starting a block with `shared` bytes of shared memory costs, in steps.
pub(crate) fn block_steps(shared: u64) -> u64 {
    BLOCK_STEPS.saturating_add(shared / SHARED_BYTES_PER_STEP)
}

/// Budget, deadline, cancellation and "stop now" for one launch.
#[derive(Debug)]
pub(crate) struct Meter<'a> {
    used: AtomicU64,
    budget: u64,
    deadline: Option<(Instant, Duration)>,
    cancel: Option<&'a AtomicBool>,
    stop: AtomicBool,
    /// The launch's access trace, which travels with the meter to every worker.
    trace: Option<&'a dyn AccessTrace>,
}

/// Why a charge was refused.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    Budget(u64),
    Deadline(Duration),
    Cancelled,
    Stopped,
}

impl<'a> Meter<'a> {
    /// A meter for a launch that may run `budget` steps and, with a `timeout`, for that long
    /// from now.
    pub(crate) fn new(
        budget: u64,
        timeout: Option<Duration>,
        cancel: Option<&'a AtomicBool>,
    ) -> Self {
        Self {
            used: AtomicU64::new(0),
            budget,
            // A timeout too long to add to now is no deadline at all.
            deadline: timeout.and_then(|t| Some((Instant::now().checked_add(t)?, t))),
            cancel,
            stop: AtomicBool::new(false),
            trace: None,
        }
    }

    /// The same meter, reporting every access to `trace`.
    pub(crate) fn with_trace(mut self, trace: Option<&'a dyn AccessTrace>) -> Self {
        self.trace = trace;
        self
    }

    /// The launch's access trace, if it has one.
    #[inline]
    pub(crate) fn trace(&self) -> Option<&'a dyn AccessTrace> {
        self.trace
    }

    /// Adds `steps` to the launch's count; refuses when the budget is spent, the deadline has
    /// passed, the launch was cancelled, or another worker stopped it.
    pub(crate) fn charge(&self, steps: u64) -> Result<(), Stop> {
        self.check()?;
        let used = self
            .used
            .fetch_add(steps, Ordering::Relaxed)
            .saturating_add(steps);
        if used > self.budget {
            return Err(Stop::Budget(self.budget));
        }
        Ok(())
    }

    /// Whether a worker should stop taking work.
    pub(crate) fn check(&self) -> Result<(), Stop> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(Stop::Stopped);
        }
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Stop::Cancelled);
        }
        if let Some((deadline, timeout)) = self.deadline
            && Instant::now() >= deadline
        {
            return Err(Stop::Deadline(timeout));
        }
        Ok(())
    }

    /// Tells every worker to stop at its next charge.
    pub(crate) fn stop_all(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Stop {
    /// The error for a stop at instruction `pc` of `program` by the thread `lane`.
    #[cold]
    pub(crate) fn halt(self, program: &Program, pc: usize, lane: LaneId) -> Halt {
        match self {
            Self::Budget(budget) => Halt::Fail(ExecError::BudgetExceeded {
                at: Box::new(thread_site(program, pc, lane)),
                budget,
            }),
            Self::Deadline(timeout) => Halt::Fail(ExecError::DeadlineExceeded {
                at: Box::new(thread_site(program, pc, lane)),
                timeout,
            }),
            Self::Cancelled => Halt::Fail(ExecError::Cancelled {
                entry: program.entry.clone(),
            }),
            Self::Stopped => Halt::Stopped,
        }
    }
}

/// The thread `lane` at instruction `pc`, for diagnostics.
pub(crate) fn thread_site(program: &Program, pc: usize, (block, thread): LaneId) -> ThreadSite {
    let site = program.sites.get(pc);
    ThreadSite {
        entry: program.entry.clone(),
        block,
        thread,
        instruction: site.map(|s| s.text.clone()).unwrap_or_default(),
        line: site.map_or(0, |s| s.line),
    }
}
