//! The object-safe [`Backend`] trait every device implements (CUDA, the emulator, or a user's).

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jitseam_ptx::resolve::{ResolvedEntry, ResolvedModule};

use super::config::{LaunchConfig, LaunchLimits};
use crate::abi::ArgPacket;
use crate::error::Error;

/// Which kind of backend a device runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
    /// The PTX interpreter on the CPU.
    Emulator,
    /// Anything else a user plugs in.
    Other,
}

/// What a device is and what it can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Human-readable name (`NVIDIA H200`, `jitseam emulator`).
    pub name: String,
    /// Which backend.
    pub backend: BackendKind,
    /// `(major, minor)` for GPUs; `None` where the notion does not apply (the emulator runs any
    /// target whose instructions it knows).
    pub compute_capability: Option<(u32, u32)>,
    /// Largest `gridDim.x`.
    pub max_grid_x: u32,
    /// Largest `blockDim.x`.
    pub max_block_x: u32,
    /// Every limit a launch configuration must meet (threads per block, block and grid
    /// extents, dynamic shared memory); its x extents agree with `max_grid_x` and
    /// `max_block_x`.
    pub limits: LaunchLimits,
    /// Driver version, where there is a driver.
    pub driver_version: Option<String>,
}

/// The launch geometry a backend receives: the [`LaunchConfig`] of the launch.
pub type Geometry = LaunchConfig;

/// A function resolved on a backend. Dropping the last handle may unload its module, which the
/// backend must defer until no queued launch can still use it.
pub trait BackendFunction: Send + Sync + fmt::Debug {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;

    /// `(offset, size)` of every parameter as the backend itself reports them, when it can
    /// (the CUDA driver from 12.4 on); `None` when it cannot tell.
    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error>;

    /// Bytes of static shared memory one block of the function has: what is left of the
    /// device's per-block shared memory is all a launch may ask for dynamically.
    fn static_shared_bytes(&self) -> Result<u32, Error>;
}

/// A queue of work on a backend.
pub trait BackendStream: Send + Sync + fmt::Debug {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;
}

/// A point in a stream's queue: complete once everything queued on that stream before it was
/// recorded has finished.
pub trait BackendEvent: Send + Sync + fmt::Debug {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;
}

/// The event of a backend whose streams run work to completion when it is queued: every event
/// is complete when recorded, and waiting for one is a no-op. Only such a backend may use it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompletedEvent;

impl BackendEvent for CompletedEvent {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One device's driver: memory, copies, modules, launches, and events that order streams.
///
/// Addresses are device addresses as the kernel sees them. Work on one stream runs in the order
/// it was queued; work on different streams is unordered unless a stream waits for an event.
/// `write` may return before the copy has run but must not read `src` after it returns (copy it
/// or finish first); `read` returns once `dst` holds the data.
///
/// Every method that queues work may return before the work has run, and a failure of queued
/// work (a kernel fault) may surface at a later `synchronize` or `read` on that stream.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Name, architecture and limits.
    fn properties(&self) -> &DeviceProperties;

    /// Allocates `bytes` (at least 256-byte aligned, like `cuMemAlloc`).
    fn alloc(&self, bytes: usize) -> Result<u64, Error>;

    /// Frees an allocation once the work queued so far on every stream in `pending` has
    /// finished (the streams whose queued work may still use it); with `pending` empty, now.
    /// Must not block the calling thread on that work. Never fails and never panics: a driver
    /// error is recorded, not raised, because it runs from `Drop`.
    fn free(&self, address: u64, bytes: usize, pending: &[&dyn BackendStream]);

    /// The stream work goes to when none is named.
    fn default_stream(&self) -> Arc<dyn BackendStream>;

    /// A new stream.
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error>;

    /// Queues a copy of `src` to `address` on `stream`. `src` may be reused as soon as this
    /// returns.
    fn write(&self, stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error>;

    /// Copies from `address` into `dst` in order on `stream`, returning once `dst` holds the
    /// data (so after all earlier work on `stream`).
    fn read(&self, stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error>;

    /// An event recorded on `stream` now: it completes once all work queued there so far has
    /// finished.
    fn record_event(&self, stream: &dyn BackendStream) -> Result<Arc<dyn BackendEvent>, Error>;

    /// Makes work queued on `stream` from now on wait, on the device, until `event` completes.
    /// The calling thread does not wait.
    fn wait_event(&self, stream: &dyn BackendStream, event: &dyn BackendEvent)
    -> Result<(), Error>;

    /// Blocks the calling thread until `event` completes.
    fn synchronize_event(&self, event: &dyn BackendEvent) -> Result<(), Error>;

    /// Whether `event` has completed, without waiting.
    fn event_complete(&self, event: &dyn BackendEvent) -> Result<bool, Error>;

    /// Queues a fill of the `bytes` bytes at `address` with `value` on `stream`: ordered like a
    /// [`Backend::write`], which is what the default does (from a host buffer of `value`s).
    fn fill_bytes(
        &self,
        stream: &dyn BackendStream,
        address: u64,
        bytes: usize,
        value: u8,
    ) -> Result<(), Error> {
        self.write(stream, address, &vec![value; bytes])
    }

    /// Queues a copy of the `bytes` bytes at `src` to `dst` on `stream`, both on this device;
    /// the two ranges do not overlap. The default goes through the host: it reads `src` (which
    /// waits for the stream), then queues the write of `dst`.
    fn copy(
        &self,
        stream: &dyn BackendStream,
        src: u64,
        dst: u64,
        bytes: usize,
    ) -> Result<(), Error> {
        let mut staged = vec![0u8; bytes];
        self.read(stream, src, &mut staged)?;
        self.write(stream, dst, &staged)
    }

    /// An event recorded on `stream` now, as [`Backend::record_event`], that also records when
    /// it completes, so that [`Backend::event_elapsed`] can measure between two such events. The
    /// default records a plain event.
    fn record_timed_event(
        &self,
        stream: &dyn BackendStream,
    ) -> Result<Arc<dyn BackendEvent>, Error> {
        self.record_event(stream)
    }

    /// The time from `start`'s completion to `end`'s, both made by
    /// [`Backend::record_timed_event`], once both have completed (it waits for them). Refused
    /// when `end` completed first. The default refuses: the backend keeps no time.
    fn event_elapsed(
        &self,
        start: &dyn BackendEvent,
        end: &dyn BackendEvent,
    ) -> Result<Duration, Error> {
        let _ = (start, end);
        Err(Error::EventTiming {
            reason: format!("{} records no event times", self.properties().name),
        })
    }

    /// Loads a PTX module and resolves `symbol` in it.
    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error>;

    /// [`Backend::load_function`] for a module `load()` already parsed and resolved from `ptx`
    /// (`entry` is `symbol`'s): a backend that reads PTX itself decodes `module` and `entry`
    /// instead of parsing the text again. The default hands the text on.
    fn load_resolved(
        &self,
        ptx: &str,
        symbol: &str,
        module: &ResolvedModule,
        entry: &ResolvedEntry,
    ) -> Result<Arc<dyn BackendFunction>, Error> {
        let _ = (module, entry);
        self.load_function(ptx, symbol)
    }

    /// Loads a compiled image (a cubin) and resolves `symbol` in it. Backends that run only
    /// PTX keep this default, which refuses.
    fn load_image(&self, image: &[u8], symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        let _ = image;
        Err(Error::ImageUnsupported {
            entry: symbol.to_owned(),
            backend: self.properties().name.clone(),
        })
    }

    /// Queues one launch of `function` on `stream`.
    ///
    /// # Safety
    /// `packet` must have been produced by [`crate::launch::marshal`] from a plan that
    /// [`crate::launch::check`] (or [`crate::launch::check_custom`]) accepted for this
    /// `function` on this device, with `geometry` the launch configuration it checked: every
    /// pointer in it
    /// then addresses live allocations of this device large enough for every index the kernel's
    /// ABI lets it touch; the caller has made `stream` wait for every earlier conflicting use
    /// of those allocations on other streams, and logs the launch so that every later
    /// conflicting use waits for it (see [`crate::device::Stream`]).
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error>;

    /// Waits until all work queued on `stream` has finished, and reports a failure of work
    /// queued there since the last report.
    fn synchronize(&self, stream: &dyn BackendStream) -> Result<(), Error>;
}
