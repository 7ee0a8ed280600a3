//! A backend that runs nothing and remembers every launch, for tests of the launch path's
//! plumbing (which packet reached the backend, with which geometry) without an emulator or GPU.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use jitseam::abi::ArgPacket;
use jitseam::device::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent,
    DeviceProperties, Geometry,
};
use jitseam::{Device, Error};

/// One launch as the backend saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub symbol: String,
    pub geometry: Geometry,
    pub packet: Vec<u8>,
}

#[derive(Debug)]
pub struct RecordingBackend {
    properties: DeviceProperties,
    next: AtomicU64,
    pub launches: Mutex<Vec<Launched>>,
}

#[derive(Debug)]
struct Function(String);

impl BackendFunction for Function {
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

impl RecordingBackend {
    pub fn new(max_grid_x: u32) -> Arc<Self> {
        Arc::new(Self {
            properties: DeviceProperties {
                name: "recording".to_owned(),
                backend: BackendKind::Other,
                compute_capability: Some((9, 0)),
                max_grid_x,
                max_block_x: 1024,
                limits: jitseam::device::LaunchLimits::TYPICAL,
                driver_version: None,
            },
            next: AtomicU64::new(0x1_0000),
            launches: Mutex::new(Vec::new()),
        })
    }

    pub fn launched(&self) -> Vec<Launched> {
        self.launches.lock().unwrap().clone()
    }

    /// The launches so far, forgetting them.
    pub fn take(&self) -> Vec<Launched> {
        std::mem::take(&mut *self.launches.lock().unwrap())
    }
}

impl Backend for RecordingBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }
    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let size = (bytes as u64).next_multiple_of(256);
        Ok(self.next.fetch_add(size, Ordering::Relaxed))
    }
    fn free(&self, _address: u64, _bytes: usize, _: &[&dyn BackendStream]) {}
    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::new(NullStream)
    }
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok(Arc::new(NullStream))
    }
    fn write(&self, _: &dyn BackendStream, _: u64, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    fn read(&self, _: &dyn BackendStream, _: u64, dst: &mut [u8]) -> Result<(), Error> {
        dst.fill(0);
        Ok(())
    }
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
    fn load_function(&self, _ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        Ok(Arc::new(Function(symbol.to_owned())))
    }
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        _stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        let symbol = function
            .as_any()
            .downcast_ref::<Function>()
            .map(|f| f.0.clone())
            .unwrap_or_default();
        self.launches.lock().unwrap().push(Launched {
            symbol,
            geometry,
            packet: packet.bytes().to_vec(),
        });
        Ok(())
    }
    fn synchronize(&self, _: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}

/// A fresh recording device (a new id each call) and its backend.
pub fn device() -> (Device, Arc<RecordingBackend>) {
    let backend = RecordingBackend::new(2_147_483_647);
    (Device::with_backend(backend.clone()), backend)
}
