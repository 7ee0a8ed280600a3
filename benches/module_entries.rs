//! What proving every entry of one large module costs per entry, as the module grows: a
//! runtime's kernel library, or `jitseam inspect --abi` over it, reads the module once and
//! proves each entry (`jitseam::kernel::prove_entry`), so the cost per entry must stay flat.
//!
//! The module is the real NVRTC fixtures of `tests/fixtures/` with one dense (scalar or
//! vectorized) entry each, renamed `<entry>_<k>` and repeated to 1×, 4× and 16× (about 2,000
//! entries, 8 MiB, at the largest; strided entries cost tens of milliseconds each to prove,
//! see `cargo bench --bench verify`, and would only make the run longer). For each size the
//! whole module is resolved once and every entry proven under its true ABI; the summary gives
//! the median time per entry and its ratio to the smallest module's (1.0 is linear; a module
//! parsed again per entry would grow with the size).
//!
//! `cargo bench --bench module_entries`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use jitseam::AbiSpec;
use jitseam::kernel::prove_entry;
use jitseam_ptx::resolve::ResolvedModule;

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code, unreachable_pub)]
mod fixtures;

/// `(header, entry text, entry name)` of a one-entry module.
fn split(ptx: &str) -> Option<(&str, &str, &str)> {
    let header_end = ptx.find(".address_size 64\n")? + ".address_size 64\n".len();
    let name_start = ptx.find(".entry ")? + ".entry ".len();
    let name_end = name_start + ptx[name_start..].find('(')?;
    Some((
        &ptx[..header_end],
        &ptx[header_end..],
        &ptx[name_start..name_end],
    ))
}

/// The module of `rounds` copies of every one-entry fixture, and each entry's name and ABI.
fn module(rounds: usize) -> (String, Vec<(String, AbiSpec)>) {
    let single: Vec<_> = fixtures::all()
        .iter()
        .filter(|f| f.ptx.matches(".entry ").count() == 1 && !f.ptx.contains(".func"))
        .filter(|f| !matches!(f.spec.abi, jitseam::AbiKind::Strided { .. }))
        .filter_map(|f| split(f.ptx).map(|parts| (parts, &f.spec)))
        .collect();
    let mut text = single[0].0.0.to_owned();
    let mut entries = Vec::new();
    for round in 0..rounds {
        for ((_, body, name), spec) in &single {
            let renamed = format!("{name}_{round}");
            text.push_str(&body.replace(name, &renamed));
            entries.push((renamed, (*spec).clone()));
        }
    }
    (text, entries)
}

/// Resolves `text` once and proves every entry; each must be proven.
fn prove_all(text: &str, entries: &[(String, AbiSpec)]) {
    let module = ResolvedModule::new(text).unwrap();
    for (name, spec) in entries {
        black_box(prove_entry(text, &module, name, spec)).unwrap();
    }
}

fn main() {
    let per_round = module(1).1.len();
    // About 2,000 entries at the largest size.
    let base = (2_000 / 16 / per_round).max(1);
    println!(
        "{:>8} {:>10} {:>14} {:>10}",
        "entries", "MiB", "µs per entry", "ratio"
    );
    let mut first = None;
    for scale in [1, 4, 16] {
        let (text, entries) = module(base * scale);
        let mut samples = Vec::new();
        let start = Instant::now();
        while samples.len() < 3 || (start.elapsed() < Duration::from_secs(5) && samples.len() < 11)
        {
            let t = Instant::now();
            prove_all(&text, &entries);
            samples.push(t.elapsed().as_secs_f64() * 1e6 / entries.len() as f64);
        }
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        let ratio = median / *first.get_or_insert(median);
        println!(
            "{:>8} {:>10.1} {:>14.1} {:>10.2}",
            entries.len(),
            text.len() as f64 / (1 << 20) as f64,
            median,
            ratio
        );
    }
}
