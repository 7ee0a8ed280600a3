//! NVRTC for the tests: whether it is here, the CUDA headers, and the fixtures compiled once per
//! process. Under CI (`CI` set) a missing NVRTC is a failure; elsewhere the NVRTC tests print a
//! notice and pass, so a machine without the wheels can still run the suite.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use jitseam::nvrtc::{self, CompileOptions, CompileTarget, Compiled};

/// Whether NVRTC can be used; panics under CI when it cannot.
pub fn ready(test: &str) -> bool {
    match nvrtc::version() {
        Ok(_) => true,
        Err(e) => {
            let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
            if ci {
                panic!(
                    "{test}: NVRTC is required under CI: {e} (run scripts/install-nvrtc and put its output on LD_LIBRARY_PATH)"
                );
            }
            eprintln!("NOTICE: {test} skipped: {e}");
            false
        }
    }
}

/// The directory holding `cuda_fp16.h`: `JITSEAM_CUDA_INCLUDE`, else the wheels in
/// `.venv-nvrtc/` or `.venv-fixtures/`.
pub fn include_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("JITSEAM_CUDA_INCLUDE") {
        return Some(PathBuf::from(dir));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    [".venv-nvrtc", ".venv-fixtures"]
        .iter()
        .find_map(|venv| find_header(&root.join(venv), 7))
}

fn find_header(dir: &Path, depth: usize) -> Option<PathBuf> {
    if dir.join("cuda_fp16.h").is_file() && dir.ends_with("include") {
        return Some(dir.to_path_buf());
    }
    if depth == 0 {
        return None;
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.into_iter()
        .find_map(|sub| find_header(&sub, depth - 1))
}

/// The options the fixtures were made with (see tests/fixtures/README.md), for `target`.
pub fn options(target: &str) -> CompileOptions {
    let mut options = CompileOptions::new(CompileTarget::parse(target).unwrap())
        .flag("-default-device")
        .flag("--std=c++17");
    if let Some(dir) = include_dir() {
        options = options.include(dir);
    }
    options
}

/// The CUDA source of a fixture file (`add_f32_scalar.ptx` → its `.cu`).
pub fn source(ptx_file: &str) -> String {
    let stem = ptx_file.trim_end_matches(".ptx");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{stem}.cu"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The fixture source of `ptx_file` compiled for `target`, once per process.
pub fn compiled(ptx_file: &str, target: &str) -> Compiled {
    static DONE: OnceLock<Mutex<HashMap<(String, String), Compiled>>> = OnceLock::new();
    let done = DONE.get_or_init(Default::default);
    let key = (ptx_file.to_owned(), target.to_owned());
    if let Some(c) = done.lock().unwrap().get(&key) {
        return c.clone();
    }
    let compiled = nvrtc::compile(
        &source(ptx_file),
        &options(target).named(ptx_file.replace(".ptx", ".cu")),
    )
    .unwrap_or_else(|e| panic!("compile {ptx_file} for {target}: {e}"));
    done.lock().unwrap().insert(key, compiled.clone());
    compiled
}

/// A committed cubin fixture, `tests/fixtures/cubin/<stem>.<arch>.cubin`, and the PTX of the
/// same compile (read from disk: only the host tests need it).
pub fn cubin_fixture(ptx_file: &str, arch: &str) -> (Vec<u8>, String) {
    let stem = ptx_file.trim_end_matches(".ptx");
    let cubin = embedded(stem, arch).unwrap_or_else(|| panic!("no {arch} cubin for {stem}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cubin");
    let ptx = std::fs::read_to_string(dir.join(format!("{stem}.{arch}.ptx"))).unwrap_or_default();
    (cubin.to_vec(), ptx)
}

/// The committed cubin for `arch` alone (embedded; for the device machine).
pub fn cubin_bytes(ptx_file: &str, arch: &str) -> Vec<u8> {
    let stem = ptx_file.trim_end_matches(".ptx");
    embedded(stem, arch)
        .unwrap_or_else(|| panic!("no {arch} cubin for {stem}"))
        .to_vec()
}

/// A committed fatbin fixture: `tests/fixtures/fatbin/<stem>.fatbin` (embedded).
pub fn fatbin_fixture(ptx_file: &str) -> Vec<u8> {
    let stem = ptx_file.trim_end_matches(".ptx");
    embedded(stem, "fatbin")
        .unwrap_or_else(|| panic!("no fatbin for {stem}"))
        .to_vec()
}

/// Committed cubins and fatbins, embedded so the GPU test binaries carry them to the device
/// machine. `kind` is `sm_90`, `sm_80` or `fatbin`.
fn embedded(stem: &str, kind: &str) -> Option<&'static [u8]> {
    Some(match kind {
        "sm_90" => sm_90(stem)?,
        "sm_80" => sm_80(stem)?,
        "fatbin" => fatbin(stem)?,
        _ => return None,
    })
}

fn sm_90(stem: &str) -> Option<&'static [u8]> {
    Some(match stem {
        "add_bf16_scalar" => include_bytes!("../fixtures/cubin/add_bf16_scalar.sm_90.cubin"),
        "add_f16_co_v8" => include_bytes!("../fixtures/cubin/add_f16_co_v8.sm_90.cubin"),
        "add_f16_scalar" => include_bytes!("../fixtures/cubin/add_f16_scalar.sm_90.cubin"),
        "add_f32_co_v2" => include_bytes!("../fixtures/cubin/add_f32_co_v2.sm_90.cubin"),
        "add_f32_co_v4" => include_bytes!("../fixtures/cubin/add_f32_co_v4.sm_90.cubin"),
        "add_f32_scalar" => include_bytes!("../fixtures/cubin/add_f32_scalar.sm_90.cubin"),
        "add_f32_strided_r1" => include_bytes!("../fixtures/cubin/add_f32_strided_r1.sm_90.cubin"),
        "add_f32_strided_r2" => include_bytes!("../fixtures/cubin/add_f32_strided_r2.sm_90.cubin"),
        "add_f32_strided_r3" => include_bytes!("../fixtures/cubin/add_f32_strided_r3.sm_90.cubin"),
        "add_f64_co_v2" => include_bytes!("../fixtures/cubin/add_f64_co_v2.sm_90.cubin"),
        "add_scalar_mul_scalar_f32_scalar" => {
            include_bytes!("../fixtures/cubin/add_scalar_mul_scalar_f32_scalar.sm_90.cubin")
        }
        "add_sub_f32_mo2_scalar" => {
            include_bytes!("../fixtures/cubin/add_sub_f32_mo2_scalar.sm_90.cubin")
        }
        "axpb_f64_scalar" => include_bytes!("../fixtures/cubin/axpb_f64_scalar.sm_90.cubin"),
        "mul_f64_scalar" => include_bytes!("../fixtures/cubin/mul_f64_scalar.sm_90.cubin"),
        "mul_scalar_f64_strided_r2" => {
            include_bytes!("../fixtures/cubin/mul_scalar_f64_strided_r2.sm_90.cubin")
        }
        "relu_f32_scalar" => include_bytes!("../fixtures/cubin/relu_f32_scalar.sm_90.cubin"),
        "silu_f32_scalar" => include_bytes!("../fixtures/cubin/silu_f32_scalar.sm_90.cubin"),
        "two_entries" => include_bytes!("../fixtures/cubin/two_entries.sm_90.cubin"),
        _ => return None,
    })
}

fn sm_80(stem: &str) -> Option<&'static [u8]> {
    Some(match stem {
        "add_bf16_scalar" => include_bytes!("../fixtures/cubin/add_bf16_scalar.sm_80.cubin"),
        "add_f16_co_v8" => include_bytes!("../fixtures/cubin/add_f16_co_v8.sm_80.cubin"),
        "add_f16_scalar" => include_bytes!("../fixtures/cubin/add_f16_scalar.sm_80.cubin"),
        "add_f32_co_v2" => include_bytes!("../fixtures/cubin/add_f32_co_v2.sm_80.cubin"),
        "add_f32_co_v4" => include_bytes!("../fixtures/cubin/add_f32_co_v4.sm_80.cubin"),
        "add_f32_scalar" => include_bytes!("../fixtures/cubin/add_f32_scalar.sm_80.cubin"),
        "add_f32_strided_r1" => include_bytes!("../fixtures/cubin/add_f32_strided_r1.sm_80.cubin"),
        "add_f32_strided_r2" => include_bytes!("../fixtures/cubin/add_f32_strided_r2.sm_80.cubin"),
        "add_f32_strided_r3" => include_bytes!("../fixtures/cubin/add_f32_strided_r3.sm_80.cubin"),
        "add_f64_co_v2" => include_bytes!("../fixtures/cubin/add_f64_co_v2.sm_80.cubin"),
        "add_scalar_mul_scalar_f32_scalar" => {
            include_bytes!("../fixtures/cubin/add_scalar_mul_scalar_f32_scalar.sm_80.cubin")
        }
        "add_sub_f32_mo2_scalar" => {
            include_bytes!("../fixtures/cubin/add_sub_f32_mo2_scalar.sm_80.cubin")
        }
        "axpb_f64_scalar" => include_bytes!("../fixtures/cubin/axpb_f64_scalar.sm_80.cubin"),
        "mul_f64_scalar" => include_bytes!("../fixtures/cubin/mul_f64_scalar.sm_80.cubin"),
        "mul_scalar_f64_strided_r2" => {
            include_bytes!("../fixtures/cubin/mul_scalar_f64_strided_r2.sm_80.cubin")
        }
        "relu_f32_scalar" => include_bytes!("../fixtures/cubin/relu_f32_scalar.sm_80.cubin"),
        "silu_f32_scalar" => include_bytes!("../fixtures/cubin/silu_f32_scalar.sm_80.cubin"),
        "two_entries" => include_bytes!("../fixtures/cubin/two_entries.sm_80.cubin"),
        _ => return None,
    })
}

fn fatbin(stem: &str) -> Option<&'static [u8]> {
    Some(match stem {
        "add_bf16_scalar" => include_bytes!("../fixtures/fatbin/add_bf16_scalar.fatbin"),
        "add_f16_co_v8" => include_bytes!("../fixtures/fatbin/add_f16_co_v8.fatbin"),
        "add_f16_scalar" => include_bytes!("../fixtures/fatbin/add_f16_scalar.fatbin"),
        "add_f32_co_v2" => include_bytes!("../fixtures/fatbin/add_f32_co_v2.fatbin"),
        "add_f32_co_v4" => include_bytes!("../fixtures/fatbin/add_f32_co_v4.fatbin"),
        "add_f32_scalar" => include_bytes!("../fixtures/fatbin/add_f32_scalar.fatbin"),
        "add_f32_strided_r1" => include_bytes!("../fixtures/fatbin/add_f32_strided_r1.fatbin"),
        "add_f32_strided_r2" => include_bytes!("../fixtures/fatbin/add_f32_strided_r2.fatbin"),
        "add_f32_strided_r3" => include_bytes!("../fixtures/fatbin/add_f32_strided_r3.fatbin"),
        "add_f64_co_v2" => include_bytes!("../fixtures/fatbin/add_f64_co_v2.fatbin"),
        "add_scalar_mul_scalar_f32_scalar" => {
            include_bytes!("../fixtures/fatbin/add_scalar_mul_scalar_f32_scalar.fatbin")
        }
        "add_sub_f32_mo2_scalar" => {
            include_bytes!("../fixtures/fatbin/add_sub_f32_mo2_scalar.fatbin")
        }
        "axpb_f64_scalar" => include_bytes!("../fixtures/fatbin/axpb_f64_scalar.fatbin"),
        "mul_f64_scalar" => include_bytes!("../fixtures/fatbin/mul_f64_scalar.fatbin"),
        "mul_scalar_f64_strided_r2" => {
            include_bytes!("../fixtures/fatbin/mul_scalar_f64_strided_r2.fatbin")
        }
        "relu_f32_scalar" => include_bytes!("../fixtures/fatbin/relu_f32_scalar.fatbin"),
        "silu_f32_scalar" => include_bytes!("../fixtures/fatbin/silu_f32_scalar.fatbin"),
        "two_entries" => include_bytes!("../fixtures/fatbin/two_entries.fatbin"),
        _ => return None,
    })
}
