//! The launch hook: a sink attached to a device counts one dispatch per successful launch of
//! every kernel bound there — through the erased face, the typed face and a slot — and nothing
//! for a launch that was declined.

mod common;

use std::sync::Arc;

use common::fixtures;
use jitseam::telemetry::{StructureKey, TelemetrySink};
use jitseam::{Device, DeviceBound, Erased, Kernel};

const ADD_F32: &str = "baracuda_gen_add_f32_scalar";

jitseam::slot_table!(static HOOK_SLOTS: 2);

fn bound(device: &Device, structure_key: Option<&str>) -> Kernel<Erased, DeviceBound> {
    let mut artifact = fixtures::by_entry(ADD_F32).artifact();
    artifact.link.structure_key = structure_key.map(str::to_owned);
    Kernel::describe(artifact)
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

#[test]
fn each_successful_launch_counts_once_in_one_cell() {
    let device = Device::emulator();
    let sink = Arc::new(TelemetrySink::new());
    device.attach_telemetry(sink.clone()).unwrap();
    assert!(
        device
            .attach_telemetry(Arc::new(TelemetrySink::new()))
            .is_err()
    );

    let kernel = bound(&device, Some("ew:add:f32"));
    let a = device.upload(&[1.0f32; 8]).unwrap();
    let mut out = device.alloc::<f32>(8).unwrap();
    let mut short = device.alloc::<f32>(7).unwrap();
    let stream = device.default_stream();
    for _ in 0..3 {
        kernel
            .launch(
                &stream,
                &[(&a).into(), (&a).into()],
                &mut [(&mut out).into()],
                &[8],
                &[],
            )
            .unwrap();
    }
    let declined = kernel.launch(
        &stream,
        &[(&a).into(), (&a).into()],
        &mut [(&mut short).into()],
        &[7],
        &[],
    );
    assert!(declined.is_err());

    let records = sink.dispatch_records();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.count, 3);
    assert_eq!(record.structure_key, Some(StructureKey::new("ew:add:f32")));
    assert_eq!(record.chosen.backend, "emulator");
    assert_eq!(record.chosen.op, "ew:add:f32");
    assert_eq!(record.chosen.dtypes, ["f32", "f32", "f32"]);
    assert_eq!(record.chosen.kernel_source, ADD_F32);
    assert_eq!(
        record.hw.compute_capability, None,
        "the emulator has no compute capability"
    );
    assert_eq!(record.hw.hardware_sku, device.properties().name);
}

#[test]
fn slot_dispatches_count_in_the_same_cell() {
    let device = Device::emulator();
    let sink = Arc::new(TelemetrySink::new());
    device.attach_telemetry(sink.clone()).unwrap();
    let slot = jitseam::slot::claim(&HOOK_SLOTS, bound(&device, None)).unwrap();
    let a = device.upload(&[2.0f32; 4]).unwrap();
    let mut out = device.alloc::<f32>(4).unwrap();
    let stream = device.default_stream();
    let inputs = [(&a).into(), (&a).into()];
    let mut outputs = [(&mut out).into()];
    slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[4], &[]))
        .unwrap();
    slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[4], &[]))
        .unwrap();
    let records = sink.dispatch_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].count, 2);
    assert_eq!(records[0].structure_key, None);
    assert_eq!(
        records[0].chosen.op, ADD_F32,
        "without a structure key the entry names the op"
    );
    jitseam::slot::release(&HOOK_SLOTS, slot).unwrap();
}

#[test]
fn kernels_bound_before_the_sink_was_attached_record_nothing() {
    let device = Device::emulator();
    let kernel = bound(&device, None);
    let sink = Arc::new(TelemetrySink::new());
    device.attach_telemetry(sink.clone()).unwrap();
    let a = device.upload(&[1.0f32; 2]).unwrap();
    let mut out = device.alloc::<f32>(2).unwrap();
    kernel
        .launch(
            &device.default_stream(),
            &[(&a).into(), (&a).into()],
            &mut [(&mut out).into()],
            &[2],
            &[],
        )
        .unwrap();
    assert!(sink.dispatch_records().is_empty());
}
