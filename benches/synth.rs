//! How long the reference elementwise synthesizer takes to write a three-op kernel, against NVRTC
//! compiling the same kernel from CUDA C in the same process. Goal: under 100 µs.
//!
//! NVRTC is loaded at run time (`libnvrtc.so.12`, from `$JITSEAM_NVRTC_DIR`, else the
//! `.venv-nvrtc/` that `scripts/install-nvrtc` makes, else the system's library path). For each
//! case it compiles CUDA C of the same kernel (same op, operand types, vector width or rank,
//! `--gpu-architecture=compute_80`): the first compile in the process is reported on its own
//! (NVRTC's start-up, one sample), then warm compiles as a median with min and max. Without
//! NVRTC the bench says so and prints the synthesizer's figures alone.
//!
//! Run: `JITSEAM_NVRTC_DIR="$(scripts/install-nvrtc)" cargo bench --bench synth`

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::ffi::{CStr, CString, c_char, c_int};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jitseam::ElementKind;
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, Synthesizer,
};
use stats::Summary;

const SYNTH_SAMPLES: usize = 2001;
const NVRTC_SAMPLES: usize = 9;

/// `add_scalar(max(mul_scalar(x, 2), y), 3)`: three ops, two params.
fn three_op(operands: Vec<OperandDesc>) -> JitRequest {
    JitRequest {
        region: Region::op_with_scalars(
            "add_scalar",
            vec![Region::op(
                "max",
                vec![
                    Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]),
                    Region::bind(1),
                ],
            )],
            vec![3.0],
        ),
        operands,
        arch: Arch::sm(80),
        budget: JitBudget::millis(1000),
    }
}

/// The same kernel as CUDA C, as a programmer hands it to NVRTC.
const CUDA_F32_V4: &str = r#"
extern "C" __global__ void three_op_f32_v4(const float4* __restrict__ x, const float4* __restrict__ y,
                                           float4* __restrict__ out, long long nv)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x) {
        const float4 a = x[i];
        const float4 b = y[i];
        out[i] = make_float4(fmaxf(a.x * 2.0f, b.x) + 3.0f, fmaxf(a.y * 2.0f, b.y) + 3.0f,
                             fmaxf(a.z * 2.0f, b.z) + 3.0f, fmaxf(a.w * 2.0f, b.w) + 3.0f);
    }
}
"#;

const CUDA_F32_STRIDED3: &str = r#"
extern "C" __global__ void three_op_f32_strided_r3(const float* __restrict__ x, const float* __restrict__ y,
    float* __restrict__ out, long long shape0, long long shape1, long long shape2,
    long long s0_0, long long s0_1, long long s0_2, long long s1_0, long long s1_1, long long s1_2,
    long long so_0, long long so_1, long long so_2, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        long long rem = i, off0 = 0, off1 = 0, offo = 0, c;
        c = rem % shape2; rem /= shape2; off0 += c * s0_2; off1 += c * s1_2; offo += c * so_2;
        c = rem % shape1; rem /= shape1; off0 += c * s0_1; off1 += c * s1_1; offo += c * so_1;
        c = rem % shape0; off0 += c * s0_0; off1 += c * s1_0; offo += c * so_0;
        out[offo] = fmaxf(x[off0] * 2.0f, y[off1]) + 3.0f;
    }
}
"#;

const CUDA_BF16_V8: &str = r#"
#include <cuda_bf16.h>
struct __align__(16) bf16x8 { __nv_bfloat162 a, b, c, d; };
__device__ __forceinline__ __nv_bfloat162 op(__nv_bfloat162 x, __nv_bfloat162 y) {
    const __nv_bfloat162 two = __float2bfloat162_rn(2.0f), three = __float2bfloat162_rn(3.0f);
    return __hadd2(__hmax2(__hmul2(x, two), y), three);
}
extern "C" __global__ void three_op_bf16_v8(const bf16x8* __restrict__ x, const bf16x8* __restrict__ y,
                                            bf16x8* __restrict__ out, long long nv)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x) {
        const bf16x8 a = x[i], b = y[i];
        bf16x8 r;
        r.a = op(a.a, b.a); r.b = op(a.b, b.b); r.c = op(a.c, b.c); r.d = op(a.d, b.d);
        out[i] = r;
    }
}
"#;

fn cases() -> Vec<(&'static str, JitRequest, &'static str)> {
    let f32s = vec![OperandDesc::contiguous(ElementKind::F32, &[1024, 1024], 256); 3];
    let mut strided = vec![OperandDesc::contiguous(ElementKind::F32, &[64, 32, 16], 256); 3];
    strided[0].strides = vec![1, 64, 2048];
    let halves = vec![OperandDesc::contiguous(ElementKind::BF16, &[1024, 1024], 256); 3];
    vec![
        ("f32 vectorized:4", three_op(f32s), CUDA_F32_V4),
        ("f32 strided:3", three_op(strided), CUDA_F32_STRIDED3),
        ("bf16 vectorized:8", three_op(halves), CUDA_BF16_V8),
    ]
}

type Program = *mut std::ffi::c_void;

/// The NVRTC entry points the bench calls.
struct Nvrtc {
    _lib: libloading::Library,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    options: Vec<CString>,
    location: String,
}

/// Where `libnvrtc.so.12` may be: `$JITSEAM_NVRTC_DIR`, then the venv `scripts/install-nvrtc`
/// makes, then the loader's own search path.
fn nvrtc_candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("JITSEAM_NVRTC_DIR") {
        candidates.push(Path::new(&dir).join("libnvrtc.so.12"));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-nvrtc/lib");
    if let Ok(entries) = std::fs::read_dir(&venv) {
        for entry in entries.flatten() {
            candidates.push(
                entry
                    .path()
                    .join("site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
            );
        }
    }
    candidates.push(PathBuf::from("libnvrtc.so.12"));
    candidates
}

impl Nvrtc {
    fn load() -> Result<Self, String> {
        let mut errors = Vec::new();
        for candidate in nvrtc_candidates() {
            // SAFETY: loading NVRTC runs its initializers, which have no preconditions.
            match unsafe { libloading::Library::new(&candidate) } {
                Ok(lib) => return Self::from_library(lib, &candidate),
                Err(e) => errors.push(format!("{}: {e}", candidate.display())),
            }
        }
        Err(errors.join("; "))
    }

    fn from_library(lib: libloading::Library, path: &Path) -> Result<Self, String> {
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: the symbol is NVRTC's, with the C signature of the field it is stored
                // in (nvrtc.h); the library stays loaded as long as `Nvrtc` lives.
                *unsafe { lib.get($name) }.map_err(|e| format!("{e}"))?
            };
        }
        // The runtime wheel's headers (cuda_bf16.h), next to the NVRTC wheel.
        let include = path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(|nvidia| nvidia.join("cuda_runtime/include"))
            .filter(|dir| dir.is_dir());
        let mut options: Vec<CString> = [
            "--gpu-architecture=compute_80",
            "-default-device",
            "--std=c++17",
        ]
        .iter()
        .map(|o| CString::new(*o).unwrap_or_default())
        .collect();
        if let Some(include) = &include {
            options.push(CString::new(format!("-I{}", include.display())).unwrap_or_default());
        }
        Ok(Self {
            create: symbol!(b"nvrtcCreateProgram"),
            compile: symbol!(b"nvrtcCompileProgram"),
            ptx_size: symbol!(b"nvrtcGetPTXSize"),
            ptx: symbol!(b"nvrtcGetPTX"),
            log_size: symbol!(b"nvrtcGetProgramLogSize"),
            log: symbol!(b"nvrtcGetProgramLog"),
            destroy: symbol!(b"nvrtcDestroyProgram"),
            options,
            location: path.display().to_string(),
            _lib: lib,
        })
    }

    /// One whole compile, as a JIT does it: create the program, compile, fetch the PTX, destroy.
    /// Returns the PTX's length.
    fn compile(&self, source: &str) -> Result<usize, String> {
        let source = CString::new(source).map_err(|e| e.to_string())?;
        let options: Vec<*const c_char> = self.options.iter().map(|o| o.as_ptr()).collect();
        let mut program: Program = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call (NUL-terminated strings, an options array
        // of `options.len()` such strings, no headers); `program` is destroyed before returning.
        unsafe {
            let created = (self.create)(
                &mut program,
                source.as_ptr(),
                c"bench.cu".as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if created != 0 {
                return Err(format!("nvrtcCreateProgram failed: {created}"));
            }
            let compiled = (self.compile)(program, options.len() as c_int, options.as_ptr());
            let result = if compiled == 0 {
                let mut size = 0usize;
                (self.ptx_size)(program, &mut size);
                let mut ptx = vec![0 as c_char; size.max(1)];
                (self.ptx)(program, ptx.as_mut_ptr());
                Ok(CStr::from_ptr(ptx.as_ptr()).to_bytes().len())
            } else {
                let mut size = 0usize;
                (self.log_size)(program, &mut size);
                let mut log = vec![0 as c_char; size.max(1)];
                (self.log)(program, log.as_mut_ptr());
                Err(format!(
                    "nvrtcCompileProgram failed ({compiled}): {}",
                    CStr::from_ptr(log.as_ptr()).to_string_lossy()
                ))
            };
            (self.destroy)(&mut program);
            result
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let synth = ElementwiseSynthesizer::new();
    let nvrtc = Nvrtc::load();
    match &nvrtc {
        Ok(nvrtc) => println!("synth: NVRTC from {}", nvrtc.location),
        Err(e) => println!(
            "synth: NVRTC NOT FOUND, no ratio printed (run scripts/install-nvrtc or set JITSEAM_NVRTC_DIR): {e}"
        ),
    }
    let mut first_compile = None;
    for (name, request, cuda) in cases() {
        // Synthesizer: median of many runs.
        let times = stats::times(SYNTH_SAMPLES, || synth.synthesize(black_box(&request)));
        let us = Summary::of(stats::secs(&times).iter().map(|s| s * 1e6).collect());
        let synth_line = format!(
            "{name:>18}: synthesizer {us:.1} µs; goal < 100 µs: {}",
            if us.median < 100.0 { "met" } else { "MISSED" }
        );
        let Ok(nvrtc) = &nvrtc else {
            println!("{synth_line}");
            continue;
        };
        // NVRTC: the process's first compile once, then warm compiles.
        if first_compile.is_none() {
            let start = Instant::now();
            let compiled = nvrtc.compile(cuda);
            first_compile = Some(start.elapsed());
            if let Err(e) = compiled {
                println!("{synth_line}\n    NVRTC failed on {name}: {e}");
                continue;
            }
        }
        let mut failed = None;
        let times = stats::times(NVRTC_SAMPLES, || {
            if let Err(e) = nvrtc.compile(black_box(cuda)) {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            println!("{synth_line}\n    NVRTC failed on {name}: {e}");
            continue;
        }
        let warm = Summary::of(times.iter().map(|&t| ms(t)).collect());
        println!("{synth_line}");
        println!(
            "{:>18}  NVRTC warm {warm:.1} ms; NVRTC/synthesizer (medians) {:.0}x",
            "",
            warm.median * 1e3 / us.median
        );
    }
    if let Some(first) = first_compile {
        println!(
            "NVRTC first compile in the process (f32 vectorized:4, one sample): {:.1} ms",
            ms(first)
        );
    }
}
