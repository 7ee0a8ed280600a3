//! [`CudaBackend`]: the [`Backend`] of one CUDA device. Each method hands off to the file of its
//! concern (memory, streams, modules, launches).

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::CudaContext;

use super::context::properties_of;
use super::shared::Shared;
use super::{event, launch, memory, module, on_device, stream};
use crate::abi::ArgPacket;
use crate::device::{
    Backend, BackendEvent, BackendFunction, BackendStream, DeviceProperties, Geometry,
};
use crate::error::Error;

/// The CUDA [`Backend`] of one [`crate::device::Device`].
#[derive(Debug)]
pub(super) struct CudaBackend {
    shared: Arc<Shared>,
    properties: DeviceProperties,
    default_stream: Arc<dyn BackendStream>,
}

impl CudaBackend {
    /// The backend of the device whose primary context is `ctx`.
    pub(super) fn new(ctx: Arc<CudaContext>) -> Result<Self, Error> {
        let properties = properties_of(&ctx)?;
        let default_stream = stream::default_stream(&ctx);
        Ok(Self {
            shared: Arc::new(Shared::new(ctx)),
            properties,
            default_stream,
        })
    }
}

impl Backend for CudaBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        memory::alloc(&self.shared, bytes)
    }

    fn free(&self, address: u64, bytes: usize, pending: &[&dyn BackendStream]) {
        memory::free(&self.shared, address, bytes, pending);
    }

    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::clone(&self.default_stream)
    }

    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        stream::new_stream(&self.shared)
    }

    fn write(&self, stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error> {
        memory::write(&self.shared, stream, address, src)
    }

    fn read(&self, stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error> {
        memory::read(&self.shared, stream, address, dst)
    }

    fn record_event(&self, stream: &dyn BackendStream) -> Result<Arc<dyn BackendEvent>, Error> {
        event::record(&self.shared, stream)
    }

    fn wait_event(
        &self,
        stream: &dyn BackendStream,
        event: &dyn BackendEvent,
    ) -> Result<(), Error> {
        event::wait(&self.shared, stream, event)
    }

    fn synchronize_event(&self, event: &dyn BackendEvent) -> Result<(), Error> {
        event::synchronize(&self.shared, event)
    }

    fn event_complete(&self, event: &dyn BackendEvent) -> Result<bool, Error> {
        event::is_complete(&self.shared, event)
    }

    fn fill_bytes(
        &self,
        stream: &dyn BackendStream,
        address: u64,
        bytes: usize,
        value: u8,
    ) -> Result<(), Error> {
        on_device::fill(&self.shared, stream, address, bytes, value)
    }

    fn copy(
        &self,
        stream: &dyn BackendStream,
        src: u64,
        dst: u64,
        bytes: usize,
    ) -> Result<(), Error> {
        on_device::copy(&self.shared, stream, src, dst, bytes)
    }

    fn record_timed_event(
        &self,
        stream: &dyn BackendStream,
    ) -> Result<Arc<dyn BackendEvent>, Error> {
        event::record_timed(&self.shared, stream)
    }

    fn event_elapsed(
        &self,
        start: &dyn BackendEvent,
        end: &dyn BackendEvent,
    ) -> Result<Duration, Error> {
        event::elapsed(&self.shared, start, end)
    }

    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        module::load(&self.shared, ptx, symbol)
    }

    fn load_image(&self, image: &[u8], symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        module::load_image(&self.shared, image, symbol)
    }

    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        // SAFETY: `launch::launch` has this fn's contract, which the caller upholds.
        unsafe { launch::launch(&self.shared, function, stream, geometry, packet) }
    }

    fn synchronize(&self, stream: &dyn BackendStream) -> Result<(), Error> {
        stream::synchronize(&self.shared, stream)
    }
}
