//! `jitseam run` as a user runs it: generated and file inputs, outputs written as raw
//! little-endian files, refusals with their reason.

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

#[test]
fn run_with_iota_inputs_writes_the_output_file() {
    let dir = scratch("iota");
    let (code, text) = jitseam(&[
        "run",
        &fixture("add_sub_f32_mo2_scalar.ptx"),
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
    ]);
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
         .param .u64 o, .param .u64 n)\n{\nbar.sync 0;\nret;\n}\n",
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
        text.contains("`bar.sync` is not supported by the emulator"),
        "{text}"
    );
}
