//! Declined launches in telemetry: counted per (kernel, reason kind) by the launch path, flushed
//! with the set as `declines.jsonl`, read back and merged like dispatches.

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::fixtures;
use common::telemetry::sink_on;
use jitseam::error::Operand;
use jitseam::telemetry::reader::current_set;
use jitseam::telemetry::{
    DECLINES_FILE, DeclineRecord, HwStamp, ImplId, SinkConfig, StructureKey, TelemetryReport,
    TelemetrySink,
};
use jitseam::{Device, DeviceBound, Erased, Error, In, Kernel, Out, Signature};

const ADD_F32: &str = "baracuda_gen_add_f32_scalar";

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_relu_f32_scalar")]
fn relu(x: In<f32>, out: Out<f32>);

fn bound(device: &Device) -> Kernel<Erased, DeviceBound> {
    let mut artifact = fixtures::by_entry(ADD_F32).artifact();
    artifact.link.structure_key = Some("ew:add:f32".to_owned());
    Kernel::describe(artifact)
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

#[test]
fn error_kinds_have_stable_snake_case_names() {
    let count = Error::ElementCount {
        entry: "k".into(),
        operand: Operand::Output(0),
        expected: 8,
        found: 7,
    };
    let stale = Error::StaleSlot {
        table: "T",
        slot: 0,
        expected: 0,
        found: 1,
    };
    let params = Error::ParamType {
        entry: "k".into(),
        index: 0,
        expected: jitseam::ElementKind::F32,
        found: jitseam::ElementKind::F64,
    };
    assert_eq!(
        [count.kind_name(), stale.kind_name(), params.kind_name()],
        ["element_count", "stale_slot", "param_type"]
    );
}

#[test]
fn a_declined_launch_counts_under_its_kernel_and_reason() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let kernel = bound(&device);
    let a = device.upload(&[1.0f32; 8]).unwrap();
    let mut out = device.alloc::<f32>(8).unwrap();
    let stream = device.default_stream();
    let launch = |shape: usize, out: &mut jitseam::DeviceBuffer<f32>, inputs: usize| {
        let both = [(&a).into(), (&a).into()];
        kernel.launch(&stream, &both[..inputs], &mut [out.into()], &[shape], &[])
    };
    launch(8, &mut out, 2).unwrap();
    for _ in 0..3 {
        assert!(matches!(
            launch(7, &mut out, 2),
            Err(Error::ElementCount { .. })
        ));
    }
    assert!(matches!(
        launch(8, &mut out, 1),
        Err(Error::ArgumentCount { .. })
    ));

    let dispatches = sink.dispatch_records();
    assert_eq!(dispatches.len(), 1);
    assert_eq!(dispatches[0].count, 1, "a decline is not a dispatch");
    let declines = sink.decline_records();
    let reasons: Vec<(&str, u64)> = declines
        .iter()
        .map(|d| (d.reason.as_str(), d.count))
        .collect();
    assert_eq!(reasons, [("argument_count", 1), ("element_count", 3)]);
    for decline in &declines {
        assert_eq!(decline.chosen, dispatches[0].chosen);
        assert_eq!(decline.hw, dispatches[0].hw);
        assert_eq!(decline.structure_key, Some(StructureKey::new("ew:add:f32")));
    }
}

#[test]
fn a_typed_launch_whose_operands_disagree_counts_as_a_decline() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let text = fixtures::ptx("relu_f32_scalar.ptx").unwrap();
    let kernel = Kernel::<Relu, _>::describe_typed(Relu::ptx_artifact(text))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    let x = device.upload(&[1.0f32; 8]).unwrap();
    let mut out = device.alloc::<f32>(7).unwrap();
    let result = kernel.launch(&device.default_stream(), Relu::args(&x, &mut out));
    assert!(matches!(result, Err(Error::OperandsDisagree(_))));
    let declines = sink.decline_records();
    assert_eq!(declines.len(), 1);
    assert_eq!(
        (declines[0].reason.as_str(), declines[0].count),
        ("operands_disagree", 1)
    );
}

#[test]
fn declines_are_flushed_with_the_set_and_read_back() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    let kernel = bound(&device);
    let a = device.upload(&[1.0f32; 4]).unwrap();
    let mut out = device.alloc::<f32>(4).unwrap();
    let stream = device.default_stream();
    for shape in [4, 3, 3] {
        let _ = kernel.launch(
            &stream,
            &[(&a).into(), (&a).into()],
            &mut [(&mut out).into()],
            &[shape],
            &[],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let stats = sink.flush_all(dir.path()).unwrap();
    assert_eq!(stats.decline_lines, 1);
    let line =
        std::fs::read_to_string(current_set(dir.path()).unwrap().join(DECLINES_FILE)).unwrap();
    let expected = sink.decline_records();
    assert_eq!(line, serde_json::to_string(&expected[0]).unwrap() + "\n");
    assert!(
        line.contains("\"reason\":\"element_count\",\"count\":2"),
        "{line}"
    );

    let report = TelemetryReport::read_dir(dir.path()).unwrap();
    assert_eq!(report.declines, expected);
    assert_eq!(report.total_declines(), Some(2));
    assert_eq!(report.total_dispatches(), Some(1));
    let merged = TelemetryReport::merge([report.clone(), report]);
    assert_eq!(merged.declines.len(), 1);
    assert_eq!(merged.declines[0].count, 4);
    assert_eq!(merged.top_declines(1)[0].reason, "element_count");
}

#[test]
fn records_merge_and_a_full_sink_counts_declines_as_overflow() {
    let hw = HwStamp::cpu("emulator", "");
    let add = ImplId::new("emulator", "add", ["f32"; 3], "k", 1);
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_max_cells(1));
    sink.record_decline(&DeclineRecord::new(
        None,
        add.clone(),
        "element_count",
        hw.clone(),
    ));
    sink.record_decline(
        &DeclineRecord::new(None, add.clone(), "element_count", hw.clone()).with_count(2),
    );
    sink.record_decline(&DeclineRecord::new(
        None,
        add.clone(),
        "aliasing",
        hw.clone(),
    ));
    let other = ImplId::new("emulator", "sub", ["f32"; 3], "k", 1);
    sink.record_decline(&DeclineRecord::new(None, other, "aliasing", hw).with_count(5));
    let reasons: Vec<(String, u64)> = sink
        .decline_records()
        .into_iter()
        .map(|d| (d.reason, d.count))
        .collect();
    assert_eq!(
        reasons,
        [("aliasing".to_owned(), 1), ("element_count".to_owned(), 3)]
    );
    assert_eq!(sink.overflow().decline_records, 5);
    assert!(!sink.is_empty());
}

/// A kernel refused at `load_for` counts as a decline of that kernel in the sink of the device
/// it was meant for, in the very cell its launches would count in; `load()` has no device and
/// records nothing.
#[test]
fn a_refusal_at_load_for_counts_under_the_kernel_and_reason() {
    let device = Device::emulator();
    let sink = sink_on(&device);
    // The faulty kernel's store moved to its input: a store through an input, which `load()`
    // declines (an out-of-bounds store through the output alone it would guard).
    let artifact = || {
        let mut artifact = common::faulty::artifact(Some("oob:f32"));
        let text = String::from_utf8(artifact.bytes.clone()).unwrap();
        artifact.bytes = text
            .replace("ld.param.u64 %rd1, [out0];", "ld.param.u64 %rd1, [in0];")
            .into_bytes();
        artifact
    };
    let refused = Kernel::describe(artifact()).unwrap().load().unwrap_err();
    assert!(matches!(refused.error, Error::BodyRejected { .. }));
    assert!(sink.decline_records().is_empty(), "load() knows no sink");

    let refused = Kernel::describe(artifact())
        .unwrap()
        .load_for(&device)
        .unwrap_err();
    assert!(matches!(refused.error, Error::BodyRejected { .. }));
    let declines = sink.decline_records();
    assert_eq!(declines.len(), 1);
    assert_eq!(
        (declines[0].reason.as_str(), declines[0].count),
        ("body_rejected", 1)
    );
    assert_eq!(declines[0].chosen.kernel_source, common::faulty::ENTRY);
    assert_eq!(
        declines[0].structure_key,
        Some(StructureKey::new("oob:f32"))
    );
    assert!(sink.dispatch_records().is_empty());
}

/// A refusal at `bind` counts as a decline in the device's sink too: here a PTX target the
/// device cannot run.
#[test]
fn a_refusal_at_bind_counts_as_a_decline() {
    let device = jitseam::testing::FakeBackend::builder()
        .compute_capability(Some((7, 0)))
        .build()
        .device();
    let sink = sink_on(&device);
    let loaded = Kernel::describe(fixtures::by_entry(ADD_F32).artifact())
        .unwrap()
        .load_for(&device)
        .unwrap();
    let refused = loaded.bind(&device).unwrap_err();
    assert!(
        matches!(refused.error, Error::ArchTooNew { .. }),
        "{}",
        refused.error
    );
    let reasons: Vec<(String, u64)> = sink
        .decline_records()
        .into_iter()
        .map(|d| (d.reason, d.count))
        .collect();
    assert_eq!(reasons, [("arch_too_new".to_owned(), 1)]);
}
