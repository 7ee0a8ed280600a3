//! `jitseam run` as a user runs it: generated and file inputs, outputs written as raw
//! little-endian files, refusals with their reason, and a kernel that never ends stopped at its
//! budget of steps (by default scaled with the launch's threads, `--budget` to set it) or at
//! `--timeout`, naming the line it was spinning at.

use std::process::Command;

use tempfile::TempDir;

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory removed when the test ends, pass or fail.
fn scratch(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("jitseam-run-{name}-"))
        .tempdir()
        .unwrap()
}

fn jitseam(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(args)
        .output()
        .expect("run jitseam");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `jitseam run` of the two-output add/sub fixture on 300 generated elements, with `extra`.
fn run_add_sub(dir: &TempDir, extra: &[&str]) -> (i32, String) {
    let fixture = fixture("add_sub_f32_mo2_scalar.ptx");
    let mut args = vec![
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
    ];
    args.extend_from_slice(extra);
    jitseam(&args)
}

#[test]
fn run_with_iota_inputs_writes_the_output_file() {
    let dir = scratch("iota");
    let (code, text) = run_add_sub(&dir, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("on emulator: 300 elements"), "{text}");
    let sum = f32s(&std::fs::read(dir.path().join("out0.bin")).unwrap());
    let diff = f32s(&std::fs::read(dir.path().join("out1.bin")).unwrap());
    assert_eq!(sum, (0..300).map(|i| 2.0 * i as f32).collect::<Vec<_>>());
    assert_eq!(diff, vec![0.0; 300]);
}

#[test]
fn run_reads_raw_input_files_and_params() {
    let dir = scratch("files");
    let x: Vec<u8> = [1.0f32, -2.0, 3.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let input = dir.path().join("x.bin");
    std::fs::write(&input, &x).unwrap();
    let (code, text) = jitseam(&[
        "run",
        &fixture("add_scalar_mul_scalar_f32_scalar.ptx"),
        "--entry",
        "baracuda_gen_add_scalar_mul_scalar_f32_scalar",
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
        "--params",
        "f32,f32",
        "--values",
        "2,-1",
        "--shape",
        "3",
        "--input-file",
        input.to_str().unwrap(),
        "--output-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let out = f32s(&std::fs::read(dir.path().join("out0.bin")).unwrap());
    assert_eq!(out, vec![1.0, -5.0, 6.0]);
}

#[test]
fn run_refuses_a_short_input_file_and_an_unsupported_kernel() {
    let dir = scratch("refuse");
    let input = dir.path().join("short.bin");
    std::fs::write(&input, [0u8; 8]).unwrap();
    let (code, text) = jitseam(&[
        "run",
        &fixture("relu_f32_scalar.ptx"),
        "--entry",
        "baracuda_gen_relu_f32_scalar",
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
        "--shape",
        "4",
        "--input-file",
        input.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(
        text.contains("has 8 bytes; 4 elements of f32 need 16"),
        "{text}"
    );

    let ptx = dir.path().join("bar.ptx");
    std::fs::write(
        &ptx,
        ".version 8.8\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 a, \
         .param .u64 o, .param .u64 n)\n{\nbarrier.cluster.arrive;\nret;\n}\n",
    )
    .unwrap();
    let (code, text) = jitseam(&[
        "run",
        ptx.to_str().unwrap(),
        "--entry",
        "k",
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
        "--shape",
        "4",
        "--output-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("`barrier.cluster.arrive` is not supported by the emulator"),
        "{text}"
    );
}

/// `jitseam run` of the rank-2 strided add on a 4 × 3 shape, with `extra` flags.
fn run_strided_add(dir: &TempDir, extra: &[&str]) -> (i32, String) {
    let out_dir = dir.path().to_str().unwrap().to_owned();
    let mut args = vec![
        "run",
        "--entry",
        "baracuda_gen_add_f32_strided_r2",
        "--abi",
        "strided:2",
        "--inputs",
        "f32,f32",
        "--outputs",
        "f32",
        "--shape",
        "4,3",
        "--output-dir",
        &out_dir,
    ];
    let ptx = fixture("add_f32_strided_r2.ptx");
    args.insert(1, &ptx);
    args.extend_from_slice(extra);
    jitseam(&args)
}

#[test]
fn run_reads_an_input_through_a_transposed_view() {
    let dir = scratch("view");
    // Input 0 is a 3 × 4 row-major buffer (iota: element (r, c) holds 4r + c) read as its
    // 4 × 3 transpose: element (i, j) of the view is buffer[i + 4j].
    let (code, text) = run_strided_add(&dir, &["--view", "0:0:4,3:1,4"]);
    assert_eq!(code, 0, "{text}");
    let out = f32s(&std::fs::read(dir.path().join("out0.bin")).unwrap());
    // Input 1 is dense 4 × 3 iota: element (i, j) holds 3i + j.
    let want: Vec<f32> = (0..4)
        .flat_map(|i| (0..3).map(move |j| (i + 4 * j + 3 * i + j) as f32))
        .collect();
    assert_eq!(out, want);

    // An output view with a reversed axis and an offset: the buffer holds 2 + 11 + 1 elements,
    // the view writes elements 2..14 walking its columns backwards.
    let dir = scratch("view-out");
    let (code, text) = run_strided_add(&dir, &["--view", "2:4:4,3:3,-1"]);
    assert_eq!(code, 0, "{text}");
    let out = f32s(&std::fs::read(dir.path().join("out0.bin")).unwrap());
    assert_eq!(out.len(), 14);
    assert!(out[..2].iter().all(|x| x.is_nan()), "{out:?}");
    for i in 0..4 {
        for j in 0..3 {
            // Both inputs are dense iota: (i, j) holds 3i + j in each.
            assert_eq!(out[4 + 3 * i - j], (2 * (3 * i + j)) as f32, "({i}, {j})");
        }
    }
}

#[test]
fn run_refuses_views_it_cannot_size_or_place() {
    let dir = scratch("view-refuse");
    for (view, needle) in [
        ("0:0:3,3:-1,1", "before its buffer's start"),
        ("5:0:4,3:3,1", "the kernel has 3 operands"),
        ("0:0:4,3:3", "2 extents but 1 strides"),
        ("0:x:4:1", "offset"),
        ("0:0:4,3:4611686018427387904,1", "--max-host-bytes"),
        (
            "0:18446744073709551615:4,3:9223372036854775807,1",
            "overflows",
        ),
    ] {
        let (code, text) = run_strided_add(&dir, &["--view", view]);
        assert_eq!(code, 2, "{view}: {text}");
        assert!(text.contains(needle), "{view}: {text}");
    }
    let (code, text) = run_strided_add(&dir, &["--view", "0:0:4,3:3,1", "--view", "0:0:4,3:3,1"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("two --view for operand 0"), "{text}");
    // A view the launch check refuses: its shape is not the launch's.
    let (code, text) = run_strided_add(&dir, &["--view", "1:0:3,4:4,1"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("shape"), "{text}");
}

#[test]
fn run_unverified_shows_the_memory_checker_catching_a_store_into_an_input() {
    let dir = scratch("unverified");
    let ptx = dir.path().join("poke.ptx");
    std::fs::write(
        &ptx,
        ".version 8.8\n.target sm_80\n.address_size 64\n.visible .entry poke(.param .u64 a, \
         .param .u64 o, .param .u64 n)\n{\n.reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n\
         ld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd2, %rd1;\nmov.f32 %f1, 0f3F800000;\n\
         st.global.f32 [%rd2], %f1;\nret;\n}\n",
    )
    .unwrap();
    let args = |extra: &'static str| {
        let mut args = vec![
            "run".to_owned(),
            ptx.to_str().unwrap().to_owned(),
            "--entry".to_owned(),
            "poke".to_owned(),
            "--abi".to_owned(),
            "scalar".to_owned(),
            "--inputs".to_owned(),
            "f32".to_owned(),
            "--outputs".to_owned(),
            "f32".to_owned(),
            "--shape".to_owned(),
            "8".to_owned(),
            "--output-dir".to_owned(),
            dir.path().to_str().unwrap().to_owned(),
            "--unverified".to_owned(),
        ];
        if !extra.is_empty() {
            args.push(extra.to_owned());
        }
        args
    };
    fn to_strs(args: &[String]) -> Vec<&str> {
        args.iter().map(String::as_str).collect()
    }
    let (code, text) = jitseam(&to_strs(&args("")));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("write to input"), "{text}");
    assert!(text.contains("kernel `poke`"), "{text}");
    // The emulator only.
    let (code, text) = jitseam(&to_strs(&args("--best")));
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("--best") && text.contains("--unverified"),
        "{text}"
    );
    // The help says what it is for.
    let (code, text) = jitseam(&["run", "--help"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("For debugging"), "{text}");
}

/// A scalar-abi kernel whose every thread spins at line 6 (`L: bra L;`).
const SPIN: &str = ".version 8.8\n.target sm_80\n.address_size 64\n\
    .visible .entry spin(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
    L: bra L;\nret;\n}\n";

/// `jitseam run` of `SPIN` on 4 elements, with `extra` flags.
fn run_spin(extra: &[&str]) -> (i32, String) {
    let dir = scratch("limits");
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
    let dir = scratch("limits-ok");
    let (code, text) = run_add_sub(&dir, &["--budget", "100000", "--timeout", "60"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("on emulator: 300 elements"), "{text}");
}
