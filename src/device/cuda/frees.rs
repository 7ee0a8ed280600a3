//! Deferred free: allocations whose buffers are gone, parked until the work that may still use
//! them has finished (one event per stream that may use them), then `cuMemFree`d. Checked on
//! later allocations, launches, loads and synchronizations; the rest go after the context-wide
//! synchronization when the backend's last handle drops.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::{CudaEvent, result};

use super::context::Context;
use super::error::{describe, lock};

/// Allocations whose buffers are gone, waiting for the work that may use them.
#[derive(Default)]
pub(super) struct PendingFrees {
    list: Mutex<Vec<PendingFree>>,
    /// Mirrors `!list.is_empty()` so the hot paths skip the lock when nothing waits.
    has_pending: AtomicBool,
}

struct PendingFree {
    address: u64,
    bytes: usize,
    /// One per stream that may still use the memory; `None` if one could not be recorded.
    events: Option<Vec<CudaEvent>>,
}

impl PendingFrees {
    pub(super) fn len(&self) -> usize {
        lock(&self.list).len()
    }

    /// Frees every parked allocation whose work has finished; with `all`, every one (the
    /// caller has synchronized the context).
    pub(super) fn drain(&self, context: &Context, all: bool) {
        if !self.has_pending.load(Ordering::Acquire) {
            return;
        }
        let mut list = lock(&self.list);
        list.retain(|free| {
            let finished = all
                || free.events.as_ref().is_some_and(|events| {
                    events
                        .iter()
                        .all(|event| matches!(event.try_is_complete(), Ok(true)))
                });
            if finished {
                free_now(context, free.address, free.bytes);
            }
            !finished
        });
        self.has_pending.store(!list.is_empty(), Ordering::Release);
    }

    /// Parks `address` until `events` (one per stream that may still use it) complete; with
    /// `None`, until the next context-wide synchronization.
    pub(super) fn park(&self, address: u64, bytes: usize, events: Option<Vec<CudaEvent>>) {
        lock(&self.list).push(PendingFree {
            address,
            bytes,
            events,
        });
        self.has_pending.store(true, Ordering::Release);
    }
}

/// `cuMemFree` of an allocation no queued work can use any more.
pub(super) fn free_now(context: &Context, address: u64, bytes: usize) {
    if let Err(e) = context.bind("free device memory") {
        context.record(format!("{e}; {bytes} bytes at {address:#x} leaked"));
        return;
    }
    // SAFETY: `address` came from `malloc_sync` in this context and left the allocation map
    // when its buffer dropped, so it is freed once; the caller established that no queued
    // work can use it (no stream was pending, or every pending stream's event completed, or
    // the context was synchronized — and cudarc's uses of a buffer handed to it, on streams
    // no log names, were waited for before the buffer asked for its free), and no later work
    // can name it (its buffer is gone).
    if let Err(e) = unsafe { result::free_sync(address) } {
        context.record(format!(
            "free {bytes} bytes at {address:#x}: {}",
            describe(e)
        ));
    }
}
