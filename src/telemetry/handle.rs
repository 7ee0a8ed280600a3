//! Per-launch recording handles: the key is hashed and interned once, when a kernel is bound;
//! each launch afterwards is one atomic add.

use std::borrow::Cow;
use std::sync::Arc;

use super::aggregate::{DispatchCell, MissCell};
use super::cells::Counter;
use super::record::Candidate;

/// Where a handle's counts go: its cell, or the sink's overflow counter when the sink was full
/// at the time the handle was made.
#[derive(Debug)]
enum Target<C> {
    Cell(Arc<C>),
    Overflow(Arc<Counter>),
}

// Derived `Clone` would demand `C: Clone`; only the `Arc`s are cloned.
impl<C> Clone for Target<C> {
    fn clone(&self) -> Self {
        match self {
            Self::Cell(cell) => Self::Cell(Arc::clone(cell)),
            Self::Overflow(counter) => Self::Overflow(Arc::clone(counter)),
        }
    }
}

/// Records launches into one dispatch cell of a [`TelemetrySink`](super::TelemetrySink).
///
/// Made by [`TelemetrySink::dispatch_handle`](super::TelemetrySink::dispatch_handle), typically
/// once per bound kernel. Cheap to clone, `Send + Sync`, and keeps its cell alive on its own,
/// so it may outlive the borrow it was made from. Recording never fails or blocks on I/O.
#[derive(Debug, Clone)]
pub struct DispatchHandle {
    target: Target<DispatchCell>,
    /// Where declines go when the handle has no cell.
    decline_overflow: Option<Arc<Counter>>,
}

impl DispatchHandle {
    pub(crate) fn cell(cell: Arc<DispatchCell>) -> Self {
        Self {
            target: Target::Cell(cell),
            decline_overflow: None,
        }
    }

    pub(crate) fn overflow(counter: Arc<Counter>, declines: Arc<Counter>) -> Self {
        Self {
            target: Target::Overflow(counter),
            decline_overflow: Some(declines),
        }
    }

    /// Records one declined launch of this handle's kernel, for `reason` (an error's
    /// [`kind_name`](crate::Error::kind_name)).
    pub fn record_decline(&self, reason: &'static str) {
        match (&self.target, &self.decline_overflow) {
            (Target::Cell(cell), _) => cell.record_decline(Cow::Borrowed(reason), 1),
            (Target::Overflow(_), Some(counter)) => counter.add(1),
            (Target::Overflow(_), None) => {}
        }
    }

    /// Moves one launch recorded through this handle from the dispatches to the faults, for
    /// `reason` (an error's [`kind_name`](crate::Error::kind_name)): it was queued, counted,
    /// and then faulted on the device. Nothing happens for a handle without a cell.
    pub fn record_fault(&self, reason: &'static str) {
        if let Target::Cell(cell) = &self.target {
            cell.record_fault(Cow::Borrowed(reason), 1, true);
        }
    }

    /// Whether `other` counts into the same cell (or the same overflow counter).
    pub(crate) fn same_cell(&self, other: &Self) -> bool {
        match (&self.target, &other.target) {
            (Target::Cell(a), Target::Cell(b)) => Arc::ptr_eq(a, b),
            (Target::Overflow(a), Target::Overflow(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The entry point of the kernel this handle counts, when it has a cell.
    pub(crate) fn entry(&self) -> Option<&str> {
        match &self.target {
            Target::Cell(cell) => Some(cell.entry()),
            Target::Overflow(_) => None,
        }
    }

    /// Records one launch.
    #[inline]
    pub fn record(&self) {
        self.record_n(1);
    }

    /// Records `count` launches (a zero is taken as one, like a record's count).
    #[inline]
    pub fn record_n(&self, count: u64) {
        match &self.target {
            Target::Cell(cell) => cell.record(count, &[]),
            Target::Overflow(counter) => counter.add(count.max(1)),
        }
    }

    /// Records one launch and, if `candidates` is not empty, makes it the cell's candidate
    /// list (for a detailed observation that timed its alternatives).
    pub fn record_with_candidates(&self, candidates: &[Candidate]) {
        match &self.target {
            Target::Cell(cell) => cell.record(1, candidates),
            Target::Overflow(counter) => counter.add(1),
        }
    }

    /// True when the sink was full when this handle was made, so its launches are counted only
    /// as overflow.
    pub fn is_overflow(&self) -> bool {
        matches!(self.target, Target::Overflow(_))
    }

    /// Launches recorded so far in this handle's cell, less those that faulted (or the whole
    /// overflow counter).
    pub fn count(&self) -> u64 {
        match &self.target {
            Target::Cell(cell) => cell.count(),
            Target::Overflow(counter) => counter.get(),
        }
    }
}

/// Records fallback launches into one miss cell; the miss twin of [`DispatchHandle`].
#[derive(Debug, Clone)]
pub struct MissHandle {
    target: Target<MissCell>,
}

impl MissHandle {
    pub(crate) fn cell(cell: Arc<MissCell>) -> Self {
        Self {
            target: Target::Cell(cell),
        }
    }

    pub(crate) fn overflow(counter: Arc<Counter>) -> Self {
        Self {
            target: Target::Overflow(counter),
        }
    }

    /// Records one fallback launch.
    #[inline]
    pub fn record(&self) {
        self.record_n(1);
    }

    /// Records `count` fallback launches (a zero is taken as one).
    #[inline]
    pub fn record_n(&self, count: u64) {
        match &self.target {
            Target::Cell(cell) => cell.record(count),
            Target::Overflow(counter) => counter.add(count.max(1)),
        }
    }

    /// True when the sink was full when this handle was made.
    pub fn is_overflow(&self) -> bool {
        matches!(self.target, Target::Overflow(_))
    }

    /// Fallback launches recorded so far in this handle's cell (or in the overflow counter).
    pub fn count(&self) -> u64 {
        match &self.target {
            Target::Cell(cell) => cell.count(),
            Target::Overflow(counter) => counter.get(),
        }
    }
}
