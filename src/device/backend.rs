//! The object-safe [`Backend`] trait every device implements (CUDA, the emulator, or a user's).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

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
    /// Driver version, where there is a driver.
    pub driver_version: Option<String>,
}

/// The launch geometry: a 1-D grid of 1-D blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks in the grid.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
}

/// A function resolved on a backend. Dropping the last handle may unload its module, which the
/// backend must defer until no queued launch can still use it.
pub trait BackendFunction: Send + Sync + fmt::Debug {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;

    /// `(offset, size)` of every parameter as the backend itself reports them, when it can
    /// (the CUDA driver from 12.4 on); `None` when it cannot tell.
    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error>;
}

/// A queue of work on a backend.
pub trait BackendStream: Send + Sync + fmt::Debug {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;
}

/// One device's driver: memory, copies, modules and launches.
///
/// Addresses are device addresses as the kernel sees them. Copies are ordered on a stream and
/// complete before they return, so the host slice may be reused at once.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Name, architecture and limits.
    fn properties(&self) -> &DeviceProperties;

    /// Allocates `bytes` (at least 256-byte aligned, like `cuMemAlloc`).
    fn alloc(&self, bytes: usize) -> Result<u64, Error>;

    /// Frees an allocation once no queued work can use it. Never fails and never panics: a
    /// driver error is recorded, not raised, because it runs from `Drop`.
    fn free(&self, address: u64, bytes: usize);

    /// The stream work goes to when none is named.
    fn default_stream(&self) -> Arc<dyn BackendStream>;

    /// A new stream.
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error>;

    /// Copies `src` to `address` in order on `stream`, returning once it is done.
    fn write(&self, stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error>;

    /// Copies from `address` into `dst` in order on `stream`, returning once it is done.
    fn read(&self, stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error>;

    /// Loads a PTX module and resolves `symbol` in it.
    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error>;

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
    /// [`crate::launch::check`] accepted for this `function` on this device: every pointer in it
    /// then addresses live allocations of this device large enough for every index the kernel's
    /// ABI lets it touch, and every output range is exclusively borrowed until the launch is
    /// ordered before any later use.
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error>;

    /// Waits until all work queued on `stream` has finished.
    fn synchronize(&self, stream: &dyn BackendStream) -> Result<(), Error>;
}
