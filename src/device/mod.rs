//! Devices: a cheap-clone [`Device`] with a never-reused [`DeviceId`] and a liveness
//! token, the object-safe [`Backend`] it drives, [`Stream`]s, and typed [`DeviceBuffer`]s with
//! views.
//!
//! Only `cuda.rs` touches the CUDA driver; only `emulated.rs` touches the PTX interpreter.

mod backend;
mod buffer;
mod cuda;
mod desc;
mod emulated;
mod stream;
mod view;

pub use backend::{
    Backend, BackendFunction, BackendKind, BackendStream, DeviceProperties, Geometry,
};
pub use buffer::DeviceBuffer;
pub use emulated::EmulatorBackend;
pub use crate::liveness::{DeviceId, is_live};
pub use stream::Stream;
pub use desc::ViewDesc;
pub use view::{Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut};

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock, Weak};

use crate::error::Error;
use crate::liveness::LivenessToken;

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
    // Set once by the launch layer (it keeps the telemetry sink here); opaque to the device,
    // which knows nothing of what is recorded about the work it runs.
    launch_hook: OnceLock<Box<dyn Any + Send + Sync>>,
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
            }),
        }
    }

    /// Opens CUDA device `ordinal` through the driver API (libcuda, loaded at run time).
    ///
    /// Returns [`Error::DriverUnavailable`] when no usable driver library is installed and
    /// [`Error::NoDevice`] when the ordinal does not exist; it never panics. Each call opens a
    /// new handle with a new [`DeviceId`], also on an ordinal already open (handles on one
    /// ordinal share the device's primary context).
    pub fn cuda(ordinal: usize) -> Result<Self, Error> {
        cuda::open(ordinal)
    }

    /// How many CUDA devices the driver reports; [`Error::DriverUnavailable`] without a driver.
    pub fn cuda_count() -> Result<usize, Error> {
        cuda::device_count()
    }

    /// A new emulator device: the PTX interpreter on the CPU, with every memory access checked
    /// (see [`EmulatorBackend`]).
    pub fn emulator() -> Self {
        Self::with_backend(Arc::new(EmulatorBackend::new()))
    }

    /// The first CUDA device if one can be opened, else the emulator; the answer says which and
    /// why, so a caller can print it (there is no logging here).
    pub fn best_available() -> Selection {
        match Self::cuda(0) {
            Ok(device) => Selection {
                reason: format!("cuda device 0 ({})", device.properties().name),
                device,
            },
            Err(error) => Selection {
                device: Self::emulator(),
                reason: format!("emulator, because no cuda device could be opened: {error}"),
            },
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

    /// The stream work goes to when no other is named.
    pub fn default_stream(&self) -> Stream {
        Stream::new(self.clone(), self.inner.default_stream.clone())
    }

    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Stream, Error> {
        Ok(Stream::new(self.clone(), self.inner.backend.new_stream()?))
    }

    /// A buffer of `len` elements with unspecified contents.
    pub fn alloc<T: crate::Element>(&self, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc(self, len)
    }

    /// A buffer holding a copy of `data`, written on the default stream.
    pub fn upload<T: crate::Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let mut buffer = DeviceBuffer::alloc(self, data.len())?;
        self.default_stream().write(&mut buffer, data)?;
        Ok(buffer)
    }

    /// Waits until all work queued on the default stream has finished.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.default_stream().synchronize()
    }

    pub(crate) fn backend(&self) -> &dyn Backend {
        &*self.inner.backend
    }

    /// The slot the launch layer keeps its per-device state in.
    pub(crate) fn launch_hook(&self) -> &OnceLock<Box<dyn Any + Send + Sync>> {
        &self.inner.launch_hook
    }

    /// A handle that names this device without keeping it live: once every [`Device`] clone is
    /// gone the id dies (see [`is_live`]) and [`WeakDevice::upgrade`] answers `None`.
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
    /// true. It can turn true a moment before [`is_live`] turns false (the registry is updated
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

/// What [`Device::best_available`] chose, and why.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The device.
    pub device: Device,
    /// A one-line reason, e.g. `emulator, because no cuda device could be opened: …`.
    pub reason: String,
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
