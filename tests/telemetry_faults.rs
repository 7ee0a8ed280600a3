//! Launches that fault on the device in telemetry: counted as faults of their kernel, by the
//! fault's kind, once the stream's synchronization (or read) reports them — and no longer as
//! dispatches; flushed as `faults.jsonl` and read back. On the emulator here; through the CUDA
//! backend on the driver model in tests/cuda_model.rs.
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::telemetry::sink_on;
use common::{faulty, fixtures};
use jitseam::telemetry::reader::current_set;
use jitseam::telemetry::{FAULTS_FILE, StructureKey, TelemetryReport};
use jitseam::{Device, DeviceBound, DeviceBuffer, Erased, Error, Kernel};

const RELU: &str = "baracuda_gen_relu_f32_scalar";

/// A kernel that runs cleanly, bound to `device`.
fn relu(device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(RELU).artifact())
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

/// `y = relu(x)` on the default stream of the kernel's device.
fn run(kernel: &Kernel<Erased, DeviceBound>, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) {
    let stream = kernel.device().default_stream();
    let n = x.len();
    kernel
        .launch(&stream, &[x.into()], &mut [y.into()], &[n], &[])
        .unwrap();
}

/// Three launches of the faulting kernel and two of a good one, each stream synchronized: the
/// faulting kernel has three faults and no dispatch, the good one two dispatches.
#[test]
fn a_launch_that_faults_counts_as_a_fault_of_its_kernel_not_a_dispatch() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let bad = faulty::bind(&device, Some("oob:f32"));
    let good = relu(&device);
    let x = device.upload(&[1.0f32; 8]).unwrap();
    let mut y = device.alloc_zeros::<f32>(8).unwrap();
    for _ in 0..3 {
        faulty::launch(&bad, 8);
        let fault = device.synchronize().unwrap_err();
        assert!(matches!(fault, Error::MemoryFault(_)), "{fault}");
        run(&good, &x, &mut y);
    }
    device.synchronize().unwrap();

    let faults = sink.fault_records();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        (faults[0].reason.as_str(), faults[0].count),
        ("memory_fault", 3)
    );
    assert_eq!(faults[0].chosen.kernel_source, faulty::ENTRY);
    assert_eq!(faults[0].structure_key, Some(StructureKey::new("oob:f32")));
    let dispatches = sink.dispatch_records();
    assert_eq!(
        dispatches.len(),
        1,
        "the faulting kernel has no dispatch: {dispatches:?}"
    );
    assert_eq!(dispatches[0].chosen.kernel_source, RELU);
    assert_eq!(dispatches[0].count, 3);
}

/// The fault goes to the kernel that faulted, not the one launched after it on the same stream
/// before the synchronization; a read of the stream reports it like a synchronization.
#[test]
fn the_fault_goes_to_the_kernel_the_emulator_names() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let bad = faulty::bind(&device, None);
    let good = relu(&device);
    let x = device.upload(&[1.0f32; 8]).unwrap();
    let mut y = device.alloc_zeros::<f32>(8).unwrap();
    faulty::launch(&bad, 8);
    run(&good, &x, &mut y);
    assert!(device.default_stream().read(&y).is_err());
    let faults = sink.fault_records();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].chosen.kernel_source, faulty::ENTRY);
    let dispatches = sink.dispatch_records();
    assert_eq!(dispatches.len(), 1);
    assert_eq!(dispatches[0].chosen.kernel_source, RELU);
    // A later clean synchronization attributes nothing more.
    device.synchronize().unwrap();
    assert_eq!(sink.fault_records()[0].count, 1);
}

#[test]
fn faults_are_flushed_and_read_back() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let bad = faulty::bind(&device, None);
    for _ in 0..2 {
        faulty::launch(&bad, 4);
        assert!(device.synchronize().is_err());
    }
    let dir = tempfile::tempdir().unwrap();
    let stats = sink.flush_all(dir.path()).unwrap();
    assert_eq!((stats.fault_lines, stats.dispatch_lines), (1, 0));
    let line = std::fs::read_to_string(current_set(dir.path()).unwrap().join(FAULTS_FILE)).unwrap();
    assert!(
        line.contains("\"reason\":\"memory_fault\",\"count\":2"),
        "{line}"
    );
    let report = TelemetryReport::read_dir(dir.path()).unwrap();
    assert_eq!(report.faults, sink.fault_records());
    assert_eq!(
        (report.total_faults(), report.total_dispatches()),
        (Some(2), Some(0))
    );
    let merged = TelemetryReport::merge([report.clone(), report]);
    assert_eq!(
        (merged.total_faults(), merged.total_dispatches()),
        (Some(4), Some(0))
    );
}

/// The scalar gather of tests/fixtures/guards/, which `load()` guards.
const GATHER: &str = include_str!("fixtures/guards/gather_scalar.ptx");

/// A guard that caught an access counts as a `guard_fault` of its kernel, not a dispatch; a
/// clean launch of the same kernel counts as a dispatch.
#[test]
fn a_guard_fault_counts_as_a_fault_of_its_kernel() {
    use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind};
    let device = Device::emulator();
    let sink = sink_on(&device);
    let spec = AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32, ElementKind::I32],
        vec![ElementKind::F32],
        Vec::new(),
    );
    let kernel = Kernel::describe(Artifact::ptx(GATHER, "gather", spec))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    assert!(kernel.loaded().guarded().is_some());
    let x = device.upload(&[1.5f32; 8]).unwrap();
    let mut y = device.alloc_zeros::<f32>(8).unwrap();
    let stream = device.default_stream();
    for bad in [true, true, false] {
        let idx = device
            .upload(&[0i32, 1, 2, if bad { 8 } else { 3 }, 4, 5, 6, 7])
            .unwrap();
        kernel
            .launch(
                &stream,
                &[(&x).into(), (&idx).into()],
                &mut [(&mut y).into()],
                &[8],
                &[],
            )
            .unwrap();
        match stream.synchronize() {
            Err(Error::GuardFault(fault)) if bad => assert_eq!(fault.entry, "gather"),
            Ok(()) if !bad => {}
            other => panic!("bad index {bad}: {other:?}"),
        }
    }
    let faults = sink.fault_records();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        (faults[0].reason.as_str(), faults[0].count),
        ("guard_fault", 2)
    );
    let dispatches = sink.dispatch_records();
    assert_eq!(dispatches.len(), 1, "{dispatches:?}");
    assert_eq!(dispatches[0].count, 1);
}
