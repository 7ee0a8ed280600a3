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
    assert_eq!(report.total_dispatches(), Some(4));
    assert_eq!(report.total_misses(), Some(2));

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
    assert_eq!(merged.total_dispatches(), Some(11));

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
    assert_eq!(merged.total_dispatches(), Some(3));
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

/// Runs `read` on its own thread and waits at most ten seconds for it: a read that blocks (on a
/// FIFO without a writer) or never ends (on `/dev/zero`) fails the test instead of hanging it.
fn within_seconds<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(read());
    });
    result
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the read returns within ten seconds instead of blocking or reading forever")
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The current generation's directory of a flushed telemetry directory.
fn generation(dir: &tempfile::TempDir) -> std::path::PathBuf {
    current_set(dir.path()).unwrap()
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_a_data_file_is_refused_without_blocking() {
    // In a generation the manifest names.
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let data = generation(&dir).join(DISPATCHES_FILE);
    fs::remove_file(&data).unwrap();
    mkfifo(&data);
    let path = dir.path().to_owned();
    let error = within_seconds(move || TelemetryReport::read_dir(&path)).unwrap_err();
    assert!(
        matches!(&error, ReadError::NotAFile { origin, found: "a fifo" } if *origin == data.display().to_string()),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("{} is a fifo, not a regular file", data.display())
    );
    // In a directory of the first layout, and through the one-file readers.
    let flat = tempfile::tempdir().unwrap();
    let data = flat.path().join(MISSES_FILE);
    mkfifo(&data);
    let path = flat.path().to_owned();
    let error = within_seconds(move || TelemetryReport::read_dir(&path)).unwrap_err();
    assert!(matches!(error, ReadError::NotAFile { .. }), "{error:?}");
    let error = within_seconds(move || read_misses(&data)).unwrap_err();
    assert!(matches!(error, ReadError::NotAFile { .. }), "{error:?}");
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_the_manifest_is_refused_without_blocking() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let manifest = dir.path().join(jitseam::telemetry::MANIFEST_FILE);
    fs::remove_file(&manifest).unwrap();
    mkfifo(&manifest);
    let path = dir.path().to_owned();
    let error = within_seconds(move || TelemetryReport::read_dir(&path)).unwrap_err();
    assert!(
        matches!(&error, ReadError::NotAFile { origin, found: "a fifo" } if origin.ends_with("current.json")),
        "{error:?}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_link_to_dev_zero_is_refused_at_once_not_read_until_memory_runs_out() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[miss("m", 1)]);
    let data = generation(&dir).join(MISSES_FILE);
    fs::remove_file(&data).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &data).unwrap();
    let path = dir.path().to_owned();
    let error = within_seconds(move || TelemetryReport::read_dir(&path)).unwrap_err();
    assert!(
        matches!(&error, ReadError::NotAFile { origin, found: "a character device" } if *origin == data.display().to_string()),
        "{error:?}"
    );
    let error = within_seconds(move || read_misses(&data)).unwrap_err();
    assert!(matches!(error, ReadError::NotAFile { .. }), "{error:?}");
}

#[cfg(unix)]
#[test]
fn a_link_to_a_regular_file_is_followed() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let data = generation(&dir).join(DISPATCHES_FILE);
    let elsewhere = dir.path().join("elsewhere.jsonl");
    fs::rename(&data, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &data).unwrap();
    let report = TelemetryReport::read_dir(dir.path()).unwrap();
    assert_eq!(report.dispatches, vec![dispatch("a", "x", 1)]);
}

#[test]
fn a_file_above_the_limit_is_refused_by_name() {
    use jitseam::telemetry::ReadConfig;
    let records: Vec<DispatchRecord> = (0..64)
        .map(|i| dispatch(&format!("key-{i}"), "x", 1))
        .collect();
    let dir = flushed(&records, &[]);
    let data = generation(&dir).join(DISPATCHES_FILE);
    let size = fs::metadata(&data).unwrap().len();
    assert!(size > 4096, "{size}");
    // At the limit it reads; one byte below, it is refused, naming the file and the limit.
    let at_limit = ReadConfig::DEFAULT.with_max_file_bytes(size);
    let report = TelemetryReport::read_dir_with(dir.path(), at_limit).unwrap();
    assert_eq!(report.dispatches.len(), 64);
    let below = ReadConfig::DEFAULT.with_max_file_bytes(size - 1);
    let error = TelemetryReport::read_dir_with(dir.path(), below).unwrap_err();
    assert!(
        matches!(&error, ReadError::TooLarge { origin, limit } if *origin == data.display().to_string() && *limit == size - 1),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{} holds more than {} bytes, the most this reader reads from one file",
            data.display(),
            size - 1
        )
    );
    // The default is 256 MiB, and a directory in place of a file is no file either.
    assert_eq!(ReadConfig::default().max_file_bytes, 256 << 20);
    fs::remove_file(&data).unwrap();
    fs::create_dir(&data).unwrap();
    let error = TelemetryReport::read_dir(dir.path()).unwrap_err();
    assert!(
        matches!(
            error,
            ReadError::NotAFile {
                found: "a directory",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn an_oversized_manifest_is_refused() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let manifest = dir.path().join(jitseam::telemetry::MANIFEST_FILE);
    let text = fs::read_to_string(&manifest).unwrap();
    // Still valid JSON, padded past what a manifest can need.
    fs::write(&manifest, format!("{}{text}", " ".repeat(1 << 20))).unwrap();
    let error = TelemetryReport::read_dir(dir.path()).unwrap_err();
    assert!(
        matches!(&error, ReadError::TooLarge { origin, .. } if origin.ends_with("current.json")),
        "{error:?}"
    );
}

#[test]
fn a_manifest_naming_a_missing_generation_says_so_and_names_both() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let set = generation(&dir);
    let name = set.file_name().unwrap().to_str().unwrap().to_owned();
    fs::remove_dir_all(&set).unwrap();
    let error = TelemetryReport::read_dir(dir.path()).unwrap_err();
    let manifest = dir.path().join(jitseam::telemetry::MANIFEST_FILE);
    match &error {
        ReadError::MissingGeneration {
            manifest: named,
            generation,
            missing,
        } => {
            assert_eq!(*named, manifest.display().to_string());
            assert_eq!(*generation, name);
            assert_eq!(*missing, set.display().to_string());
        }
        other => panic!("expected a missing generation, got {other:?}"),
    }
    let shown = error.to_string();
    assert_eq!(
        shown,
        format!(
            "{} names generation `{name}`, but {} does not exist",
            manifest.display(),
            set.display()
        )
    );
    assert!(!shown.contains("replaced"), "{shown}");

    // A generation that lacks one of the files its manifest lists names that file.
    let dir = flushed(&[dispatch("a", "x", 1)], &[miss("m", 1)]);
    let data = generation(&dir).join(MISSES_FILE);
    fs::remove_file(&data).unwrap();
    let error = TelemetryReport::read_dir(dir.path()).unwrap_err();
    assert!(
        matches!(&error, ReadError::MissingGeneration { missing, .. } if *missing == data.display().to_string()),
        "{error:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_manifest_naming_unknown_files_does_not_open_them() {
    let dir = flushed(&[dispatch("a", "x", 1)], &[]);
    let manifest = dir.path().join(jitseam::telemetry::MANIFEST_FILE);
    let text = fs::read_to_string(&manifest).unwrap();
    // A newer writer's file, a device outside the directory, the same file many times.
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let repeated = format!("{DISPATCHES_FILE:?},").repeat(1000);
    let more = format!(
        "\"files\":[\"later.jsonl\",\"/dev/zero\",{:?},{repeated}",
        fifo.display().to_string()
    );
    fs::write(&manifest, text.replacen("\"files\":[", &more, 1)).unwrap();
    let path = dir.path().to_owned();
    let report = within_seconds(move || TelemetryReport::read_dir(&path)).unwrap();
    assert_eq!(report.dispatches, vec![dispatch("a", "x", 1)]);
}

#[test]
fn totals_that_overflow_are_reported_as_overflowing() {
    let half = u64::MAX / 2 + 1;
    let report = |counts: &[u64]| TelemetryReport {
        dispatches: counts
            .iter()
            .enumerate()
            .map(|(i, &count)| dispatch(&format!("k{i}"), "x", count))
            .collect(),
        misses: counts
            .iter()
            .enumerate()
            .map(|(i, &count)| miss(&format!("k{i}"), count))
            .collect(),
        declines: vec![],
        faults: vec![],
        overflow: OverflowRecord::empty(),
    };
    // A sum past u64::MAX overflows.
    let past = report(&[half, half]);
    assert_eq!(past.total_dispatches(), None);
    assert_eq!(past.total_misses(), None);
    // A count that saturated stands for at least u64::MAX: any total with it overflows.
    assert_eq!(report(&[u64::MAX]).total_dispatches(), None);
    assert_eq!(report(&[u64::MAX, 0]).total_misses(), None);
    // Just below, totals are exact.
    assert_eq!(
        report(&[u64::MAX - 1]).total_dispatches(),
        Some(u64::MAX - 1)
    );
    assert_eq!(
        report(&[half, half - 2]).total_dispatches(),
        Some(u64::MAX - 1)
    );
    assert_eq!(report(&[]).total_declines(), Some(0));
    // Merging two files whose counts of one cell overflow saturates that cell: overflowing.
    let merged = TelemetryReport::merge([report(&[half]), report(&[half])]);
    assert_eq!(merged.dispatches.len(), 1);
    assert_eq!(merged.total_dispatches(), None);
}

/// A line nested 100,000 levels deep is an error or is skipped, never a stack overflow:
/// serde_json skips a field the record does not know without recursing, and refuses nesting
/// where a value belongs past its recursion limit. Read on a 256 KiB stack.
#[test]
fn deeply_nested_lines_are_read_on_a_small_stack() {
    let deep = 100_000;
    let record = line(&dispatch("a", "x", 1).with_candidates(vec![Candidate {
        impl_id: kernel("y"),
        latency_ns: None,
    }]));
    assert!(record.contains("\"candidates\":["), "{record}");
    let ignored = record.replacen(
        '{',
        &format!("{{\"later\":{}1{},", "[".repeat(deep), "]".repeat(deep)),
        1,
    );
    let misplaced = record.replacen(
        "\"candidates\":[",
        &format!("\"candidates\":[{}", "[".repeat(deep)),
        1,
    );
    let unclosed = format!("{{\"later\":{}", "{\"a\":".repeat(deep));
    let read = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            (
                parse_dispatches(&ignored, "d").map(|r| r.len()).ok(),
                parse_dispatches(&misplaced, "d").is_err(),
                parse_dispatches(&unclosed, "d").is_err(),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(read, (Some(1), true, true));
}
