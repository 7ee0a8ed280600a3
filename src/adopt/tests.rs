use std::sync::Arc;

use super::*;
use crate::abi::AbiKind;
use crate::carrier::{GraphView, KernelRegistry};
use crate::synth::{ElementwiseSynthesizer, OperandDesc, Region, row_major_strides};
use crate::testing::FakeBackend;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A GPU of compute capability `cc` that loads any module (or, with `refuse_loads`, refuses all
/// of them) and runs nothing; the backend counts what reached it.
fn fake_gpu(cc: (u32, u32), refuse_loads: bool) -> (Device, Arc<FakeBackend>) {
    let builder = FakeBackend::builder()
        .name("fake gpu")
        .compute_capability(Some(cc));
    let gpu = if refuse_loads {
        builder.refuse_loads().build()
    } else {
        builder.build()
    };
    (gpu.device(), gpu)
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
    let (device, counters) = fake_gpu((9, 0), false);
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
    assert_eq!(counters.loads(), 1);
    assert_eq!(counters.live_functions(), 1);
    drop(adopted);
    assert_eq!(counters.live_functions(), 0);
    Ok(())
}

#[test]
fn a_transposed_operand_adopts_the_strided_abi_with_f64_params() -> TestResult {
    let (device, _) = fake_gpu((8, 0), false);
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
    let (device, counters) = fake_gpu((9, 0), false);
    let mut g = graph(ElementKind::F32, axpb());
    g.fused = false;
    assert!(matches!(
        run(&g, &device),
        Err(AdoptDecline::NotRequested(NotRequested::NotFused))
    ));
    assert_eq!(counters.loads(), 0);
}

#[test]
fn a_synthesizer_decline_reaches_nothing() {
    let (device, counters) = fake_gpu((9, 0), false);
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
    assert_eq!(counters.loads(), 0);
}

#[test]
fn a_device_too_old_for_the_ptx_is_refused_before_loading() {
    let (device, counters) = fake_gpu((7, 5), false);
    let got = run(&graph(ElementKind::F32, axpb()), &device);
    assert!(
        matches!(&got, Err(AdoptDecline::Kernel(Error::ArchTooNew { .. }))),
        "{got:?}"
    );
    assert_eq!(counters.loads(), 0);
}

#[test]
fn a_failed_bind_leaks_nothing() {
    let (device, counters) = fake_gpu((9, 0), true);
    let got = run(&graph(ElementKind::F32, axpb()), &device);
    assert!(
        matches!(&got, Err(AdoptDecline::Kernel(Error::Device { .. }))),
        "{got:?}"
    );
    assert_eq!(counters.loads(), 1);
    assert_eq!(counters.live_functions(), 0);
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
    let (device, counters) = fake_gpu((9, 0), false);
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
    assert_eq!(counters.loads(), 0);
}

#[test]
fn a_param_map_that_does_not_fit_the_region_is_refused_before_the_device() {
    let (device, counters) = fake_gpu((9, 0), false);
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
    assert_eq!(counters.loads(), 0);
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
    let (device, counters) = fake_gpu((9, 0), false);
    let synth = ElementwiseSynthesizer::new();
    let first = adopt_into_slot::<(), _>(&request(), &synth, &device, &ONE_SLOT)?;
    assert_eq!(first.params, [ParamValue::F32(2.5), ParamValue::F32(0.25)]);
    assert_eq!(
        ONE_SLOT.generation(first.slot.index()),
        first.slot.generation()
    );
    ONE_SLOT.validate(&first.slot)?;
    // The slot owns the kernel: its function is still loaded.
    assert_eq!(counters.live_functions(), 1);

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
    assert_eq!(counters.loads(), 2);
    assert_eq!(counters.live_functions(), 1);
    assert_eq!(counters.live_allocations(), 0);
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
    assert_eq!(counters.loads(), 2);

    // Released, the slot takes the next adoption.
    ONE_SLOT.release(first.slot)?;
    assert_eq!(counters.live_functions(), 0);
    let second = adopt_into_slot::<(), _>(&request(), &synth, &device, &ONE_SLOT)?;
    assert_eq!(second.slot.index(), first.slot.index());
    assert_ne!(second.slot.generation(), first.slot.generation());
    ONE_SLOT.release(second.slot)?;
    assert_eq!(counters.live_functions(), 0);
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
