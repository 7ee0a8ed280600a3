//! A context: its streams, events, modules and functions, and the ordering rules between
//! streams.
//!
//! Ordering follows the driver's documented rules:
//! - operations on one stream run in the order they were queued;
//! - `cuStreamWaitEvent` makes later work on a stream wait for the work the event captured
//!   when it was last recorded;
//! - the legacy `NULL` stream synchronizes with every blocking stream: work queued on it waits
//!   for all work queued earlier on every blocking stream, and work queued on a blocking stream
//!   waits for all work queued earlier on the legacy stream. `CU_STREAM_NON_BLOCKING` streams
//!   take no part in this.
//!
//! Every rule is applied when work is queued, as a wait on tickets already handed out, so the
//! waits can never form a cycle.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jitseam_emu::interp::LaunchDims;

use crate::event::{self, Event};
use crate::exec::{Core, Op};
use crate::handle;
use crate::lock::lock;
use crate::memory::Heap;
use crate::module::{Function, LoadedModule};
use crate::status::{
    CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_NOT_SUPPORTED, CUresult,
};
use crate::stream::{self, Stream};

/// `CU_STREAM_LEGACY`: another name for the legacy stream.
const STREAM_LEGACY: u64 = 1;
/// `CU_STREAM_PER_THREAD`: the per-thread default stream, which the model does not have.
const STREAM_PER_THREAD: u64 = 2;

/// One context (the model has only the device's primary context).
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) id: u64,
    alive: AtomicBool,
    pub(crate) core: Arc<Core>,
    legacy: Arc<Stream>,
    tables: Mutex<Tables>,
    /// Held while work is queued anywhere, so the legacy-stream rule sees one order.
    submit: Mutex<()>,
}

#[derive(Debug, Default)]
struct Tables {
    streams: HashMap<u64, Arc<Stream>>,
    /// Destroyed streams whose queued work may still run: context-wide synchronization and
    /// the legacy-stream rule still wait for it.
    retired: Vec<Arc<Stream>>,
    events: HashMap<u64, Arc<Event>>,
    modules: HashMap<u64, Arc<LoadedModule>>,
    functions: HashMap<u64, Arc<Function>>,
}

impl Context {
    /// A fresh context with its legacy stream running.
    pub(crate) fn create() -> Result<Self, CUresult> {
        let core = Arc::new(Core::default());
        let legacy = Arc::new(Stream::spawn(0, true, Arc::clone(&core))?);
        Ok(Self {
            id: handle::next_id(),
            alive: AtomicBool::new(true),
            core,
            legacy,
            tables: Mutex::new(Tables::default()),
            submit: Mutex::new(()),
        })
    }

    /// `Ok` while the context is usable: not destroyed, not in a sticky error state.
    pub(crate) fn check(&self) -> Result<(), CUresult> {
        if !self.alive.load(Ordering::Acquire) {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        self.core.sticky()
    }

    /// Releases everything: waits for all queued work, stops the workers and frees the memory.
    /// Handles of this context answer `CUDA_ERROR_INVALID_HANDLE` (or, for the context itself,
    /// `CUDA_ERROR_INVALID_CONTEXT`) from now on.
    pub(crate) fn destroy(&self) {
        self.alive.store(false, Ordering::Release);
        self.drain_all();
        let tables = std::mem::take(&mut *lock(&self.tables));
        for stream in tables.streams.values() {
            stream.close();
        }
        for module in tables.modules.values() {
            module.release_functions();
        }
        self.legacy.close();
        *lock(&self.core.heap) = Heap::default();
    }

    // ---- streams -------------------------------------------------------------------------

    /// The stream behind a handle (`NULL` and `CU_STREAM_LEGACY` are the legacy stream).
    pub(crate) fn stream(&self, handle: u64) -> Result<Arc<Stream>, CUresult> {
        match handle {
            0 | STREAM_LEGACY => Ok(Arc::clone(&self.legacy)),
            STREAM_PER_THREAD => Err(CUDA_ERROR_NOT_SUPPORTED),
            id => lock(&self.tables)
                .streams
                .get(&id)
                .cloned()
                .ok_or(CUDA_ERROR_INVALID_HANDLE),
        }
    }

    /// `cuStreamCreate`.
    pub(crate) fn create_stream(&self, flags: u32) -> Result<u64, CUresult> {
        if flags & !stream::NON_BLOCKING != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = handle::next_id();
        let blocking = flags & stream::NON_BLOCKING == 0;
        let stream = Stream::spawn(id, blocking, Arc::clone(&self.core))?;
        lock(&self.tables).streams.insert(id, Arc::new(stream));
        Ok(id)
    }

    /// `cuStreamDestroy`: the handle goes at once, the queued work still runs.
    pub(crate) fn destroy_stream(&self, handle: u64) -> Result<(), CUresult> {
        let mut tables = lock(&self.tables);
        let stream = tables
            .streams
            .remove(&handle)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        stream.close();
        tables.retired.retain(|s| s.progress.is_busy());
        tables.retired.push(stream);
        Ok(())
    }

    /// Every stream with work that may still run, the legacy stream aside: the live ones and
    /// the destroyed ones still busy.
    fn streams(&self) -> Vec<Arc<Stream>> {
        let mut tables = lock(&self.tables);
        tables.retired.retain(|s| s.progress.is_busy());
        tables
            .streams
            .values()
            .chain(&tables.retired)
            .cloned()
            .collect()
    }

    /// Queues `op` on `stream`, behind whatever the legacy-stream rule orders it after.
    pub(crate) fn submit(&self, stream: &Arc<Stream>, op: Op) -> u64 {
        let _order = lock(&self.submit);
        if Arc::ptr_eq(stream, &self.legacy) {
            for other in self.streams().into_iter().filter(|s| s.blocking) {
                if other.progress.is_busy() {
                    stream.push(Op::Wait {
                        progress: Arc::clone(&other.progress),
                        ticket: other.progress.issued(),
                    });
                }
            }
        } else if stream.blocking && self.legacy.progress.is_busy() {
            stream.push(Op::Wait {
                progress: Arc::clone(&self.legacy.progress),
                ticket: self.legacy.progress.issued(),
            });
        }
        self.core.queued(&op);
        stream.push(op)
    }

    /// The streams whose work `stream` must see finished to count as finished itself: the
    /// stream, and for the legacy stream every blocking stream too.
    fn covered(&self, stream: &Arc<Stream>) -> Vec<Arc<Stream>> {
        let mut covered = vec![Arc::clone(stream)];
        if Arc::ptr_eq(stream, &self.legacy) {
            covered.extend(self.streams().into_iter().filter(|s| s.blocking));
        }
        covered
    }

    /// `cuStreamSynchronize` (the caller reports the sticky error afterwards).
    pub(crate) fn synchronize_stream(&self, stream: &Arc<Stream>) {
        for s in self.covered(stream) {
            s.drain();
        }
    }

    /// `cuStreamQuery`: whether work queued on `stream` is still pending.
    pub(crate) fn stream_busy(&self, stream: &Arc<Stream>) -> bool {
        self.covered(stream).iter().any(|s| s.progress.is_busy())
    }

    /// Waits for everything queued on every stream.
    pub(crate) fn drain_all(&self) {
        for stream in self.streams() {
            stream.drain();
        }
        self.legacy.drain();
    }

    // ---- events --------------------------------------------------------------------------

    /// `cuEventCreate`.
    pub(crate) fn create_event(&self, flags: u32) -> Result<u64, CUresult> {
        if flags & !event::ALL_FLAGS != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = handle::next_id();
        lock(&self.tables)
            .events
            .insert(id, Arc::new(Event::new(flags)));
        Ok(id)
    }

    /// The event behind a handle.
    pub(crate) fn event(&self, handle: u64) -> Result<Arc<Event>, CUresult> {
        lock(&self.tables)
            .events
            .get(&handle)
            .cloned()
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    /// `cuEventDestroy`: a wait already queued on the event is unaffected.
    pub(crate) fn destroy_event(&self, handle: u64) -> Result<(), CUresult> {
        lock(&self.tables)
            .events
            .remove(&handle)
            .map(drop)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    /// `cuEventRecord`: the event now captures everything queued on `stream` so far.
    pub(crate) fn record(&self, event: &Arc<Event>, stream: &Arc<Stream>) {
        let generation = event.begin_record();
        let ticket = self.submit(
            stream,
            Op::Record {
                event: Arc::clone(event),
                generation,
            },
        );
        event.recorded(generation, Arc::clone(&stream.progress), ticket);
    }

    /// `cuStreamWaitEvent`: later work on `stream` waits for what `event` captured now.
    pub(crate) fn wait_event(&self, stream: &Arc<Stream>, event: &Event) {
        if let Some((progress, ticket)) = event.mark() {
            self.submit(stream, Op::Wait { progress, ticket });
        }
    }

    // ---- modules and launches ------------------------------------------------------------

    /// `cuModuleLoadData`.
    pub(crate) fn load_module(&self, ptx: String) -> Result<u64, CUresult> {
        let module = LoadedModule::load(ptx)?;
        let id = module.id;
        lock(&self.tables).modules.insert(id, Arc::new(module));
        Ok(id)
    }

    /// `cuModuleGetFunction`.
    pub(crate) fn get_function(&self, module: u64, name: &str) -> Result<u64, CUresult> {
        let module = lock(&self.tables)
            .modules
            .get(&module)
            .cloned()
            .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let function = module.function(name)?;
        let id = function.id;
        lock(&self.tables).functions.insert(id, function);
        Ok(id)
    }

    /// The function behind a handle; gone once its module is unloaded.
    pub(crate) fn function(&self, handle: u64) -> Result<Arc<Function>, CUresult> {
        lock(&self.tables)
            .functions
            .get(&handle)
            .cloned()
            .ok_or(CUDA_ERROR_INVALID_HANDLE)
    }

    /// `cuModuleUnload`. Unloading a module while launches of it are still queued is the
    /// caller's bug (on a GPU the code would vanish under them): the model reports it on stderr
    /// and fails the context with `CUDA_ERROR_LAUNCH_FAILED`, so it cannot go unnoticed.
    pub(crate) fn unload_module(&self, handle: u64) -> Result<(), CUresult> {
        let mut tables = lock(&self.tables);
        let module = tables
            .modules
            .remove(&handle)
            .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        for function in module.release_functions() {
            tables.functions.remove(&function);
        }
        drop(tables);
        let in_flight = module.in_flight();
        if in_flight > 0 {
            eprintln!(
                "jitseam-cuda-model: cuModuleUnload of a module with {in_flight} launch(es) still \
                 queued or running"
            );
            self.core.poison(CUDA_ERROR_LAUNCH_FAILED);
        }
        Ok(())
    }

    /// Queues a launch whose geometry and packet the caller validated.
    pub(crate) fn launch(
        &self,
        function: Arc<Function>,
        stream: &Arc<Stream>,
        dims: LaunchDims,
        packet: Vec<u8>,
    ) {
        function.module.launch_queued();
        self.submit(
            stream,
            Op::Launch {
                function,
                dims,
                packet,
            },
        );
    }

    // ---- memory --------------------------------------------------------------------------

    /// `cuMemFree`: waits for all queued work first, as the driver's free does.
    ///
    /// Freeing memory that queued work may still touch is the caller's bug on a driver that
    /// does not wait (nothing documents that `cuMemFree` does): the model reports it on stderr
    /// before it waits, so it cannot go unnoticed.
    pub(crate) fn free(&self, address: u64) -> Result<(), CUresult> {
        let Some(len) = lock(&self.core.heap).size_at(address) else {
            return Err(CUDA_ERROR_INVALID_VALUE);
        };
        if self.core.in_use(address, len) {
            eprintln!(
                "jitseam-cuda-model: cuMemFree of {len} bytes at {address:#x} that queued work \
                 may still use"
            );
        }
        self.drain_all();
        self.check()?;
        lock(&self.core.heap).free(address)
    }

    /// Whether `[address, address + len)` is inside one live allocation.
    pub(crate) fn is_mapped(&self, address: u64, len: usize) -> bool {
        lock(&self.core.heap).contains(address, len)
    }
}
