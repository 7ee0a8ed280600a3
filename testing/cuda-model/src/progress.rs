//! How far a stream's queue has got: tickets handed out and tickets completed.
//!
//! Every operation queued on a stream gets the next ticket (1, 2, …); the stream's worker
//! completes them in order. "Everything queued on this stream up to now" is therefore one
//! number, which is all an event record or a cross-stream wait needs to remember.

use std::sync::{Condvar, Mutex};

use crate::lock::lock;

#[derive(Debug, Default)]
struct Counts {
    issued: u64,
    completed: u64,
}

/// Ticket counters of one stream, with a condition variable for waiters.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    counts: Mutex<Counts>,
    changed: Condvar,
}

impl Progress {
    /// Hands out the next ticket. The caller queues the operation under the same lock that
    /// orders its queue, so tickets follow queue order.
    pub(crate) fn issue(&self) -> u64 {
        let mut counts = lock(&self.counts);
        counts.issued += 1;
        counts.issued
    }

    /// The last ticket handed out: waiting for it waits for everything queued so far.
    pub(crate) fn issued(&self) -> u64 {
        lock(&self.counts).issued
    }

    /// The worker finished `ticket` (and, by queue order, every earlier one).
    pub(crate) fn complete(&self, ticket: u64) {
        lock(&self.counts).completed = ticket;
        self.changed.notify_all();
    }

    /// Whether `ticket` has completed.
    pub(crate) fn is_done(&self, ticket: u64) -> bool {
        lock(&self.counts).completed >= ticket
    }

    /// Whether anything queued has not completed yet.
    pub(crate) fn is_busy(&self) -> bool {
        let counts = lock(&self.counts);
        counts.completed < counts.issued
    }

    /// Blocks until `ticket` has completed.
    pub(crate) fn wait_for(&self, ticket: u64) {
        let mut counts = lock(&self.counts);
        while counts.completed < ticket {
            counts = self
                .changed
                .wait(counts)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}
