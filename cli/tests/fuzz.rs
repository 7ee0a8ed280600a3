//! No command line crashes or hangs `jitseam`: the deterministic mutation fuzzer of
//! `tests/common/fuzz.rs` over the binary's argument paths — `inspect` (with `--abi`), `check`
//! (with `--signature`), `run` (shapes, views, values, fills, launch geometry), `telemetry
//! summary` over mutated flush directories, and arbitrary words. Each case spawns the built
//! binary, which must exit with 0 (done), 1 or 2 (refused, with a message) within its time
//! limit: a panic (exit 101), a signal (an abort, a stack overflow) or a hang fails.
//!
//! Kernels that `run` launches are the fixtures unmutated (only their arguments are fuzzed), so
//! that a mutated kernel's endless loop on the emulator is not mistaken for an argument bug;
//! `inspect` and `check` read mutated kernels too.

#[allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]
#[path = "../../tests/common/fixtures.rs"]
mod fixtures;
#[allow(dead_code, unreachable_pub, clippy::panic)]
#[path = "../../tests/common/fuzz.rs"]
mod fuzz;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fuzz::{Campaign, Rng, Verdict, mutate};
use jitseam::AbiKind;
use jitseam::telemetry::{
    DeclineRecord, DispatchRecord, HwStamp, ImplId, MissRecord, SinkConfig, StructureKey,
    TelemetrySink,
};

const CLI_CASES: usize = 150;

/// How long one run of the binary may take before it counts as hung.
const CHILD_LIMIT: Duration = Duration::from_secs(10);

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A file the case writes before it runs: its name in the case's directory and its bytes.
#[derive(Debug, Clone)]
struct File {
    name: String,
    bytes: fuzz::Bytes,
}

#[derive(Debug, Clone)]
struct CliCase {
    /// Arguments; `{dir}` stands for the case's scratch directory.
    args: Vec<String>,
    files: Vec<File>,
    /// Telemetry directories to flush into `{dir}/<name>` first: (name, sink seed).
    telemetry: Vec<(String, u64)>,
}

const CLI_DICT: &[&[u8]] = &[
    b",",
    b":",
    b"-",
    b"--",
    b"0",
    b"1",
    b"-1",
    b"4294967296",
    b"18446744073709551615",
    b"f32",
    b"f16",
    b"u8",
    b"i64",
    b"scalar",
    b"vectorized:4",
    b"strided:9",
    b"custom",
    b"[",
    b"]",
    b"(",
    b"div_ceil(n, 0)",
    b"n",
    b"grid.x",
    b" ",
    b"=",
];

/// An argument value as written, or mutated now and then (without NUL bytes, which no
/// argument can hold).
fn value(rng: &mut Rng, text: &str) -> String {
    if rng.one_in(4) {
        let mut bytes = mutate(rng, text.as_bytes(), CLI_DICT, &[], 4096);
        bytes.retain(|&b| b != 0);
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        text.to_owned()
    }
}

fn dtypes(kinds: &[jitseam::ElementKind]) -> String {
    kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

/// The flags that describe a fixture's ABI.
fn abi_flags(rng: &mut Rng, fixture: &fixtures::Fixture) -> Vec<String> {
    let spec = &fixture.spec;
    vec![
        "--abi".to_owned(),
        value(rng, &spec.abi.to_string()),
        "--inputs".to_owned(),
        value(rng, &dtypes(&spec.inputs)),
        "--outputs".to_owned(),
        value(rng, &dtypes(&spec.outputs)),
        "--params".to_owned(),
        value(rng, &dtypes(&spec.params)),
    ]
}

/// The kernel file a command reads: a fixture as PTX, cubin or fatbin, mutated when `mutated`.
fn kernel_file(
    rng: &mut Rng,
    fixture: &fixtures::Fixture,
    mutated: bool,
) -> (String, Option<File>) {
    let stem = fixture.file.trim_end_matches(".ptx");
    let path = match rng.below(4) {
        0 => fixture_dir().join(format!("cubin/{stem}.sm_90.cubin")),
        1 => fixture_dir().join(format!("fatbin/{stem}.fatbin")),
        _ => fixture_dir().join(fixture.file),
    };
    if !mutated {
        return (path.display().to_string(), None);
    }
    let bytes = std::fs::read(&path).unwrap_or_default();
    let name = format!(
        "kernel.{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or("ptx")
    );
    let file = File {
        name: name.clone(),
        bytes: fuzz::Bytes(mutate(rng, &bytes, CLI_DICT, &[], 1 << 20)),
    };
    (format!("{{dir}}/{name}"), Some(file))
}

fn shape_for(rng: &mut Rng, abi: &AbiKind) -> String {
    match abi {
        AbiKind::Strided { rank } => (0..*rank)
            .map(|_| (1 + rng.below(6)).to_string())
            .collect::<Vec<_>>()
            .join(","),
        AbiKind::Vectorized { width } => (*width as usize * (1 + rng.below(40))).to_string(),
        _ => (1 + rng.below(300)).to_string(),
    }
}

fn make_case(rng: &mut Rng) -> CliCase {
    let fixture = rng.pick(fixtures::all()).clone();
    let mut files = Vec::new();
    let mut telemetry = Vec::new();
    let mut args: Vec<String> = Vec::new();
    match rng.below(6) {
        0 => {
            let mutated = rng.one_in(2);
            let (file, written) = kernel_file(rng, &fixture, mutated);
            files.extend(written);
            args.extend(["inspect".to_owned(), file]);
            if rng.one_in(2) {
                args.push("--json".to_owned());
            }
            if rng.one_in(2) {
                args.extend(abi_flags(rng, &fixture));
            }
        }
        1 => {
            let mutated = rng.one_in(2);
            let (file, written) = kernel_file(rng, &fixture, mutated);
            files.extend(written);
            args.extend(["check".to_owned(), file, "--entry".to_owned()]);
            args.push(value(rng, fixture.entry));
            if rng.one_in(4) {
                let signature =
                    "out: out f32[n], x: in f32[div_ceil(n, 4) * block.x], n: i32, a: f32";
                args.extend(["--signature".to_owned(), value(rng, signature)]);
                if rng.one_in(2) {
                    args.extend(["--covers".to_owned(), value(rng, "n")]);
                }
            } else {
                args.extend(abi_flags(rng, &fixture));
            }
            if rng.one_in(2) {
                args.push("--json".to_owned());
            }
        }
        2 | 3 => {
            let (file, _) = kernel_file(rng, &fixture, false);
            args.extend(["run".to_owned(), file, "--entry".to_owned()]);
            args.push(value(rng, fixture.entry));
            args.extend(abi_flags(rng, &fixture));
            let shape = shape_for(rng, &fixture.spec.abi);
            args.extend(["--shape".to_owned(), value(rng, &shape)]);
            if !fixture.spec.params.is_empty() || rng.one_in(4) {
                let values = vec!["1.5"; fixture.spec.params.len()].join(",");
                args.extend(["--values".to_owned(), value(rng, &values)]);
            }
            if rng.one_in(3) {
                let operands = fixture.spec.inputs.len() + fixture.spec.outputs.len();
                let view = format!("{}:{}:{}:1", rng.below(operands + 1), rng.below(4), shape);
                args.extend(["--view".to_owned(), value(rng, &view)]);
            }
            if rng.one_in(3) {
                let fill = *rng.pick(&["iota", "random", "zeros"]);
                args.extend(["--fill".to_owned(), value(rng, fill)]);
            }
            if rng.one_in(4) {
                args.extend([
                    "--grid".to_owned(),
                    value(rng, "2"),
                    "--block".to_owned(),
                    value(rng, "32"),
                ]);
            }
            if rng.one_in(5) {
                args.push((*rng.pick(&["--best", "--unverified"])).to_owned());
            }
            if rng.one_in(4) {
                files.push(File {
                    name: "input.bin".to_owned(),
                    bytes: fuzz::Bytes(vec![0x3f; rng.below(2048)]),
                });
                args.extend(["--input-file".to_owned(), "{dir}/input.bin".to_owned()]);
            }
            // Whatever the shape says, allocations stay small.
            let cap = *rng.pick(&["1048576", "0", "16"]);
            args.extend([
                "--max-host-bytes".to_owned(),
                cap.to_owned(),
                "--output-dir".to_owned(),
                "{dir}".to_owned(),
            ]);
        }
        4 => {
            args.extend(["telemetry".to_owned(), "summary".to_owned()]);
            for i in 0..1 + rng.below(3) {
                let name = format!("telemetry{i}");
                telemetry.push((name.clone(), rng.next_u64()));
                args.push(format!("{{dir}}/{name}"));
                if rng.one_in(3) {
                    // A file of it overwritten with garbage, or made into something else.
                    let file = *rng.pick(&["current.json", "dispatches.jsonl", "nested/x"]);
                    files.push(File {
                        name: format!("{name}/{file}"),
                        bytes: fuzz::Bytes(mutate(rng, b"{\"schema\":1}\n", CLI_DICT, &[], 4096)),
                    });
                }
            }
            if rng.one_in(2) {
                args.extend(["--top".to_owned(), value(rng, "3")]);
            }
            if rng.one_in(2) {
                args.push("--json".to_owned());
            }
            if rng.one_in(3) {
                args.extend(["--max-file-bytes".to_owned(), value(rng, "512")]);
            }
        }
        _ => {
            // Words in any order.
            let words = [
                "inspect",
                "check",
                "run",
                "telemetry",
                "summary",
                "compile",
                "--json",
                "--abi",
                "--entry",
                "--shape",
                "--view",
                "--help",
                "--version",
                "-h",
                "--",
                "-",
                "{dir}",
                "--signature",
                "--covers",
                "--grid",
                "--block",
                "--smem",
                "--top",
                "x",
            ];
            for _ in 0..rng.below(8) {
                let word = *rng.pick(&words);
                args.push(value(rng, word));
            }
        }
    }
    CliCase {
        args,
        files,
        telemetry,
    }
}

fn flush(dir: &Path, seed: u64) {
    let mut rng = Rng::new(seed);
    let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_fsync(false).with_max_cells(4));
    let hw = HwStamp::gpu((9, 0), "H200", "570");
    let kernel = |name: &str| ImplId::new("cuda", name, ["f32"], "synth", 1);
    for i in 0..1 + rng.below(6) {
        let count = *rng.pick(&[1, 7, u64::MAX / 2 + 1, u64::MAX]);
        let key = StructureKey::new(format!("k{}", i % 3));
        sink.record_dispatch(
            &DispatchRecord::new(Some(key.clone()), kernel("add"), hw.clone()).with_count(count),
        );
        sink.record_miss(&MissRecord::new(key, kernel("generic"), hw.clone()).with_count(count));
        sink.record_decline(&DeclineRecord::new(
            None,
            kernel("add"),
            "aliasing",
            hw.clone(),
        ));
    }
    let _ = sink.flush_all(dir);
}

/// Spawns the binary for `case` in a fresh scratch directory and waits at most
/// [`CHILD_LIMIT`] for it.
fn run_case(case: CliCase) -> Verdict {
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let dir = scratch.path();
    for (name, seed) in &case.telemetry {
        flush(&dir.join(name), *seed);
    }
    for file in &case.files {
        let path = dir.join(&file.name);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::write(&path, &file.bytes.0);
    }
    let shown = dir.display().to_string();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("{dir}", &shown))
        .collect();
    // Into a file, not a pipe: a full pipe would block the child and read as a hang.
    let stderr_path = dir.join(".stderr");
    let stderr_file = std::fs::File::create(&stderr_path).expect("a stderr file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr_file)
        .spawn()
        .expect("the binary starts");
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < CHILD_LIMIT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`jitseam {}` ran past {CHILD_LIMIT:?}", args.join(" "));
            }
        }
    };
    let stderr = std::fs::read(&stderr_path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    assert!(
        !stderr.contains("panicked at"),
        "`jitseam {}` panicked: {stderr}",
        args.join(" ")
    );
    match status.code() {
        Some(0) => Verdict::Accepted,
        Some(1 | 2) => Verdict::Refused,
        other => panic!(
            "`jitseam {}` exited with {other:?}: {stderr}",
            args.join(" ")
        ),
    }
}

#[test]
fn command_lines() {
    Campaign {
        name: "cli",
        ci_cases: CLI_CASES,
        suite_ci_cases: CLI_CASES,
        stack: 256 * 1024,
        min_case_limit: CHILD_LIMIT + Duration::from_secs(5),
    }
    .run(make_case, run_case);
}
