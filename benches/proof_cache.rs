//! A proof cache hit next to proving the body again.
//!
//! For the NVRTC fixture entry with the longest PTX (the hit hashes and compares the whole
//! text, so the longest is the slowest hit) and for `add_f32_scalar`: the median time of
//! `ProofCache::get` on a kept proof and of `verify_entry`, measured in the same run, and
//! their ratio. Goal: a hit ≤ 10 µs.
//!
//! Run with `cargo bench --bench proof_cache`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jitseam::abi::AbiContract;
use jitseam::kernel::proof_cache::ProofCache;
use jitseam_verify::verify_entry;

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code, unreachable_pub)]
mod fixtures;

fn median(mut f: impl FnMut(), budget: Duration) -> Duration {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 11 || (start.elapsed() < budget && samples.len() < 20001) {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let all = fixtures::all();
    let proven: Vec<_> = all
        .iter()
        .filter(|f| verify_entry(f.ptx, f.entry, &f.spec.contract()).is_ok())
        .collect();
    let longest = proven
        .iter()
        .max_by_key(|f| f.ptx.len())
        .expect("a proven fixture");
    let typical = proven
        .iter()
        .find(|f| f.entry.ends_with("add_f32_scalar"))
        .unwrap_or(longest);
    let cache = ProofCache::global();
    println!(
        "{:<40} {:>10} {:>10} {:>12} {:>8}",
        "entry", "ptx bytes", "hit µs", "verify µs", "ratio"
    );
    for f in [longest, typical] {
        let contract = f.spec.contract();
        let proof = verify_entry(f.ptx, f.entry, &contract).unwrap();
        cache.insert(f.ptx, f.entry, &contract, proof);
        let hit = median(
            || {
                black_box(cache.get(black_box(f.ptx), f.entry, &contract)).unwrap();
            },
            Duration::from_millis(300),
        );
        let verify = median(
            || {
                black_box(verify_entry(black_box(f.ptx), f.entry, &contract)).ok();
            },
            Duration::from_millis(300),
        );
        println!(
            "{:<40} {:>10} {:>10.2} {:>12.1} {:>8.0}",
            f.entry,
            f.ptx.len(),
            hit.as_secs_f64() * 1e6,
            verify.as_secs_f64() * 1e6,
            verify.as_secs_f64() / hit.as_secs_f64().max(1e-12)
        );
        criterion.bench_function(&format!("proof_cache hit {}", f.entry), |b| {
            b.iter(|| cache.get(black_box(f.ptx), f.entry, &contract))
        });
        criterion.bench_function(&format!("verify_entry {}", f.entry), |b| {
            b.iter(|| verify_entry(black_box(f.ptx), f.entry, &contract).ok())
        });
    }
    criterion.final_summary();
}
