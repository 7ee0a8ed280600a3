//! The CUDA backend: the only code in jitseam that touches `cudarc`, one concern per file.
//!
//! Contexts and streams use cudarc's safe [`CudaContext`] and [`CudaStream`], which own their
//! driver handles. Memory, modules, events and launches use cudarc's thin `result`/`sys` layer,
//! because the safe layer would either panic on our inputs (`load_function` unwraps a `CString`)
//! or impose its own buffer type.
//!
//! | file | concern |
//! |------|---------|
//! | `probe.rs` | is libcuda loadable, does it export every symbol we call, its version |
//! | `context.rs` | opening a device's primary context, its properties, making it current |
//! | `error.rs` | driver errors as [`Error`]s, the log of errors raised in `Drop` |
//! | `shared.rs` | the state the backend and its function handles hold together |
//! | `memory.rs` | allocation, free, host↔device copies |
//! | `on_device.rs` | fills and device-to-device copies |
//! | `frees.rs` | deferred free: allocations parked until their work has finished |
//! | `event.rs` | events: record, device-side wait, host wait, query, elapsed time |
//! | `stream.rs` | stream handles: creating, resolving, synchronizing |
//! | `module.rs` | module load, function handles, the driver's parameter info |
//! | `launch.rs` | the kernel-parameter pointer array and `cuLaunchKernel` |
//! | `unload.rs` | deferred module unload: events, the pending list, the sweep |
//! | `backend.rs` | the [`Backend`] impl, one hand-off per method |
//! | `registry.rs` | which live [`Device`] uses which cudarc context |
//! | `interop.rs` | cudarc's contexts, streams and slices in and out of jitseam |
//! | `shadow.rs` | a jitseam buffer as a cudarc slice, whose events order both sides' uses |
//!
//! # Never reaching a cudarc panic
//!
//! With `dynamic-loading`, cudarc opens libcuda lazily and *panics* when the library or one of
//! its symbols is missing. So [`open`] first probes the library
//! ([`sys::is_culib_present`](cudarc::driver::sys::is_culib_present)), then checks that every
//! symbol this folder can call is exported before the first driver call; `cuFuncGetParamInfo`,
//! newer than the rest, is probed separately and simply reported as unavailable. Opening also
//! runs under `catch_unwind` as a second line of defence: it costs nothing on a path taken once
//! per device, and it turns a cudarc panic we did not foresee into [`Error::DriverUnavailable`]
//! (in builds that unwind).
//!
//! # Deferred free and unload
//!
//! Launches are asynchronous, so a buffer or a module may be dropped while queued work still
//! uses it:
//!
//! - **free** records an event on each stream that may still use the memory (the buffer's
//!   access log names them) and parks the allocation until they complete, checked on later
//!   allocations, launches, loads and synchronizations; it never blocks, except for a buffer
//!   handed to cudarc since its last jitseam write, whose free first waits for the context
//!   (cudarc's reads of it may be on streams no log names; see `shadow.rs`). If an event cannot be
//!   recorded the allocation waits for the next context-wide synchronization: a leak is safe,
//!   a use-after-free on the device is not.
//! - **module unload**: a function handle remembers each stream it was launched on. When it is
//!   dropped it records an event on each of them and hands `(module, events)` to the backend's
//!   pending list; the module is unloaded once every event has completed — checked on later
//!   loads, launches and synchronizations — and, after a final synchronization, when the last
//!   handle to the backend goes.
//!
//! Errors on these paths run from `Drop`, so they are recorded, never raised or panicked on; the
//! next [`Backend::synchronize`] reports them.
//!
//! # Streams
//!
//! As in CUDA, work on different streams is not ordered by the driver: launches are
//! asynchronous, and streams from [`Backend::new_stream`] are non-blocking (they do not wait for
//! the default stream either). jitseam orders the uses of each buffer across streams with
//! events (see [`crate::device::Stream`]).
//!
//! [`CudaContext`]: cudarc::driver::CudaContext
//! [`CudaStream`]: cudarc::driver::CudaStream
//! [`Backend`]: crate::device::Backend
//! [`Backend::synchronize`]: crate::device::Backend::synchronize
//! [`Backend::new_stream`]: crate::device::Backend::new_stream

mod backend;
mod context;
mod error;
mod event;
mod frees;
mod interop;
mod launch;
mod memory;
mod module;
mod on_device;
mod probe;
mod registry;
mod shadow;
mod shared;
mod stream;
mod unload;

use std::sync::Arc;

use backend::CudaBackend;
use context::{count_devices, open_context};
use probe::{check_symbols, guarded, probe_library};

use crate::device::Device;
use crate::error::Error;

impl Device {
    /// Opens CUDA device `ordinal` through the driver API (libcuda, loaded at run time).
    ///
    /// Returns [`Error::DriverUnavailable`] when no usable driver library is installed and
    /// [`Error::NoDevice`] when the ordinal does not exist; it never panics. Each call opens a
    /// new handle with a new [`DeviceId`](crate::device::DeviceId), also on an ordinal already open (handles on one
    /// ordinal share the device's primary context).
    pub fn cuda(ordinal: usize) -> Result<Self, Error> {
        open(ordinal)
    }

    /// How many CUDA devices the driver reports; [`Error::DriverUnavailable`] without a driver.
    pub fn cuda_count() -> Result<usize, Error> {
        device_count()
    }
}

/// Opens CUDA device `ordinal` as a [`Device`].
fn open(ordinal: usize) -> Result<Device, Error> {
    probe_library()?;
    guarded("open cuda device", || {
        check_symbols()?;
        let ctx = open_context(ordinal)?;
        let backend = CudaBackend::new(Arc::clone(&ctx))?;
        let device = Device::with_backend(Arc::new(backend));
        registry::register(&ctx, &device);
        Ok(device)
    })
}

/// How many CUDA devices the driver reports.
fn device_count() -> Result<usize, Error> {
    probe_library()?;
    guarded("count cuda devices", || {
        check_symbols()?;
        count_devices()
    })
}
