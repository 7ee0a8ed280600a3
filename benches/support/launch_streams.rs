//! The launch overhead with the streams' ordering in it: `Kernel::launch` (check, the access
//! logs of the three operands, marshal, the hand-off) on a backend that runs nothing, on one
//! stream (the access logs' fast path: no lock, no event) and alternating between two streams
//! (every launch records an event on the other stream and waits for it, per operand).

use std::any::Any;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::Criterion;
use jitseam::abi::ArgPacket;
use jitseam::device::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent,
    DeviceProperties, Geometry,
};
use jitseam::{Device, DeviceBound, DeviceBuffer, Erased, Error, Kernel, Stream};

use super::fixtures;
use super::median_ns;

const N: usize = 1 << 20;

/// Runs nothing; events are complete when recorded.
#[derive(Debug)]
struct Noop {
    properties: DeviceProperties,
    next: AtomicU64,
}

#[derive(Debug)]
struct NoopStream;

impl BackendStream for NoopStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
struct NoopFunction;

impl BackendFunction for NoopFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        Ok(None)
    }
}

impl Backend for Noop {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }
    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        Ok(self
            .next
            .fetch_add((bytes as u64).next_multiple_of(256), Ordering::Relaxed))
    }
    fn free(&self, _: u64, _: usize, _: &[&dyn BackendStream]) {}
    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::new(NoopStream)
    }
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok(Arc::new(NoopStream))
    }
    fn write(&self, _: &dyn BackendStream, _: u64, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    fn read(&self, _: &dyn BackendStream, _: u64, _: &mut [u8]) -> Result<(), Error> {
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
    fn load_function(&self, _: &str, _: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        Ok(Arc::new(NoopFunction))
    }
    unsafe fn launch(
        &self,
        _: &dyn BackendFunction,
        _: &dyn BackendStream,
        _: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        black_box(packet.bytes());
        Ok(())
    }
    fn synchronize(&self, _: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}

struct Setup {
    kernel: Kernel<Erased, DeviceBound>,
    streams: [Stream; 2],
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    out: std::cell::RefCell<DeviceBuffer<f32>>,
}

impl Setup {
    fn new() -> Self {
        let device = Device::with_backend(Arc::new(Noop {
            properties: DeviceProperties {
                name: "noop".to_owned(),
                backend: BackendKind::Other,
                compute_capability: Some((9, 0)),
                max_grid_x: 2_147_483_647,
                max_block_x: 1024,
                driver_version: None,
            },
            next: AtomicU64::new(0x1_0000),
        }));
        let fixture = fixtures::by_entry("baracuda_gen_add_f32_scalar");
        let kernel = Kernel::describe(fixture.artifact())
            .and_then(|k| Ok(k.load()?))
            .and_then(|k| Ok(k.bind(&device)?))
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let alloc = || device.alloc::<f32>(N).unwrap();
        Self {
            kernel,
            streams: [device.new_stream().unwrap(), device.new_stream().unwrap()],
            a: alloc(),
            b: alloc(),
            out: std::cell::RefCell::new(alloc()),
        }
    }

    fn launch(&self, stream: &Stream) -> u8 {
        let mut out = self.out.borrow_mut();
        self.kernel
            .launch(
                black_box(stream),
                &[(&self.a).into(), (&self.b).into()],
                &mut [(&mut *out).into()],
                &[N],
                &[],
            )
            .unwrap();
        0
    }
}

/// Benchmarks the whole launch on one stream and across two, and prints the medians next to
/// `check_marshal_ns` (the check + marshal figure of the same kernel).
pub(crate) fn report(c: &mut Criterion, check_marshal_ns: f64) {
    let setup = Setup::new();
    let flip = std::cell::Cell::new(0usize);
    let cross = || {
        let i = flip.get() ^ 1;
        flip.set(i);
        setup.launch(&setup.streams[i])
    };
    let mut group = c.benchmark_group("launch_overhead_streams");
    group.bench_function(
        "Kernel::launch, same stream (3 operands, no-op backend)",
        |b| b.iter(|| setup.launch(&setup.streams[0])),
    );
    group.bench_function(
        "Kernel::launch, alternating streams (3 operands, no-op backend)",
        |b| b.iter(cross),
    );
    group.finish();
    let same = median_ns(101, 20_000, || setup.launch(&setup.streams[0]));
    let alternating = median_ns(101, 20_000, cross);
    println!(
        "launch_overhead: Kernel::launch same stream median {same:.1} ns (check+marshal {check_marshal_ns:.1} ns, \
         so {:.1} ns for the access logs and the hand-off; goal <= 100 ns: {}), alternating two streams \
         median {alternating:.1} ns",
        same - check_marshal_ns,
        if same <= 100.0 { "met" } else { "NOT met" }
    );
}
