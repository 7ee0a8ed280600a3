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
//! Then the module of issue-sized trivial entries (`ret;` under a scalar ABI) at 5,000 and
//! 20,000 entries: the whole module resolved and every entry proven, in milliseconds, and the
//! ratio of the two (4.0 is linear).
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

/// `count` entries `k<i>(.u64, .u64, .u64)` whose body only returns.
fn trivial(count: usize) -> (String, Vec<(String, AbiSpec)>) {
    use jitseam::ElementKind::F32;
    let spec = AbiSpec::new(jitseam::AbiKind::Scalar, &[F32], &[F32], &[]);
    let mut text = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    let mut entries = Vec::new();
    for i in 0..count {
        text.push_str(&format!(
            ".visible .entry k{i}(.param .u64 a{i}, .param .u64 b{i}, .param .u64 n{i})\n{{\n\tret;\n}}\n"
        ));
        entries.push((format!("k{i}"), spec.clone()));
    }
    (text, entries)
}

/// The median of a few runs of `prove_all` over `module`, in seconds.
fn median_secs(module: &(String, Vec<(String, AbiSpec)>)) -> f64 {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 3 || (start.elapsed() < Duration::from_secs(5) && samples.len() < 11) {
        let t = Instant::now();
        prove_all(&module.0, &module.1);
        samples.push(t.elapsed().as_secs_f64());
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
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
        let built = module(base * scale);
        let (text, entries) = (&built.0, &built.1);
        let median = median_secs(&built) * 1e6 / entries.len() as f64;
        let ratio = median / *first.get_or_insert(median);
        println!(
            "{:>8} {:>10.1} {:>14.1} {:>10.2}",
            entries.len(),
            text.len() as f64 / (1 << 20) as f64,
            median,
            ratio
        );
    }
    let small = median_secs(&trivial(5_000));
    let large = median_secs(&trivial(20_000));
    println!(
        "trivial entries: 5,000 in {:.1} ms, 20,000 in {:.1} ms, ratio {:.2}",
        small * 1e3,
        large * 1e3,
        large / small
    );
}
