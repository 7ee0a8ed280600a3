//! `jitseam check` and `jitseam run` for a custom-abi kernel (`--signature`), as a user runs them.

use std::process::Command;

const PTX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/custom/custom.ptx"
);
const SHARED_PTX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/custom_shared/custom_shared.ptx"
);
const SAXPY: &str = "out: out f32[n], x: in f32[n], n: i32, a: f32";
const MATMUL: &str =
    "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32";

fn jitseam(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(args)
        .output()
        .expect("run jitseam");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `jitseam check` of the saxpy entry with `signature` covering `covers`.
fn check_saxpy(signature: &str, covers: &str) -> (i32, String) {
    jitseam(&[
        "check",
        PTX,
        "--entry",
        "saxpy_out_first",
        "--signature",
        signature,
        "--covers",
        covers,
    ])
}

#[test]
fn check_matches_the_param_list_and_proves_the_body() {
    let (code, text) = check_saxpy(SAXPY, "n");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("parameter list matches"), "{text}");
    assert!(text.contains("body proven safe"), "{text}");
    assert!(text.contains("every launch checks"), "{text}");
    // NVRTC's matmul: an unrolled loop and its remainder, proven too.
    let (code, text) = jitseam(&["check", PTX, "--entry", "matmul", "--signature", MATMUL]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("body proven safe"), "{text}");
    // A warp shuffle is not modelled by the verifier: the body is not proven, and the check
    // fails, naming the line.
    let (code, text) = jitseam(&[
        "check",
        SHARED_PTX,
        "--entry",
        "warp_sum",
        "--signature",
        "x: in f32[n], partial: out f32[div_ceil(grid.x * block.x, 32)], n: u32",
        "--no-guards",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("body not proven"), "{text}");
    assert!(text.contains("line "), "{text}");
    // `n` as a 64-bit integer does not match the entry's `.u32`.
    let (code, text) = jitseam(&[
        "check",
        PTX,
        "--entry",
        "saxpy_out_first",
        "--signature",
        "out: out f32[n], x: in f32[n], n: i64, a: f32",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("parameter 2"), "{text}");
    assert!(text.contains("long long n"), "{text}");
}

#[test]
fn run_launches_on_a_2d_grid_and_refuses_a_block_over_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().to_string_lossy().into_owned();
    let (code, text) = jitseam(&[
        "run",
        PTX,
        "--entry",
        "matmul",
        "--signature",
        MATMUL,
        "--values",
        "4,3,2",
        "--grid",
        "1,1",
        "--block",
        "16,16",
        "--unverified",
        "--output-dir",
        &out_dir,
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("grid [1, 1, 1], block [16, 16, 1]"), "{text}");
    let bytes = std::fs::read(dir.path().join("out0.bin")).expect("out0.bin");
    assert_eq!(bytes.len(), 4 * 3 * 4, "c holds m * n = 12 floats");
    let (code, text) = jitseam(&[
        "run",
        PTX,
        "--entry",
        "matmul",
        "--signature",
        MATMUL,
        "--values",
        "4,3,2",
        "--grid",
        "1",
        "--block",
        "2048",
        "--unverified",
        "--output-dir",
        &out_dir,
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("block.x = 2048 exceeds the device's limit of 1024"),
        "{text}"
    );
}

/// A signature nested 20,000 levels deep (the input of the report that found the extent
/// parser's overflow), in an extent and in `--covers`, is refused with the limit it passes.
#[test]
fn a_deeply_nested_signature_is_refused_by_its_limit() {
    let nested = format!("{}n{}", "(".repeat(20_000), ")".repeat(20_000));
    let signature = format!("out: out f32[{nested}], x: in f32[n], n: i32, a: f32");
    for (signature, covers) in [(signature.as_str(), "n"), (SAXPY, nested.as_str())] {
        let (code, text) = check_saxpy(signature, covers);
        assert_eq!(code, 2, "{text}");
        assert!(
            text.contains("nests parentheses and calls more than 32 levels deep"),
            "{text}"
        );
    }
}

/// A body written for a 16 × 16 tile: `check` proves it only with the block declared after the
/// signature (`; block = (16, 16, 1)`), and `run --unverified` refuses any other block before
/// the device sees it, naming both shapes.
#[test]
fn a_declared_block_is_proven_and_checked_at_every_launch() {
    const TILE_PTX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/shapes/tile.ptx"
    );
    const TILE: &str = "out: out f32[256 * grid.x], x: in f32[256 * grid.x]";
    let declared = format!("{TILE}; block = (16, 16, 1)");
    let check = |signature: &str| {
        jitseam(&[
            "check",
            TILE_PTX,
            "--entry",
            "tile_transpose_2d",
            "--signature",
            signature,
            "--no-guards",
        ])
    };
    let (code, text) = check(&declared);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("body proven safe"), "{text}");
    let (code, text) = check(TILE);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("body not proven"), "{text}");
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().to_string_lossy().into_owned();
    let run = |block: &str| {
        jitseam(&[
            "run",
            TILE_PTX,
            "--entry",
            "tile_transpose_2d",
            "--signature",
            &declared,
            "--grid",
            "2",
            "--block",
            block,
            "--unverified",
            "--output-dir",
            &out_dir,
        ])
    };
    let (code, text) = run("32,8");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("the block is (32, 8, 1), the kernel declares `block = (16, 16, 1)`"),
        "{text}"
    );
    let (code, text) = run("16,16");
    assert_eq!(code, 0, "{text}");
    let bytes = std::fs::read(dir.path().join("out0.bin")).expect("out0.bin");
    assert_eq!(bytes.len(), 4 * 512, "out holds 256 * grid.x floats");
}
