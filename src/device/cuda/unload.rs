//! Deferred module unload. A function handle that drops hands its module over with one event
//! per stream it was launched on; the module is unloaded once every event has completed, or
//! after a context-wide synchronization that began after the hand-over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaStream;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUresult};

use super::context::Context;
use super::error::{describe, lock};

/// The modules waiting to be unloaded.
#[derive(Default)]
pub(super) struct PendingUnloads {
    list: Mutex<PendingList>,
    /// Mirrors `!list.entries.is_empty()` so launches skip the lock when nothing waits.
    has_pending: AtomicBool,
}

/// Modules waiting to be unloaded, in the order their handles dropped.
#[derive(Default)]
struct PendingList {
    entries: Vec<PendingUnload>,
    /// Sequence number of the next entry: a context-wide synchronization that began when this
    /// was `s` covers exactly the entries numbered below `s`.
    next_seq: u64,
}

/// A module whose function handle is gone, waiting for the work queued before that to finish.
struct PendingUnload {
    seq: u64,
    module: sys::CUmodule,
    symbol: String,
    /// One event per stream the function was launched on, recorded when the handle dropped.
    events: Vec<sys::CUevent>,
    /// Completion is unknown (an event could not be recorded or queried): wait for a
    /// context-wide synchronization instead.
    needs_context_sync: bool,
}

// SAFETY: the module and event handles are plain driver handles, valid in any thread once the
// owning context is current (every use here binds it first); a `PendingUnload` is only reached
// through the `Mutex` in `PendingUnloads`, so one thread at a time uses it.
unsafe impl Send for PendingUnload {}

impl PendingUnloads {
    /// Sequence number the next hand-over will get: a context-wide synchronization that begins
    /// now covers every entry numbered below it.
    pub(super) fn next_seq(&self) -> u64 {
        lock(&self.list).next_seq
    }

    pub(super) fn len(&self) -> usize {
        lock(&self.list).entries.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        lock(&self.list).entries.is_empty()
    }

    /// Takes over `module` from its dropped function handle: records an event on each stream
    /// in `launched_on` (every stream the function was launched on) and queues the module until
    /// they complete. Errors are recorded on `context`, and leave the module to the next
    /// context-wide synchronization.
    pub(super) fn hand_over(
        &self,
        context: &Context,
        module: sys::CUmodule,
        symbol: String,
        launched_on: &[Arc<CudaStream>],
    ) {
        let mut unload = PendingUnload {
            seq: 0,
            module,
            symbol,
            events: Vec::with_capacity(launched_on.len()),
            needs_context_sync: false,
        };
        match context.bind("release a kernel") {
            Ok(()) => {
                for stream in launched_on {
                    match record_event(stream) {
                        Ok(event) => unload.events.push(event),
                        Err(e) => {
                            context.record(format!(
                                "record completion of `{}` before unloading its module: {}",
                                unload.symbol,
                                describe(e)
                            ));
                            unload.needs_context_sync = true;
                        }
                    }
                }
            }
            Err(e) => {
                context.record(e.to_string());
                unload.needs_context_sync = true;
            }
        }
        let mut pending = lock(&self.list);
        unload.seq = pending.next_seq;
        pending.next_seq += 1;
        pending.entries.push(unload);
        self.has_pending.store(true, Ordering::Release);
    }

    /// Unloads every pending module whose recorded work has finished, and every one numbered
    /// below `synced` (what a context-wide synchronization that began at [`Self::next_seq`]
    /// covers; 0 when there was none).
    pub(super) fn drain(&self, context: &Context, synced: u64) {
        if !self.has_pending.load(Ordering::Acquire) {
            return;
        }
        let mut pending = lock(&self.list);
        if pending.entries.is_empty() {
            return;
        }
        if let Err(e) = context.bind("unload modules") {
            context.record(e.to_string());
            return;
        }
        pending.entries.retain_mut(|unload| {
            if unload.seq >= synced && !work_finished(context, unload) {
                return true;
            }
            unload_module(context, unload);
            false
        });
        self.has_pending
            .store(!pending.entries.is_empty(), Ordering::Release);
    }
}

/// An event recorded on `stream` now: it completes once everything queued there so far,
/// including every launch of the dropped function on it, has finished.
fn record_event(stream: &CudaStream) -> Result<sys::CUevent, DriverError> {
    let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)?;
    // SAFETY: `event` was just created in this (current) context; `stream` belongs to the
    // same context (checked at launch) and is kept alive by the function handle's
    // `launched_on` list, which the caller holds.
    if let Err(e) = unsafe { result::event::record(event, stream.cu_stream()) } {
        // SAFETY: created above, never recorded or shared, destroyed once.
        let _ = unsafe { result::event::destroy(event) };
        return Err(e);
    }
    Ok(event)
}

/// Whether every event of `unload` has completed. An event that reports an error leaves the
/// module to the next context-wide synchronization.
fn work_finished(context: &Context, unload: &mut PendingUnload) -> bool {
    if unload.needs_context_sync {
        return false;
    }
    for &event in &unload.events {
        // SAFETY: `event` was created in this context and is destroyed only by
        // `unload_module`, after which the entry leaves the pending list.
        match unsafe { result::event::query(event) } {
            Ok(()) => {}
            Err(DriverError(CUresult::CUDA_ERROR_NOT_READY)) => return false,
            Err(e) => {
                context.record(format!(
                    "query completion before unloading the module of `{}`: {}",
                    unload.symbol,
                    describe(e)
                ));
                unload.needs_context_sync = true;
                return false;
            }
        }
    }
    true
}

/// Destroys the events and unloads the module. The caller has established that no queued
/// work can still use the module.
fn unload_module(context: &Context, unload: &mut PendingUnload) {
    for event in unload.events.drain(..) {
        // SAFETY: created in this context, destroyed exactly once (drained from the list).
        if let Err(e) = unsafe { result::event::destroy(event) } {
            context.record(format!(
                "destroy an event of `{}`: {}",
                unload.symbol,
                describe(e)
            ));
        }
    }
    // SAFETY: the module was loaded in this context, is unloaded exactly once (its entry
    // leaves the pending list right after), no function handle to it remains (the handle
    // handed it over on drop), and the caller established that all work using it finished.
    if let Err(e) = unsafe { result::module::unload(unload.module) } {
        context.record(format!(
            "unload the module of `{}`: {}",
            unload.symbol,
            describe(e)
        ));
    }
}
