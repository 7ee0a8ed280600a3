//! How long the reference elementwise synthesizer takes to write a three-op kernel, against NVRTC
//! compiling the same kernel from CUDA C in the same process. Goal: under 100 µs.
//!
//! NVRTC is `jitseam::nvrtc` (libnvrtc loaded at run time from the library path, e.g. the
//! `.venv-nvrtc/` that `scripts/install-nvrtc` makes). For each
//! case it compiles CUDA C of the same kernel (same op, operand types, vector width or rank,
//! `--gpu-architecture=compute_80`): the first compile in the process is reported on its own
//! (NVRTC's start-up, one sample), then warm compiles as a median with min and max. Without
//! NVRTC the bench says so and prints the synthesizer's figures alone.
//!
//! Run: `LD_LIBRARY_PATH="$(scripts/install-nvrtc)" JITSEAM_CUDA_INCLUDE="$(scripts/install-nvrtc --include)" cargo bench --bench synth`

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;
#[path = "support/three_op.rs"]
mod three_op;

use std::hint::black_box;
use std::time::{Duration, Instant};

use jitseam::ElementKind;
use jitseam::nvrtc::{self, CompileOptions, CompileTarget};
use jitseam::synth::{Arch, ElementwiseSynthesizer, JitRequest, OperandDesc, Synthesizer};
use stats::Summary;
use three_op::three_op;

const SYNTH_SAMPLES: usize = 2001;
const NVRTC_SAMPLES: usize = 9;

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
        (
            "f32 vectorized:4",
            three_op(f32s, Arch::sm(80)),
            CUDA_F32_V4,
        ),
        (
            "f32 strided:3",
            three_op(strided, Arch::sm(80)),
            CUDA_F32_STRIDED3,
        ),
        (
            "bf16 vectorized:8",
            three_op(halves, Arch::sm(80)),
            CUDA_BF16_V8,
        ),
    ]
}

/// One whole NVRTC compile of `source` to PTX through `jitseam::nvrtc` (create, compile, fetch,
/// destroy, as a JIT does it); the headers' directory from `JITSEAM_CUDA_INCLUDE`
/// (`scripts/install-nvrtc --include`), which the bf16 kernel needs.
fn nvrtc_compile(source: &str) -> Result<usize, String> {
    let mut options = CompileOptions::new(CompileTarget::compute(80));
    if let Some(dir) = std::env::var_os("JITSEAM_CUDA_INCLUDE") {
        options = options.include(dir);
    }
    nvrtc::compile(source, &options)
        .map(|compiled| compiled.ptx().len())
        .map_err(|e| e.to_string())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let synth = ElementwiseSynthesizer::new();
    let nvrtc = nvrtc::version().map_err(|e| e.to_string());
    match &nvrtc {
        Ok(version) => println!("synth: NVRTC {version:?}"),
        Err(e) => println!(
            "synth: NVRTC NOT FOUND, no ratio printed (run with LD_LIBRARY_PATH=\"$(scripts/install-nvrtc)\"): {e}"
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
        if nvrtc.is_err() {
            println!("{synth_line}");
            continue;
        }
        // NVRTC: the process's first compile once, then warm compiles.
        if first_compile.is_none() {
            let start = Instant::now();
            let compiled = nvrtc_compile(cuda);
            first_compile = Some(start.elapsed());
            if let Err(e) = compiled {
                println!("{synth_line}\n    NVRTC failed on {name}: {e}");
                continue;
            }
        }
        let mut failed = None;
        let times = stats::times(NVRTC_SAMPLES, || {
            if let Err(e) = nvrtc_compile(black_box(cuda)) {
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
