//! Devices (DESIGN §5): a cheap-clone [`Device`] with a never-reused [`DeviceId`] and a liveness
//! token, the object-safe [`Backend`] it drives, [`Stream`]s, and typed [`DeviceBuffer`]s with
//! views.
//!
//! Only `cuda.rs` touches the CUDA driver; only `emulated.rs` touches the PTX interpreter.

mod backend;
mod buffer;
mod emulated;
mod liveness;
mod stream;
mod view;

pub use backend::{
    Backend, BackendFunction, BackendKind, BackendStream, DeviceProperties, Geometry,
};
pub use buffer::DeviceBuffer;
pub use emulated::EmulatorBackend;
pub use liveness::{DeviceId, is_live};
pub use stream::Stream;
pub use view::{Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut, ViewDesc};

use std::fmt;
use std::sync::Arc;

use crate::error::Error;
use liveness::LivenessToken;

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
            }),
        }
    }

    /// A new emulator device: the PTX interpreter on the CPU, with every memory access checked
    /// (see [`EmulatorBackend`]).
    pub fn emulator() -> Self {
        Self::with_backend(Arc::new(EmulatorBackend::new()))
    }

    /// The first CUDA device if one can be opened, else the emulator; the answer says which and
    /// why, so a caller can print it (there is no logging here).
    pub fn best_available() -> Selection {
        match cuda_probe() {
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
}

/// What [`Device::best_available`] chose, and why.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The device.
    pub device: Device,
    /// A one-line reason, e.g. `emulator, because no cuda device could be opened: …`.
    pub reason: String,
}

// ---- MERGE POINT (lead): replace the body with `Device::cuda(0)` once src/device/cuda.rs lands.
/// Opens CUDA device 0. Stub: this tree has no CUDA backend yet.
fn cuda_probe() -> Result<Device, Error> {
    Err(Error::DriverUnavailable {
        reason: "this build has no cuda backend".to_owned(),
    })
}
// ---- end of merge point.

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.id())
            .field("name", &self.properties().name)
            .field("backend", &self.properties().backend)
            .finish()
    }
}
