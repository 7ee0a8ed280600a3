//! The two kinds of aggregation cell: a dispatch cell `(structure_key, chosen, hw)` with its
//! candidates, its declines and its faults by reason, and a miss cell `(wanted, fallback, hw)`.
//! The sink files them; handles count into them.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::{Mutex, PoisonError};

use super::cells::{Cell, Counter};
use super::keys::{DispatchKey, FlatDispatchKey, MissKey};
use super::record::Candidate;

/// A dispatch cell: its identity, its count, and the latest non-empty candidate list.
#[derive(Debug)]
pub(crate) struct DispatchCell {
    pub(super) hash: u64,
    pub(super) key: DispatchKey,
    /// The key again, laid out for comparing with a caller's borrowed key in one pass over
    /// one buffer: what every record compares against.
    pub(super) flat: FlatDispatchKey,
    pub(super) count: Counter,
    /// Of `count`, the launches that later faulted: [`DispatchCell::count`] leaves them out.
    pub(super) faulted: Counter,
    pub(super) candidates: Mutex<Vec<Candidate>>,
    /// Declined launches of the kernel (and refusals at `load_for` and `bind`), by reason kind.
    pub(super) declines: ReasonCounts,
    /// Launches of the kernel that faulted on the device, by the fault's kind.
    pub(super) faults: ReasonCounts,
}

/// Counts by reason kind: a handful of kinds at most, counted only on the (rare) paths of a
/// refusal or a fault, so a short list behind a lock.
#[derive(Debug, Default)]
pub(crate) struct ReasonCounts(Mutex<Vec<(Cow<'static, str>, u64)>>);

impl ReasonCounts {
    /// Adds `count` (at least 1) for `reason`; a static reason costs no allocation.
    pub(crate) fn add(&self, reason: Cow<'static, str>, count: u64) {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match counts.iter_mut().find(|(held, _)| *held == reason) {
            Some((_, held)) => *held = held.saturating_add(count.max(1)),
            None => counts.push((reason, count.max(1))),
        }
    }

    /// The counts by reason, sorted by reason.
    pub(crate) fn sorted(&self) -> Vec<(Cow<'static, str>, u64)> {
        let mut counts = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        counts.sort();
        counts
    }
}

impl Cell for DispatchCell {
    fn hash(&self) -> u64 {
        self.hash
    }

    fn cmp_key(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

impl DispatchCell {
    #[inline]
    pub(crate) fn record(&self, count: u64, candidates: &[Candidate]) {
        self.count.add(count.max(1));
        if !candidates.is_empty() {
            let mut held = self
                .candidates
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            overwrite_candidates(&mut held, candidates);
        }
    }

    /// Launches that ran: those recorded, less those that faulted afterwards.
    pub(crate) fn count(&self) -> u64 {
        self.count.get().saturating_sub(self.faulted.get())
    }

    /// Adds `count` (at least 1) declines for `reason`.
    pub(crate) fn record_decline(&self, reason: Cow<'static, str>, count: u64) {
        self.declines.add(reason, count);
    }

    /// Adds `count` (at least 1) faults for `reason`. With `recorded`, the launches were
    /// counted as dispatches when they were queued, and are taken out of them again.
    pub(crate) fn record_fault(&self, reason: Cow<'static, str>, count: u64, recorded: bool) {
        self.faults.add(reason, count);
        if recorded {
            self.faulted.add(count.max(1));
        }
    }

    /// The kernel the cell counts: its entry point.
    pub(crate) fn entry(&self) -> &str {
        &self.key.chosen.value.kernel_source
    }
}

/// `held = fresh`, reusing `held`'s strings where the same implementation sits in the same
/// place: a detailed observation repeats one candidate list with new latencies, and that must
/// not cost a string copy per launch.
fn overwrite_candidates(held: &mut Vec<Candidate>, fresh: &[Candidate]) {
    held.truncate(fresh.len());
    for (slot, new) in held.iter_mut().zip(fresh) {
        if slot.impl_id != new.impl_id {
            slot.impl_id.clone_from(&new.impl_id);
        }
        slot.latency_ns = new.latency_ns;
    }
    let kept = held.len();
    held.extend(fresh.iter().skip(kept).cloned());
}

/// A miss cell: its identity and its count.
#[derive(Debug)]
pub(crate) struct MissCell {
    pub(super) hash: u64,
    pub(super) key: MissKey,
    pub(super) count: Counter,
}

impl Cell for MissCell {
    fn hash(&self) -> u64 {
        self.hash
    }

    fn cmp_key(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

impl MissCell {
    #[inline]
    pub(crate) fn record(&self, count: u64) {
        self.count.add(count.max(1));
    }

    pub(crate) fn count(&self) -> u64 {
        self.count.get()
    }
}
