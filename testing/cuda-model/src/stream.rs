//! Streams: a queue of operations and the worker thread that runs it, in order.
//!
//! Each stream (the legacy `NULL` stream included) has its own worker, so work runs
//! asynchronously to the host, and operations of different streams interleave in an
//! unspecified order — only the driver's ordering rules (same stream, events, the legacy
//! stream) order them. A missing wait is a race the tests can lose, as on a GPU. Each operation
//! holds device memory while it runs, so two kernels never overlap in time; host calls that
//! touch device memory (allocation, free, range checks) wait for the running operation.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use crate::exec::{Core, Op};
use crate::lock::lock;
use crate::progress::Progress;
use crate::status::{CUDA_ERROR_OUT_OF_MEMORY, CUresult};

/// `CU_STREAM_NON_BLOCKING`: the stream does not synchronize with the legacy stream.
pub(crate) const NON_BLOCKING: u32 = 1;

/// One stream.
#[derive(Debug)]
pub(crate) struct Stream {
    /// Synchronizes with the legacy stream (every stream but `CU_STREAM_NON_BLOCKING` ones).
    pub(crate) blocking: bool,
    pub(crate) progress: Arc<Progress>,
    queue: Arc<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

#[derive(Debug, Default)]
struct QueueState {
    ops: VecDeque<(u64, Op)>,
    /// No more operations come: the worker exits once the queue is empty.
    closed: bool,
}

impl Stream {
    /// A stream whose worker runs against `core`; `id` names the worker thread.
    pub(crate) fn spawn(id: u64, blocking: bool, core: Arc<Core>) -> Result<Self, CUresult> {
        let queue = Arc::new(Queue::default());
        let progress = Arc::new(Progress::default());
        let (worker_queue, worker_progress) = (Arc::clone(&queue), Arc::clone(&progress));
        thread::Builder::new()
            .name(format!("cuda-model-stream-{id:#x}"))
            .spawn(move || work(&worker_queue, &worker_progress, &core))
            .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
        Ok(Self {
            blocking,
            progress,
            queue,
        })
    }

    /// Queues `op`; returns its ticket.
    pub(crate) fn push(&self, op: Op) -> u64 {
        let mut state = lock(&self.queue.state);
        let ticket = self.progress.issue();
        state.ops.push_back((ticket, op));
        self.queue.ready.notify_one();
        ticket
    }

    /// Blocks until everything queued so far has run.
    pub(crate) fn drain(&self) {
        self.progress.wait_for(self.progress.issued());
    }

    /// Lets the worker exit once the queue is empty (`cuStreamDestroy`: the work already
    /// queued still runs).
    pub(crate) fn close(&self) {
        lock(&self.queue.state).closed = true;
        self.queue.ready.notify_one();
    }
}

/// The worker loop: one operation at a time, in queue order.
fn work(queue: &Queue, progress: &Progress, core: &Core) {
    loop {
        let next = {
            let mut state = lock(&queue.state);
            loop {
                if let Some(next) = state.ops.pop_front() {
                    break Some(next);
                }
                if state.closed {
                    break None;
                }
                state = queue
                    .ready
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let Some((ticket, op)) = next else {
            return;
        };
        core.execute(op);
        progress.complete(ticket);
    }
}
