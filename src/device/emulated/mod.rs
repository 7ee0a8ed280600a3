//! The emulator device: the `jitseam-emu` interpreter behind the [`Backend`] trait.
//!
//! Memory is a table of allocations (base address → bytes). Bases are 256-byte aligned like
//! `cuMemAlloc`'s, start far from zero (a null or small pointer faults), are never reused (a
//! stale pointer to freed memory faults), and are separated by unmapped guard gaps.
//!
//! # A launch sees only its operands
//!
//! A launch maps exactly the bytes its operands can reach — for a dense view its elements
//! `[offset, offset + n)`, for a strided view everything from its lowest to its highest
//! reachable element — inputs read-only, outputs read-write (where operands share bytes, the
//! shared bytes are writable if any of them is an output). Nothing else exists for the kernel:
//! not the rest of an operand's allocation, not the other allocations of the device. The first
//! access outside those bytes, a store or atomic into an input ("write to input"), or an access
//! misaligned for its width stops the launch with [`Error::MemoryFault`]. The ranges come from
//! the checked launch itself: [`crate::launch::marshal`] lends them with the packet
//! ([`ArgPacket::operands`], computed only when a backend asks, so a CUDA launch never pays for
//! them), and the emulator clips them to its live allocations, so bytes a (lying) description
//! claims past its allocation stay unmapped too. Threads run in lockstep groups of
//! [`jitseam_emu::interp::LANES`] in launch order: writes made before the fault stay (those of
//! earlier groups, the faulting group's earlier instructions, and the faulting instruction's
//! lanes before the faulting one); nothing is written after it by that group (with several
//! workers, later blocks may have run; see [`jitseam_emu::interp`]).
//!
//! Besides its operands a launch sees only what the program owns: each thread's `.local` frame
//! and the module's own `.global` and `.const` variables. A loaded function keeps its module's
//! `.global` variables from one launch to the next, as a GPU keeps a loaded module's (each
//! `load_function` loads a module of its own, on a GPU too); two launches of one function that
//! has such variables take turns, whatever their streams.
//!
//! # Every core, and never a hang
//!
//! A launch runs its blocks on every core ([`EmulatorConfig::workers`]), and a grid-stride body
//! ([`ArgPacket::grid_stride`]) on a grid capped at a few blocks per worker, so that per-thread
//! setup is paid a few times per worker rather than once per element; any other body runs the
//! full grid. Each launch has a budget of steps ([`EmulatorConfig::budget`], by default scaled
//! with the threads it was launched with) that every piece of its work is charged to: a kernel
//! that never ends stops with [`Error::BudgetExceeded`] naming its entry, a thread and the PTX
//! line it was at, within about a second when it has few threads; a launch whose thread groups
//! alone would cost more is refused before it runs ([`Error::LaunchTooCostly`]); a deadline
//! ([`EmulatorConfig::timeout`]) ends any launch with [`Error::DeadlineExceeded`]; `trap` stops
//! it with [`Error::Trap`]; dropping the device cancels a running launch ([`Error::Cancelled`]).
//!
//! `load_function` resolves the module once (`jitseam-ptx`'s typed instruction model) and
//! pre-decodes the entry (and the `.func`s it calls) from it; an instruction the interpreter
//! does not run is refused there with [`Error::Unsupported`], one the model does not know with
//! [`Error::UnknownForm`] (as the body verifier refuses it). A launch reads the parameters from the very packet
//! [`crate::launch::marshal`] builds for CUDA, at the offsets the PTX parameter list implies
//! (reported by [`BackendFunction::param_info`], so `bind` cross-checks them against the
//! verified layout).
//!
//! # Streams run asynchronously
//!
//! Each stream executes its queue in order on its own worker thread (started with the first
//! work queued), so that a missing wait between streams is a wrong result here as it is on a
//! GPU. `launch`, `write` (from a copy of the host data), fills, device-to-device copies and
//! `free` are queued and return at once; `synchronize` and `read` wait for the stream. Events
//! are real: an event recorded on a stream completes once that stream has finished the work
//! queued before it, and a stream that waits for an event stops there until it does. A timed
//! event (what [`Stream::record_event`] makes) is a queued stamp of the wall time at which the
//! stream's worker reached it, so the time between two is the time the worker took. A free whose memory other streams may still
//! use goes to an internal stream that waits for them, so it delays no user stream.
//!
//! # Faults are sticky, and reported later
//!
//! A launch that faults (or a copy outside every allocation) has already returned `Ok`; its
//! error is kept on its stream and returned by the next `synchronize` or `read` on that stream,
//! as CUDA reports an asynchronous failure at a later call — and then cleared, unlike CUDA, so
//! that a test can go on using the device. Work queued after the fault still runs.
//!
//! # Locks
//!
//! The allocation table's lock is held only to find, add or remove an allocation; each
//! allocation has its own lock, which a launch holds for as long as it runs — shared for an
//! allocation it only reads, exclusive for one it writes — and a copy for as long as it copies.
//! So `alloc`, a free, and copies and launches on other allocations never wait behind a long
//! launch; launches on different streams run at the same time unless one writes what another
//! uses (the order between them is still the streams' and the events' alone). No worker holds
//! a memory lock while it waits for an event or for work; a thread that queues work or records
//! an event takes only the stream's queue lock.
//!
//! # Test hooks
//!
//! [`EmulatorBackend::pause`], [`EmulatorBackend::resume`] and [`EmulatorBackend::settle`] hold a
//! stream's worker and wait until it can make no progress by itself, so that a test can queue
//! work on other streams while one is held and see the effect of every missing wait
//! deterministically, without relying on timing.

mod heap;
mod run;

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use jitseam_emu::DecodeError;
use jitseam_ptx::resolve::{ResolvedEntry, ResolvedModule};

use self::heap::{Heap, lock};
use self::run::{LoadedKernel, grid_for, run_launch};
use super::backend::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, DeviceProperties, Geometry,
};
use super::{Device, LaunchLimits, Stream};
use crate::abi::{ArgPacket, OperandRange};
use crate::error::Error;

pub use self::run::EmulatorConfig;

/// The PTX interpreter as a device. Create one with [`crate::Device::emulator`] or
/// [`crate::Device::emulator_with`].
#[derive(Debug)]
pub struct EmulatorBackend {
    properties: DeviceProperties,
    shared: Arc<Shared>,
    default_stream: Arc<dyn BackendStream>,
    /// Where frees that must wait for other streams go.
    reaper: EmulatedStream,
}

/// What the backend and every stream's worker share.
#[derive(Debug)]
struct Shared {
    heap: Heap,
    config: EmulatorConfig,
    /// Set when the backend is dropped: a launch still running then can be seen by nobody.
    cancel: AtomicBool,
}

impl Default for EmulatorBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for EmulatorBackend {
    fn drop(&mut self) {
        // Every handle to the device is gone, so nobody can see what a running launch would
        // still compute: end it instead of letting it spin until its budget runs out.
        self.shared.cancel.store(true, Ordering::Relaxed);
    }
}

impl EmulatorBackend {
    /// A fresh emulator with no allocations and the default [`EmulatorConfig`] (every core,
    /// the default instruction budget).
    pub fn new() -> Self {
        Self::with_config(EmulatorConfig::default())
    }

    /// A fresh emulator with no allocations, running launches as `config` says.
    pub fn with_config(config: EmulatorConfig) -> Self {
        let shared = Arc::new(Shared {
            heap: Heap::new(),
            config,
            cancel: AtomicBool::new(false),
        });
        Self {
            properties: DeviceProperties {
                name: "jitseam emulator".to_owned(),
                backend: BackendKind::Emulator,
                compute_capability: None,
                max_grid_x: i32::MAX as u32,
                max_block_x: 1024,
                limits: LaunchLimits::TYPICAL,
                driver_version: None,
            },
            default_stream: Arc::new(EmulatedStream::new(&shared, "default")),
            reaper: EmulatedStream::new(&shared, "free"),
            shared,
        }
    }

    /// How this emulator runs launches.
    pub fn config(&self) -> &EmulatorConfig {
        &self.shared.config
    }

    /// Holds `stream`'s worker before the next piece of work it has not started, until
    /// [`EmulatorBackend::resume`]. Work can still be queued. A test hook: see the module docs.
    pub fn pause(&self, stream: &Stream) -> Result<(), Error> {
        let queue = &queue_of(stream.raw(), "pause a stream")?.queue;
        lock(&queue.state).paused = true;
        queue.changed.notify_all();
        Ok(())
    }

    /// Lets a paused stream's worker go on.
    pub fn resume(&self, stream: &Stream) -> Result<(), Error> {
        let queue = &queue_of(stream.raw(), "resume a stream")?.queue;
        lock(&queue.state).paused = false;
        queue.changed.notify_all();
        Ok(())
    }

    /// Whether `stream`'s worker is stopped at a wait for another stream's event.
    pub fn is_waiting(&self, stream: &Stream) -> Result<bool, Error> {
        let queue = &queue_of(stream.raw(), "inspect a stream")?.queue;
        Ok(lock(&queue.state).blocked)
    }

    /// Waits until `stream`'s worker can make no progress by itself: it has finished all its
    /// work, or it is paused, or it waits for an event of another stream.
    pub fn settle(&self, stream: &Stream) -> Result<(), Error> {
        let queue = &queue_of(stream.raw(), "settle a stream")?.queue;
        let mut state = lock(&queue.state);
        while !(state.paused || state.blocked || (state.ops.is_empty() && !state.running)) {
            state = queue
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }
}

fn copy_error(stage: &str, address: u64, len: usize) -> Error {
    Error::Device {
        stage: stage.to_owned(),
        message: format!("{len} bytes at {address:#x} do not lie inside one emulator allocation"),
    }
}

/// One piece of queued work.
enum Op {
    Launch {
        kernel: Arc<LoadedKernel>,
        packet: Vec<u8>,
        /// What the operands reach: the only bytes the launch may touch.
        operands: Vec<OperandRange>,
        geometry: Geometry,
        /// Threads the launch was made with (a grid-stride body's `geometry` is capped).
        launched: u128,
    },
    Write {
        address: u64,
        data: Vec<u8>,
    },
    Fill {
        address: u64,
        len: usize,
        value: u8,
    },
    Copy {
        src: u64,
        dst: u64,
        len: usize,
    },
    /// Notes when the stream got here: a timed event's completion.
    Stamp(Arc<OnceLock<Instant>>),
    Free {
        address: u64,
    },
    Wait(Arc<EmulatedEvent>),
}

/// A stream's queue, shared by its handle, its worker and its events.
#[derive(Debug)]
struct Queue {
    name: &'static str,
    shared: Arc<Shared>,
    state: Mutex<QueueState>,
    /// Signalled whenever the state changes.
    changed: Condvar,
}

#[derive(Default)]
struct QueueState {
    ops: VecDeque<Op>,
    /// Work ever queued, and finished: an event recorded when `queued` was `n` completes once
    /// `done >= n`.
    queued: u64,
    done: u64,
    /// The worker is executing an op it popped.
    running: bool,
    /// The worker waits for another stream's event.
    blocked: bool,
    paused: bool,
    /// The handle is gone: finish what is queued, then stop.
    closed: bool,
    started: bool,
    /// The first failure since the last report.
    error: Option<Error>,
}

impl std::fmt::Debug for QueueState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueState")
            .field("queued", &self.queued)
            .field("done", &self.done)
            .field("paused", &self.paused)
            .finish_non_exhaustive()
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        lock(&self.state)
    }

    /// Queues `op`, starting the worker with the first. Answers the op's place in the queue:
    /// an event recorded right after it has this target.
    fn push(self: &Arc<Self>, op: Op) -> Result<u64, Error> {
        let mut state = self.lock();
        if !state.started {
            let queue = Arc::clone(self);
            std::thread::Builder::new()
                .name(format!("jitseam-emulator-{}", self.name))
                .spawn(move || queue.work())
                .map_err(|e| Error::Device {
                    stage: "start an emulator stream".to_owned(),
                    message: e.to_string(),
                })?;
            state.started = true;
        }
        state.ops.push_back(op);
        state.queued += 1;
        let target = state.queued;
        drop(state);
        self.changed.notify_all();
        Ok(target)
    }

    /// Blocks until the work queued before `target` has finished.
    fn wait_done(&self, target: u64) -> MutexGuard<'_, QueueState> {
        let mut state = self.lock();
        while state.done < target {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state
    }

    /// The worker: runs the queue in order until the handle is gone and the queue is empty.
    fn work(&self) {
        loop {
            let op = {
                let mut state = self.lock();
                loop {
                    if !state.paused
                        && let Some(op) = state.ops.pop_front()
                    {
                        state.running = true;
                        if let Op::Wait(_) = op {
                            state.blocked = true;
                        }
                        break op;
                    }
                    if state.closed && state.ops.is_empty() {
                        return;
                    }
                    state = self
                        .changed
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            if let Op::Wait(_) = op {
                // Let `settle` see the block.
                self.changed.notify_all();
            }
            let failure = self.execute(op);
            let mut state = self.lock();
            if let Some(error) = failure {
                state.error.get_or_insert(error);
            }
            state.done += 1;
            state.running = false;
            state.blocked = false;
            drop(state);
            self.changed.notify_all();
        }
    }

    fn execute(&self, op: Op) -> Option<Error> {
        match op {
            Op::Launch {
                kernel,
                packet,
                operands,
                geometry,
                launched,
            } => {
                let shared = &*self.shared;
                run_launch(
                    &shared.heap,
                    &shared.config,
                    &shared.cancel,
                    &kernel,
                    &packet,
                    &operands,
                    geometry,
                    launched,
                )
                .err()
            }
            Op::Write { address, data } => (!self.shared.heap.write(address, &data))
                .then(|| copy_error("copy to device", address, data.len())),
            Op::Fill {
                address,
                len,
                value,
            } => (!self.shared.heap.fill(address, len, value))
                .then(|| copy_error("fill on the device", address, len)),
            Op::Copy { src, dst, len } => (!self.shared.heap.copy(src, dst, len))
                .then(|| copy_error("copy on the device", src, len)),
            Op::Stamp(time) => {
                let _ = time.set(Instant::now());
                None
            }
            Op::Free { address } => {
                self.shared.heap.free(address);
                None
            }
            Op::Wait(event) => {
                drop(event.queue.wait_done(event.target));
                None
            }
        }
    }
}

/// A stream of the emulator: a queue and the worker that runs it.
#[derive(Debug)]
struct EmulatedStream {
    queue: Arc<Queue>,
}

impl EmulatedStream {
    fn new(shared: &Arc<Shared>, name: &'static str) -> Self {
        Self {
            queue: Arc::new(Queue {
                name,
                shared: Arc::clone(shared),
                state: Mutex::new(QueueState::default()),
                changed: Condvar::new(),
            }),
        }
    }
}

impl Drop for EmulatedStream {
    fn drop(&mut self) {
        // Nothing can resume it once its handle is gone: let it finish its work and stop.
        let mut state = self.queue.lock();
        state.closed = true;
        state.paused = false;
        drop(state);
        self.queue.changed.notify_all();
    }
}

impl BackendStream for EmulatedStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn queue_of<'s>(stream: &'s dyn BackendStream, stage: &str) -> Result<&'s EmulatedStream, Error> {
    stream
        .as_any()
        .downcast_ref::<EmulatedStream>()
        .ok_or_else(|| Error::Device {
            stage: stage.to_owned(),
            message: format!("{stream:?} is not an emulator stream"),
        })
}

/// A point in one stream's queue.
#[derive(Debug)]
struct EmulatedEvent {
    queue: Arc<Queue>,
    target: u64,
    /// For a timed event: when the stream reached it (set by its [`Op::Stamp`]).
    time: Option<Arc<OnceLock<Instant>>>,
}

impl BackendEvent for EmulatedEvent {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn event_of(event: &dyn BackendEvent) -> Result<&EmulatedEvent, Error> {
    event
        .as_any()
        .downcast_ref::<EmulatedEvent>()
        .ok_or_else(|| Error::Device {
            stage: "use an event".to_owned(),
            message: format!("{event:?} is not an emulator event"),
        })
}

impl EmulatedEvent {
    fn is_complete(&self) -> bool {
        self.queue.lock().done >= self.target
    }
}

/// A pre-decoded entry point.
#[derive(Debug)]
struct EmulatedFunction {
    kernel: Arc<LoadedKernel>,
}

impl BackendFunction for EmulatedFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        Ok(Some(self.kernel.program.param_layout().to_vec()))
    }

    fn static_shared_bytes(&self) -> Result<u32, Error> {
        // Decoding refuses more static shared memory than any GPU has, so it fits a `u32`.
        Ok(u32::try_from(self.kernel.program.static_shared_bytes()).unwrap_or(u32::MAX))
    }
}

impl Backend for EmulatorBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        self.shared
            .heap
            .alloc(bytes)
            .map_err(|message| Error::Device {
                stage: "allocation".to_owned(),
                message,
            })
    }

    fn free(&self, address: u64, _bytes: usize, pending: &[&dyn BackendStream]) {
        if pending.is_empty() {
            self.shared.heap.free(address);
            return;
        }
        // The reaper waits for every pending stream, then frees; a failure to queue leaks the
        // allocation, which is safe (a leak never lets a kernel touch freed memory).
        let queued = pending
            .iter()
            .try_for_each(|&stream| {
                let stream = queue_of(stream, "free")?;
                let target = stream.queue.lock().queued;
                self.reaper.queue.push(Op::Wait(Arc::new(EmulatedEvent {
                    queue: Arc::clone(&stream.queue),
                    target,
                    time: None,
                })))?;
                Ok(())
            })
            .and_then(|()| self.reaper.queue.push(Op::Free { address }));
        if let Err(error) = queued {
            lock(&self.reaper.queue.state).error.get_or_insert(error);
        }
    }

    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::clone(&self.default_stream)
    }

    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok(Arc::new(EmulatedStream::new(&self.shared, "stream")))
    }

    fn write(&self, stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error> {
        let stream = queue_of(stream, "copy to device")?;
        // Refused now if it fits no allocation, as the CUDA backend does; checked again when it
        // runs.
        if !self.shared.heap.contains(address, src.len()) {
            return Err(copy_error("copy to device", address, src.len()));
        }
        stream.queue.push(Op::Write {
            address,
            data: src.to_vec(),
        })?;
        Ok(())
    }

    fn fill_bytes(
        &self,
        stream: &dyn BackendStream,
        address: u64,
        bytes: usize,
        value: u8,
    ) -> Result<(), Error> {
        const STAGE: &str = "fill on the device";
        let stream = queue_of(stream, STAGE)?;
        // Refused now if it fits no allocation, as a write is; checked again when it runs.
        if !self.shared.heap.contains(address, bytes) {
            return Err(copy_error(STAGE, address, bytes));
        }
        stream.queue.push(Op::Fill {
            address,
            len: bytes,
            value,
        })?;
        Ok(())
    }

    fn copy(
        &self,
        stream: &dyn BackendStream,
        src: u64,
        dst: u64,
        bytes: usize,
    ) -> Result<(), Error> {
        const STAGE: &str = "copy on the device";
        let stream = queue_of(stream, STAGE)?;
        for address in [src, dst] {
            if !self.shared.heap.contains(address, bytes) {
                return Err(copy_error(STAGE, address, bytes));
            }
        }
        stream.queue.push(Op::Copy {
            src,
            dst,
            len: bytes,
        })?;
        Ok(())
    }

    fn read(&self, stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error> {
        self.synchronize(stream)?;
        if self.shared.heap.read(address, dst) {
            Ok(())
        } else {
            Err(copy_error("copy to host", address, dst.len()))
        }
    }

    fn record_event(&self, stream: &dyn BackendStream) -> Result<Arc<dyn BackendEvent>, Error> {
        let stream = queue_of(stream, "record an event")?;
        let target = stream.queue.lock().queued;
        Ok(Arc::new(EmulatedEvent {
            queue: Arc::clone(&stream.queue),
            target,
            time: None,
        }))
    }

    /// Queues a stamp: the event completes, and records the wall time, when the stream's
    /// worker reaches it.
    fn record_timed_event(
        &self,
        stream: &dyn BackendStream,
    ) -> Result<Arc<dyn BackendEvent>, Error> {
        let stream = queue_of(stream, "record an event")?;
        let time = Arc::new(OnceLock::new());
        let target = stream.queue.push(Op::Stamp(Arc::clone(&time)))?;
        Ok(Arc::new(EmulatedEvent {
            queue: Arc::clone(&stream.queue),
            target,
            time: Some(time),
        }))
    }

    fn event_elapsed(
        &self,
        start: &dyn BackendEvent,
        end: &dyn BackendEvent,
    ) -> Result<Duration, Error> {
        let [start, end] = [start, end].map(|event| {
            let event = event_of(event)?;
            drop(event.queue.wait_done(event.target));
            event
                .time
                .as_ref()
                .and_then(|time| time.get().copied())
                .ok_or_else(|| Error::EventTiming {
                    reason: "an event was recorded without timing".to_owned(),
                })
        });
        let (start, end) = (start?, end?);
        end.checked_duration_since(start)
            .ok_or_else(|| Error::EventTiming {
                reason: format!(
                    "the later event completed {:?} before the earlier one",
                    start.duration_since(end)
                ),
            })
    }

    fn wait_event(
        &self,
        stream: &dyn BackendStream,
        event: &dyn BackendEvent,
    ) -> Result<(), Error> {
        let stream = queue_of(stream, "wait for an event")?;
        let event = event_of(event)?;
        if Arc::ptr_eq(&stream.queue, &event.queue) || event.is_complete() {
            // A stream runs in order: its own earlier work is done before anything queued now.
            return Ok(());
        }
        stream.queue.push(Op::Wait(Arc::new(EmulatedEvent {
            queue: Arc::clone(&event.queue),
            target: event.target,
            time: None,
        })))?;
        Ok(())
    }

    fn synchronize_event(&self, event: &dyn BackendEvent) -> Result<(), Error> {
        let event = event_of(event)?;
        drop(event.queue.wait_done(event.target));
        Ok(())
    }

    fn event_complete(&self, event: &dyn BackendEvent) -> Result<bool, Error> {
        Ok(event_of(event)?.is_complete())
    }

    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        let ptx_error = |detail| Error::Ptx {
            entry: symbol.to_owned(),
            detail,
        };
        // The module is resolved once: its header and variables, then the entry's bodies.
        let module = ResolvedModule::new(ptx).map_err(ptx_error)?;
        let entry = module.entry(ptx, symbol).map_err(ptx_error)?;
        self.load_resolved(ptx, symbol, &module, &entry)
    }

    fn load_resolved(
        &self,
        _ptx: &str,
        symbol: &str,
        module: &ResolvedModule,
        entry: &ResolvedEntry,
    ) -> Result<Arc<dyn BackendFunction>, Error> {
        let program = jitseam_emu::decode_entry(module, entry).map_err(|error| match error {
            DecodeError::Parse(detail) => Error::Ptx {
                entry: symbol.to_owned(),
                detail,
            },
            DecodeError::Unsupported {
                entry,
                instruction,
                line,
                reason,
            } => Error::Unsupported {
                entry,
                instruction,
                line,
                reason,
            },
            DecodeError::Unknown(form) => Error::UnknownForm {
                entry: symbol.to_owned(),
                form,
            },
        })?;
        Ok(Arc::new(EmulatedFunction {
            kernel: Arc::new(LoadedKernel::new(program)),
        }))
    }

    /// Queues the launch on the stream's worker, with the operand ranges the packet lends (the
    /// only bytes it may touch) and, for a grid-stride body, a capped grid; a fault is reported
    /// by the stream's next `synchronize` or `read` (see the module docs).
    ///
    /// # Safety
    /// Nothing the kernel does can touch host memory: every access is checked against the
    /// operand ranges, clipped to the emulator's own allocations, so any packet is memory-safe
    /// to launch here. The trait's contract still applies for the results to mean anything.
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        let Some(function) = function.as_any().downcast_ref::<EmulatedFunction>() else {
            return Err(Error::Device {
                stage: "launch".to_owned(),
                message: "the function was not loaded by the emulator".to_owned(),
            });
        };
        let program = &function.kernel.program;
        let limits = &self.properties.limits;
        let fits = |dims: [u32; 3], max: [u32; 3]| dims.iter().zip(max).all(|(&d, m)| d <= m);
        if !fits(geometry.block, limits.max_block)
            || !fits(geometry.grid, limits.max_grid)
            || geometry.threads_per_block() > u64::from(limits.max_threads_per_block)
            || u64::from(geometry.dynamic_shared_bytes) + program.static_shared_bytes()
                > u64::from(limits.max_shared_bytes_per_block)
        {
            return Err(Error::Device {
                stage: format!("launch of `{}`", program.entry()),
                message: format!("geometry {geometry:?} exceeds the emulator's limits {limits:?}"),
            });
        }
        let stream = queue_of(stream, "launch")?;
        let mut operands = Vec::new();
        packet
            .operands()
            .for_each_range(&mut |range| operands.push(range));
        stream.queue.push(Op::Launch {
            kernel: Arc::clone(&function.kernel),
            packet: packet.bytes().to_vec(),
            operands,
            geometry: grid_for(geometry, packet.grid_stride(), &self.shared.config),
            launched: geometry.threads(),
        })?;
        Ok(())
    }

    fn synchronize(&self, stream: &dyn BackendStream) -> Result<(), Error> {
        let stream = queue_of(stream, "synchronize")?;
        let target = stream.queue.lock().queued;
        let mut state = stream.queue.wait_done(target);
        match state.error.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl Device {
    /// A new emulator device: the PTX interpreter on the CPU, on every core, with every memory
    /// access checked (see [`EmulatorBackend`]).
    pub fn emulator() -> Self {
        Self::with_backend(Arc::new(EmulatorBackend::new()))
    }

    /// A new emulator device running launches as `config` says (an instruction budget, a
    /// number of worker threads).
    pub fn emulator_with(config: EmulatorConfig) -> Self {
        Self::with_backend(Arc::new(EmulatorBackend::with_config(config)))
    }
}
