//! Compiled artifacts: an NVRTC compile (cold) of a three-op elementwise kernel against a
//! compile-cache hit and against the reference synthesizer writing the same kernel as PTX, and
//! the time to read a cubin's `.nv.info` (architecture, kernels, parameters). Goal: a cache hit
//! at least 1,000× faster than NVRTC.
//!
//! Run: `LD_LIBRARY_PATH=$(scripts/install-nvrtc) cargo bench --bench artifacts` (without
//! NVRTC the NVRTC rows are skipped with a notice).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use jitseam::ElementKind;
use jitseam::nvrtc::{self, CompileCache, CompileOptions, CompileTarget};
use jitseam::synth::{Arch, ElementwiseSynthesizer, JitRequest, OperandDesc, Synthesizer};

#[path = "support/three_op.rs"]
mod three_op;
use three_op::three_op;

/// `out = max(x * a, y) + b` over f32, as a runtime would write it in CUDA C.
const THREE_OP: &str = r#"
extern "C" __global__ void three_op(const float* __restrict__ x, const float* __restrict__ y,
                                    float* __restrict__ out, long long n, float a, float b) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        out[i] = fmaxf(x[i] * a, y[i]) + b;
    }
}
"#;

/// The same three ops for the synthesizer.
fn three_op_request() -> JitRequest {
    three_op(
        vec![OperandDesc::contiguous(ElementKind::F32, &[1 << 20], 256); 3],
        Arch::sm(90),
    )
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median seconds of `runs` calls of `f`.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn bench(c: &mut Criterion) {
    let cubin_bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cubin/add_scalar_mul_scalar_f32_scalar.sm_90.cubin"
    ))
    .unwrap();
    c.bench_function("parse cubin .nv.info", |b| {
        b.iter(|| jitseam_ptx::parse_cubin(black_box(&cubin_bytes)))
    });
    let synth = ElementwiseSynthesizer::new();
    let request = three_op_request();
    c.bench_function("synthesize 3-op kernel (ptx)", |b| {
        b.iter(|| synth.synthesize(black_box(&request)))
    });

    println!();
    let parse = time(2_000, || {
        black_box(jitseam_ptx::parse_cubin(&cubin_bytes).ok());
    });
    let synthesize = time(2_000, || {
        black_box(synth.synthesize(&request).ok());
    });
    println!("cubin .nv.info parse: median {:.2} µs", parse * 1e6);
    println!("synthesizer (3-op ptx): median {:.2} µs", synthesize * 1e6);

    let Ok(version) = nvrtc::version() else {
        println!("NOTICE: NVRTC unavailable: the NVRTC and cache rows are skipped");
        return;
    };
    let options = CompileOptions::new(CompileTarget::sm(90));
    // A fresh directory per run, so the first compile is a true miss.
    let dir = std::env::temp_dir().join(format!("jitseam-bench-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = CompileCache::open(&dir).unwrap();
    let mut counter = 0u64;
    // Cold: a source NVRTC has never seen in this process (a comment makes each one new).
    let cold = time(15, || {
        counter += 1;
        let source = format!("// {counter}\n{THREE_OP}");
        black_box(nvrtc::compile(&source, &options).unwrap());
    });
    cache.compile(THREE_OP, &options).unwrap();
    let hit = time(2_000, || {
        black_box(cache.compile(THREE_OP, &options).unwrap());
    });
    let hits = cache.stats().hits;
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "nvrtc {}.{} compile (sm_90, ptx + cubin, cold): median {:.2} ms",
        version.0,
        version.1,
        cold * 1e3
    );
    println!(
        "compile cache hit: median {:.2} µs ({hits} hits)",
        hit * 1e6
    );
    println!(
        "ratios: cache hit {:.0}x faster than nvrtc (goal >= 1000x: {}); synthesizer {:.0}x faster than nvrtc",
        cold / hit,
        if cold / hit >= 1000.0 {
            "met"
        } else {
            "NOT met"
        },
        cold / synthesize
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = bench
}
criterion_main!(benches);
