//! What a run-time guard costs on the emulator: the scalar gather of tests/fixtures/guards/
//! (`out[i] = x[idx[i]]`, its data-dependent load guarded) over 2^20 elements, loaded with
//! `load()` (the guarded rewrite) and with `load_unverified()` (the same PTX without guards),
//! launched and synchronized in the same run on the same device. Goal: guarded ≥ 0.75× the
//! unguarded throughput.
//!
//! The two are timed in interleaved pairs (one launch of each, their order alternating, so that
//! both see the same machine and any drift cancels), and the figure is the median of the
//! per-pair ratios — on a loaded machine a ratio of neighbours moves far less than either
//! time. Where `valgrind` is installed, the host instructions each launch costs the emulator
//! per element are counted by callgrind as well (this binary run with each kernel for one and
//! two launches, so setup cancels out): a ratio load cannot move. And the guard sequence
//! itself: the PTX instructions the rewrite puts around each guarded access, and how many of
//! them an in-bounds access runs (the rest, the fault record, are branched over).
//!
//! Run with `cargo bench --bench guards`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Kernel,
};
use stats::Summary;

const PTX: &str = include_str!("../tests/fixtures/guards/gather_scalar.ptx");
const N: usize = 1 << 20;

/// Interleaved pairs timed.
const PAIRS: usize = 15;

/// Set to `guarded:k` or `unverified:k` for `k` launches of one kernel and nothing else (see
/// [`instructions_per_element`]).
const CALLS_VAR: &str = "GUARDS_CALLS";

/// Elements of the counted launches: fewer than the timed ones, so that callgrind (which runs
/// the emulator's workers one at a time, some fifty times slower) finishes in seconds; the
/// emulator's work per element does not depend on the count.
const COUNTED: usize = 1 << 16;

fn spec() -> AbiSpec {
    AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32, ElementKind::I32],
        vec![ElementKind::F32],
        Vec::new(),
    )
}

fn bind(device: &Device, guarded: bool) -> Kernel<Erased, DeviceBound> {
    let described = Kernel::describe(Artifact::ptx(PTX, "gather", spec())).unwrap();
    let loaded = if guarded {
        described.load().unwrap()
    } else {
        // SAFETY: bound to the emulator only, whose memory checker stops any stray access;
        // every index below is in range.
        unsafe { described.load_unverified() }.unwrap()
    };
    assert_eq!(loaded.loaded().guarded().is_some(), guarded);
    loaded.bind(device).unwrap()
}

/// A gather's operands on one device.
struct Operands {
    x: Vec<f32>,
    idx: Vec<i32>,
    xs: DeviceBuffer<f32>,
    is: DeviceBuffer<i32>,
    out: DeviceBuffer<f32>,
}

impl Operands {
    /// `n` elements, each index a scrambled one in range.
    fn new(device: &Device, n: usize) -> Self {
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let idx: Vec<i32> = (0..n)
            .map(|i| ((i as u64 * 2_654_435_761) % n as u64) as i32)
            .collect();
        Self {
            xs: device.upload(&x).unwrap(),
            is: device.upload(&idx).unwrap(),
            out: device.alloc_zeros::<f32>(n).unwrap(),
            x,
            idx,
        }
    }

    /// One launch over every element, waited for.
    fn run(&mut self, kernel: &Kernel<Erased, DeviceBound>, stream: &jitseam::Stream) {
        kernel
            .launch(
                stream,
                &[(&self.xs).into(), (&self.is).into()],
                &mut [(&mut self.out).into()],
                &[self.x.len()],
                &[],
            )
            .unwrap();
        stream.synchronize().unwrap();
    }

    /// The output is the gather.
    fn assert_gathered(&self, stream: &jitseam::Stream) {
        let got = stream.read(&self.out).unwrap();
        assert!(
            got.iter()
                .zip(&self.idx)
                .all(|(&g, &i)| g == self.x[i as usize])
        );
    }
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// Host instructions per element one launch of `which` (`guarded` or `unverified`) costs on
/// the emulator: this binary run under callgrind for one and for two launches of
/// [`COUNTED`] elements. `None` without valgrind.
fn instructions_per_element(which: &str) -> Option<f64> {
    let run = |launches: u64| stats::callgrind(CALLS_VAR, &format!("{which}:{launches}"));
    let (one, two) = (run(1)?, run(2)?);
    Some(two.checked_sub(one)? as f64 / COUNTED as f64)
}

fn main() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let unverified = bind(&device, false);
    let guarded = bind(&device, true);

    if let Some((which, launches)) = std::env::var(CALLS_VAR).ok().and_then(|v| {
        let (which, launches) = v.split_once(':')?;
        Some((which.to_owned(), launches.parse::<usize>().ok()?))
    }) {
        let kernel = if which == "guarded" {
            &guarded
        } else {
            &unverified
        };
        let mut operands = Operands::new(&device, COUNTED);
        for _ in 0..launches {
            operands.run(kernel, &stream);
        }
        return;
    }

    let mut operands = Operands::new(&device, N);
    operands.run(&unverified, &stream);
    operands.run(&guarded, &stream);
    operands.assert_gathered(&stream);
    let (mut plain, mut checked, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..PAIRS {
        let mut timed = |kernel| time(|| operands.run(black_box(kernel), &stream));
        let (p, g) = if pair % 2 == 0 {
            let p = timed(&unverified);
            (p, timed(&guarded))
        } else {
            let g = timed(&guarded);
            (timed(&unverified), g)
        };
        plain.push(p.as_secs_f64());
        checked.push(g.as_secs_f64());
        // Throughputs: guarded / unverified = the unverified time / the guarded time.
        ratios.push(p.as_secs_f64() / g.as_secs_f64());
    }
    operands.assert_gathered(&stream);
    let rate = |secs: Vec<f64>| Summary::of(secs).inverted(|s| N as f64 / s / 1e6);
    let ratio = Summary::of(ratios);
    println!("gather of 2^20 f32 on the emulator, {PAIRS} interleaved pairs:");
    println!("  unverified {:.2} M elements/s", rate(plain));
    println!("  guarded    {:.2} M elements/s", rate(checked));
    println!(
        "  guarded/unverified, median of per-pair ratios: {:.3}x (min {:.3}, max {:.3}); goal >= 0.75x: {}",
        ratio.median,
        ratio.min,
        ratio.max,
        if ratio.median >= 0.75 {
            "met"
        } else {
            "NOT met"
        }
    );
    // The guard's block replaces the access on its own line: the check up to its branch, the
    // fault record the branch skips, then the readdressing and the access.
    let rewrite = guarded.loaded().guarded().unwrap().ptx();
    let block = rewrite.lines().find(|l| l.contains("{ .reg .b64")).unwrap();
    let (check, rest) = block.split_once(" bra ").unwrap();
    let (record, access) = rest.split_once(": ").unwrap();
    // Less the three declarations; with the branch.
    let check = check.matches(';').count() - 3 + 1;
    // Less the branch's own `;`.
    let record = record.matches(';').count() - 1;
    // Less the access.
    let after = access.matches(';').count() - 1;
    println!(
        "  guard: {} PTX instructions besides each guarded access; {} of them run on an in-bounds one, {record} only when it fails",
        check + record + after,
        check + after
    );
    match (
        instructions_per_element("unverified"),
        instructions_per_element("guarded"),
    ) {
        (Some(plain), Some(checked)) => println!(
            "  emulator host instructions per element (callgrind, 2^16 elements): unverified {plain:.0}, guarded {checked:.0}; unverified/guarded {:.3}x, {:+.0} per guarded access",
            plain / checked,
            checked - plain
        ),
        _ => println!("  instruction counts skipped (no valgrind)"),
    }

    let mut criterion = Criterion::default().configure_from_args();
    criterion.bench_function("guarded gather 2^20 (emulator)", |b| {
        b.iter(|| operands.run(black_box(&guarded), &stream))
    });
    criterion.bench_function("unverified gather 2^20 (emulator)", |b| {
        b.iter(|| operands.run(black_box(&unverified), &stream))
    });
    criterion.final_summary();
}
