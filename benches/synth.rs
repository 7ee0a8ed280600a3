//! How long the reference elementwise synthesizer takes to write a three-op kernel, against the
//! 30–90 ms an NVRTC compile of the same kernel takes. Goal: under 100 µs.
//!
//! Run: `cargo bench --bench synth`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use jitseam::ElementKind;
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, Synthesizer,
};

/// The NVRTC compile times the comparison is made against (ms), measured for kernels like these.
const NVRTC_MS: (f64, f64) = (30.0, 90.0);

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

fn cases() -> Vec<(&'static str, JitRequest)> {
    let f32s = vec![OperandDesc::contiguous(ElementKind::F32, &[1024, 1024], 256); 3];
    let mut strided = vec![OperandDesc::contiguous(ElementKind::F32, &[64, 32, 16], 256); 3];
    strided[0].strides = vec![1, 64, 2048];
    let halves = vec![OperandDesc::contiguous(ElementKind::BF16, &[1024, 1024], 256); 3];
    vec![
        ("f32 vectorized:4", three_op(f32s)),
        ("f32 strided:3", three_op(strided)),
        ("bf16 vectorized:8", three_op(halves)),
    ]
}

fn bench(c: &mut Criterion) {
    let synth = ElementwiseSynthesizer::new();
    let mut group = c.benchmark_group("synthesize 3-op kernel");
    for (name, request) in cases() {
        group.bench_function(name, |b| b.iter(|| synth.synthesize(black_box(&request))));
    }
    group.finish();

    // The ratio criterion does not print: a plain median over many runs.
    println!();
    for (name, request) in cases() {
        let mut samples: Vec<Duration> = (0..2000)
            .map(|_| {
                let start = Instant::now();
                let _ = black_box(synth.synthesize(black_box(&request)));
                start.elapsed()
            })
            .collect();
        samples.sort();
        let median = samples[samples.len() / 2];
        let us = median.as_secs_f64() * 1e6;
        let (lo, hi) = NVRTC_MS;
        println!(
            "{name:>18}: {us:7.1} µs median — NVRTC (30–90 ms) is {:.0}–{:.0}x slower; goal < 100 µs: {}",
            lo * 1000.0 / us,
            hi * 1000.0 / us,
            if us < 100.0 { "met" } else { "MISSED" }
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
