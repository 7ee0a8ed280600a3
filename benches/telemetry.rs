//! Telemetry costs, each measured side by side with the bare operation it competes with.
//!
//! - `record_dispatch` on 64, 1 k and 64 k distinct cells vs a plain foldhash
//!   `HashMap<key, u64>` increment over the same keys, measured in the same run (goals, one
//!   thread: at least 20 M records/s at 64 cells and 15 M/s at 64 k), and the per-launch
//!   `DispatchHandle::record`.
//! - `flush_all` of 100 k cells (fsync off) vs `serde_json::to_writer` of the same records to
//!   the same directory (goal: ratio at most 1.3); the fsync cost is reported on its own line.
//!
//! Run: `cargo bench --bench telemetry`. The plain `telemetry:` lines are medians of
//! interleaved rounds; criterion's own report follows. Where Linux offers it, rates use the
//! thread's on-CPU time (`/proc/thread-self/schedstat`) so that a busy shared machine does not
//! count time spent descheduled; wall-clock medians are printed beside them.

// A benchmark that cannot set up should stop loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::fs::File;
use std::hash::BuildHasher;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput};
use jitseam::telemetry::{
    Candidate, DispatchRecord, HwStamp, ImplId, MissRecord, SinkConfig, StructureKey, TelemetrySink,
};

/// Distinct cells cycled through by the recording benchmarks: hot cells that any cache would
/// hold, then 1 k and 64 k, past any per-thread cache.
const CELL_COUNTS: [usize; 3] = [64, 1024, 65_536];
/// Distinct cells of the criterion runs and the handle benchmark.
const HOT_CELLS: usize = 64;
/// Separately allocated, equal copies of each cell's record (and key). The recording loops
/// cycle through all of them, so consecutive records of one cell never share a string buffer
/// with each other or with the sink: like a caller that builds each record afresh, the sink
/// must compare contents, and no pointer-identity shortcut could show up in the numbers.
const COPIES: usize = 4;
/// Records per timed recording round.
const RECORDS_PER_ROUND: usize = 2_000_000;
const RECORD_ROUNDS: usize = 15;
const FLUSH_DISPATCH_CELLS: usize = 80_000;
const FLUSH_MISS_CELLS: usize = 20_000;
const FLUSH_ROUNDS: usize = 11;

fn hw() -> HwStamp {
    HwStamp::gpu((9, 0), "NVIDIA H200", "570.86.10")
}

fn implementation(i: usize) -> ImplId {
    const OPS: [&str; 4] = ["add", "mul", "fused_gelu_bias", "where"];
    ImplId::new(
        "cuda",
        OPS[i % OPS.len()],
        ["f16", "f16", "f16"],
        "jitseam-elementwise",
        0x9e37_79b9_7f4a_7c15 ^ i as u64,
    )
}

fn dispatch(i: usize) -> DispatchRecord {
    let record = DispatchRecord::new(
        Some(StructureKey::new(format!(
            "ew:{}:f16:contig:r{}:{i:06}",
            i % 7,
            i % 4 + 1
        ))),
        implementation(i % 97),
        hw(),
    );
    if i.is_multiple_of(3) {
        record.with_candidates(vec![
            Candidate {
                impl_id: implementation(i % 97),
                latency_ns: Some(10_000 + i as u64 % 1_000),
            },
            Candidate {
                impl_id: implementation(i % 89 + 1),
                latency_ns: Some(15_000),
            },
        ])
    } else {
        record
    }
}

fn miss(i: usize) -> MissRecord {
    MissRecord::new(
        StructureKey::new(format!("ew:strided:f16:r{}:{i:06}", i % 8 + 1)),
        implementation(i % 13),
        hw(),
    )
    .with_count(i as u64 % 50 + 1)
}

type OwnedKey = (Option<StructureKey>, ImplId, HwStamp);

/// The peer: a plain map from the owned key, with the hasher the sink uses.
type FoldMap = HashMap<OwnedKey, u64, foldhash::fast::RandomState>;

fn owned_key(record: &DispatchRecord) -> OwnedKey {
    (
        record.structure_key.clone(),
        record.chosen.clone(),
        record.hw.clone(),
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn rate(records: usize, took: Duration) -> f64 {
    records as f64 / took.as_secs_f64()
}

struct RecordFixture {
    sink: TelemetrySink,
    records: Vec<DispatchRecord>,
    handles: Vec<jitseam::telemetry::DispatchHandle>,
    keys: Vec<OwnedKey>,
    map: FoldMap,
}

impl RecordFixture {
    /// `cells` distinct cells, `COPIES` separately allocated records of each, fed copy
    /// `j / cells` of cell `j % cells`.
    fn new(cells: usize) -> Self {
        // Coarse records (no candidates): the common per-launch shape.
        let cells: Vec<DispatchRecord> = (0..cells)
            .map(|i| {
                let mut record = dispatch(i);
                record.candidates.clear();
                record
            })
            .collect();
        let sink = TelemetrySink::new();
        let handles = cells
            .iter()
            .map(|r| sink.dispatch_handle(r.structure_key.as_ref(), &r.chosen, &r.hw))
            .collect();
        let map = cells.iter().map(|r| (owned_key(r), 0)).collect();
        // Deep clones: every copy owns its own strings.
        let fed = cells.len() * COPIES;
        let records: Vec<DispatchRecord> =
            (0..fed).map(|j| cells[j % cells.len()].clone()).collect();
        let keys: Vec<OwnedKey> = records.iter().map(owned_key).collect();
        Self {
            sink,
            records,
            handles,
            keys,
            map,
        }
    }

    fn record_round(&self, n: usize) {
        for record in self.records.iter().cycle().take(n) {
            self.sink.record_dispatch(black_box(record));
        }
    }

    fn handle_round(&self, n: usize) {
        for handle in self.handles.iter().cycle().take(n) {
            black_box(handle).record();
        }
    }

    /// The floor any lookup of an equal key pays: reading every byte of each fed key once.
    fn read_round(&self, n: usize) {
        let hasher = foldhash::fast::FixedState::default();
        for record in self.records.iter().cycle().take(n) {
            black_box(hasher.hash_one((&record.structure_key, &record.chosen, &record.hw)));
        }
    }

    fn map_round(&mut self, n: usize) {
        for key in self.keys.iter().cycle().take(n) {
            if let Some(count) = self.map.get_mut(black_box(key)) {
                *count += 1;
            }
        }
    }
}

/// Nanoseconds this thread has spent on a CPU, if the kernel says.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// One measurement: wall-clock time and, where available, on-CPU time.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Option<Duration>,
}

fn time(f: impl FnOnce()) -> Sample {
    let cpu_start = thread_cpu_ns();
    let start = Instant::now();
    f();
    let wall = start.elapsed();
    let cpu = match (cpu_start, thread_cpu_ns()) {
        (Some(a), Some(b)) => Some(Duration::from_nanos(b.saturating_sub(a))),
        _ => None,
    };
    Sample { wall, cpu }
}

/// Median on-CPU time where every sample has one, else median wall time; plus the wall median.
fn medians(samples: &[Sample]) -> (Duration, Duration, &'static str) {
    let wall = median(samples.iter().map(|s| s.wall).collect());
    match samples.iter().map(|s| s.cpu).collect::<Option<Vec<_>>>() {
        Some(cpu) => (median(cpu), wall, "cpu"),
        None => (wall, wall, "wall"),
    }
}

/// Median, min and max of samples' rates, by the clock `medians` picked.
fn spread(samples: &[Sample], records: usize) -> (f64, f64, f64) {
    let mut rates: Vec<f64> = samples
        .iter()
        .map(|s| rate(records, s.cpu.unwrap_or(s.wall)))
        .collect();
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], rates[0], rates[rates.len() - 1])
}

fn side_by_side_recording() {
    let n = RECORDS_PER_ROUND;
    let ns = |d: Duration| d.as_nanos() as f64 / n as f64;
    for cells in CELL_COUNTS {
        let mut fixture = RecordFixture::new(cells);
        // Warm caches and the branch predictor for all three; the sink's cells exist already
        // (the fixture made their handles), so every record below finds its cell.
        fixture.record_round(n / 4);
        fixture.handle_round(n / 4);
        fixture.map_round(n / 4);
        let (mut sink, mut handle, mut map, mut read) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RECORD_ROUNDS {
            sink.push(time(|| fixture.record_round(n)));
            handle.push(time(|| fixture.handle_round(n)));
            map.push(time(|| fixture.map_round(n)));
            read.push(time(|| fixture.read_round(n)));
        }
        let (read_med, _, _) = spread(&read, n);
        let ((sink_t, sink_wall, clock), (handle_t, handle_wall, _), (map_t, map_wall, _)) =
            (medians(&sink), medians(&handle), medians(&map));
        let ((sink_med, sink_min, sink_max), (map_med, map_min, map_max)) =
            (spread(&sink, n), spread(&map, n));
        let goal = if cells <= HOT_CELLS { 20 } else { 15 };
        println!(
            "telemetry: record_dispatch, {cells} distinct cells ({COPIES} equal, separately \
             allocated records each), 1 thread: median {:.1} M records/s (min {:.1}, max {:.1}; \
             {:.1} ns/record {clock}, {:.1} ns wall; goal >= {goal} M/s)",
            sink_med / 1e6,
            sink_min / 1e6,
            sink_max / 1e6,
            ns(sink_t),
            ns(sink_wall)
        );
        println!(
            "telemetry: foldhash HashMap<key, u64> increment, same {cells} keys: median {:.1} M/s \
             (min {:.1}, max {:.1}; {:.1} ns {clock}, {:.1} ns wall); record_dispatch is {:.2}× \
             the map's rate",
            map_med / 1e6,
            map_min / 1e6,
            map_max / 1e6,
            ns(map_t),
            ns(map_wall),
            map_t.as_secs_f64() / sink_t.as_secs_f64()
        );
        println!(
            "telemetry: floor, hashing every byte of the same {cells} fed keys and nothing else: \
             median {:.1} M/s; record_dispatch is {:.2}× that",
            read_med / 1e6,
            sink_med / read_med
        );
        if cells == HOT_CELLS {
            println!(
                "telemetry: DispatchHandle::record (per-launch path), {cells} cells: {:.1} M \
                 records/s ({:.2} ns/record {clock}, {:.2} ns wall)",
                rate(n, handle_t) / 1e6,
                ns(handle_t),
                ns(handle_wall)
            );
        }
    }
}

fn flush_sink(fsync: bool) -> TelemetrySink {
    let sink = TelemetrySink::with_config(
        SinkConfig::DEFAULT
            .with_max_cells(FLUSH_DISPATCH_CELLS.max(FLUSH_MISS_CELLS))
            .with_fsync(fsync),
    );
    for i in 0..FLUSH_DISPATCH_CELLS {
        sink.record_dispatch(&dispatch(i).with_count(i as u64 % 1_000 + 1));
    }
    for i in 0..FLUSH_MISS_CELLS {
        sink.record_miss(&miss(i));
    }
    sink
}

/// The baseline: the same records, already materialized and sorted, written with
/// `serde_json::to_writer` into the same two files.
fn write_plain(dir: &Path, dispatches: &[DispatchRecord], misses: &[MissRecord]) {
    fn write_all<T: serde::Serialize>(path: &Path, records: &[T]) {
        let mut out = BufWriter::with_capacity(256 * 1024, File::create(path).unwrap());
        for record in records {
            serde_json::to_writer(&mut out, record).unwrap();
            out.write_all(b"\n").unwrap();
        }
        out.flush().unwrap();
    }
    write_all(&dir.join("plain-dispatches.jsonl"), dispatches);
    write_all(&dir.join("plain-misses.jsonl"), misses);
}

fn side_by_side_flush() {
    let dir = tempfile::tempdir().unwrap();
    let fast = flush_sink(false);
    let durable = flush_sink(true);
    let dispatches = fast.dispatch_records();
    let misses = fast.miss_records();
    let bytes = {
        fast.flush_all(dir.path()).unwrap();
        ["dispatches.jsonl", "misses.jsonl"]
            .iter()
            .map(|f| {
                let set = jitseam::telemetry::reader::current_set(dir.path()).unwrap();
                std::fs::metadata(set.join(f)).unwrap().len()
            })
            .sum::<u64>()
    };
    let (mut flush, mut plain, mut synced) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..FLUSH_ROUNDS {
        flush.push(time(|| {
            fast.flush_all(dir.path()).unwrap();
        }));
        plain.push(time(|| write_plain(dir.path(), &dispatches, &misses)));
        synced.push(time(|| {
            durable.flush_all(dir.path()).unwrap();
        }));
    }
    let ((flush, flush_wall, clock), (plain, plain_wall, _)) = (medians(&flush), medians(&plain));
    // fsync mostly waits for the disk, off-CPU: only wall time shows it.
    let synced_wall = median(synced.iter().map(|s| s.wall).collect());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let cells = FLUSH_DISPATCH_CELLS + FLUSH_MISS_CELLS;
    println!(
        "telemetry: flush_all of {cells} cells ({:.1} MB), fsync off: {:.1} ms {clock}, \
         {:.1} ms wall",
        bytes as f64 / 1e6,
        ms(flush),
        ms(flush_wall)
    );
    println!(
        "telemetry: serde_json::to_writer of the same records: {:.1} ms {clock}, {:.1} ms wall; \
         flush_all / to_writer ratio: {:.2} {clock}, {:.2} wall (goal <= 1.3)",
        ms(plain),
        ms(plain_wall),
        flush.as_secs_f64() / plain.as_secs_f64(),
        flush_wall.as_secs_f64() / plain_wall.as_secs_f64()
    );
    println!(
        "telemetry: flush_all with fsync (3 files + directory): {:.1} ms wall, so fsync adds \
         {:.1} ms wall",
        ms(synced_wall),
        ms(synced_wall) - ms(flush_wall)
    );
}

fn criterion_benches(c: &mut Criterion) {
    let mut fixture = RecordFixture::new(HOT_CELLS);
    let mut group = c.benchmark_group("telemetry_record");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Elements(10_000));
    group.bench_function("record_dispatch", |b| {
        b.iter(|| fixture.record_round(10_000))
    });
    group.bench_function("handle_record", |b| b.iter(|| fixture.handle_round(10_000)));
    group.bench_function("hashmap_increment", |b| {
        b.iter(|| fixture.map_round(10_000))
    });
    group.finish();

    let dir = tempfile::tempdir().unwrap();
    let sink = flush_sink(false);
    let dispatches = sink.dispatch_records();
    let misses = sink.miss_records();
    let mut group = c.benchmark_group("telemetry_flush_100k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("flush_all_no_fsync", |b| {
        b.iter_batched(
            || (),
            |()| sink.flush_all(dir.path()).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("serde_json_to_writer", |b| {
        b.iter(|| write_plain(dir.path(), &dispatches, &misses))
    });
    group.finish();
}

fn main() {
    side_by_side_recording();
    side_by_side_flush();
    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&mut criterion);
    criterion.final_summary();
}
