//! The launch's instruction budget and cancellation, shared by every worker: each worker charges
//! its steps in slices of [`SLICE`], so the shared counter is touched once per slice, and the
//! cancellation flag and the other workers' failures are noticed at the same moment.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Steps a worker runs between two charges (and two looks at the cancellation flag).
pub(crate) const SLICE: u64 = 1 << 12;

/// Budget, cancellation and "stop now" for one launch.
#[derive(Debug)]
pub(crate) struct Meter<'a> {
    used: AtomicU64,
    budget: u64,
    cancel: Option<&'a AtomicBool>,
    stop: AtomicBool,
}

/// Why a charge was refused.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    Budget(u64),
    Cancelled,
    Stopped,
}

impl<'a> Meter<'a> {
    pub(crate) fn new(budget: u64, cancel: Option<&'a AtomicBool>) -> Self {
        Self {
            used: AtomicU64::new(0),
            budget,
            cancel,
            stop: AtomicBool::new(false),
        }
    }

    /// Adds `steps` to the launch's count; refuses when the budget is spent, the launch was
    /// cancelled, or another worker stopped it.
    pub(crate) fn charge(&self, steps: u64) -> Result<(), Stop> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(Stop::Stopped);
        }
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Stop::Cancelled);
        }
        let used = self.used.fetch_add(steps, Ordering::Relaxed) + steps;
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
