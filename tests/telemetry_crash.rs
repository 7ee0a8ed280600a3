//! Flush safety: a process killed at any instant, or a write that fails, never leaves a torn
//! file or a mixed set of telemetry files.
//!
//! The crash test re-executes this test binary as a child that flushes in a loop (selected by
//! an environment variable and an exact test-name filter), kills it with SIGKILL after a random
//! delay, and checks the set the manifest names: absent (no flush finished yet), or every file
//! byte-for-byte the complete output of one and the same generation, which is also what the
//! reader returns. What a killed child left behind is removed by the next flush.

// A test reports failure by panicking.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jitseam::telemetry::reader::current_set;
use jitseam::telemetry::{
    Candidate, DISPATCHES_FILE, DispatchRecord, HwStamp, ImplId, MANIFEST_FILE, MISSES_FILE,
    MissRecord, OVERFLOW_FILE, SinkConfig, StructureKey, TelemetryReport, TelemetrySink,
};

const CHILD_DIR_VAR: &str = "JITSEAM_TELEMETRY_CRASH_CHILD_DIR";
const CHILD_FSYNC_VAR: &str = "JITSEAM_TELEMETRY_CRASH_CHILD_FSYNC";
const SEED_VAR: &str = "JITSEAM_TELEMETRY_CRASH_SEED";
const CHILD_TEST: &str = "crash_child_flushes_forever";
const TRIALS: usize = 240;
/// Spans a few flushes of the (unoptimized) child, with or without fsync.
const MAX_DELAY_MICROS: u64 = 80_000;
/// Cells that fit; one more dispatch cell per generation overflows.
const CELLS: usize = 200;

fn hw() -> HwStamp {
    HwStamp::gpu((9, 0), "NVIDIA H200", "570.86.10")
}

fn kernel(i: usize) -> ImplId {
    ImplId::new(
        "cuda",
        "fused_elementwise",
        ["f32", "f32"],
        format!("synth-{i}"),
        i as u64,
    )
}

/// The sink of one generation: its line count and every count depend on `generation`, so a
/// file mixing two generations, or cut anywhere, cannot equal any generation's output.
fn generation_sink(generation: u64, fsync: bool) -> TelemetrySink {
    let sink =
        TelemetrySink::with_config(SinkConfig::DEFAULT.with_max_cells(CELLS).with_fsync(fsync));
    let lines = CELLS - (generation as usize % 50);
    for i in 0..lines {
        let record = DispatchRecord::new(
            Some(StructureKey::new(format!("ew:{i:04}"))),
            kernel(i),
            hw(),
        )
        .with_candidates(vec![Candidate {
            impl_id: kernel(i + 1),
            latency_ns: Some(generation * 1_000 + i as u64),
        }])
        .with_count(generation);
        sink.record_dispatch(&record);
        if i % 2 == 0 {
            sink.record_miss(
                &MissRecord::new(StructureKey::new(format!("mm:{i:04}")), kernel(i), hw())
                    .with_count(generation),
            );
        }
    }
    for i in lines..=CELLS {
        sink.record_dispatch(&DispatchRecord::new(None, kernel(i), hw()).with_count(generation));
    }
    sink
}

fn to_lines<T: serde::Serialize>(records: &[T]) -> String {
    records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect()
}

/// The child's body. Run normally, the variable is unset and this test passes at once.
#[test]
fn crash_child_flushes_forever() {
    let Some(dir) = std::env::var_os(CHILD_DIR_VAR) else {
        return;
    };
    // Bounded, in case the parent dies before it can kill us.
    let deadline = Instant::now() + Duration::from_secs(20);
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_micros() as u64);
    let fsync = std::env::var_os(CHILD_FSYNC_VAR).is_some_and(|v| v == "1");
    let mut generation = start;
    // Tell the parent the loop starts, so its random delay lands in flushes, not in start-up.
    println!("ready");
    while Instant::now() < deadline {
        generation += 1;
        generation_sink(generation, fsync)
            .flush_all(Path::new(&dir))
            .expect("child flush");
    }
}

/// xorshift64*: reproducible from the printed seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The complete file contents of each generation seen so far, by file name.
#[derive(Default)]
struct Expected(std::collections::HashMap<u64, [String; 3]>);

impl Expected {
    fn of(&mut self, generation: u64, name: &str) -> &str {
        let files = self.0.entry(generation).or_insert_with(|| {
            let sink = generation_sink(generation, false);
            [
                to_lines(&sink.dispatch_records()),
                to_lines(&sink.miss_records()),
                to_lines(&[sink.overflow()]),
            ]
        });
        match name {
            DISPATCHES_FILE => &files[0],
            MISSES_FILE => &files[1],
            _ => &files[2],
        }
    }
}

/// Returns the generation a file belongs to, or `None` if absent; panics on a torn file.
fn check_file(dir: &Path, name: &str, trial: usize, expected: &mut Expected) -> Option<u64> {
    let text = match fs::read(dir.join(name)) {
        Ok(bytes) => String::from_utf8(bytes)
            .unwrap_or_else(|_| panic!("trial {trial}: {name} is not UTF-8: torn write")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Err(error) => panic!("trial {trial}: cannot read {name}: {error}"),
    };
    let first = text
        .lines()
        .next()
        .unwrap_or_else(|| panic!("trial {trial}: {name} exists but is empty: torn write"));
    let value: serde_json::Value = serde_json::from_str(first)
        .unwrap_or_else(|e| panic!("trial {trial}: {name} first line is torn: {e}"));
    let generation = value
        .get("count")
        .or_else(|| value.get("dispatch_records"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("trial {trial}: {name} first line has no count: {first}"));
    let expected = expected.of(generation, name);
    assert!(
        text == *expected,
        "trial {trial}: {name} is not the complete output of generation {generation} \
         ({} bytes, expected {})",
        text.len(),
        expected.len()
    );
    Some(generation)
}

/// Checks the set `dir`'s manifest names: every file the complete output of one generation, the
/// same for all, and the reader's report exactly that. `None` when no flush has finished yet.
fn check_set(dir: &Path, trial: usize, expected: &mut Expected) -> Option<u64> {
    if !dir.join(MANIFEST_FILE).exists() {
        return None;
    }
    let set = current_set(dir).unwrap_or_else(|e| panic!("trial {trial}: manifest: {e}"));
    let generation = check_file(&set, DISPATCHES_FILE, trial, expected)
        .unwrap_or_else(|| panic!("trial {trial}: the current set lacks {DISPATCHES_FILE}"));
    for name in [MISSES_FILE, OVERFLOW_FILE] {
        let other = check_file(&set, name, trial, expected);
        assert_eq!(
            other,
            Some(generation),
            "trial {trial}: {name} of generation {other:?} next to {DISPATCHES_FILE} of \
             {generation}: a mixed set"
        );
    }
    let report = TelemetryReport::read_dir(dir)
        .unwrap_or_else(|e| panic!("trial {trial}: the reader failed: {e}"));
    assert_eq!(
        [
            to_lines(&report.dispatches),
            to_lines(&report.misses),
            to_lines(&[report.overflow])
        ],
        [
            expected.of(generation, DISPATCHES_FILE).to_owned(),
            expected.of(generation, MISSES_FILE).to_owned(),
            expected.of(generation, OVERFLOW_FILE).to_owned(),
        ],
        "trial {trial}: the reader did not read the current set"
    );
    Some(generation)
}

/// Entries of `dir` besides the manifest and the generation it names: what a flush leaves
/// behind (staging directories, temporary manifests, replaced generations).
fn leftovers(dir: &Path) -> Vec<String> {
    let current = current_set(dir)
        .ok()
        .and_then(|set| set.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != MANIFEST_FILE && Some(name) != current.as_ref())
        .collect();
    names.sort();
    names
}

#[test]
fn sigkill_during_flush_never_mixes_a_set() {
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("crash test seed: {seed} (set {SEED_VAR} to replay)");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let mut seen_generations = std::collections::HashSet::new();
    let mut absent = 0;
    let mut left_behind = 0;
    let mut expected = Expected::default();

    for trial in 0..TRIALS {
        let mut child = Command::new(&exe)
            .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR_VAR, dir.path())
            // Half the children fsync, half only rename: both must be crash-atomic.
            .env(CHILD_FSYNC_VAR, if trial % 2 == 0 { "1" } else { "0" })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        if let Some(stdout) = child.stdout.take() {
            let mut stdout = BufReader::new(stdout);
            while !ready.contains("ready") {
                ready.clear();
                if stdout.read_line(&mut ready).unwrap() == 0 {
                    panic!("trial {trial}: child exited before flushing");
                }
            }
        }
        thread::sleep(Duration::from_micros(rng.next() % MAX_DELAY_MICROS));
        // SIGKILL on Unix: no destructor, no buffered write, no cleanup runs in the child.
        child.kill().unwrap();
        child.wait().unwrap();

        match check_set(dir.path(), trial, &mut expected) {
            Some(g) => {
                seen_generations.insert(g);
            }
            None => absent += 1,
        }
        let left = leftovers(dir.path());
        left_behind += usize::from(!left.is_empty());
        // Every so often a live writer flushes: it removes whatever the killed children left,
        // however many of them died before completing a flush of their own.
        if trial % 40 == 39 {
            let generation = 7 + trial as u64;
            generation_sink(generation, false)
                .flush_all(dir.path())
                .unwrap();
            assert_eq!(
                leftovers(dir.path()),
                Vec::<String>::new(),
                "trial {trial}: a flush left what killed writers left (before: {left:?})"
            );
            assert_eq!(
                check_set(dir.path(), trial, &mut expected),
                Some(generation)
            );
        }
    }
    let elapsed = started.elapsed();
    eprintln!(
        "{TRIALS} kills in {elapsed:?}: {} distinct generations seen, {absent} trials before any \
         set, {left_behind} kills left something behind",
        seen_generations.len()
    );
    assert!(
        left_behind > 0,
        "no kill left anything behind: the cleanup went untested"
    );
    // The children must have been killed across many different flushes, not all at start-up.
    assert!(
        seen_generations.len() >= 20,
        "only {} generations completed: kills never reached the flush loop",
        seen_generations.len()
    );
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
}

fn flush_v1(dir: &Path) -> TelemetrySink {
    let sink = generation_sink(1, true);
    sink.flush_all(dir).unwrap();
    sink
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let bytes = if entry.file_type().unwrap().is_file() {
                fs::read(entry.path()).unwrap()
            } else {
                b"<dir>".to_vec()
            };
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn flush_into_a_path_under_a_regular_file_fails() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("not-a-dir");
    fs::write(&file, b"keep me").unwrap();
    let result = generation_sink(2, true).flush_all(&file.join("telemetry"));
    assert!(result.is_err(), "flush under a regular file must fail");
    assert_eq!(fs::read(&file).unwrap(), b"keep me");
}

#[test]
fn flush_into_a_directory_replaced_by_a_file_fails() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("telemetry");
    flush_v1(&dir);
    fs::remove_dir_all(&dir).unwrap();
    fs::write(&dir, b"a file now").unwrap();
    assert!(generation_sink(2, true).flush_all(&dir).is_err());
    assert_eq!(fs::read(&dir).unwrap(), b"a file now");
}

/// A manifest that cannot be replaced fails the flush before anything is written, leaving the
/// previous set as it was and no staging file behind.
#[test]
fn a_failed_flush_leaves_previous_files_intact() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    flush_v1(dir);
    let v1 = current_set(dir).unwrap();
    // Obstruct the manifest with a directory.
    fs::remove_file(dir.join(MANIFEST_FILE)).unwrap();
    fs::create_dir(dir.join(MANIFEST_FILE)).unwrap();
    fs::write(dir.join(MANIFEST_FILE).join("inside"), b"x").unwrap();
    let before = snapshot(dir);

    let error = generation_sink(2, true).flush_all(dir).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::IsADirectory, "{error}");
    assert_eq!(
        snapshot(dir),
        before,
        "a failed flush changed the directory"
    );
    for name in [DISPATCHES_FILE, MISSES_FILE, OVERFLOW_FILE] {
        assert_eq!(
            check_file(&v1, name, 0, &mut Expected::default()),
            Some(1),
            "{name}"
        );
    }

    // Once the obstruction is gone, the next flush succeeds and its set is current.
    fs::remove_dir_all(dir.join(MANIFEST_FILE)).unwrap();
    generation_sink(3, true).flush_all(dir).unwrap();
    assert_eq!(check_set(dir, 0, &mut Expected::default()), Some(3));
}

/// A directory of the first layout (files directly in it, no manifest) still reads, and a
/// flush into it makes a set that the reader then follows.
#[test]
fn a_first_layout_directory_reads_and_is_superseded() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let mut expected = Expected::default();
    for name in [DISPATCHES_FILE, MISSES_FILE, OVERFLOW_FILE] {
        fs::write(dir.join(name), expected.of(4, name)).unwrap();
    }
    assert_eq!(
        to_lines(&TelemetryReport::read_dir(dir).unwrap().dispatches),
        expected.of(4, DISPATCHES_FILE)
    );
    generation_sink(5, true).flush_all(dir).unwrap();
    assert_eq!(check_set(dir, 0, &mut expected), Some(5));
}

/// A reader racing a writer that keeps replacing the set (and removing the generation being
/// read) gets one whole flush, its three parts of one generation, or, when the writer replaces
/// the generation on every one of its attempts (a loaded machine lets the writer run many
/// flushes between two of the reader's steps), gives up with a typed error: never a mix.
#[test]
fn a_reader_racing_flushes_reads_whole_sets() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().to_path_buf();
    generation_sink(1, false).flush_all(&dir).unwrap();
    let writer = {
        let dir = dir.clone();
        thread::spawn(move || {
            for generation in 2..80 {
                generation_sink(generation, false).flush_all(&dir).unwrap();
            }
        })
    };
    let mut expected = Expected::default();
    let (mut reads, mut outrun) = (0, 0);
    while !writer.is_finished() || reads == 0 {
        let report = match TelemetryReport::read_dir(&dir) {
            Ok(report) => report,
            Err(jitseam::telemetry::ReadError::Io { detail, .. })
                if detail.kind() == std::io::ErrorKind::NotFound
                    && detail.to_string().contains("times in a row") =>
            {
                outrun += 1;
                continue;
            }
            Err(e) => panic!("read {reads}: {e}"),
        };
        let generation = report.dispatches[0].count;
        assert_eq!(
            [
                to_lines(&report.dispatches),
                to_lines(&report.misses),
                to_lines(&[report.overflow])
            ],
            [
                expected.of(generation, DISPATCHES_FILE).to_owned(),
                expected.of(generation, MISSES_FILE).to_owned(),
                expected.of(generation, OVERFLOW_FILE).to_owned(),
            ],
            "read {reads}: not one whole flush of generation {generation}"
        );
        reads += 1;
    }
    writer.join().unwrap();
    eprintln!("{reads} whole sets read while 78 flushes ran ({outrun} reads outrun)");
}
