//! Aggregation, bounds, handles and concurrency of `TelemetrySink`.

// A test reports failure by panicking.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Barrier};
use std::thread;

use jitseam::telemetry::reader::current_set;
use jitseam::telemetry::{
    Candidate, DISPATCHES_FILE, DispatchRecord, HwStamp, ImplId, MissRecord, OverflowRecord,
    SinkConfig, StructureKey, TELEMETRY_SCHEMA, TelemetrySink,
};

fn hw() -> HwStamp {
    HwStamp::gpu((8, 9), "NVIDIA L4", "550.54")
}

fn kernel(source: &str) -> ImplId {
    ImplId::new("cuda", "mul", ["f16", "f16", "f16"], source, 0xabc)
}

fn key(text: &str) -> Option<StructureKey> {
    Some(StructureKey::new(text))
}

fn dispatch(structure: &str, source: &str) -> DispatchRecord {
    DispatchRecord::new(key(structure), kernel(source), hw())
}

fn miss(wanted: &str, fallback: &str) -> MissRecord {
    MissRecord::new(StructureKey::new(wanted), kernel(fallback), hw())
}

fn candidate(source: &str, latency: u64) -> Candidate {
    Candidate {
        impl_id: kernel(source),
        latency_ns: Some(latency),
    }
}

fn no_fsync() -> SinkConfig {
    SinkConfig::DEFAULT.with_fsync(false)
}

#[test]
fn same_cell_aggregates_and_counts_add() {
    let sink = TelemetrySink::new();
    sink.record_dispatch(&dispatch("k", "a"));
    sink.record_dispatch(&dispatch("k", "a"));
    sink.record_dispatch(&dispatch("k", "a").with_count(40));
    let records = sink.dispatch_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].count, 42);
    assert_eq!(records[0].schema, TELEMETRY_SCHEMA);
    assert_eq!(sink.dispatch_cell_count(), 1);
}

#[test]
fn a_zero_count_counts_as_one() {
    let sink = TelemetrySink::new();
    sink.record_dispatch(&dispatch("k", "a").with_count(0));
    sink.record_miss(&miss("k", "g").with_count(0));
    assert_eq!(sink.dispatch_records()[0].count, 1);
    assert_eq!(sink.miss_records()[0].count, 1);
}

#[test]
fn counts_saturate_instead_of_wrapping() {
    let sink = TelemetrySink::new();
    sink.record_dispatch(&dispatch("k", "a").with_count(u64::MAX - 1));
    sink.record_dispatch(&dispatch("k", "a").with_count(5));
    assert_eq!(sink.dispatch_records()[0].count, u64::MAX);
}

#[test]
fn every_key_component_separates_cells() {
    let sink = TelemetrySink::new();
    sink.record_dispatch(&dispatch("k", "a"));
    sink.record_dispatch(&dispatch("k2", "a"));
    sink.record_dispatch(&dispatch("k", "b"));
    sink.record_dispatch(&DispatchRecord::new(None, kernel("a"), hw()));
    sink.record_dispatch(&DispatchRecord::new(
        key("k"),
        kernel("a"),
        HwStamp::cpu("NVIDIA L4", "550.54"),
    ));
    let mut revised = kernel("a");
    revised.kernel_revision_hash += 1;
    sink.record_dispatch(&DispatchRecord::new(key("k"), revised, hw()));
    // Fields that rarely differ still separate cells.
    let mut other_backend = kernel("a");
    other_backend.backend = "emulator".into();
    sink.record_dispatch(&DispatchRecord::new(key("k"), other_backend, hw()));
    let mut other_dtypes = kernel("a");
    other_dtypes.dtypes[2] = "f32".into();
    sink.record_dispatch(&DispatchRecord::new(key("k"), other_dtypes, hw()));
    let mut other_sku = hw();
    other_sku.hardware_sku = "NVIDIA L40S".into();
    sink.record_dispatch(&DispatchRecord::new(key("k"), kernel("a"), other_sku));
    let mut other_driver = hw();
    other_driver.driver_version = "555.1".into();
    sink.record_dispatch(&DispatchRecord::new(key("k"), kernel("a"), other_driver));
    assert_eq!(sink.dispatch_cell_count(), 10);
    sink.record_dispatch(&dispatch("k", "a"));
    assert_eq!(sink.dispatch_cell_count(), 10);
    assert_eq!(
        sink.dispatch_records().iter().map(|r| r.count).sum::<u64>(),
        11
    );

    sink.record_miss(&miss("w", "g"));
    sink.record_miss(&miss("w2", "g"));
    sink.record_miss(&miss("w", "g2"));
    sink.record_miss(&MissRecord::new(
        StructureKey::new("w"),
        kernel("g"),
        HwStamp::cpu("x", ""),
    ));
    sink.record_miss(&miss("w", "g").with_count(4));
    assert_eq!(sink.miss_cell_count(), 4);
    let counts: Vec<u64> = sink.miss_records().iter().map(|r| r.count).collect();
    assert_eq!(counts.iter().sum::<u64>(), 8);
    assert!(counts.contains(&5));
}

#[test]
fn look_alike_keys_and_sinks_stay_apart_through_repeated_recording() {
    // Repeats go through the recording thread's cache of cells; it must compare every field
    // and tell sinks apart, however alike the keys.
    let base = dispatch("k", "a");
    let mut look_alikes = vec![base.clone()];
    let mut other = base.clone();
    other.chosen.backend = "cudb".into();
    look_alikes.push(other);
    let mut other = base.clone();
    other.chosen.dtypes = vec!["f16".into(), "f16f".into(), "16".into()];
    look_alikes.push(other);
    let mut other = base.clone();
    other.chosen.dtypes.push("f16".into());
    look_alikes.push(other);
    let mut other = base.clone();
    other.hw.hardware_sku = "NVIDIA L5".into();
    look_alikes.push(other);
    let mut other = base.clone();
    other.hw.driver_version = "550.55".into();
    look_alikes.push(other);
    let mut other = base.clone();
    other.hw.compute_capability = Some((9, 8));
    look_alikes.push(other);
    let mut other = base.clone();
    other.structure_key = None;
    look_alikes.push(other);

    let first = TelemetrySink::new();
    let second = TelemetrySink::new();
    for round in 0..50 {
        for record in &look_alikes {
            // Fresh copies: equal strings, never the same buffers.
            first.record_dispatch(&record.clone());
            if round % 2 == 0 {
                second.record_dispatch(&record.clone());
            }
        }
    }
    for (sink, expected) in [(&first, 50), (&second, 25)] {
        let records = sink.dispatch_records();
        assert_eq!(records.len(), look_alikes.len());
        assert!(records.iter().all(|r| r.count == expected), "{records:?}");
    }

    // A new sink starts empty even where a dropped one left cached cells.
    drop(first);
    let third = TelemetrySink::new();
    third.record_dispatch(&base);
    assert_eq!(third.dispatch_records()[0].count, 1);
    assert_eq!(second.dispatch_records().len(), look_alikes.len());
}

#[test]
fn more_hot_cells_than_a_thread_caches_still_count_exactly() {
    let sink = TelemetrySink::new();
    let records: Vec<DispatchRecord> = (0..3_000)
        .map(|i| dispatch(&format!("k{i}"), &format!("s{}", i % 7)))
        .collect();
    for _ in 0..3 {
        for record in &records {
            sink.record_dispatch(record);
        }
    }
    let counted = sink.dispatch_records();
    assert_eq!(counted.len(), records.len());
    assert!(counted.iter().all(|r| r.count == 3));
}

#[test]
fn a_cell_keeps_the_latest_non_empty_candidates() {
    let sink = TelemetrySink::new();
    sink.record_dispatch(&dispatch("k", "a").with_candidates(vec![candidate("a", 10)]));
    sink.record_dispatch(&dispatch("k", "a"));
    assert_eq!(
        sink.dispatch_records()[0].candidates,
        vec![candidate("a", 10)]
    );
    sink.record_dispatch(
        &dispatch("k", "a").with_candidates(vec![candidate("b", 7), candidate("a", 9)]),
    );
    assert_eq!(
        sink.dispatch_records()[0].candidates,
        vec![candidate("b", 7), candidate("a", 9)]
    );
    // A shorter list replaces a longer one entirely.
    sink.record_dispatch(&dispatch("k", "a").with_candidates(vec![candidate("c", 1)]));
    let records = sink.dispatch_records();
    assert_eq!(records[0].candidates, vec![candidate("c", 1)]);
    assert_eq!(records[0].count, 4);
}

#[test]
fn records_are_sorted_by_key_whatever_the_recording_order() {
    let keys = ["m", "a", "z", "q", "b"];
    let forward = TelemetrySink::with_config(no_fsync());
    let backward = TelemetrySink::with_config(no_fsync());
    for k in keys {
        forward.record_dispatch(&dispatch(k, "x"));
        forward.record_miss(&miss(k, "g"));
    }
    for k in keys.iter().rev() {
        backward.record_dispatch(&dispatch(k, "x"));
        backward.record_miss(&miss(k, "g"));
    }
    let order: Vec<String> = forward
        .dispatch_records()
        .iter()
        .filter_map(|r| r.structure_key.as_ref().map(|k| k.as_str().to_owned()))
        .collect();
    assert_eq!(order, ["a", "b", "m", "q", "z"]);

    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    forward.flush_all(a.path()).unwrap();
    backward.flush_all(b.path()).unwrap();
    for name in ["dispatches.jsonl", "misses.jsonl", "overflow.json"] {
        assert_eq!(
            std::fs::read(current_set(a.path()).unwrap().join(name)).unwrap(),
            std::fs::read(current_set(b.path()).unwrap().join(name)).unwrap(),
            "{name} differs with recording order"
        );
    }
}

#[test]
fn cells_past_the_limit_go_to_the_overflow_counter() {
    let sink = TelemetrySink::with_config(no_fsync().with_max_cells(2));
    sink.record_dispatch(&dispatch("a", "x"));
    sink.record_dispatch(&dispatch("b", "x"));
    sink.record_dispatch(&dispatch("c", "x").with_count(3));
    sink.record_dispatch(&dispatch("d", "x"));
    // Existing cells still count once the sink is full.
    sink.record_dispatch(&dispatch("a", "x"));
    for w in ["a", "b", "c"] {
        sink.record_miss(&miss(w, "g"));
    }
    assert_eq!(sink.dispatch_cell_count(), 2);
    assert_eq!(sink.miss_cell_count(), 2);
    assert_eq!(
        sink.overflow(),
        OverflowRecord {
            schema: TELEMETRY_SCHEMA,
            dispatch_records: 4,
            miss_records: 1,
            decline_records: 0,
        }
    );
    let counts: Vec<u64> = sink.dispatch_records().iter().map(|r| r.count).collect();
    assert_eq!(counts, [2, 1]);

    let handle = sink.dispatch_handle(key("e").as_ref(), &kernel("x"), &hw());
    assert!(handle.is_overflow());
    handle.record_n(10);
    assert_eq!(sink.overflow().dispatch_records, 14);

    let dir = tempfile::tempdir().unwrap();
    let stats = sink.flush_all(dir.path()).unwrap();
    assert_eq!(stats.overflow.dispatch_records, 14);
    assert_eq!(
        std::fs::read_to_string(current_set(dir.path()).unwrap().join("overflow.json")).unwrap(),
        "{\"schema\":1,\"dispatch_records\":14,\"miss_records\":1}\n"
    );
}

#[test]
fn a_handle_records_into_the_same_cell_as_records() {
    let sink = Arc::new(TelemetrySink::new());
    let structure = StructureKey::new("k");
    let handle = sink.dispatch_handle(Some(&structure), &kernel("a"), &hw());
    assert!(!handle.is_overflow());
    // A handle alone makes a cell, but an unrecorded cell is not reported.
    assert_eq!(sink.dispatch_cell_count(), 1);
    assert!(sink.dispatch_records().is_empty());
    assert!(sink.is_empty());

    handle.record();
    handle.record_n(4);
    handle.clone().record();
    sink.record_dispatch(&dispatch("k", "a"));
    handle.record_with_candidates(&[candidate("a", 3)]);
    assert_eq!(handle.count(), 8);
    let records = sink.dispatch_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].count, 8);
    assert_eq!(records[0].candidates, vec![candidate("a", 3)]);

    let miss_handle = sink.miss_handle(&structure, &kernel("g"), &hw());
    miss_handle.record();
    sink.record_miss(&miss("k", "g").with_count(2));
    assert_eq!(miss_handle.count(), 3);
    assert_eq!(sink.miss_records()[0].count, 3);
    assert!(!sink.is_empty());
}

#[test]
fn a_handle_outlives_its_sink_harmlessly() {
    let sink = TelemetrySink::new();
    let handle = sink.dispatch_handle(None, &kernel("a"), &hw());
    drop(sink);
    handle.record();
    assert_eq!(handle.count(), 1);
}

#[test]
fn flushes_are_cumulative_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let sink = TelemetrySink::with_config(no_fsync());
    let empty = sink.flush_all(dir.path()).unwrap();
    assert_eq!((empty.dispatch_lines, empty.miss_lines), (0, 0));
    assert_eq!(
        std::fs::read(current_set(dir.path()).unwrap().join(DISPATCHES_FILE)).unwrap(),
        b""
    );
    sink.record_dispatch(&dispatch("k", "a"));
    sink.flush_all(dir.path()).unwrap();
    sink.record_dispatch(&dispatch("k", "a"));
    sink.flush_all(dir.path()).unwrap();
    let text =
        std::fs::read_to_string(current_set(dir.path()).unwrap().join(DISPATCHES_FILE)).unwrap();
    assert_eq!(text.lines().count(), 1);
    let record: DispatchRecord = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(record.count, 2);
    // No staging files, and no earlier generation, are left behind by successful flushes: the
    // manifest and the one generation it names.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "unexpected files: {names:?}");
    assert!(names.iter().any(|n| n == jitseam::telemetry::MANIFEST_FILE));
}

#[test]
fn flush_creates_missing_directories() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("a").join("b");
    let sink = TelemetrySink::new();
    sink.record_miss(&miss("w", "g"));
    let stats = sink.flush_all(&dir).unwrap();
    assert_eq!(stats.miss_lines, 1);
    assert!(current_set(&dir).unwrap().join("misses.jsonl").is_file());
}

/// Threads hammer one shared cell and their own cells, through records and handles, while a
/// flusher runs; every count must come out exact.
#[test]
fn concurrent_recording_gives_exact_totals() {
    const THREADS: usize = 4;
    const ROUNDS: u64 = 20_000;
    let sink = Arc::new(TelemetrySink::with_config(no_fsync()));
    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let shared_handle = sink.dispatch_handle(key("shared").as_ref(), &kernel("h"), &hw());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let sink = Arc::clone(&sink);
            let barrier = Arc::clone(&barrier);
            let shared_handle = shared_handle.clone();
            thread::spawn(move || {
                let shared = dispatch("shared", "x");
                let own = dispatch(&format!("own-{t}"), "x");
                let shared_miss = miss("shared", "g");
                let own_miss = miss(&format!("own-{t}"), "g");
                barrier.wait();
                for round in 0..ROUNDS {
                    sink.record_dispatch(&shared);
                    sink.record_dispatch(&own);
                    sink.record_miss(&shared_miss);
                    sink.record_miss(&own_miss.clone().with_count(2));
                    shared_handle.record();
                    // New cells keep appearing while others are hot.
                    if round % 1_000 == 0 {
                        sink.record_dispatch(&dispatch(&format!("fresh-{t}-{round}"), "x"));
                    }
                }
            })
        })
        .collect();
    let flusher = {
        let sink = Arc::clone(&sink);
        let barrier = Arc::clone(&barrier);
        thread::spawn(move || {
            let dir = tempfile::tempdir().unwrap();
            barrier.wait();
            for _ in 0..5 {
                sink.flush_all(dir.path()).unwrap();
            }
        })
    };
    for worker in workers {
        worker.join().unwrap();
    }
    flusher.join().unwrap();

    let threads = THREADS as u64;
    let dispatches = sink.dispatch_records();
    let count_of = |k: &str, src: &str| {
        dispatches
            .iter()
            .find(|r| {
                r.structure_key.as_ref().map(StructureKey::as_str) == Some(k)
                    && r.chosen.kernel_source == src
            })
            .map(|r| r.count)
    };
    assert_eq!(count_of("shared", "x"), Some(threads * ROUNDS));
    assert_eq!(count_of("shared", "h"), Some(threads * ROUNDS));
    for t in 0..THREADS {
        assert_eq!(count_of(&format!("own-{t}"), "x"), Some(ROUNDS));
    }
    let fresh = ROUNDS.div_ceil(1_000) as usize;
    assert_eq!(dispatches.len(), 2 + THREADS + THREADS * fresh);

    let misses = sink.miss_records();
    assert_eq!(misses.len(), 1 + THREADS);
    for record in &misses {
        let expected = if record.wanted.as_str() == "shared" {
            threads * ROUNDS
        } else {
            2 * ROUNDS
        };
        assert_eq!(record.count, expected, "{}", record.wanted);
    }
    assert_eq!(sink.overflow(), OverflowRecord::empty());
}

/// Many threads racing to create the same new cells must create each exactly once, and the
/// cell limit must hold exactly under the race.
#[test]
fn concurrent_cell_creation_respects_identity_and_limit() {
    const THREADS: usize = 4;
    let sink = Arc::new(TelemetrySink::with_config(no_fsync().with_max_cells(50)));
    let barrier = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let sink = Arc::clone(&sink);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                for k in 0..100 {
                    sink.record_dispatch(&dispatch(&format!("k{k}"), "x"));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(sink.dispatch_cell_count(), 50);
    let in_cells: u64 = sink.dispatch_records().iter().map(|r| r.count).sum();
    assert_eq!(in_cells + sink.overflow().dispatch_records, 400);
}

#[test]
fn sink_and_handles_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<TelemetrySink>();
    shareable::<Arc<TelemetrySink>>();
    shareable::<jitseam::telemetry::DispatchHandle>();
    shareable::<jitseam::telemetry::MissHandle>();
}
