//! Golden wire format: the exact bytes of every record kind, and round trips.

// A test reports failure by panicking.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::telemetry::{
    Candidate, DECLINES_FILE, DISPATCHES_FILE, DeclineRecord, DispatchRecord, FAULTS_FILE,
    FaultRecord, HwStamp, ImplId, MISSES_FILE, MissRecord, OVERFLOW_FILE, OverflowRecord,
    SinkConfig, StructureKey, TELEMETRY_SCHEMA, TelemetrySink,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn cpu() -> HwStamp {
    HwStamp::cpu("AMD EPYC 9654", "")
}

fn gpu() -> HwStamp {
    HwStamp::gpu((9, 0), "NVIDIA H200", "570.86.10")
}

fn add_f32() -> ImplId {
    ImplId::new(
        "cuda",
        "add",
        ["f32", "f32", "f32"],
        "jitseam-elementwise",
        0xdead_beef,
    )
}

fn generic_add() -> ImplId {
    ImplId::new(
        "emulator",
        "add",
        ["f32", "f32", "f32"],
        "generic-strided",
        u64::MAX,
    )
}

const CPU_JSON: &str = r#"{"hardware_sku":"AMD EPYC 9654","driver_version":""}"#;
const GPU_JSON: &str =
    r#"{"compute_capability":[9,0],"hardware_sku":"NVIDIA H200","driver_version":"570.86.10"}"#;
const ADD_JSON: &str = r#"{"backend":"cuda","op":"add","dtypes":["f32","f32","f32"],"kernel_source":"jitseam-elementwise","kernel_revision_hash":"00000000deadbeef"}"#;
const GENERIC_JSON: &str = r#"{"backend":"emulator","op":"add","dtypes":["f32","f32","f32"],"kernel_source":"generic-strided","kernel_revision_hash":"ffffffffffffffff"}"#;

fn json(value: &impl Serialize) -> String {
    match serde_json::to_string(value) {
        Ok(text) => text,
        Err(error) => panic!("serialization failed: {error}"),
    }
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) {
    let text = json(value);
    let back: T = match serde_json::from_str(&text) {
        Ok(back) => back,
        Err(error) => panic!("{text} does not parse back: {error}"),
    };
    assert_eq!(&back, value, "round trip of {text}");
    assert_eq!(json(&back), text, "re-serialization of {text} is stable");
}

#[test]
fn cpu_stamp_has_no_compute_capability() {
    assert_eq!(json(&cpu()), CPU_JSON);
}

#[test]
fn gpu_stamp_carries_compute_capability_as_pair() {
    assert_eq!(json(&gpu()), GPU_JSON);
}

#[test]
fn impl_id_writes_revision_as_fixed_width_hex() {
    assert_eq!(json(&add_f32()), ADD_JSON);
    assert_eq!(json(&generic_add()), GENERIC_JSON);
}

#[test]
fn dispatch_without_key_or_candidates_omits_both() {
    let record = DispatchRecord::new(None, add_f32(), cpu());
    let expected = format!(r#"{{"schema":1,"chosen":{ADD_JSON},"count":1,"hw":{CPU_JSON}}}"#);
    assert_eq!(json(&record), expected);
}

#[test]
fn dispatch_with_key_and_candidates_on_gpu() {
    let record = DispatchRecord::new(
        Some(StructureKey::new("ew:add:f32:contig")),
        add_f32(),
        gpu(),
    )
    .with_candidates(vec![
        Candidate {
            impl_id: add_f32(),
            latency_ns: Some(41_230),
        },
        Candidate {
            impl_id: generic_add(),
            latency_ns: None,
        },
    ])
    .with_count(7);
    let expected = format!(
        concat!(
            r#"{{"schema":1,"structure_key":"ew:add:f32:contig","chosen":{add},"#,
            r#""candidates":[{{"impl_id":{add},"latency_ns":41230}},{{"impl_id":{generic}}}],"#,
            r#""count":7,"hw":{gpu}}}"#
        ),
        add = ADD_JSON,
        generic = GENERIC_JSON,
        gpu = GPU_JSON
    );
    assert_eq!(json(&record), expected);
}

#[test]
fn miss_on_cpu_and_gpu() {
    let cpu_miss = MissRecord::new(StructureKey::new("ew:add:f32:rev"), generic_add(), cpu());
    assert_eq!(
        json(&cpu_miss),
        format!(
            r#"{{"schema":1,"wanted":"ew:add:f32:rev","fallback":{GENERIC_JSON},"count":1,"hw":{CPU_JSON}}}"#
        )
    );
    let gpu_miss = MissRecord::new(StructureKey::new("mm:tn"), generic_add(), gpu()).with_count(3);
    assert_eq!(
        json(&gpu_miss),
        format!(
            r#"{{"schema":1,"wanted":"mm:tn","fallback":{GENERIC_JSON},"count":3,"hw":{GPU_JSON}}}"#
        )
    );
}

#[test]
fn overflow_record() {
    let overflow = OverflowRecord {
        schema: TELEMETRY_SCHEMA,
        dispatch_records: 5,
        miss_records: 0,
        decline_records: 0,
    };
    assert_eq!(
        json(&overflow),
        r#"{"schema":1,"dispatch_records":5,"miss_records":0}"#
    );
}

#[test]
fn every_record_type_round_trips() {
    round_trip(&cpu());
    round_trip(&gpu());
    round_trip(&add_f32());
    round_trip(&generic_add());
    round_trip(&StructureKey::new("k \"quoted\" \u{e9}"));
    round_trip(&Candidate {
        impl_id: add_f32(),
        latency_ns: Some(u64::MAX),
    });
    round_trip(&Candidate {
        impl_id: add_f32(),
        latency_ns: None,
    });
    round_trip(&DispatchRecord::new(None, add_f32(), cpu()));
    round_trip(
        &DispatchRecord::new(Some(StructureKey::new("k")), add_f32(), gpu())
            .with_candidates(vec![Candidate {
                impl_id: generic_add(),
                latency_ns: Some(1),
            }])
            .with_count(u64::MAX),
    );
    round_trip(&MissRecord::new(
        StructureKey::new("k"),
        generic_add(),
        cpu(),
    ));
    round_trip(&MissRecord::new(StructureKey::new("k"), add_f32(), gpu()).with_count(9));
    round_trip(&OverflowRecord::empty());
}

#[test]
fn revision_hash_also_reads_integers_and_0x_prefix() {
    let text = ADD_JSON.replace(r#""00000000deadbeef""#, "3735928559");
    let parsed: ImplId = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed, add_f32());
    let text = ADD_JSON.replace("00000000deadbeef", "0xDEADBEEF");
    let parsed: ImplId = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed, add_f32());
    for bad in ["\"\"", "\"xyz\"", "\"00000000000000000\"", "-1", "1.5"] {
        let text = ADD_JSON.replace(r#""00000000deadbeef""#, bad);
        assert!(
            serde_json::from_str::<ImplId>(&text).is_err(),
            "{bad} must not parse as a revision hash"
        );
    }
}

#[test]
fn unknown_fields_are_ignored() {
    let text = format!(
        r#"{{"schema":1,"future":{{"x":[1,2]}},"chosen":{ADD_JSON},"count":2,"hw":{CPU_JSON},"est_speedup":1.5}}"#
    );
    let parsed: DispatchRecord = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        parsed,
        DispatchRecord::new(None, add_f32(), cpu()).with_count(2)
    );
}

/// The flush path serializes through borrowed views; its lines must be byte-identical to the
/// owned records' serialization.
#[test]
fn flushed_files_hold_exactly_the_golden_lines() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false));
    let keyed = DispatchRecord::new(Some(StructureKey::new("ew:add")), add_f32(), gpu())
        .with_candidates(vec![Candidate {
            impl_id: add_f32(),
            latency_ns: Some(10),
        }]);
    let unkeyed = DispatchRecord::new(None, add_f32(), cpu());
    sink.record_dispatch(&keyed);
    sink.record_dispatch(&unkeyed);
    sink.record_dispatch(&unkeyed);
    let miss = MissRecord::new(StructureKey::new("ew:add:rev"), generic_add(), cpu());
    sink.record_miss(&miss);
    let stats = sink.flush_all(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((stats.dispatch_lines, stats.miss_lines), (2, 1));

    let set = jitseam::telemetry::reader::current_set(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let read = |name: &str| {
        std::fs::read_to_string(set.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    // An absent structure key sorts first.
    let expected_dispatches = format!(
        "{}\n{}\n",
        json(&unkeyed.clone().with_count(2)),
        json(&keyed)
    );
    assert_eq!(read(DISPATCHES_FILE), expected_dispatches);
    assert!(expected_dispatches.starts_with(&format!(
        r#"{{"schema":1,"chosen":{ADD_JSON},"count":2,"hw":{CPU_JSON}}}"#
    )));
    assert_eq!(read(MISSES_FILE), format!("{}\n", json(&miss)));
    assert_eq!(
        read(OVERFLOW_FILE),
        "{\"schema\":1,\"dispatch_records\":0,\"miss_records\":0}\n"
    );
}

/// The manifest a flush writes last: the layout version, the generation it makes current and the
/// files that generation holds.
#[test]
fn the_manifest_names_the_layout_the_generation_and_its_files() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false));
    sink.flush_all(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(dir.path().join(jitseam::telemetry::MANIFEST_FILE))
        .unwrap_or_else(|e| panic!("{e}"));
    let set = jitseam::telemetry::reader::current_set(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let generation = set
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert!(generation.starts_with("gen-"), "{generation}");
    assert_eq!(jitseam::telemetry::TELEMETRY_LAYOUT, 2);
    assert_eq!(
        text,
        format!(
            "{{\"layout\":2,\"generation\":\"{generation}\",\"files\":[\"{DISPATCHES_FILE}\",\"{MISSES_FILE}\",\"{DECLINES_FILE}\",\"{FAULTS_FILE}\",\"{OVERFLOW_FILE}\"]}}\n"
        )
    );
}

#[test]
fn decline_record_names_the_kernel_and_the_reason() {
    let keyed = DeclineRecord::new(
        Some(StructureKey::new("ew:add")),
        add_f32(),
        "element_count",
        cpu(),
    )
    .with_count(3);
    assert_eq!(
        json(&keyed),
        format!(
            r#"{{"schema":1,"structure_key":"ew:add","chosen":{ADD_JSON},"reason":"element_count","count":3,"hw":{CPU_JSON}}}"#
        )
    );
    round_trip(&keyed);
    // The sink's flush writes the same bytes through its borrowed twin.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false));
    sink.record_decline(&keyed);
    sink.flush_all(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let set = jitseam::telemetry::reader::current_set(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::fs::read_to_string(set.join(DECLINES_FILE)).unwrap_or_else(|e| panic!("{e}")),
        format!("{}\n", json(&keyed))
    );
    // An overflow record without declines keeps its first-version bytes.
    assert_eq!(
        std::fs::read_to_string(set.join(OVERFLOW_FILE)).unwrap_or_else(|e| panic!("{e}")),
        "{\"schema\":1,\"dispatch_records\":0,\"miss_records\":0}\n"
    );
}

#[test]
fn fault_record_names_the_kernel_and_the_fault() {
    let fault = FaultRecord::new(None, add_f32(), "memory_fault", gpu()).with_count(2);
    assert_eq!(
        json(&fault),
        format!(
            r#"{{"schema":1,"chosen":{ADD_JSON},"reason":"memory_fault","count":2,"hw":{GPU_JSON}}}"#
        )
    );
    round_trip(&fault);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false));
    sink.record_fault(&fault);
    sink.flush_all(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let set = jitseam::telemetry::reader::current_set(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::fs::read_to_string(set.join(FAULTS_FILE)).unwrap_or_else(|e| panic!("{e}")),
        format!("{}\n", json(&fault))
    );
    // A fault read back is not a dispatch: the cell has no dispatch line.
    assert_eq!(
        std::fs::read_to_string(set.join(DISPATCHES_FILE)).unwrap_or_else(|e| panic!("{e}")),
        ""
    );
}
