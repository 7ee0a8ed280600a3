//! What proving a body costs next to loading without it.
//!
//! For every NVRTC fixture entry: the median time of `verify_entry` (decode, abstract
//! interpretation, proofs) and of `Kernel::describe(artifact).load_unverified()` (the module
//! scan and the `.param` check: `load()` without the body proof), and their ratio.
//!
//! For every kernel of the real corpus (tests/fixtures/real/, under its custom signature): the
//! median time of `verify_guarded` on the module parsed once, as `load()` proves it (the
//! proof, the guards' rewrite and its re-proof), and the module's parse; then the median, p90
//! and max over the corpus and over every entry. Goals: median ≤ 300 µs, p90 ≤ 1 ms, max ≤
//! 10 ms per entry, and the synthesizer's own output (strided rank 3 included) ≤ 100 µs.
//!
//! Run with `cargo bench --bench verify`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jitseam::abi::AbiContract;
use jitseam::synth::{Arch, ElementwiseSynthesizer, OperandDesc, Synthesizer};
use jitseam::{AbiSpec, ElementKind, Kernel};
use jitseam_ptx::resolve::ResolvedModule;
use jitseam_verify::{verify_entry, verify_guarded};

#[path = "support/three_op.rs"]
mod three_op;
use three_op::three_op;

#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code, unreachable_pub)]
mod fixtures;

fn median(f: impl FnMut(), budget: Duration) -> Duration {
    median_of(f, budget, 11)
}

/// The median of at least `least` runs of `f`, more while `budget` lasts.
fn median_of(mut f: impl FnMut(), budget: Duration, least: usize) -> Duration {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < least || (start.elapsed() < budget && samples.len() < 2001) {
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
    let mut fixture_medians = Vec::new();
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
        fixture_medians.push(v);
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
    let fixture_us: Vec<f64> = fixture_medians
        .iter()
        .map(|d| d.as_secs_f64() * 1e6)
        .collect();
    let corpus_us = corpus();
    println!("{}", spread("real corpus", &corpus_us));
    println!(
        "{}",
        spread(
            "every entry (corpus and fixtures)",
            &[corpus_us, fixture_us].concat()
        )
    );
    synthesized();
    if let Some(f) = all.iter().find(|f| f.entry.ends_with("add_f32_scalar")) {
        let contract = f.spec.contract();
        criterion.bench_function("verify_entry add_f32_scalar", |b| {
            b.iter(|| verify_entry(black_box(f.ptx), f.entry, &contract).ok())
        });
    }
    criterion.final_summary();
}

/// Median, p90 and max of per-entry medians (µs), against the goals.
fn spread(what: &str, us: &[f64]) -> String {
    let mut v = us.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        v.get(((v.len() as f64 * q).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let (median, p90, max) = (at(0.5), at(0.9), at(1.0));
    let verdict = |x: f64, goal: f64| if x <= goal { "met" } else { "missed" };
    format!(
        "{what}, {} entries: median {median:.1} µs (goal ≤ 300: {}), p90 {p90:.1} µs (goal ≤ 1000: \
         {}), max {max:.1} µs (goal ≤ 10000: {})",
        v.len(),
        verdict(median, 300.0),
        verdict(p90, 1000.0),
        verdict(max, 10_000.0)
    )
}

/// Every kernel of tests/fixtures/real/: the median of `verify_guarded` on its module parsed
/// once, as `load()` proves it; the medians in µs.
fn corpus() -> Vec<f64> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    let manifest: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    println!(
        "\n{:<48} {:>12} {:>12}  verdict",
        "real-corpus entry", "prove µs", "parse µs"
    );
    let mut out = Vec::new();
    for e in &manifest {
        let (Some(entry), Some(file), Some(signature)) = (
            e["entry"].as_str(),
            e["file"].as_str(),
            e["signature"].as_str(),
        ) else {
            continue;
        };
        let covers = e.get("covers").and_then(|c| c.as_str());
        let (Ok(spec), Ok(ptx)) = (
            AbiSpec::parse_custom(signature, covers),
            std::fs::read_to_string(dir.join(file)),
        ) else {
            println!("{entry:<48} (unreadable)");
            continue;
        };
        let contract = spec.contract();
        let parse = median_of(
            || {
                if let Ok(m) = ResolvedModule::new(black_box(&ptx)) {
                    black_box(m.entry(&ptx, entry)).ok();
                }
            },
            Duration::from_millis(100),
            1,
        );
        let Ok(module) = ResolvedModule::new(&ptx) else {
            continue;
        };
        let Ok(resolved) = module.entry(&ptx, entry) else {
            continue;
        };
        let mut verdict = String::new();
        let prove = median_of(
            || {
                verdict = match verify_guarded(&ptx, &module, &resolved, &contract) {
                    Ok(p) if p.guards().is_empty() => "proven".to_owned(),
                    Ok(p) => format!("guarded ({})", p.guards().len()),
                    Err(r) => format!("declined ({:?})", r.kind),
                };
            },
            Duration::from_millis(300),
            1,
        );
        let us = prove.as_secs_f64() * 1e6;
        println!(
            "{entry:<48} {us:>12.1} {:>12.1}  {verdict}",
            parse.as_secs_f64() * 1e6
        );
        out.push(us);
    }
    out
}

/// The synthesizer's output proven: contiguous (vectorized) and strided rank 3.
fn synthesized() {
    let mut strided = vec![OperandDesc::contiguous(ElementKind::F32, &[64, 32, 16], 256); 3];
    if let Some(first) = strided.first_mut() {
        first.strides = vec![1, 64, 2048];
    }
    let cases = [
        (
            "f32 contiguous",
            three_op(
                vec![OperandDesc::contiguous(ElementKind::F32, &[1024, 1024], 256); 3],
                Arch::sm(80),
            ),
        ),
        ("f32 strided:3", three_op(strided, Arch::sm(80))),
    ];
    let synth = ElementwiseSynthesizer::new();
    for (name, request) in cases {
        let Ok(artifact) = synth.synthesize(&request) else {
            println!("synthesizer output, {name}: not synthesized");
            continue;
        };
        let text = String::from_utf8_lossy(&artifact.bytes).into_owned();
        let contract = artifact.abi.contract();
        let entry = artifact.link.symbol.clone();
        let mut proven = false;
        let t = median(
            || proven = verify_entry(black_box(&text), &entry, &contract).is_ok(),
            Duration::from_millis(300),
        );
        let us = t.as_secs_f64() * 1e6;
        println!(
            "synthesizer output, {name} ({}): verify_entry {us:.1} µs (goal ≤ 100: {}){}",
            artifact.abi.abi,
            if us <= 100.0 { "met" } else { "missed" },
            if proven { "" } else { ", NOT PROVEN" }
        );
    }
}
