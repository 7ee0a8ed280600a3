//! A backend whose launch does nothing: what is left of a launch on it is jitseam's own work —
//! check, marshal and the hand-off through the backend trait. Used by the launch benchmark and
//! by the allocation test of the launch path. Allocation hands out fresh addresses; copies do
//! nothing.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jitseam::abi::ArgPacket;
use jitseam::device::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent,
    DeviceProperties, Geometry,
};
use jitseam::{Device, Error};

#[derive(Debug)]
pub struct NoopBackend {
    properties: DeviceProperties,
    next: AtomicU64,
    /// Makes every stream of the device.
    stream: fn() -> Arc<dyn BackendStream>,
}

#[derive(Debug)]
struct Function;

impl BackendFunction for Function {
    fn static_shared_bytes(&self) -> Result<u32, Error> {
        Ok(0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        Ok(None)
    }
}

#[derive(Debug)]
struct NullStream;

impl BackendStream for NullStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Backend for NoopBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }
    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let size = (bytes as u64).next_multiple_of(256);
        Ok(self.next.fetch_add(size, Ordering::Relaxed))
    }
    fn free(&self, _address: u64, _bytes: usize, _: &[&dyn BackendStream]) {}
    fn record_event(&self, _: &dyn BackendStream) -> Result<Arc<dyn BackendEvent>, Error> {
        Ok(Arc::new(CompletedEvent))
    }
    fn wait_event(&self, _: &dyn BackendStream, _: &dyn BackendEvent) -> Result<(), Error> {
        Ok(())
    }
    fn synchronize_event(&self, _: &dyn BackendEvent) -> Result<(), Error> {
        Ok(())
    }
    fn event_complete(&self, _: &dyn BackendEvent) -> Result<bool, Error> {
        Ok(true)
    }
    fn default_stream(&self) -> Arc<dyn BackendStream> {
        (self.stream)()
    }
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok((self.stream)())
    }
    fn write(&self, _: &dyn BackendStream, _: u64, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    fn read(&self, _: &dyn BackendStream, _: u64, dst: &mut [u8]) -> Result<(), Error> {
        dst.fill(0);
        Ok(())
    }
    fn load_function(&self, _ptx: &str, _symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        Ok(Arc::new(Function))
    }
    unsafe fn launch(
        &self,
        _function: &dyn BackendFunction,
        _stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        // What a driver call would read; kept opaque so nothing before it is optimized away.
        std::hint::black_box((geometry, packet.bytes()));
        Ok(())
    }
    fn synchronize(&self, _: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}

/// A fresh no-op device.
pub fn device() -> Device {
    device_with_streams(|| Arc::new(NullStream))
}

/// A fresh no-op device whose streams `stream` makes: a test's own [`BackendStream`].
pub fn device_with_streams(stream: fn() -> Arc<dyn BackendStream>) -> Device {
    Device::with_backend(Arc::new(NoopBackend {
        properties: DeviceProperties {
            name: "no-op".to_owned(),
            backend: BackendKind::Other,
            compute_capability: Some((9, 0)),
            max_grid_x: 2_147_483_647,
            max_block_x: 1024,
            limits: jitseam::device::LaunchLimits::TYPICAL,
            driver_version: None,
        },
        next: AtomicU64::new(0x1_0000),
        stream,
    }))
}
