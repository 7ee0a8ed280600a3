//! What a run-time guard costs on the emulator: the scalar gather of tests/fixtures/guards/
//! (`out[i] = x[idx[i]]`, its data-dependent load guarded) over 2^20 elements, loaded with
//! `load()` (the guarded rewrite) and with `load_unverified()` (the same PTX without guards),
//! launched and synchronized in the same run on the same device, and their ratio; and how many
//! instructions the guard adds before each guarded access. Goal: guarded ≥ 0.75× the unguarded
//! throughput.
//!
//! Run with `cargo bench --bench guards`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Kernel,
};

const PTX: &str = include_str!("../tests/fixtures/guards/gather_scalar.ptx");
const N: usize = 1 << 20;

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

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    f();
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// One launch over every element, waited for.
fn run(
    kernel: &Kernel<Erased, DeviceBound>,
    stream: &jitseam::Stream,
    xs: &DeviceBuffer<f32>,
    is: &DeviceBuffer<i32>,
    out: &mut DeviceBuffer<f32>,
) {
    kernel
        .launch(
            stream,
            &[xs.into(), is.into()],
            &mut [out.into()],
            &[N],
            &[],
        )
        .unwrap();
    stream.synchronize().unwrap();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let device = Device::emulator();
    let stream = device.default_stream();
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let idx: Vec<i32> = (0..N)
        .map(|i| ((i as u64 * 2_654_435_761) % N as u64) as i32)
        .collect();
    let xs = device.upload(&x).unwrap();
    let is = device.upload(&idx).unwrap();
    let mut out = device.alloc_zeros::<f32>(N).unwrap();
    let unverified = bind(&device, false);
    let guarded = bind(&device, true);
    let plain = median(|| run(&unverified, &stream, &xs, &is, &mut out), 9);
    let checked = median(|| run(&guarded, &stream, &xs, &is, &mut out), 9);
    let got = stream.read(&out).unwrap();
    assert!((0..N).all(|i| got[i] == x[idx[i] as usize]));
    let rate = |d: Duration| N as f64 / d.as_secs_f64() / 1e6;
    println!(
        "gather of 2^20 f32 on the emulator: unverified {:.1} M elements/s, guarded {:.1} M elements/s, guarded/unverified {:.3}x",
        rate(plain),
        rate(checked),
        plain.as_secs_f64() / checked.as_secs_f64()
    );
    // The guard's block replaces the access on its own line: its instructions, less the access.
    let rewrite = guarded.loaded().guarded().unwrap().ptx();
    let block = rewrite.lines().find(|l| l.contains("{ .reg .b64")).unwrap();
    let instructions = block.matches(';').count() - 3 - 1;
    println!(
        "guard: {instructions} instructions before each guarded access (the fault record's {} of them run only when it fails)",
        block.matches("@%__jsgp3").count() + 1
    );
    criterion.bench_function("guarded gather 2^20 (emulator)", |b| {
        b.iter(|| run(black_box(&guarded), &stream, &xs, &is, &mut out))
    });
    criterion.bench_function("unverified gather 2^20 (emulator)", |b| {
        b.iter(|| run(black_box(&unverified), &stream, &xs, &is, &mut out))
    });
    criterion.final_summary();
}
