//! Events: a marker recorded into a stream, complete once the work queued before it is.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::lock::lock;
use crate::progress::Progress;
use crate::status::{CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_NOT_READY, CUresult};

/// `CU_EVENT_DISABLE_TIMING`.
pub(crate) const DISABLE_TIMING: u32 = 2;
/// Every flag `cuEventCreate` accepts: default, blocking sync, disable timing, interprocess.
pub(crate) const ALL_FLAGS: u32 = 0x7;

/// One `cuEventCreate` result.
#[derive(Debug)]
pub(crate) struct Event {
    flags: u32,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The latest record: the stream's progress and the ticket of the record operation.
    recorded: Option<(Arc<Progress>, u64)>,
    /// Counts records, so a record operation that runs after a newer record was made does not
    /// stamp the newer one's time.
    generation: u64,
    /// When the latest record's operation ran.
    time: Option<Instant>,
}

/// Where an event's latest record points: wait for `ticket` on `progress`.
pub(crate) type Mark = (Arc<Progress>, u64);

impl Event {
    pub(crate) fn new(flags: u32) -> Self {
        Self {
            flags,
            state: Mutex::new(State::default()),
        }
    }

    /// Starts a new record: the caller queues the record operation (with the returned
    /// generation) and then calls [`Event::recorded`] with its ticket.
    pub(crate) fn begin_record(&self) -> u64 {
        let mut state = lock(&self.state);
        state.generation += 1;
        state.time = None;
        state.generation
    }

    /// The record operation of `generation` was queued as `ticket` on `progress`.
    pub(crate) fn recorded(&self, generation: u64, progress: Arc<Progress>, ticket: u64) {
        let mut state = lock(&self.state);
        if state.generation == generation {
            state.recorded = Some((progress, ticket));
        }
    }

    /// The record operation of `generation` ran now.
    pub(crate) fn stamp(&self, generation: u64) {
        let mut state = lock(&self.state);
        if state.generation == generation {
            state.time = Some(Instant::now());
        }
    }

    /// The latest record, or `None` for an event never recorded.
    pub(crate) fn mark(&self) -> Option<Mark> {
        lock(&self.state).recorded.clone()
    }

    /// `cuEventQuery` (sticky errors aside): an event never recorded is complete.
    pub(crate) fn is_complete(&self) -> bool {
        self.mark()
            .is_none_or(|(progress, ticket)| progress.is_done(ticket))
    }

    /// `cuEventSynchronize` (sticky errors aside).
    pub(crate) fn wait(&self) {
        if let Some((progress, ticket)) = self.mark() {
            progress.wait_for(ticket);
        }
    }

    /// When the latest record ran: `CUDA_ERROR_INVALID_HANDLE` for an event without timing or
    /// never recorded, `CUDA_ERROR_NOT_READY` while its work is pending.
    pub(crate) fn time(&self) -> Result<Instant, CUresult> {
        if self.flags & DISABLE_TIMING != 0 {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let state = lock(&self.state);
        let Some((progress, ticket)) = &state.recorded else {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        };
        if !progress.is_done(*ticket) {
            return Err(CUDA_ERROR_NOT_READY);
        }
        state.time.ok_or(CUDA_ERROR_NOT_READY)
    }
}
