//! [`Device`]: a cheap-clone handle to one device context, with a never-reused [`DeviceId`] and
//! a liveness token; [`WeakDevice`] names one without keeping it live.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock, Weak};

use super::backend::{Backend, BackendStream, DeviceProperties};
use super::guard::{FaultRecords, GuardTable, RecordCache};
use crate::error::Error;
use crate::liveness::{DeviceId, LivenessToken};

/// What the launch layer attaches to a device (telemetry keeps its sink there) to hear how
/// queued work ended. Defined here, implemented later in the flow: the device reports what its
/// streams report, and knows nothing of what is recorded about it. (Without the `telemetry`
/// feature nothing attaches one.)
#[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
pub(crate) trait LaunchHook: Send + Sync {
    /// For the layer that attached it, to get its own type back.
    fn as_any(&self) -> &dyn Any;

    /// A synchronization or read on `stream` reported `error` for work queued there.
    fn failed(&self, stream: &Arc<dyn BackendStream>, error: &Error);

    /// Everything queued on `stream` so far has finished without a failure.
    fn finished(&self, stream: &Arc<dyn BackendStream>);
}

/// A handle to one device context. Cloning is cheap; the [`DeviceId`] stays live while any clone
/// exists, and buffers, streams and bound kernels each hold one.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    // Dropped first: the id dies only once nothing can reach the backend any more.
    token: LivenessToken,
    backend: Arc<dyn Backend>,
    default_stream: Arc<dyn BackendStream>,
    // Set once by the launch layer (it keeps the telemetry sink here).
    launch_hook: OnceLock<Box<dyn LaunchHook>>,
    /// Where guarded launches record their first failing guard, per stream.
    fault_records: FaultRecords,
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        self.fault_records.free_all(&*self.backend);
    }
}

impl Device {
    /// Wraps a backend as a new device with a fresh id. Each call mints a new id, also for a
    /// backend on an ordinal that another `Device` already uses.
    pub fn with_backend(backend: Arc<dyn Backend>) -> Self {
        let default_stream = backend.default_stream();
        Self {
            inner: Arc::new(DeviceInner {
                token: LivenessToken::mint(),
                backend,
                default_stream,
                launch_hook: OnceLock::new(),
                fault_records: FaultRecords::default(),
            }),
        }
    }

    /// This device's id.
    pub fn id(&self) -> DeviceId {
        self.inner.token.id()
    }

    /// Name, architecture and limits.
    pub fn properties(&self) -> &DeviceProperties {
        self.inner.backend.properties()
    }

    /// The backend's default stream, as [`Device::default_stream`] wraps it.
    pub(super) fn raw_default_stream(&self) -> &Arc<dyn BackendStream> {
        &self.inner.default_stream
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.inner.backend
    }

    /// The fault record a guarded launch of `table`'s kernel on `stream` writes, and the tag
    /// that names the kernel in it (see [`FaultRecords`]); `cache` is the kernel's memory of
    /// its last launch.
    #[inline]
    pub(crate) fn guard_record(
        &self,
        stream: &Arc<dyn BackendStream>,
        table: &Arc<GuardTable>,
        cache: &RecordCache,
    ) -> Result<(u64, u64), Error> {
        self.inner
            .fault_records
            .record(self.backend(), stream, table, cache)
    }

    /// After `stream` was synchronized: the first guard failure its fault record holds, as
    /// [`Error::GuardFault`] (the record is cleared, on the stream, for the launches after
    /// it); `Ok` when the stream never ran a guarded kernel or no guard failed.
    pub(crate) fn guard_report(&self, stream: &Arc<dyn BackendStream>) -> Result<(), Error> {
        self.inner.fault_records.report(self.backend(), stream)
    }

    /// The slot the launch layer keeps its per-device state in.
    #[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
    pub(crate) fn launch_hook(&self) -> &OnceLock<Box<dyn LaunchHook>> {
        &self.inner.launch_hook
    }

    /// `result`, a synchronization or read on `stream`, told to the launch hook: how the work
    /// queued there ended.
    pub(crate) fn reported<T>(
        &self,
        stream: &Arc<dyn BackendStream>,
        result: Result<T, Error>,
    ) -> Result<T, Error> {
        // Work on the stream has finished: a guard that failed in it is in its fault record.
        let result = result.and_then(|value| self.guard_report(stream).map(|()| value));
        if let Some(hook) = self.inner.launch_hook.get() {
            match &result {
                Ok(_) => hook.finished(stream),
                Err(error) => hook.failed(stream, error),
            }
        }
        result
    }

    /// A handle that names this device without keeping it live: once every [`Device`] clone is
    /// gone the id dies (see [`is_live`](crate::device::is_live)) and [`WeakDevice::upgrade`] answers `None`.
    pub fn downgrade(&self) -> WeakDevice {
        WeakDevice {
            inner: Arc::downgrade(&self.inner),
            id: self.id(),
        }
    }
}

/// A [`Device`] that does not keep its device live: what a kernel parked in a slot table holds,
/// so that dropping the last real handle lets the device die and its slots be reclaimed.
#[derive(Clone)]
pub struct WeakDevice {
    inner: Weak<DeviceInner>,
    id: DeviceId,
}

impl WeakDevice {
    /// The id of the device it names, live or not.
    pub fn id(&self) -> DeviceId {
        self.id
    }

    /// The device, if some [`Device`] handle still keeps it live.
    pub fn upgrade(&self) -> Option<Device> {
        self.inner.upgrade().map(|inner| Device { inner })
    }

    /// Whether every [`Device`] handle is gone. One atomic load, no lock; once true it stays
    /// true. It can turn true a moment before [`is_live`](crate::device::is_live) turns false (the registry is updated
    /// while the last handle is being dropped), never after.
    pub fn is_dead(&self) -> bool {
        self.inner.strong_count() == 0
    }
}

impl fmt::Debug for WeakDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakDevice")
            .field("id", &self.id)
            .field("dead", &self.is_dead())
            .finish()
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.id())
            .field("name", &self.properties().name)
            .field("backend", &self.properties().backend)
            .finish()
    }
}
