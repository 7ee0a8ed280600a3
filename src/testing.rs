//! A backend for tests of jitseam's own plumbing and of code built on it: [`FakeBackend`]
//! launches nothing, hands out fresh addresses, and remembers what reached it. Only with the
//! `testing` feature.
//!
//! It is what is left of a device once nothing runs: a launch on it costs exactly jitseam's own
//! work (check, marshal, the hand-off through [`Backend`]), so benchmarks of the launch path and
//! tests of what a launch hands the backend (which packet, which geometry, in which order, how
//! often a module was loaded, when a function was dropped) share one implementation.
//!
//! ```
//! use jitseam::testing::FakeBackend;
//!
//! let fake = FakeBackend::builder().record_launches().build();
//! let device = fake.device();
//! let buffer = device.alloc::<f32>(8)?;
//! assert_eq!(fake.live_allocations(), 1);
//! drop(buffer);
//! assert_eq!(fake.live_allocations(), 0);
//! assert!(fake.launched().is_empty());
//! # Ok::<(), jitseam::Error>(())
//! ```

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::abi::ArgPacket;
use crate::device::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent, Device,
    DeviceProperties, Geometry, LaunchLimits,
};
use crate::error::Error;
use jitseam_ptx::resolve::{ResolvedEntry, ResolvedModule};

/// First address a fake backend hands out: far from zero, 256-byte aligned.
const FIRST_ADDRESS: u64 = 0x1_0000;

/// Tells apart the functions of every fake backend in the process (two loads of one symbol).
static FUNCTIONS: AtomicU64 = AtomicU64::new(0);

/// One launch as a [`FakeBackend`] saw it (kept with [`FakeBuilder::record_launches`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    /// The symbol the launched function was loaded for.
    pub symbol: String,
    /// The launch configuration.
    pub geometry: Geometry,
    /// The argument packet's bytes.
    pub packet: Vec<u8>,
}

/// What a [`FakeBackend`] tells its observer ([`FakeBuilder::observe`]), as it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen<'a> {
    /// A launch was queued.
    Launched {
        /// The function's symbol.
        symbol: &'a str,
        /// The function's number, unique in the process: two loads of one symbol differ.
        function: u64,
    },
    /// The last handle to a loaded function was dropped (its module would be unloaded).
    Dropped {
        /// The function's symbol.
        symbol: &'a str,
        /// The function's number, as in [`Seen::Launched`].
        function: u64,
    },
}

type Observer = Arc<dyn Fn(Seen<'_>) + Send + Sync>;

/// How a [`FakeBackend`] is made: [`FakeBackend::builder`].
#[must_use]
pub struct FakeBuilder {
    properties: DeviceProperties,
    refuse_loads: bool,
    record_launches: bool,
    observer: Option<Observer>,
    streams: fn() -> Arc<dyn BackendStream>,
}

impl fmt::Debug for FakeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeBuilder")
            .field("properties", &self.properties)
            .field("refuse_loads", &self.refuse_loads)
            .field("record_launches", &self.record_launches)
            .finish_non_exhaustive()
    }
}

impl FakeBuilder {
    /// The device's name (`fake` by default).
    pub fn name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.properties.name);
        self
    }

    /// The compute capability the device reports (`(9, 0)` by default; `None`: no SM
    /// architecture, like the emulator).
    pub fn compute_capability(mut self, capability: Option<(u32, u32)>) -> Self {
        self.properties.compute_capability = capability;
        self
    }

    /// The largest `gridDim.x` (and grid x limit) the device reports.
    pub fn max_grid_x(mut self, max: u32) -> Self {
        self.properties.max_grid_x = max;
        self.properties.limits.max_grid[0] = max;
        self
    }

    /// Every module load fails, as a driver that refuses the PTX
    /// (`CUDA_ERROR_INVALID_PTX`), after it was counted.
    pub fn refuse_loads(mut self) -> Self {
        self.refuse_loads = true;
        self
    }

    /// Keeps every launch ([`FakeBackend::launched`]). Off by default, so that a launch on a
    /// plain fake allocates nothing and costs nothing beyond jitseam's own work.
    pub fn record_launches(mut self) -> Self {
        self.record_launches = true;
        self
    }

    /// Calls `observer` on every launch and every function drop, in the order they happen.
    pub fn observe(mut self, observer: impl Fn(Seen<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Makes every stream of the device with `stream`: a test's own [`BackendStream`], whose
    /// code runs where jitseam asks a stream anything (a fake's own streams do nothing).
    pub fn streams(mut self, stream: fn() -> Arc<dyn BackendStream>) -> Self {
        self.streams = stream;
        self
    }

    /// The backend.
    pub fn build(self) -> Arc<FakeBackend> {
        Arc::new(FakeBackend {
            properties: self.properties,
            refuse_loads: self.refuse_loads,
            record_launches: self.record_launches,
            observer: self.observer,
            streams: self.streams,
            next_address: AtomicU64::new(FIRST_ADDRESS),
            loads: AtomicUsize::new(0),
            resolved_loads: AtomicUsize::new(0),
            live: Arc::new(Live::default()),
            live_allocations: AtomicUsize::new(0),
            launches: Mutex::new(Vec::new()),
        })
    }
}

/// Functions of one backend still alive.
#[derive(Debug, Default)]
struct Live(AtomicUsize);

/// A backend that runs nothing and remembers what reached it; see the module docs.
///
/// Allocation hands out fresh 256-byte-aligned addresses (never reused); copies, fills and
/// launches do nothing; a read fills its destination with zeros; events are complete when
/// recorded.
pub struct FakeBackend {
    properties: DeviceProperties,
    refuse_loads: bool,
    record_launches: bool,
    observer: Option<Observer>,
    streams: fn() -> Arc<dyn BackendStream>,
    next_address: AtomicU64,
    loads: AtomicUsize,
    resolved_loads: AtomicUsize,
    live: Arc<Live>,
    live_allocations: AtomicUsize,
    launches: Mutex<Vec<Launched>>,
}

impl fmt::Debug for FakeBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeBackend")
            .field("name", &self.properties.name)
            .field("loads", &self.loads())
            .field("live_functions", &self.live_functions())
            .field("live_allocations", &self.live_allocations())
            .finish_non_exhaustive()
    }
}

impl FakeBackend {
    /// A fake named `fake`, compute capability 9.0, the typical launch limits, that loads every
    /// module and keeps no launch.
    pub fn builder() -> FakeBuilder {
        FakeBuilder {
            properties: DeviceProperties {
                name: "fake".to_owned(),
                backend: BackendKind::Other,
                compute_capability: Some((9, 0)),
                max_grid_x: LaunchLimits::TYPICAL.max_grid[0],
                max_block_x: LaunchLimits::TYPICAL.max_block[0],
                limits: LaunchLimits::TYPICAL,
                driver_version: None,
            },
            refuse_loads: false,
            record_launches: false,
            observer: None,
            streams: || Arc::new(FakeStream),
        }
    }

    /// A new device (a new id each call) on this backend.
    pub fn device(self: &Arc<Self>) -> Device {
        Device::with_backend(Arc::clone(self) as Arc<dyn Backend>)
    }

    /// Module loads asked for so far, refused ones included.
    pub fn loads(&self) -> usize {
        self.loads.load(Ordering::SeqCst)
    }

    /// Of [`FakeBackend::loads`], those that came with the module `load()` had already parsed
    /// and resolved ([`Backend::load_resolved`]).
    pub fn resolved_loads(&self) -> usize {
        self.resolved_loads.load(Ordering::SeqCst)
    }

    /// Loaded functions not dropped yet.
    pub fn live_functions(&self) -> usize {
        self.live.0.load(Ordering::SeqCst)
    }

    /// Allocations not freed yet.
    pub fn live_allocations(&self) -> usize {
        self.live_allocations.load(Ordering::SeqCst)
    }

    /// The launches kept so far ([`FakeBuilder::record_launches`]), in order.
    pub fn launched(&self) -> Vec<Launched> {
        self.launches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The launches kept so far, forgetting them.
    pub fn take_launches(&self) -> Vec<Launched> {
        std::mem::take(&mut *self.launches.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A function of a [`FakeBackend`].
struct FakeFunction {
    symbol: String,
    number: u64,
    live: Arc<Live>,
    observer: Option<Observer>,
}

impl fmt::Debug for FakeFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeFunction")
            .field("symbol", &self.symbol)
            .field("number", &self.number)
            .finish_non_exhaustive()
    }
}

impl Drop for FakeFunction {
    fn drop(&mut self) {
        self.live.0.fetch_sub(1, Ordering::SeqCst);
        if let Some(observer) = &self.observer {
            observer(Seen::Dropped {
                symbol: &self.symbol,
                function: self.number,
            });
        }
    }
}

impl BackendFunction for FakeFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        Ok(None)
    }

    fn static_shared_bytes(&self) -> Result<u32, Error> {
        Ok(0)
    }
}

/// The one kind of stream a fake has: nothing is queued on it.
#[derive(Debug)]
struct FakeStream;

impl BackendStream for FakeStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Backend for FakeBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let size = u64::try_from(bytes)
            .ok()
            .and_then(|b| b.checked_next_multiple_of(256))
            .ok_or_else(|| Error::Device {
                stage: format!("allocate {bytes} bytes"),
                message: "more than the fake device's address space".to_owned(),
            })?;
        self.live_allocations.fetch_add(1, Ordering::SeqCst);
        Ok(self.next_address.fetch_add(size, Ordering::Relaxed))
    }

    fn free(&self, _address: u64, _bytes: usize, _pending: &[&dyn BackendStream]) {
        self.live_allocations.fetch_sub(1, Ordering::SeqCst);
    }

    fn default_stream(&self) -> Arc<dyn BackendStream> {
        (self.streams)()
    }

    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok((self.streams)())
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
        self.loads.fetch_add(1, Ordering::SeqCst);
        if self.refuse_loads {
            return Err(Error::Device {
                stage: format!("load `{symbol}`"),
                message: "CUDA_ERROR_INVALID_PTX: the fake device refuses every module".to_owned(),
            });
        }
        self.live.0.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(FakeFunction {
            symbol: symbol.to_owned(),
            number: FUNCTIONS.fetch_add(1, Ordering::Relaxed),
            live: Arc::clone(&self.live),
            observer: self.observer.clone(),
        }))
    }

    fn load_resolved(
        &self,
        ptx: &str,
        symbol: &str,
        _module: &ResolvedModule,
        _entry: &ResolvedEntry,
    ) -> Result<Arc<dyn BackendFunction>, Error> {
        self.resolved_loads.fetch_add(1, Ordering::SeqCst);
        self.load_function(ptx, symbol)
    }

    /// Runs nothing; tells the observer and keeps the launch when asked to.
    ///
    /// # Safety
    /// Nothing is read through the packet's pointers, so any packet is safe to hand here.
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        _stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        // What a driver call would read; kept opaque so nothing before it is optimized away.
        std::hint::black_box((geometry, packet.bytes()));
        let Some(function) = function.as_any().downcast_ref::<FakeFunction>() else {
            return Err(Error::Device {
                stage: "launch".to_owned(),
                message: "the function was not loaded by this fake device".to_owned(),
            });
        };
        if let Some(observer) = &self.observer {
            observer(Seen::Launched {
                symbol: &function.symbol,
                function: function.number,
            });
        }
        if self.record_launches {
            self.launches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Launched {
                    symbol: function.symbol.clone(),
                    geometry,
                    packet: packet.bytes().to_vec(),
                });
        }
        Ok(())
    }

    fn synchronize(&self, _: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}
