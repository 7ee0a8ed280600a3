//! `jitseam run` refuses every size it cannot honour with a message, never a panic (exit 101), an
//! abort or a signal: shapes that overflow, shapes past the host budget, input files of the wrong
//! size, `--view`s whose reach overflows or leaves the budget, in any combination.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use proptest::prelude::*;

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs the scalar f32 add fixture with `shape` and, if given, an input file of `file_bytes`
/// bytes for both inputs; answers the exit code (or a description of the signal) and stderr.
fn run_add(
    shape: &str,
    file_bytes: Option<usize>,
    extra: &[&str],
) -> (Result<i32, String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run".to_owned(),
        fixture("add_f32_scalar.ptx"),
        "--entry".to_owned(),
        "baracuda_gen_add_f32_scalar".to_owned(),
        "--abi".to_owned(),
        "scalar".to_owned(),
        "--inputs".to_owned(),
        "f32,f32".to_owned(),
        "--outputs".to_owned(),
        "f32".to_owned(),
        format!("--shape={shape}"),
        "--output-dir".to_owned(),
        dir.path().display().to_string(),
    ];
    if let Some(bytes) = file_bytes {
        let file = dir.path().join("in.bin");
        std::fs::write(&file, vec![0u8; bytes]).unwrap();
        for _ in 0..2 {
            args.push("--input-file".to_owned());
            args.push(file.display().to_string());
        }
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(&args)
        .output()
        .expect("run jitseam");
    let status = match (out.status.code(), out.status.signal()) {
        (Some(code), _) => Ok(code),
        (None, signal) => Err(format!("killed by signal {signal:?}")),
    };
    (status, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_refused(shape: &str, file_bytes: Option<usize>, needle: &str) {
    let (status, stderr) = run_add(shape, file_bytes, &[]);
    assert_eq!(status, Ok(2), "shape {shape}: {stderr}");
    assert!(stderr.contains(needle), "shape {shape}: {stderr}");
}

#[test]
fn a_shape_past_usize_is_refused_not_panicked_on() {
    assert_refused("18446744073709551615", None, "more than the");
    assert_refused("4294967296,4294967296", None, "overflows");
}

#[test]
fn a_shape_past_the_host_budget_is_refused_before_allocating() {
    assert_refused("10000000000", None, "--max-host-bytes");
    let (status, stderr) = run_add("1000", None, &["--max-host-bytes", "8000"]);
    assert_eq!(status, Ok(2), "{stderr}");
    assert!(stderr.contains("12000 host bytes"), "{stderr}");
}

#[test]
fn a_short_file_never_passes_for_a_huge_shape() {
    // 2^62 f32 would be 2^64 bytes, which wraps to 0 in unchecked arithmetic.
    assert_refused("4611686018427387904", Some(4), "more than the");
    assert_refused(
        "1000",
        Some(4),
        "has 4 bytes; 1000 elements of f32 need 4000",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_shape_or_file_size_ends_in_a_panic_or_a_signal(
        shape in prop::collection::vec(
            prop_oneof![Just(0u64), 1u64..100, Just(u64::MAX), 1u64 << 20..1u64 << 40],
            1..3,
        ),
        file_bytes in prop::option::of(prop_oneof![Just(0usize), 1usize..64, Just(4000)]),
    ) {
        let shape: Vec<String> = shape.iter().map(u64::to_string).collect();
        let (status, stderr) = run_add(&shape.join(","), file_bytes, &[]);
        prop_assert!(matches!(status, Ok(0..=2)), "shape {shape:?}, file {file_bytes:?}: {status:?} {stderr}");
    }
}

/// A `--view` value for operand 0..4 (the add has 3), mostly near sensible, sometimes extreme.
fn view() -> impl Strategy<Value = String> {
    let extent = prop_oneof![Just(0u64), 1u64..6, Just(u64::MAX), 1u64 << 30..1u64 << 62];
    let stride = prop_oneof![
        -4i64..5,
        Just(i64::MAX),
        Just(i64::MIN),
        (1i64 << 20)..(1i64 << 40),
    ];
    (
        0usize..4,
        prop_oneof![Just(0u64), 0u64..40, Just(u64::MAX)],
        prop::collection::vec((extent, stride), 1..4),
    )
        .prop_map(|(operand, offset, axes)| {
            let shape: Vec<String> = axes.iter().map(|(e, _)| e.to_string()).collect();
            let strides: Vec<String> = axes.iter().map(|(_, s)| s.to_string()).collect();
            format!(
                "{operand}:{offset}:{}:{}",
                shape.join(","),
                strides.join(",")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_view_ends_in_a_panic_or_a_signal(
        views in prop::collection::vec(view(), 1..3),
        shape in prop_oneof![Just(0u64), 1u64..50],
        file_bytes in prop::option::of(prop_oneof![Just(0usize), Just(16), Just(400)]),
    ) {
        let mut extra = vec!["--max-host-bytes".to_owned(), "1000000".to_owned()];
        for v in &views {
            extra.push(format!("--view={v}"));
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (status, stderr) = run_add(&shape.to_string(), file_bytes, &extra);
        prop_assert!(
            matches!(status, Ok(0..=2)),
            "views {views:?}, shape {shape}, file {file_bytes:?}: {status:?} {stderr}"
        );
    }
}
