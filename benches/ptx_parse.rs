//! How close scanning a module's headers and entries gets to a bare byte search over the same
//! text, on real NVRTC output.
//!
//! The module is built from the real NVRTC fixtures in `tests/fixtures/` (every single-entry
//! module: scalar, vectorized and strided kernels, f16/bf16 inline asm, loops with
//! `.pragma "nounroll";`, vector operands in braces), their entries renamed `<entry>_<k>` and
//! repeated until the module reaches 1, 10 and 50 MiB, ending with the `.file` line (a quoted
//! path) NVRTC writes under `-lineinfo`. At each size `scan_module` (header plus every entry's
//! name, linkage, parameters, performance directives and body range, validated, into a borrowed
//! index) and `memchr::memmem` counting `.entry` run back to back in interleaved rounds; the
//! summary gives both rates (median, min, max) and the median of the per-round ratios
//! scan/memmem. Goal: ratio ≥ 0.3 at 10 MiB. `parse_module` (the scan plus the owned model) is
//! printed alongside for reference.
//!
//! `cargo bench --bench ptx_parse`

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::hint::black_box;
use std::time::Instant;

use jitseam_ptx::{ModuleIndex, parse_module, scan_module};
use stats::Summary;

const MIB: usize = 1 << 20;

/// The real NVRTC modules the corpus repeats (`two_entries.ptx`, hand-written, is left out).
const FIXTURES: [&str; 17] = [
    include_str!("../tests/fixtures/add_bf16_scalar.ptx"),
    include_str!("../tests/fixtures/add_f16_co_v8.ptx"),
    include_str!("../tests/fixtures/add_f16_scalar.ptx"),
    include_str!("../tests/fixtures/add_f32_co_v2.ptx"),
    include_str!("../tests/fixtures/add_f32_co_v4.ptx"),
    include_str!("../tests/fixtures/add_f32_scalar.ptx"),
    include_str!("../tests/fixtures/add_f32_strided_r1.ptx"),
    include_str!("../tests/fixtures/add_f32_strided_r2.ptx"),
    include_str!("../tests/fixtures/add_f32_strided_r3.ptx"),
    include_str!("../tests/fixtures/add_f64_co_v2.ptx"),
    include_str!("../tests/fixtures/add_scalar_mul_scalar_f32_scalar.ptx"),
    include_str!("../tests/fixtures/add_sub_f32_mo2_scalar.ptx"),
    include_str!("../tests/fixtures/axpb_f64_scalar.ptx"),
    include_str!("../tests/fixtures/mul_f64_scalar.ptx"),
    include_str!("../tests/fixtures/mul_scalar_f64_strided_r2.ptx"),
    include_str!("../tests/fixtures/relu_f32_scalar.ptx"),
    include_str!("../tests/fixtures/silu_f32_scalar.ptx"),
];

/// What NVRTC writes after the last entry under `-lineinfo`.
const FILE_LINE: &str = "\t.file\t1 \"/home/user/project/kernels/generated_elementwise.cu\"\n";

/// `(header, entry text, entry name)` of a fixture: the header runs through `.address_size`,
/// the entry text is everything after it.
fn split_fixture(ptx: &str) -> (&str, &str, &str) {
    let header_end = ptx
        .find(".address_size 64\n")
        .map(|i| i + ".address_size 64\n".len())
        .unwrap_or_else(|| panic!("fixture without .address_size"));
    let name_start = ptx
        .find(".entry ")
        .map(|i| i + ".entry ".len())
        .unwrap_or_else(|| panic!("fixture without .entry"));
    let name_end = name_start
        + ptx[name_start..]
            .find('(')
            .unwrap_or_else(|| panic!("fixture entry without parameters"));
    (
        &ptx[..header_end],
        &ptx[header_end..],
        &ptx[name_start..name_end],
    )
}

/// A module of at least `target` bytes: one header, the fixture entries renamed and repeated,
/// the `.file` line.
fn build_module(target: usize) -> String {
    let (header, _, _) = split_fixture(FIXTURES[0]);
    let mut src = String::with_capacity(target + 64 * 1024);
    src.push_str(header);
    let mut round = 0usize;
    while src.len() + FILE_LINE.len() < target {
        for fixture in FIXTURES {
            let (_, entry, name) = split_fixture(fixture);
            src.push_str(&entry.replace(name, &format!("{name}_{round}")));
        }
        round += 1;
    }
    src.push_str(FILE_LINE);
    src
}

fn scan(src: &str) -> ModuleIndex<'_> {
    scan_module(src).unwrap_or_else(|error| panic!("benchmark module failed to scan: {error}"))
}

fn memmem_entries(bytes: &[u8]) -> usize {
    memchr::memmem::find_iter(bytes, b".entry").count()
}

/// Checks the scan against memmem's count and the owned parser; returns the entry count.
fn validate(src: &str) -> usize {
    let index = scan(src);
    let counted = memmem_entries(src.as_bytes());
    assert_eq!(index.entry_count(), counted, "scan_module vs memmem");
    let parsed = parse_module(src)
        .unwrap_or_else(|error| panic!("benchmark module failed to parse: {error}"));
    assert!(
        index.to_module() == parsed,
        "scan_module(..).to_module() differs from parse_module(..)"
    );
    assert!(
        src.matches(".pragma \"nounroll\"").count() > 0,
        "the corpus carries strings in bodies"
    );
    counted
}

fn mb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs.max(f64::MIN_POSITIVE)
}

fn main() {
    println!(
        "ptx_parse: real NVRTC fixtures repeated; rates in MB/s (1e6 bytes), medians of interleaved rounds"
    );
    for (mib, rounds) in [(1usize, 101usize), (10, 31), (50, 11)] {
        let src = build_module(mib * MIB);
        let bytes = src.as_bytes();
        let entries = validate(&src);
        // Warm-up: page in the text and settle the allocator.
        black_box(scan(&src));
        black_box(memmem_entries(bytes));

        let mut scan_secs = Vec::with_capacity(rounds);
        let mut parse_secs = Vec::with_capacity(rounds);
        let mut memmem_secs = Vec::with_capacity(rounds);
        let mut ratios = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            // The index is dropped outside the timed region: freeing is the caller's cost.
            let start = Instant::now();
            let index = black_box(scan(black_box(&src)));
            let scan_time = start.elapsed();
            drop(index);
            let start = Instant::now();
            black_box(memmem_entries(black_box(bytes)));
            let memmem_time = start.elapsed();
            let start = Instant::now();
            let module = black_box(parse_module(black_box(&src)));
            let parse_time = start.elapsed();
            drop(module);
            scan_secs.push(scan_time.as_secs_f64());
            memmem_secs.push(memmem_time.as_secs_f64());
            parse_secs.push(parse_time.as_secs_f64());
            // Scan and memmem ran back to back: their ratio is least disturbed by neighbours.
            ratios.push(memmem_time.as_secs_f64() / scan_time.as_secs_f64().max(1e-12));
        }
        let rate = |secs: Vec<f64>| Summary::of(secs).inverted(|s| mb_per_s(bytes.len(), s));
        let (scan_rate, parse_rate, memmem_rate) =
            (rate(scan_secs), rate(parse_secs), rate(memmem_secs));
        let ratio = Summary::of(ratios);
        println!(
            "{mib:>3} MiB ({:.1} MB, {entries} entries, {rounds} rounds):",
            bytes.len() as f64 / 1e6
        );
        println!("    scan_module         {scan_rate:.0} MB/s");
        println!("    memmem .entry       {memmem_rate:.0} MB/s");
        println!("    parse_module (ref.) {parse_rate:.0} MB/s");
        println!(
            "    ratio scan/memmem   {ratio:.3}{}",
            if mib == 10 {
                if ratio.median >= 0.3 {
                    "  (goal >= 0.3 at 10 MiB: met)"
                } else {
                    "  (goal >= 0.3 at 10 MiB: NOT met)"
                }
            } else {
                ""
            }
        );
    }
}
