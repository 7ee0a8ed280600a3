//! Reading flushed telemetry back: line-numbered errors, tolerance, merging runs.

// A test reports failure by panicking.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::fs;

use jitseam::telemetry::reader::{
    current_set, parse_dispatches, parse_misses, read_dispatches, read_misses,
};
use jitseam::telemetry::{
    Candidate, DISPATCHES_FILE, DispatchRecord, HwStamp, ImplId, MISSES_FILE, MissRecord,
    OVERFLOW_FILE, OverflowRecord, ReadError, RecordKind, SinkConfig, StructureKey,
    TELEMETRY_SCHEMA, TelemetryReport, TelemetrySink,
};

fn hw() -> HwStamp {
    HwStamp::cpu("emulator", "")
}

fn kernel(source: &str) -> ImplId {
    ImplId::new("emulator", "add", ["f32"], source, 1)
}

fn dispatch(key: &str, source: &str, count: u64) -> DispatchRecord {
    DispatchRecord::new(Some(StructureKey::new(key)), kernel(source), hw()).with_count(count)
}

fn miss(key: &str, count: u64) -> MissRecord {
    MissRecord::new(StructureKey::new(key), kernel("generic"), hw()).with_count(count)
}

fn line(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap()
}

fn flushed(records: &[DispatchRecord], misses: &[MissRecord]) -> tempfile::TempDir {
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false));
    for record in records {
        sink.record_dispatch(record);
    }
    for record in misses {
        sink.record_miss(record);
    }
    let dir = tempfile::tempdir().unwrap();
    sink.flush_all(dir.path()).unwrap();
    dir
}

#[test]
fn a_flushed_directory_reads_back_as_the_sink_held_it() {
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false).with_max_cells(2));
    sink.record_dispatch(&dispatch("a", "x", 3).with_candidates(vec![Candidate {
        impl_id: kernel("y"),
        latency_ns: Some(5),
    }]));
    sink.record_dispatch(&DispatchRecord::new(
        None,
        kernel("x"),
        HwStamp::gpu((8, 0), "A100", "535"),
    ));
    sink.record_dispatch(&dispatch("overflowing", "x", 4));
    sink.record_miss(&miss("m", 2));
    let dir = tempfile::tempdir().unwrap();
    sink.flush_all(dir.path()).unwrap();

    let report = TelemetryReport::read_dir(dir.path()).unwrap();
    assert_eq!(report.dispatches, sink.dispatch_records());
    assert_eq!(report.misses, sink.miss_records());
    assert_eq!(report.overflow.dispatch_records, 4);
    assert_eq!(report.total_dispatches(), 4);
    assert_eq!(report.total_misses(), 2);

    assert_eq!(
        read_dispatches(&current_set(dir.path()).unwrap().join(DISPATCHES_FILE)).unwrap(),
        report.dispatches
    );
    assert_eq!(
        read_misses(&current_set(dir.path()).unwrap().join(MISSES_FILE)).unwrap(),
        report.misses
    );
}

#[test]
fn a_malformed_line_is_reported_with_its_number() {
    let text = format!(
        "{}\n\n{}\n{{\"schema\":1,\"chosen\":42}}\n",
        line(&dispatch("a", "x", 1)),
        line(&dispatch("b", "x", 1))
    );
    let error = parse_dispatches(&text, "run.jsonl").unwrap_err();
    match &error {
        ReadError::Malformed {
            origin,
            line,
            column,
            kind,
            message,
        } => {
            assert_eq!(origin, "run.jsonl");
            assert_eq!(*line, 4, "blank lines still count");
            assert!(*column > 0);
            assert_eq!(*kind, RecordKind::Dispatch);
            assert!(message.contains("invalid type"), "{message}");
            assert!(!message.contains("at line"), "{message}");
        }
        other => panic!("expected a malformed-line error, got {other:?}"),
    }
    let shown = error.to_string();
    assert!(shown.starts_with("run.jsonl:4:"), "{shown}");
    assert!(shown.contains("malformed dispatch record"), "{shown}");
    assert!(!shown.ends_with('.'), "{shown}");
}

#[test]
fn a_truncated_last_line_is_an_error_not_a_short_read() {
    let full = line(&miss("a", 1));
    let text = format!("{full}\n{}", &full[..full.len() / 2]);
    match parse_misses(&text, "m").unwrap_err() {
        ReadError::Malformed { line, kind, .. } => {
            assert_eq!(line, 2);
            assert_eq!(kind, RecordKind::Miss);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_newer_schema_is_refused_by_name() {
    let current = line(&dispatch("a", "x", 1));
    let newer = current.replacen("\"schema\":1", "\"schema\":2", 1);
    let error = parse_dispatches(format!("{current}\n{newer}\n"), "d").unwrap_err();
    assert!(
        matches!(
            error,
            ReadError::UnsupportedSchema {
                line: 2,
                found: 2,
                supported: TELEMETRY_SCHEMA,
                ..
            }
        ),
        "{error:?}"
    );
    // Even when the new schema also changed the shape.
    let reshaped = r#"{"schema":3,"chosen":"something else"}"#;
    let error = parse_dispatches(reshaped, "d").unwrap_err();
    assert!(
        matches!(error, ReadError::UnsupportedSchema { found: 3, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "d:1: unsupported dispatch record schema 3, this reader knows 1"
    );
}

#[test]
fn unknown_fields_blank_lines_and_crlf_are_tolerated() {
    let record = dispatch("a", "x", 2);
    let with_extra = line(&record).replacen('{', r#"{"added_later":{"nested":[1]},"#, 1);
    let text = format!("\r\n{with_extra}\r\n   \n");
    assert_eq!(parse_dispatches(text, "d").unwrap(), vec![record]);
}

#[test]
fn merging_runs_adds_counts_of_matching_cells() {
    let run1 = flushed(
        &[
            dispatch("a", "x", 3),
            dispatch("b", "x", 1).with_candidates(vec![Candidate {
                impl_id: kernel("old"),
                latency_ns: Some(9),
            }]),
        ],
        &[miss("m", 1)],
    );
    let run2 = flushed(
        &[
            dispatch("a", "x", 4),
            dispatch("a", "other", 1),
            dispatch("b", "x", 1).with_candidates(vec![Candidate {
                impl_id: kernel("new"),
                latency_ns: Some(8),
            }]),
        ],
        &[miss("m", 5), miss("n", 1)],
    );
    let run3 = flushed(&[dispatch("b", "x", 1)], &[]);
    let reports = [run1, run2, run3]
        .iter()
        .map(|dir| TelemetryReport::read_dir(dir.path()).unwrap())
        .collect::<Vec<_>>();
    let merged = TelemetryReport::merge(reports);

    let find = |key: &str, source: &str| {
        merged
            .dispatches
            .iter()
            .find(|r| {
                r.structure_key.as_ref().map(StructureKey::as_str) == Some(key)
                    && r.chosen.kernel_source == source
            })
            .cloned()
            .unwrap()
    };
    assert_eq!(merged.dispatches.len(), 3);
    assert_eq!(find("a", "x").count, 7);
    assert_eq!(find("a", "other").count, 1);
    let b = find("b", "x");
    assert_eq!(b.count, 3);
    // The last run that had candidates wins; a later run without any does not erase them.
    assert_eq!(b.candidates[0].impl_id, kernel("new"));
    assert_eq!(
        merged
            .misses
            .iter()
            .map(|m| (m.wanted.as_str(), m.count))
            .collect::<Vec<_>>(),
        [("m", 6), ("n", 1)]
    );
    assert_eq!(merged.total_dispatches(), 11);

    let top = merged.top_dispatches(2);
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].count, 7);
    assert_eq!(top[1].count, 3);
    assert_eq!(merged.top_misses(10).len(), 2);
}

#[test]
fn merging_sums_overflow_and_matches_identical_cells_across_files_only_by_full_key() {
    let a = TelemetryReport {
        dispatches: vec![dispatch("k", "x", 1)],
        misses: vec![],
        declines: vec![],
        faults: vec![],
        overflow: OverflowRecord {
            schema: TELEMETRY_SCHEMA,
            dispatch_records: 2,
            miss_records: 1,
            decline_records: 3,
        },
    };
    let mut on_gpu = dispatch("k", "x", 1);
    on_gpu.hw = HwStamp::gpu((9, 0), "H200", "570");
    let b = TelemetryReport {
        dispatches: vec![on_gpu, dispatch("k", "x", 1)],
        misses: vec![],
        declines: vec![],
        faults: vec![],
        overflow: OverflowRecord {
            schema: TELEMETRY_SCHEMA,
            dispatch_records: u64::MAX,
            miss_records: 1,
            decline_records: 4,
        },
    };
    let merged = TelemetryReport::merge([a, b]);
    assert_eq!(merged.dispatches.len(), 2);
    assert_eq!(merged.total_dispatches(), 3);
    assert_eq!(merged.overflow.dispatch_records, u64::MAX);
    assert_eq!(merged.overflow.miss_records, 2);
    assert_eq!(merged.overflow.decline_records, 7);
}

#[test]
fn missing_and_empty_directories_are_typed_errors() {
    let root = tempfile::tempdir().unwrap();
    let absent = root.path().join("absent");
    assert!(matches!(
        TelemetryReport::read_dir(&absent),
        Err(ReadError::Io { .. })
    ));
    let error = TelemetryReport::read_dir(root.path()).unwrap_err();
    assert!(matches!(error, ReadError::NoTelemetry { .. }), "{error:?}");
    assert!(error.to_string().contains("holds no telemetry"));

    // A directory with only some files reads the rest as empty.
    fs::write(root.path().join(MISSES_FILE), line(&miss("m", 2)) + "\n").unwrap();
    let report = TelemetryReport::read_dir(root.path()).unwrap();
    assert_eq!(report.misses, vec![miss("m", 2)]);
    assert!(report.dispatches.is_empty());
    assert_eq!(report.overflow, OverflowRecord::empty());

    // A broken overflow file names itself.
    fs::write(root.path().join(OVERFLOW_FILE), "{\"schema\":1}\n").unwrap();
    let error = TelemetryReport::read_dir(root.path()).unwrap_err();
    assert!(
        matches!(
            error,
            ReadError::Malformed {
                kind: RecordKind::Overflow,
                line: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains(OVERFLOW_FILE), "{error}");
}

/// Staging files that a killed writer left behind are never read as telemetry.
#[test]
fn leftover_staging_files_are_ignored() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    fs::write(
        dir.path().join(format!(".{DISPATCHES_FILE}.999.0.tmp")),
        "{\"schema\":1,\"cho",
    )
    .unwrap();
    let report = TelemetryReport::read_dir(dir.path()).unwrap();
    assert_eq!(report.dispatches, vec![dispatch("a", "x", 1)]);
}
