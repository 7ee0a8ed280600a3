//! A proof cache hit, in memory and on disk, next to proving the body again.
//!
//! For the NVRTC fixture entry with the longest PTX (the hit hashes and compares the whole
//! text, so the longest is the slowest hit) and for `add_f32_scalar`: the median time of
//! `ProofCache::get` on a kept proof (101 batches of 1000), of `DiskProofCache::get` on an entry
//! on disk with nothing in memory — what a new process's first load pays (101 batches of 100;
//! the entry is in the page cache, as a recently written one is) — and of `verify_entry` (11
//! runs), measured in the same run, and the ratios. Goal: a hit ≤ 10 µs.
//!
//! Run with `cargo bench --bench proof_cache`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::Criterion;
use jitseam::abi::AbiContract;
use jitseam::kernel::proof_cache::{DiskProofCache, ProofCache};
use jitseam_verify::verify_entry;

#[path = "support/stats.rs"]
#[allow(dead_code)]
mod stats;

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code, unreachable_pub)]
mod fixtures;

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
    let dir = tempfile::tempdir().expect("a temporary directory");
    let disk = DiskProofCache::open(dir.path()).expect("a proof cache directory");
    println!(
        "{:<40} {:>10} {:>8} {:>9} {:>12} {:>8} {:>8}",
        "entry", "ptx bytes", "hit µs", "disk µs", "verify µs", "ratio", "disk x"
    );
    for f in [longest, typical] {
        let contract = f.spec.contract();
        let proof = verify_entry(f.ptx, f.entry, &contract).unwrap();
        disk.insert(f.ptx, f.entry, &contract, &proof);
        cache.insert(f.ptx, f.entry, &contract, proof);
        let hit = stats::ns_per_call(101, 1000, || {
            cache.get(black_box(f.ptx), f.entry, &contract).unwrap()
        });
        let disk_hit = stats::ns_per_call(101, 100, || {
            disk.get(black_box(f.ptx), f.entry, &contract).unwrap()
        });
        let verify = stats::ns_per_call(11, 1, || {
            verify_entry(black_box(f.ptx), f.entry, &contract).ok()
        });
        println!(
            "{:<40} {:>10} {:>8.2} {:>9.2} {:>12.1} {:>8.0} {:>8.0}",
            f.entry,
            f.ptx.len(),
            hit.median / 1e3,
            disk_hit.median / 1e3,
            verify.median / 1e3,
            verify.median / hit.median.max(1e-3),
            verify.median / disk_hit.median.max(1e-3)
        );
        criterion.bench_function(&format!("proof_cache hit {}", f.entry), |b| {
            b.iter(|| cache.get(black_box(f.ptx), f.entry, &contract))
        });
        criterion.bench_function(&format!("proof_cache disk hit {}", f.entry), |b| {
            b.iter(|| disk.get(black_box(f.ptx), f.entry, &contract))
        });
        criterion.bench_function(&format!("verify_entry {}", f.entry), |b| {
            b.iter(|| verify_entry(black_box(f.ptx), f.entry, &contract).ok())
        });
    }
    criterion.final_summary();
}
