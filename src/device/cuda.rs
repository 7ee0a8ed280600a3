//! The CUDA backend: the only file in jitseam that touches `cudarc` (DESIGN §2, §5).
//!
//! Contexts and streams use cudarc's safe [`CudaContext`] and [`CudaStream`], which own their
//! driver handles. Memory, modules, events and launches use cudarc's thin `result`/`sys` layer,
//! because the safe layer would either panic on our inputs (`load_function` unwraps a `CString`)
//! or impose its own buffer type.
//!
//! # Never reaching a cudarc panic
//!
//! With `dynamic-loading`, cudarc opens libcuda lazily and *panics* when the library or one of
//! its symbols is missing. So [`open`] first probes the library ([`sys::is_culib_present`]),
//! then checks that every symbol this file can call is exported ([`REQUIRED_SYMBOLS`]) before
//! the first driver call; `cuFuncGetParamInfo`, newer than the rest, is probed separately and
//! simply reported as unavailable. Opening also runs under `catch_unwind` as a second line of
//! defence: it costs nothing on a path taken once per device, and it turns a cudarc panic we did
//! not foresee into [`Error::DriverUnavailable`] (in builds that unwind).
//!
//! # Deferred free and unload
//!
//! Launches are asynchronous, so a buffer or a module may be dropped while queued work still
//! uses it:
//!
//! - **free** synchronizes the whole context (every stream) before `cuMemFree`. If the context
//!   cannot be synchronized the allocation is leaked and the error recorded: a leak is safe, a
//!   use-after-free on the device is not.
//! - **module unload**: a function handle remembers each stream it was launched on. When it is
//!   dropped it records an event on each of them and hands `(module, events)` to the backend's
//!   pending list; the module is unloaded once every event has completed — checked on later
//!   loads, launches and synchronizations, after any context-wide synchronization (every free),
//!   and, after a final synchronization, when the last handle to the backend goes.
//!
//! Errors on these paths run from `Drop`, so they are recorded, never raised or panicked on; the
//! next [`Backend::synchronize`] reports them.
//!
//! # Streams
//!
//! As in CUDA, work on different streams is not ordered: launches are asynchronous, a copy waits
//! only for its own stream, and streams from [`Backend::new_stream`] are non-blocking (they do
//! not wait for the default stream either). Order work across streams by synchronizing.

use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::{CString, c_void};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaStream};

use super::Geometry;
use super::{Backend, BackendFunction, BackendKind, BackendStream, Device, DeviceProperties};
use crate::error::Error;
use crate::abi::ArgPacket;

/// Every driver entry point this file reaches through cudarc, by the exact name cudarc's loader
/// resolves (it panics on a missing one). Checked once per [`open`], before the first call.
const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventDestroy_v2",
];

/// `cuFuncGetParamInfo` exists from CUDA 12.4 on.
const PARAM_INFO_SYMBOL: &str = "cuFuncGetParamInfo";
const PARAM_INFO_MIN_DRIVER: i32 = 12_040;

/// Parameter pointers for launches with at most this many parameters live on the stack.
const INLINE_PARAMS: usize = 64;

/// Recorded cleanup errors kept for the next `synchronize`; more are counted, not kept.
const MAX_DEFERRED: usize = 16;

/// Opens CUDA device `ordinal` as a [`Device`].
pub(super) fn open(ordinal: usize) -> Result<Device, Error> {
    probe_library()?;
    guarded("open cuda device", || {
        check_symbols()?;
        let available = count_devices()?;
        if ordinal >= available {
            return Err(Error::NoDevice { ordinal, available });
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| driver_error(format!("open cuda device {ordinal}"), e))?;
        let properties = properties_of(&ctx)?;
        let default_stream: Arc<dyn BackendStream> = Arc::new(CudaStreamHandle {
            stream: ctx.default_stream(),
        });
        let backend = CudaBackend {
            shared: Arc::new(Shared::new(ctx)),
            properties,
            default_stream,
        };
        Ok(Device::with_backend(Arc::new(backend)))
    })
}

/// How many CUDA devices the driver reports.
pub(super) fn device_count() -> Result<usize, Error> {
    probe_library()?;
    guarded("count cuda devices", || {
        check_symbols()?;
        count_devices()
    })
}

fn probe_library() -> Result<(), Error> {
    // SAFETY: `is_culib_present` only tries to `dlopen` the CUDA driver under its well-known
    // names (`libcuda.so`, `libcuda.so.1`, …) and closes it again. Loading the driver library
    // runs its initializers, which NVIDIA designs to be loaded into arbitrary processes; no
    // symbol is called and nothing is dereferenced.
    let present = unsafe { sys::is_culib_present() };
    if present {
        Ok(())
    } else {
        Err(Error::DriverUnavailable {
            reason: "the cuda driver library (libcuda) could not be loaded; install the nvidia \
                     driver or add its directory to LD_LIBRARY_PATH"
                .to_owned(),
        })
    }
}

/// Runs `f`, turning a panic from inside cudarc into a typed error. Only for paths that run
/// once per device: the primary guard is the probing above.
fn guarded<T>(stage: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(Error::DriverUnavailable {
            reason: format!("{stage}: the cuda driver library failed inside cudarc: {what}"),
        })
    })
}

/// Whether the loaded driver library exports `name`. Call only after [`probe_library`]
/// succeeded.
fn has_symbol(name: &str) -> bool {
    // SAFETY: `culib` panics only when no candidate library loads; every caller runs after
    // `probe_library` found one under the same candidate names, in the same order, and the
    // library it caches stays loaded for the life of the process.
    let library = unsafe { sys::culib() };
    // SAFETY: the symbol is only looked up, never called or read through, so the pointer type
    // handed to `get` cannot be wrong; the result is dropped at once.
    unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_ok()
}

fn check_symbols() -> Result<(), Error> {
    match REQUIRED_SYMBOLS.iter().find(|name| !has_symbol(name)) {
        None => Ok(()),
        Some(missing) => Err(Error::DriverUnavailable {
            reason: format!(
                "the cuda driver library lacks `{missing}`; the driver is older than jitseam supports"
            ),
        }),
    }
}

/// Device count, treating "no device" as zero. Runs `cuInit` first, as the driver requires.
fn count_devices() -> Result<usize, Error> {
    match result::init() {
        Ok(()) => {}
        Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
        // A stub libcuda (from the toolkit, not the driver), a driver older than the kernel
        // module, or a broken installation: there is no usable driver.
        Err(e) => {
            return Err(Error::DriverUnavailable {
                reason: format!("cuInit failed: {}", describe(e)),
            });
        }
    }
    let count = result::device::get_count().map_err(|e| driver_error("count cuda devices", e))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

fn properties_of(ctx: &CudaContext) -> Result<DeviceProperties, Error> {
    let stage = |what: &str| format!("query {what} of cuda device {}", ctx.ordinal());
    let name = ctx.name().map_err(|e| driver_error(stage("the name"), e))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| driver_error(stage("the compute capability"), e))?;
    let attribute = |attribute, what: &str| -> Result<u32, Error> {
        let value = ctx
            .attribute(attribute)
            .map_err(|e| driver_error(stage(what), e))?;
        // A negative limit would be a driver bug; 0 makes every launch refuse cleanly.
        Ok(u32::try_from(value).unwrap_or(0))
    };
    let max_grid_x = attribute(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        "gridDim.x",
    )?;
    let max_block_x = attribute(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        "blockDim.x",
    )?;
    Ok(DeviceProperties {
        name,
        backend: BackendKind::Cuda,
        compute_capability: Some((
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        )),
        max_grid_x,
        max_block_x,
        driver_version: driver_version().ok().map(format_version),
    })
}

/// `cuDriverGetVersion`: `1000 * major + 10 * minor`.
fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0;
    // SAFETY: `version` is a live, writable `c_int` for the duration of the call, which only
    // writes through the pointer.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// `12080` → `"12.8"`.
fn format_version(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}

/// Whether this driver offers `cuFuncGetParamInfo`: new enough, and the symbol exported (cudarc
/// would panic resolving a missing one). Decided once per process.
fn param_info_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        driver_version().is_ok_and(|v| v >= PARAM_INFO_MIN_DRIVER) && has_symbol(PARAM_INFO_SYMBOL)
    })
}

/// The driver's name and description of an error (`CUDA_ERROR_INVALID_PTX: …`).
fn describe(error: DriverError) -> String {
    let name = error
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", error.0));
    match error.error_string() {
        Ok(text) => format!("{name}: {}", text.to_string_lossy()),
        Err(_) => name,
    }
}

fn driver_error(stage: impl Into<String>, error: DriverError) -> Error {
    Error::Device {
        stage: stage.into(),
        message: describe(error),
    }
}

/// A poisoned lock is still consistent here: no critical section in this file can panic
/// half-way through an update.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the backend and every function handle share: the context, the modules waiting to be
/// unloaded, the live allocations, and errors recorded on paths that cannot return them.
///
/// Function handles hold it too, so a kernel dropped after its device can still hand its module
/// over; the last holder's `Drop` synchronizes and unloads everything left.
struct Shared {
    ctx: Arc<CudaContext>,
    pending: Mutex<PendingList>,
    /// Mirrors `!pending.is_empty()` so launches skip the lock when nothing waits.
    has_pending: AtomicBool,
    /// Live allocations, base → bytes: copies are checked against them, and a double or foreign
    /// free is refused instead of reaching the driver.
    allocations: Mutex<BTreeMap<u64, usize>>,
    deferred: Mutex<Deferred>,
}

/// Modules waiting to be unloaded, in the order their handles dropped.
#[derive(Default)]
struct PendingList {
    entries: Vec<PendingUnload>,
    /// Sequence number of the next entry: a context-wide synchronization that began when this
    /// was `s` covers exactly the entries numbered below `s`.
    next_seq: u64,
}

#[derive(Default)]
struct Deferred {
    messages: Vec<String>,
    dropped: usize,
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
// through the `Mutex` in `Shared`, so one thread at a time uses it.
unsafe impl Send for PendingUnload {}

impl Shared {
    fn new(ctx: Arc<CudaContext>) -> Self {
        Self {
            ctx,
            pending: Mutex::new(PendingList::default()),
            has_pending: AtomicBool::new(false),
            allocations: Mutex::new(BTreeMap::new()),
            deferred: Mutex::new(Deferred::default()),
        }
    }

    /// Makes the context current on this thread. cudarc parks errors from its own `Drop`s in the
    /// context and returns them from the next bind; such a stale error is recorded and the bind
    /// retried once, so it neither fails an unrelated call nor is lost.
    fn bind(&self, stage: &str) -> Result<(), Error> {
        if let Err(stale) = self.ctx.bind_to_thread() {
            self.record(format!(
                "earlier cleanup inside cudarc: {}",
                describe(stale)
            ));
            self.ctx
                .bind_to_thread()
                .map_err(|e| driver_error(format!("{stage}: make the context current"), e))?;
        }
        Ok(())
    }

    /// Waits for all work on every stream of the context. Returns the sequence number below
    /// which every pending module is now unused: those handed over before the wait began.
    fn synchronize_context(&self, stage: &str) -> Result<u64, Error> {
        let covered = lock(&self.pending).next_seq;
        self.bind(stage)?;
        result::ctx::synchronize().map_err(|e| driver_error(format!("{stage}: synchronize"), e))?;
        Ok(covered)
    }

    fn record(&self, message: String) {
        let mut deferred = lock(&self.deferred);
        if deferred.messages.len() < MAX_DEFERRED {
            deferred.messages.push(message);
        } else {
            deferred.dropped += 1;
        }
    }

    /// Errors recorded since the last call, as one error.
    fn take_deferred(&self) -> Result<(), Error> {
        let deferred = std::mem::take(&mut *lock(&self.deferred));
        if deferred.messages.is_empty() {
            return Ok(());
        }
        let mut message = deferred.messages.join("; ");
        if deferred.dropped > 0 {
            message.push_str(&format!("; and {} more", deferred.dropped));
        }
        Err(Error::Device {
            stage: "deferred cleanup (free, module unload) since the last synchronize".to_owned(),
            message,
        })
    }

    fn defer_unload(&self, mut unload: PendingUnload) {
        let mut pending = lock(&self.pending);
        unload.seq = pending.next_seq;
        pending.next_seq += 1;
        pending.entries.push(unload);
        self.has_pending.store(true, Ordering::Release);
    }

    /// Unloads every pending module whose recorded work has finished, and every one numbered
    /// below `synced` (what [`Shared::synchronize_context`] returned; 0 when there was none).
    fn drain(&self, synced: u64) {
        if !self.has_pending.load(Ordering::Acquire) {
            return;
        }
        let mut pending = lock(&self.pending);
        if pending.entries.is_empty() {
            return;
        }
        if let Err(e) = self.bind("unload modules") {
            self.record(e.to_string());
            return;
        }
        pending.entries.retain_mut(|unload| {
            if unload.seq >= synced && !self.work_finished(unload) {
                return true;
            }
            self.unload(unload);
            false
        });
        self.has_pending
            .store(!pending.entries.is_empty(), Ordering::Release);
    }

    /// Whether every event of `unload` has completed. An event that reports an error leaves the
    /// module to the next context-wide synchronization.
    fn work_finished(&self, unload: &mut PendingUnload) -> bool {
        if unload.needs_context_sync {
            return false;
        }
        for &event in &unload.events {
            // SAFETY: `event` was created in this context and is destroyed only by `unload`,
            // after which the entry leaves the pending list.
            match unsafe { result::event::query(event) } {
                Ok(()) => {}
                Err(DriverError(CUresult::CUDA_ERROR_NOT_READY)) => return false,
                Err(e) => {
                    self.record(format!(
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
    fn unload(&self, unload: &mut PendingUnload) {
        for event in unload.events.drain(..) {
            // SAFETY: created in this context, destroyed exactly once (drained from the list).
            if let Err(e) = unsafe { result::event::destroy(event) } {
                self.record(format!(
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
            self.record(format!(
                "unload the module of `{}`: {}",
                unload.symbol,
                describe(e)
            ));
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !lock(&self.pending).entries.is_empty() {
            // When the context cannot be synchronized, work may still run: the modules stay
            // loaded, and releasing the primary context (once no other handle retains it)
            // reclaims them with everything else.
            if let Ok(synced) = self.synchronize_context("release cuda device") {
                self.drain(synced);
            }
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("ordinal", &self.ctx.ordinal())
            .field("pending_unloads", &lock(&self.pending).entries.len())
            .field("allocations", &lock(&self.allocations).len())
            .finish()
    }
}

/// The CUDA [`Backend`] of one [`Device`].
#[derive(Debug)]
struct CudaBackend {
    shared: Arc<Shared>,
    properties: DeviceProperties,
    default_stream: Arc<dyn BackendStream>,
}

/// A stream of a [`CudaBackend`]: cudarc's stream, which owns (or, for the default stream,
/// borrows) the driver handle and keeps the context alive.
#[derive(Debug)]
struct CudaStreamHandle {
    stream: Arc<CudaStream>,
}

impl BackendStream for CudaStreamHandle {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A resolved kernel and the module that holds it.
struct CudaFunction {
    shared: Arc<Shared>,
    module: sys::CUmodule,
    function: sys::CUfunction,
    symbol: String,
    /// Every stream the function was launched on, kept alive so an event can be recorded on
    /// each when the handle drops. Holding them also keeps their handles from being reused, so
    /// a handle value names one stream for as long as it is in this list.
    launched_on: Mutex<Vec<Arc<CudaStream>>>,
    /// The handle (as `usize`) of the stream last added to `launched_on`, or [`NO_STREAM`]: a
    /// launch on the same stream as the previous one takes no lock.
    last_stream: AtomicUsize,
}

/// No stream handle is `usize::MAX` (the default stream is 0).
const NO_STREAM: usize = usize::MAX;

// SAFETY: `module` and `function` are driver handles valid in any thread once their context is
// current (every use binds it first); the driver serializes its own use of them. The only
// mutable state, `launched_on` and `last_stream`, is behind a `Mutex` and an atomic.
unsafe impl Send for CudaFunction {}
// SAFETY: as for `Send`: shared use only reads the handles or goes through the `Mutex`/atomic.
unsafe impl Sync for CudaFunction {}

impl fmt::Debug for CudaFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaFunction")
            .field("symbol", &self.symbol)
            .field("ordinal", &self.shared.ctx.ordinal())
            .finish()
    }
}

impl CudaFunction {
    /// Remembers that a launch goes to `stream`.
    fn note_stream(&self, stream: &Arc<CudaStream>) {
        let key = stream.cu_stream() as usize;
        if self.last_stream.load(Ordering::Relaxed) == key {
            return;
        }
        let mut streams = lock(&self.launched_on);
        if !streams.iter().any(|s| s.cu_stream() as usize == key) {
            streams.push(Arc::clone(stream));
        }
        self.last_stream.store(key, Ordering::Relaxed);
    }

    /// An event recorded on `stream` now: it completes once everything queued there so far,
    /// including every launch of this function on it, has finished.
    fn record_event(&self, stream: &CudaStream) -> Result<sys::CUevent, DriverError> {
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)?;
        // SAFETY: `event` was just created in this (current) context; `stream` belongs to the
        // same context (checked at launch) and is kept alive by `launched_on`.
        if let Err(e) = unsafe { result::event::record(event, stream.cu_stream()) } {
            // SAFETY: created above, never recorded or shared, destroyed once.
            let _ = unsafe { result::event::destroy(event) };
            return Err(e);
        }
        Ok(event)
    }
}

impl Drop for CudaFunction {
    fn drop(&mut self) {
        let streams = std::mem::take(
            self.launched_on
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut unload = PendingUnload {
            seq: 0,
            module: self.module,
            symbol: std::mem::take(&mut self.symbol),
            events: Vec::with_capacity(streams.len()),
            needs_context_sync: false,
        };
        match self.shared.bind("release a kernel") {
            Ok(()) => {
                for stream in &streams {
                    match self.record_event(stream) {
                        Ok(event) => unload.events.push(event),
                        Err(e) => {
                            self.shared.record(format!(
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
                self.shared.record(e.to_string());
                unload.needs_context_sync = true;
            }
        }
        self.shared.defer_unload(unload);
        // A function never launched (or whose work already finished) goes at once.
        self.shared.drain(0);
    }
}

impl BackendFunction for CudaFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        if !param_info_available() {
            return Ok(None);
        }
        let stage = || format!("query the parameters of kernel `{}`", self.symbol);
        self.shared.bind(&stage())?;
        let mut params = Vec::new();
        // The packet limit bounds the parameter count; the loop bound only guards against a
        // driver that never reports the end.
        for index in 0..=crate::abi::MAX_PARAM_BYTES {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `function` is a live handle of this (current) context — the module is
            // unloaded only after this handle drops — and both out-pointers are live locals.
            let status =
                unsafe { sys::cuFuncGetParamInfo(self.function, index, &mut offset, &mut size) };
            match status {
                CUresult::CUDA_SUCCESS => params.push((offset, size)),
                // The documented answer for an index past the last parameter.
                CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(Some(params)),
                CUresult::CUDA_ERROR_NOT_SUPPORTED => return Ok(None),
                other => return Err(driver_error(stage(), DriverError(other))),
            }
        }
        Err(Error::Device {
            stage: stage(),
            message: format!(
                "the driver reports more than {} parameters",
                crate::abi::MAX_PARAM_BYTES
            ),
        })
    }
}

impl CudaBackend {
    fn stream<'s>(
        &self,
        stream: &'s dyn BackendStream,
        stage: &str,
    ) -> Result<&'s Arc<CudaStream>, Error> {
        let handle = stream
            .as_any()
            .downcast_ref::<CudaStreamHandle>()
            .ok_or_else(|| Error::Device {
                stage: stage.to_owned(),
                message: format!("{stream:?} is not a cuda stream"),
            })?;
        if !Arc::ptr_eq(handle.stream.context(), &self.shared.ctx) {
            return Err(Error::Device {
                stage: stage.to_owned(),
                message: "the stream belongs to another cuda device handle".to_owned(),
            });
        }
        Ok(&handle.stream)
    }

    /// Refuses a copy that is not inside one live allocation of this backend.
    fn check_range(&self, address: u64, len: usize, stage: &str) -> Result<(), Error> {
        let allocations = lock(&self.shared.allocations);
        let inside = allocations
            .range(..=address)
            .next_back()
            .is_some_and(|(&base, &bytes)| {
                let end = base.checked_add(bytes as u64);
                let want = address.checked_add(len as u64);
                matches!((end, want), (Some(end), Some(want)) if want <= end)
            });
        if inside {
            Ok(())
        } else {
            Err(Error::Device {
                stage: stage.to_owned(),
                message: format!(
                    "{len} bytes at {address:#x} are not inside a live allocation of this device"
                ),
            })
        }
    }
}

impl Backend for CudaBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let stage = format!("allocate {bytes} bytes");
        self.shared.bind(&stage)?;
        // SAFETY: the context is current; the memory is returned uninitialized, which is fine:
        // jitseam only ever treats device memory as bytes.
        let address = unsafe { result::malloc_sync(bytes) }.map_err(|e| driver_error(stage, e))?;
        lock(&self.shared.allocations).insert(address, bytes);
        Ok(address)
    }

    fn free(&self, address: u64, bytes: usize) {
        let known = lock(&self.shared.allocations).remove(&address);
        if known != Some(bytes) {
            self.shared.record(format!(
                "free of {bytes} bytes at {address:#x} refused: not a live allocation of this device"
            ));
            if let Some(size) = known {
                lock(&self.shared.allocations).insert(address, size);
            }
            return;
        }
        // Queued work on any stream may still use the memory: wait for all of it.
        let synced = match self.shared.synchronize_context("free device memory") {
            Ok(synced) => synced,
            Err(e) => {
                self.shared
                    .record(format!("{e}; {bytes} bytes at {address:#x} leaked"));
                return;
            }
        };
        // Modules waiting for that same work can go too.
        self.shared.drain(synced);
        // SAFETY: `address` came from `malloc_sync` in this context (it was in the allocation
        // map, removed above, so it is freed once); the context-wide synchronization above
        // finished every launch and copy that could use it, and no later one can name it (its
        // buffer is being dropped).
        if let Err(e) = unsafe { result::free_sync(address) } {
            self.shared.record(format!(
                "free {bytes} bytes at {address:#x}: {}",
                describe(e)
            ));
        }
    }

    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::clone(&self.default_stream)
    }

    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        self.shared.bind("create a stream")?;
        let stream = self
            .shared
            .ctx
            .new_stream()
            .map_err(|e| driver_error("create a stream", e))?;
        Ok(Arc::new(CudaStreamHandle { stream }))
    }

    fn write(&self, stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error> {
        const STAGE: &str = "copy to device";
        let stream = self.stream(stream, STAGE)?;
        self.check_range(address, src.len(), STAGE)?;
        if src.is_empty() {
            return Ok(());
        }
        self.shared.bind(STAGE)?;
        // SAFETY: `address..address + src.len()` lies inside a live allocation of this context
        // (checked above; it stays live because the caller borrows its buffer for this call);
        // `src` stays borrowed until the stream synchronization below, after which the copy
        // has finished reading it.
        unsafe { result::memcpy_htod_async(address, src, stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))?;
        // SAFETY: `stream` is a live stream of this (current) context.
        unsafe { result::stream::synchronize(stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))
    }

    fn read(&self, stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error> {
        const STAGE: &str = "copy to host";
        let stream = self.stream(stream, STAGE)?;
        self.check_range(address, dst.len(), STAGE)?;
        if dst.is_empty() {
            return Ok(());
        }
        self.shared.bind(STAGE)?;
        // SAFETY: `address..address + dst.len()` lies inside a live allocation of this context
        // (checked above); `dst` is exclusively borrowed until the stream synchronization
        // below, after which the copy has finished writing it; any byte pattern is a valid
        // `u8`.
        unsafe { result::memcpy_dtoh_async(dst, address, stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))?;
        // SAFETY: `stream` is a live stream of this (current) context.
        unsafe { result::stream::synchronize(stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))
    }

    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        self.shared.drain(0);
        let nul = |what, e: std::ffi::NulError| Error::InteriorNul {
            entry: symbol.to_owned(),
            what,
            offset: e.nul_position(),
        };
        let image = CString::new(ptx).map_err(|e| nul("ptx text", e))?;
        let name = CString::new(symbol).map_err(|e| nul("symbol", e))?;
        let stage = |what: &str| format!("{what} for kernel `{symbol}`");
        self.shared.bind(&stage("load the module"))?;
        // SAFETY: `image` is NUL-terminated PTX text that outlives the call; the driver JITs
        // or copies it before returning and keeps no pointer into it.
        let module = unsafe { result::module::load_data(image.as_ptr().cast::<c_void>()) }
            .map_err(|e| driver_error(stage("load the ptx module"), e))?;
        // SAFETY: `module` was just loaded in the current context and is not unloaded before
        // this returns; `name` is NUL-terminated.
        let function = match unsafe { result::module::get_function(module, name) } {
            Ok(function) => function,
            Err(e) => {
                // SAFETY: loaded above, never shared, no function resolved, unloaded once.
                if let Err(u) = unsafe { result::module::unload(module) } {
                    self.shared.record(format!(
                        "unload the module of `{symbol}` after a failed lookup: {}",
                        describe(u)
                    ));
                }
                return Err(driver_error(stage("resolve the entry"), e));
            }
        };
        Ok(Arc::new(CudaFunction {
            shared: Arc::clone(&self.shared),
            module,
            function,
            symbol: symbol.to_owned(),
            launched_on: Mutex::new(Vec::new()),
            last_stream: AtomicUsize::new(NO_STREAM),
        }))
    }

    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        let function = function
            .as_any()
            .downcast_ref::<CudaFunction>()
            .filter(|f| Arc::ptr_eq(&f.shared, &self.shared))
            .ok_or_else(|| Error::Device {
                stage: "launch".to_owned(),
                message: format!("{function:?} was not loaded by this cuda device handle"),
            })?;
        let stage = || format!("launch kernel `{}`", function.symbol);
        let stream = self.stream(stream, "launch")?;
        self.shared.drain(0);
        let mut inline = [std::ptr::null_mut::<c_void>(); INLINE_PARAMS];
        let mut heap = Vec::new();
        let params = packet.layout().params();
        let pointers: &mut [*mut c_void] = if params.len() <= INLINE_PARAMS {
            &mut inline[..params.len()]
        } else {
            heap.resize(params.len(), std::ptr::null_mut());
            &mut heap
        };
        param_pointers(packet, pointers).map_err(|message| Error::Device {
            stage: stage(),
            message,
        })?;
        self.shared.bind(&stage())?;
        function.note_stream(stream);
        // SAFETY: `function` is a live function of this (current) context: its module is
        // unloaded only after the handle drops and the work queued on every stream noted above
        // has finished. `stream` belongs to this context (checked) and outlives the call.
        // `pointers[i]` addresses parameter `i` inside `packet`, whose layout is the entry's
        // verified `.param` list (cross-checked with the driver at bind where it can tell); the
        // driver copies the parameters before returning, so `packet` need not outlive the
        // call. The caller guarantees (this fn's contract) that every device pointer in the
        // packet addresses live memory of this device large enough for the kernel's ABI.
        unsafe {
            result::launch_kernel(
                function.function,
                (geometry.grid, 1, 1),
                (geometry.block, 1, 1),
                0,
                stream.cu_stream(),
                pointers,
            )
        }
        .map_err(|e| driver_error(stage(), e))
    }

    fn synchronize(&self, stream: &dyn BackendStream) -> Result<(), Error> {
        const STAGE: &str = "synchronize a stream";
        let stream = self.stream(stream, STAGE)?;
        self.shared.bind(STAGE)?;
        // SAFETY: `stream` is a live stream of this (current) context.
        unsafe { result::stream::synchronize(stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))?;
        self.shared.drain(0);
        self.shared.take_deferred()
    }
}

/// Points `pointers[i]` at parameter `i` of `packet` — the `void**` array `cuLaunchKernel`
/// reads. Allocation-free; `pointers` has exactly one slot per parameter.
fn param_pointers(packet: &ArgPacket<'_>, pointers: &mut [*mut c_void]) -> Result<(), String> {
    let bytes = packet.bytes();
    let params = packet.layout().params();
    if params.len() != pointers.len() {
        return Err(format!(
            "{} parameter slots for {} parameters",
            pointers.len(),
            params.len()
        ));
    }
    for (index, (slot, placed)) in pointers.iter_mut().zip(params).enumerate() {
        let end = placed.offset.checked_add(placed.class.size());
        let Some(param) = end.and_then(|end| bytes.get(placed.offset..end)) else {
            return Err(format!(
                "parameter {index} at offset {} does not fit the {}-byte packet",
                placed.offset,
                bytes.len()
            ));
        };
        // The driver only reads through these pointers; its C signature is not const-correct.
        *slot = param.as_ptr().cast_mut().cast::<c_void>();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_versions_read_like_the_toolkit() {
        assert_eq!(format_version(12_080), "12.8");
        assert_eq!(format_version(12_040), "12.4");
        assert_eq!(format_version(11_020), "11.2");
        assert_eq!(format_version(13_000), "13.0");
    }
}
