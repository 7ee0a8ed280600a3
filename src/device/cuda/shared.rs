//! [`Shared`]: the state the backend and every function handle hold together, so a kernel
//! dropped after its device can still hand its module over.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use cudarc::driver::result;
use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaStream};

use super::context::Context;
use super::error::{driver_error, lock};
use super::frees::PendingFrees;
use super::unload::PendingUnloads;
use crate::error::Error;

/// What the backend and every function handle share: the context, the modules waiting to be
/// unloaded, the live allocations, and errors recorded on paths that cannot return them.
///
/// Function handles hold it too, so a kernel dropped after its device can still hand its module
/// over; the last holder's `Drop` synchronizes and unloads everything left.
pub(super) struct Shared {
    context: Context,
    pending: PendingUnloads,
    /// Allocations whose buffers are gone, waiting for the work that may still use them.
    pub(super) frees: PendingFrees,
    /// Live allocations, base → bytes: copies are checked against them, and a double or foreign
    /// free is refused instead of reaching the driver.
    pub(super) allocations: Mutex<BTreeMap<u64, usize>>,
}

impl Shared {
    pub(super) fn new(ctx: Arc<CudaContext>) -> Self {
        Self {
            context: Context::new(ctx),
            pending: PendingUnloads::default(),
            frees: PendingFrees::default(),
            allocations: Mutex::new(BTreeMap::new()),
        }
    }

    /// The context, for cleanup that needs only it.
    pub(super) fn context(&self) -> &Context {
        &self.context
    }

    pub(super) fn ctx(&self) -> &Arc<CudaContext> {
        self.context.ctx()
    }

    /// Makes the context current on this thread (see [`Context::bind`]); `stage` is formatted
    /// only if that fails.
    pub(super) fn bind(&self, stage: impl fmt::Display) -> Result<(), Error> {
        self.context.bind(stage)
    }

    /// Keeps an error from a path that cannot return it for the next synchronize.
    pub(super) fn record(&self, message: String) {
        self.context.record(message);
    }

    /// Errors recorded since the last call, as one error.
    pub(super) fn take_deferred(&self) -> Result<(), Error> {
        self.context.take_deferred()
    }

    /// Waits for all work on every stream of the context. Returns the sequence number below
    /// which every pending module is now unused: those handed over before the wait began.
    pub(super) fn synchronize_context(&self, stage: &str) -> Result<u64, Error> {
        let covered = self.pending.next_seq();
        self.bind(stage)?;
        result::ctx::synchronize().map_err(|e| driver_error(format!("{stage}: synchronize"), e))?;
        Ok(covered)
    }

    /// Takes over the module of a dropped function handle until the work queued on
    /// `launched_on` has finished (see [`PendingUnloads::hand_over`]).
    pub(super) fn defer_unload(
        &self,
        module: sys::CUmodule,
        symbol: String,
        launched_on: &[Arc<CudaStream>],
    ) {
        self.pending
            .hand_over(&self.context, module, symbol, launched_on);
    }

    /// Unloads every pending module whose recorded work has finished, and every one numbered
    /// below `synced` (what [`Shared::synchronize_context`] returned; 0 when there was none).
    ///
    /// Frees the parked allocations whose work has finished too.
    pub(super) fn drain(&self, synced: u64) {
        self.pending.drain(&self.context, synced);
        self.frees.drain(&self.context, false);
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !self.pending.is_empty() || self.frees.len() > 0 {
            // When the context cannot be synchronized, work may still run: the modules and
            // allocations stay, and releasing the primary context (once no other handle
            // retains it) reclaims them with everything else.
            if let Ok(synced) = self.synchronize_context("release cuda device") {
                self.pending.drain(&self.context, synced);
                self.frees.drain(&self.context, true);
            }
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("ordinal", &self.ctx().ordinal())
            .field("pending_unloads", &self.pending.len())
            .field("pending_frees", &self.frees.len())
            .field("allocations", &lock(&self.allocations).len())
            .finish()
    }
}
