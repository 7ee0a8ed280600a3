use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::*;
use crate::abi::AbiKind;
use crate::abi::ArgPacket;
use crate::carrier::{GraphView, KernelRegistry};
use crate::device::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent,
    DeviceProperties, Geometry,
};
use crate::synth::{ElementwiseSynthesizer, OperandDesc, Region, row_major_strides};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Counts what reached the "device": module loads, and functions still alive.
#[derive(Debug, Default)]
struct Counters {
    loads: AtomicUsize,
    live_functions: AtomicUsize,
    live_allocations: AtomicUsize,
}

#[derive(Debug)]
struct FakeFunction {
    counters: Arc<Counters>,
}

impl Drop for FakeFunction {
    fn drop(&mut self) {
        self.counters.live_functions.fetch_sub(1, Ordering::SeqCst);
    }
}

impl BackendFunction for FakeFunction {
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
struct FakeStream;

impl BackendStream for FakeStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A GPU that loads any module (or refuses all of them) and runs nothing.
#[derive(Debug)]
struct FakeGpu {
    properties: DeviceProperties,
    refuse_loads: bool,
    counters: Arc<Counters>,
    loaded_symbols: Mutex<Vec<String>>,
}

impl FakeGpu {
    fn device(compute_capability: (u32, u32), refuse_loads: bool) -> (Device, Arc<Counters>) {
        let counters = Arc::new(Counters::default());
        let gpu = FakeGpu {
            properties: DeviceProperties {
                name: "fake gpu".into(),
                backend: BackendKind::Other,
                compute_capability: Some(compute_capability),
                max_grid_x: 1 << 31,
                max_block_x: 1024,
                limits: crate::device::LaunchLimits::TYPICAL,
                driver_version: None,
            },
            refuse_loads,
            counters: counters.clone(),
            loaded_symbols: Mutex::new(Vec::new()),
        };
        (Device::with_backend(Arc::new(gpu)), counters)
    }
}

impl Backend for FakeGpu {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }
    fn alloc(&self, _bytes: usize) -> Result<u64, Error> {
        self.counters
            .live_allocations
            .fetch_add(1, Ordering::SeqCst);
        Ok(256)
    }
    fn free(&self, _address: u64, _bytes: usize, _: &[&dyn BackendStream]) {
        self.counters
            .live_allocations
            .fetch_sub(1, Ordering::SeqCst);
    }
    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::new(FakeStream)
    }
    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok(Arc::new(FakeStream))
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
    fn load_function(&self, _ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        self.counters.loads.fetch_add(1, Ordering::SeqCst);
        if self.refuse_loads {
            return Err(Error::Device {
                stage: format!("loading `{symbol}`"),
                message: "CUDA_ERROR_INVALID_PTX".into(),
            });
        }
        if let Ok(mut symbols) = self.loaded_symbols.lock() {
            symbols.push(symbol.to_owned());
        }
        self.counters.live_functions.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(FakeFunction {
            counters: self.counters.clone(),
        }))
    }
    unsafe fn launch(
        &self,
        _: &dyn BackendFunction,
        _: &dyn BackendStream,
        _: Geometry,
        _: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        Ok(())
    }
    fn synchronize(&self, _: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}

/// A one-fused-node graph: `out = region(x, y)` over `[4, 8]` tensors of `dtype`.
struct OneNode {
    dtype: ElementKind,
    fused: bool,
    recipe: Region,
    x_strides: Vec<i64>,
}

impl GraphView for OneNode {
    type NodeId = usize;
    type Op = &'static str;
    type DType = ElementKind;

    fn fused_op(&self, node: usize) -> Option<&'static str> {
        (node == 2 && self.fused).then_some("fused_ew")
    }
    fn recipe(&self, _node: usize) -> Option<Region> {
        Some(self.recipe.clone())
    }
    fn inputs(&self, node: usize) -> Vec<usize> {
        if node == 2 { vec![0, 1] } else { Vec::new() }
    }
    fn shape(&self, _node: usize) -> Vec<u64> {
        vec![4, 8]
    }
    fn strides(&self, node: usize) -> Vec<i64> {
        if node == 0 {
            self.x_strides.clone()
        } else {
            row_major_strides(&[4, 8])
        }
    }
    fn dtype(&self, _node: usize) -> ElementKind {
        self.dtype
    }
    fn base_align(&self, _node: usize) -> u32 {
        256
    }
    fn seam_dtype(&self, dtype: ElementKind) -> Option<ElementKind> {
        Some(dtype)
    }
}

struct NoKernels;

impl KernelRegistry for NoKernels {
    type Op = &'static str;
    type DType = ElementKind;
    type Backend = ();

    fn has_kernel(&self, _: &&'static str, _: &[ElementKind], _: &()) -> bool {
        false
    }
}

fn axpb() -> Region {
    // add_scalar(mul_scalar(x, 2.5), 0.25) + y
    Region::op(
        "add",
        vec![
            Region::op_with_scalars(
                "add_scalar",
                vec![Region::op_with_scalars(
                    "mul_scalar",
                    vec![Region::bind(0)],
                    vec![2.5],
                )],
                vec![0.25],
            ),
            Region::bind(1),
        ],
    )
}

fn graph(dtype: ElementKind, recipe: Region) -> OneNode {
    OneNode {
        dtype,
        fused: true,
        recipe,
        x_strides: row_major_strides(&[4, 8]),
    }
}

fn run(g: &OneNode, device: &Device) -> Result<Adopted, AdoptDecline<ElementKind>> {
    adopt(
        g,
        2,
        &(),
        &NoKernels,
        Arch::sm(90),
        JitBudget::millis(1000),
        &ElementwiseSynthesizer::new(),
        device,
    )
}

#[test]
fn adopts_a_fused_node_all_the_way_to_a_bound_kernel() -> TestResult {
    let (device, counters) = FakeGpu::device((9, 0), false);
    let adopted = run(&graph(ElementKind::F32, axpb()), &device)?;
    assert_eq!(adopted.kernel.device().id(), device.id());
    assert_eq!(
        adopted.kernel.artifact().abi.abi,
        AbiKind::Vectorized { width: 4 }
    );
    // Post-order: the inner mul_scalar's 2.5 is param 0.
    assert_eq!(
        adopted.params,
        [ParamValue::F32(2.5), ParamValue::F32(0.25)]
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 1);
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 1);
    drop(adopted);
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 0);
    Ok(())
}

#[test]
fn a_transposed_operand_adopts_the_strided_abi_with_f64_params() -> TestResult {
    let (device, _) = FakeGpu::device((8, 0), false);
    let mut g = graph(ElementKind::F64, axpb());
    g.x_strides = vec![1, 4];
    let adopted = run(&g, &device)?;
    assert_eq!(
        adopted.kernel.artifact().abi.abi,
        AbiKind::Strided { rank: 2 }
    );
    assert_eq!(
        adopted.params,
        [ParamValue::F64(2.5), ParamValue::F64(0.25)]
    );
    Ok(())
}

#[test]
fn a_carrier_decline_reaches_nothing() {
    let (device, counters) = FakeGpu::device((9, 0), false);
    let mut g = graph(ElementKind::F32, axpb());
    g.fused = false;
    assert!(matches!(
        run(&g, &device),
        Err(AdoptDecline::NotRequested(NotRequested::NotFused))
    ));
    assert_eq!(counters.loads.load(Ordering::SeqCst), 0);
}

#[test]
fn a_synthesizer_decline_reaches_nothing() {
    let (device, counters) = FakeGpu::device((9, 0), false);
    let g = graph(ElementKind::F64, Region::op("exp", vec![Region::bind(0)]));
    let got = run(&g, &device);
    assert!(
        matches!(
            &got,
            Err(AdoptDecline::Synth(SynthDecline::UnsupportedOp { op, dtype: ElementKind::F64 }))
                if op == "exp"
        ),
        "{got:?}"
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 0);
}

#[test]
fn a_device_too_old_for_the_ptx_is_refused_before_loading() {
    let (device, counters) = FakeGpu::device((7, 5), false);
    let got = run(&graph(ElementKind::F32, axpb()), &device);
    assert!(
        matches!(&got, Err(AdoptDecline::Kernel(Error::ArchTooNew { .. }))),
        "{got:?}"
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 0);
}

#[test]
fn a_failed_bind_leaks_nothing() {
    let (device, counters) = FakeGpu::device((9, 0), true);
    let got = run(&graph(ElementKind::F32, axpb()), &device);
    assert!(
        matches!(&got, Err(AdoptDecline::Kernel(Error::Device { .. }))),
        "{got:?}"
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 1);
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 0);
}

/// A synthesizer that lies: used to check that adopt verifies what it is given.
struct Liar(fn(Artifact) -> Artifact);

impl Synthesizer for Liar {
    fn synthesize(&self, request: &JitRequest) -> Result<Artifact, SynthDecline> {
        ElementwiseSynthesizer::new()
            .synthesize(request)
            .map(self.0)
    }
}

fn request() -> JitRequest {
    JitRequest {
        region: axpb(),
        operands: vec![OperandDesc::contiguous(ElementKind::F32, &[5], 4); 3],
        arch: Arch::sm(80),
        budget: JitBudget::millis(1000),
    }
}

#[test]
fn an_artifact_whose_spec_lies_is_refused_at_load() {
    let (device, counters) = FakeGpu::device((9, 0), false);
    // Claims one param fewer than the PTX declares.
    let liar = Liar(|mut a| {
        a.abi.params.to_mut().pop();
        a.param_map.pop();
        a
    });
    let got = adopt_request::<(), _>(&request(), &liar, &device);
    assert!(
        matches!(
            &got,
            Err(AdoptDecline::Kernel(Error::ParamCount {
                expected: 5,
                found: 6,
                ..
            }))
        ),
        "{got:?}"
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 0);
}

#[test]
fn a_param_map_that_does_not_fit_the_region_is_refused_before_the_device() {
    let (device, counters) = FakeGpu::device((9, 0), false);
    let liar = Liar(|mut a| {
        // Node 0 is a bind: it has no scalars.
        a.param_map[0] = crate::artifact::ParamSource { node: 0, scalar: 0 };
        a
    });
    let got = adopt_request::<(), _>(&request(), &liar, &device);
    assert!(
        matches!(&got, Err(AdoptDecline::ParamMap { .. })),
        "{got:?}"
    );
    let short = Liar(|mut a| {
        a.param_map.pop();
        a
    });
    let got = adopt_request::<(), _>(&request(), &short, &device);
    assert!(
        got.as_ref()
            .is_err_and(|e| e.to_string().contains("1 entries for 2 params")),
        "{got:?}"
    );
    assert_eq!(counters.loads.load(Ordering::SeqCst), 0);
}

/// A table of `$n` slots built by hand, as `slot_table!` would (the macro names `::jitseam`,
/// which does not resolve inside the crate itself).
macro_rules! test_table {
    ($table:ident, $marker:ident, $slots:ident, $dispatchers:ident: [$($i:literal),+]) => {
        struct $marker;
        impl crate::slot::SlotTableMarker for $marker {
            fn table() -> &'static SlotTable {
                &$table
            }
        }
        static $slots: crate::slot::Slots<[crate::slot::Slot; [$($i),+].len()]> =
            crate::slot::empty_slots();
        static $dispatchers: [crate::slot::SlotFn; [$($i),+].len()] =
            [$(crate::slot::dispatch_slot::<$marker, $i>),+];
        static $table: SlotTable = SlotTable::__new(stringify!($table), &$slots, &$dispatchers);
    };
}

test_table!(ONE_SLOT, OneSlotMarker, ONE_SLOT_SLOTS, ONE_SLOT_DISPATCHERS: [0]);
test_table!(EMULATED, EmulatedMarker, EMULATED_SLOTS, EMULATED_DISPATCHERS: [0, 1]);

fn generations(table: &SlotTable) -> Vec<u64> {
    (0..table.capacity()).map(|i| table.generation(i)).collect()
}

#[test]
fn adopt_into_slot_parks_the_kernel_and_a_full_table_declines_leaking_nothing() -> TestResult {
    let (device, counters) = FakeGpu::device((9, 0), false);
    let synth = ElementwiseSynthesizer::new();
    let first = adopt_into_slot::<(), _>(&request(), &synth, &device, &ONE_SLOT)?;
    assert_eq!(first.params, [ParamValue::F32(2.5), ParamValue::F32(0.25)]);
    assert_eq!(
        ONE_SLOT.generation(first.slot.index()),
        first.slot.generation()
    );
    ONE_SLOT.validate(&first.slot)?;
    // The slot owns the kernel: its function is still loaded.
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 1);

    // Full: the second kernel is synthesized, loaded and bound, then refused a slot and
    // dropped again; the table and the device look exactly as before.
    let occupancy = generations(&ONE_SLOT);
    let got = adopt_into_slot::<(), _>(&request(), &synth, &device, &ONE_SLOT);
    assert!(
        matches!(
            &got,
            Err(AdoptDecline::Slot(Error::SlotTableFull { capacity: 1, .. }))
        ),
        "{got:?}"
    );
    assert!(got.is_err_and(|e| e.to_string().starts_with("no slot for the kernel")));
    assert_eq!(generations(&ONE_SLOT), occupancy);
    assert_eq!(counters.loads.load(Ordering::SeqCst), 2);
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 1);
    assert_eq!(counters.live_allocations.load(Ordering::SeqCst), 0);
    ONE_SLOT.validate(&first.slot)?;

    // A decline before the claim touches neither the table nor the device.
    let mut exp_f64 = request();
    exp_f64.region = Region::op("exp", vec![Region::bind(0)]);
    for operand in &mut exp_f64.operands {
        operand.dtype = ElementKind::F64;
        operand.align = 8;
    }
    let got = adopt_into_slot::<(), _>(&exp_f64, &synth, &device, &ONE_SLOT);
    assert!(matches!(&got, Err(AdoptDecline::Synth(_))), "{got:?}");
    assert_eq!(generations(&ONE_SLOT), occupancy);
    assert_eq!(counters.loads.load(Ordering::SeqCst), 2);

    // Released, the slot takes the next adoption.
    ONE_SLOT.release(first.slot)?;
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 0);
    let second = adopt_into_slot::<(), _>(&request(), &synth, &device, &ONE_SLOT)?;
    assert_eq!(second.slot.index(), first.slot.index());
    assert_ne!(second.slot.generation(), first.slot.generation());
    ONE_SLOT.release(second.slot)?;
    assert_eq!(counters.live_functions.load(Ordering::SeqCst), 0);
    Ok(())
}

#[test]
fn a_kernel_adopted_into_a_slot_runs_through_its_dispatcher_on_the_emulator() -> TestResult {
    use crate::device::{Arg, ArgMut};

    let device = Device::emulator();
    let adopted = adopt_into_slot::<(), _>(
        &request(),
        &ElementwiseSynthesizer::new(),
        &device,
        &EMULATED,
    )?;
    let x_host = [1.0f32, -2.0, 0.5, 3.25, -0.125];
    let y_host = [0.5f32, 0.25, -1.0, 8.0, 2.0];
    let x = device.upload(&x_host)?;
    let y = device.upload(&y_host)?;
    let mut out = device.upload(&[f32::NAN; 5])?;
    let stream = device.default_stream();
    let inputs = [Arg::from(&x), Arg::from(&y)];
    let mut outputs = [ArgMut::from(&mut out)];
    let call = adopted
        .slot
        .call(&stream, &inputs, &mut outputs, &[5], &adopted.params);
    // Through the bare `fn` pointer, as a runtime's kernel table would call it.
    (adopted.slot.dispatch())(&call)?;
    stream.synchronize()?;
    let got = stream.read(&out)?;
    // add(add_scalar(mul_scalar(x, 2.5), 0.25), y), one f32 rounding per op.
    let want: Vec<f32> = x_host
        .iter()
        .zip(&y_host)
        .map(|(&x, &y)| (x * 2.5 + 0.25) + y)
        .collect();
    assert_eq!(got, want);
    EMULATED.release(adopted.slot)?;
    Ok(())
}
