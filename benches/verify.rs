//! What proving a body costs next to loading without it.
//!
//! For every NVRTC fixture entry: the median time of `verify_entry` (decode, abstract
//! interpretation, proofs) and of `Kernel::describe(artifact).load_unverified()` (the module
//! scan and the `.param` check: `load()` without the body proof), and their ratio.
//! Goal: ≤ 50 µs per typical NVRTC entry.
//!
//! Run with `cargo bench --bench verify`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jitseam::Kernel;
use jitseam::abi::AbiContract;
use jitseam_verify::verify_entry;

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code, unreachable_pub)]
mod fixtures;

fn median(mut f: impl FnMut(), budget: Duration) -> Duration {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 11 || (start.elapsed() < budget && samples.len() < 2001) {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let mut total_verify = Duration::ZERO;
    let mut total_load = Duration::ZERO;
    let all = fixtures::all();
    println!(
        "{:<48} {:>12} {:>12} {:>8}",
        "entry", "verify µs", "load µs", "ratio"
    );
    for f in all {
        let contract = f.spec.contract();
        let v = median(
            || {
                black_box(verify_entry(black_box(f.ptx), f.entry, &contract)).ok();
            },
            Duration::from_millis(300),
        );
        let l = median(
            || {
                if let Ok(k) = Kernel::describe(f.artifact()) {
                    // SAFETY: the kernel is loaded and dropped, never bound or launched.
                    black_box(unsafe { k.load_unverified() }).ok();
                }
            },
            Duration::from_millis(300),
        );
        total_verify += v;
        total_load += l;
        println!(
            "{:<48} {:>12.1} {:>12.1} {:>8.1}",
            f.entry,
            v.as_secs_f64() * 1e6,
            l.as_secs_f64() * 1e6,
            v.as_secs_f64() / l.as_secs_f64().max(1e-12)
        );
    }
    let n = all.len().max(1) as u32;
    println!(
        "mean of medians: verify {:.1} µs, load {:.1} µs, ratio {:.1}",
        (total_verify / n).as_secs_f64() * 1e6,
        (total_load / n).as_secs_f64() * 1e6,
        total_verify.as_secs_f64() / total_load.as_secs_f64().max(1e-12)
    );
    if let Some(f) = all.iter().find(|f| f.entry.ends_with("add_f32_scalar")) {
        let contract = f.spec.contract();
        criterion.bench_function("verify_entry add_f32_scalar", |b| {
            b.iter(|| verify_entry(black_box(f.ptx), f.entry, &contract).ok())
        });
    }
    criterion.final_summary();
}
