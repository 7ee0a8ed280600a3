//! `jitseam run` on a kernel that never ends: it stops at its budget of steps (by default
//! scaled with the launch's threads, `--budget` to set it) or at `--timeout`, with an error that
//! names the line it was spinning at; a legitimate kernel runs as before under either.

use std::process::Command;

use tempfile::TempDir;

fn jitseam(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(args)
        .output()
        .expect("run jitseam");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// A scalar-abi kernel whose every thread spins at line 6 (`L: bra L;`).
const SPIN: &str = ".version 8.8\n.target sm_80\n.address_size 64\n\
    .visible .entry spin(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
    L: bra L;\nret;\n}\n";

/// `jitseam run` of `SPIN` on 4 elements, with `extra` flags.
fn run_spin(extra: &[&str]) -> (i32, String) {
    let dir: TempDir = tempfile::Builder::new()
        .prefix("jitseam-run-limits-")
        .tempdir()
        .unwrap();
    let ptx = dir.path().join("spin.ptx");
    std::fs::write(&ptx, SPIN).unwrap();
    let out_dir = dir.path().to_str().unwrap().to_owned();
    let mut args = vec![
        "run",
        ptx.to_str().unwrap(),
        "--entry",
        "spin",
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
        "--shape",
        "4",
        "--output-dir",
        &out_dir,
        // The body verifier would refuse a body that never stores its output.
        "--unverified",
    ];
    args.extend_from_slice(extra);
    jitseam(&args)
}

#[test]
fn a_kernel_that_never_ends_stops_at_its_default_budget() {
    let (code, text) = run_spin(&[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!(
            "instruction budget of {} steps exceeded",
            jitseam_emu::interp::MIN_BUDGET
        )),
        "{text}"
    );
    assert!(text.contains("line 6"), "{text}");
}

#[test]
fn budget_sets_the_steps_a_launch_may_run() {
    let (code, text) = run_spin(&["--budget", "100000"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("instruction budget of 100000 steps exceeded"),
        "{text}"
    );
    let (code, text) = run_spin(&["--budget", "lots"]);
    assert_eq!(code, 2, "{text}");
}

#[test]
fn timeout_ends_a_launch_that_its_budget_would_not() {
    let (code, text) = run_spin(&["--budget", &u64::MAX.to_string(), "--timeout", "0.2"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("deadline"), "{text}");
    assert!(text.contains("200ms"), "{text}");
    assert!(text.contains("line 6"), "{text}");
    for bad in ["-1", "soon", "inf"] {
        let (code, text) = run_spin(&["--timeout", bad]);
        assert_eq!(code, 2, "{bad}: {text}");
    }
}

#[test]
fn a_legitimate_kernel_runs_under_a_budget_and_a_timeout() {
    let dir = tempfile::Builder::new()
        .prefix("jitseam-run-limits-ok-")
        .tempdir()
        .unwrap();
    let fixture = format!(
        "{}/../tests/fixtures/add_sub_f32_mo2_scalar.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, text) = jitseam(&[
        "run",
        &fixture,
        "--entry",
        "baracuda_gen_add_sub_f32_mo2_scalar",
        "--abi",
        "scalar",
        "--inputs",
        "f32,f32",
        "--outputs",
        "f32,f32",
        "--shape",
        "300",
        "--output-dir",
        dir.path().to_str().unwrap(),
        "--budget",
        "100000",
        "--timeout",
        "60",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("on emulator: 300 elements"), "{text}");
}
