//! Element throughput of the emulator device on real NVRTC output, and how far it is from a
//! plain Rust loop doing the same arithmetic, measured in the same run.
//!
//! The scalar f32 add and the float4 add fixtures run on 2^20 elements through the whole checked
//! path (`check`, `marshal`, the emulator's `launch`) with the launcher's own geometry (blocks
//! of 256, one element per thread, so per-thread setup is included), and the scalar add once
//! more on a capped grid. Each case is timed `RUNS` times; the summary gives the median rate
//! (with min and max) in elements/s and the ratio of medians to the plain `for` loop over the
//! same slices. Goal: ≥ 10 M elements/s on a 2-core machine.
//!
//! To add a case (another fixture, another device), add a [`Case`]; every case is measured and
//! printed the same way.
//!
//! Run with `cargo bench --bench emulator`.

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::hint::black_box;
use std::sync::Arc;

use jitseam::device::{Backend, EmulatorBackend, Geometry};
use jitseam::launch::{check, marshal};
use jitseam::{AbiSpec, Artifact, Device, DeviceBound, Erased, Kernel};

const N: usize = 1 << 20;

fn kernel(device: &Device, ptx: &str, entry: &str, spec: AbiSpec) -> Kernel<Erased, DeviceBound> {
    let loaded = Kernel::describe(Artifact::ptx(ptx, entry, spec))
        .and_then(|k| k.load().map_err(Into::into));
    match loaded.and_then(|k| k.bind(device).map_err(Into::into)) {
        Ok(k) => k,
        Err(e) => panic!("cannot bind {entry}: {e}"),
    }
}

struct Case {
    name: &'static str,
    kernel: Kernel<Erased, DeviceBound>,
}

fn make_cases(device: &Device) -> Vec<Case> {
    use jitseam::{AbiKind, ElementKind::F32};
    vec![
        Case {
            name: "add_f32_scalar",
            kernel: kernel(
                device,
                include_str!("../tests/fixtures/add_f32_scalar.ptx"),
                "baracuda_gen_add_f32_scalar",
                AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[]),
            ),
        },
        Case {
            name: "add_f32_co_v4",
            kernel: kernel(
                device,
                include_str!("../tests/fixtures/add_f32_co_v4.ptx"),
                "baracuda_gen_add_f32_co_v4",
                AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[]),
            ),
        },
    ]
}

/// Launches timed per case.
const RUNS: usize = 11;

/// Elements per second of `RUNS` timed calls of `f`, one call per sample.
fn rate(f: impl FnMut()) -> stats::Summary {
    let times = stats::times(RUNS, f);
    stats::Summary::of(stats::secs(&times)).inverted(|secs| N as f64 / secs)
}

fn report(name: &str, rate: stats::Summary, plain: stats::Summary) {
    let m = |r: f64| r / 1e6;
    println!(
        "emulator {name}: median {:.1} M elements/s (min {:.1}, max {:.1}, n={}), {:.1} ns/element, {:.4}x the plain loop",
        m(rate.median),
        m(rate.min),
        m(rate.max),
        rate.samples,
        1e9 / rate.median,
        rate.median / plain.median
    );
}

fn plain_loop(a: &[f32], b: &[f32], out: &mut [f32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}

fn main() {
    let device = Device::emulator();
    let a_host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b_host: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let a = device.upload(&a_host).expect("upload");
    let b = device.upload(&b_host).expect("upload");
    let mut out = device.alloc::<f32>(N).expect("alloc");
    let stream = device.default_stream();
    let cases = make_cases(&device);

    let mut host_out = vec![0.0f32; N];
    let plain = rate(|| {
        plain_loop(black_box(&a_host), black_box(&b_host), &mut host_out);
        black_box(&host_out);
    });
    println!(
        "plain Rust loop: median {:.1} M elements/s (min {:.1}, max {:.1}, n={})",
        plain.median / 1e6,
        plain.min / 1e6,
        plain.max / 1e6,
        plain.samples
    );
    for case in &cases {
        let measured = rate(|| {
            case.kernel
                .launch(
                    &stream,
                    &[(&a).into(), (&b).into()],
                    &mut [(&mut out).into()],
                    &[N],
                    &[],
                )
                .expect("launch");
        });
        report(case.name, measured, plain);
    }
    // The same scalar kernel with a capped grid: 64 blocks of 256 threads, 64 elements per
    // thread, so the per-thread setup (about 40 of the ~55 instructions a one-element thread
    // runs) is amortized and the loop body's speed shows.
    {
        let backend = Arc::new(EmulatorBackend::new());
        let dev = Device::with_backend(backend.clone());
        let own = make_cases(&dev);
        let k = &own[0].kernel;
        let a = dev.upload(&a_host).expect("upload");
        let b = dev.upload(&b_host).expect("upload");
        let out = dev.alloc::<f32>(N).expect("alloc");
        let (ins, outs, shape) = ([a.desc(), b.desc()], [out.desc()], [N]);
        let checked = check(k.facts(), dev.id(), &ins, &outs, &shape, &[]).expect("check");
        let packet = marshal(&checked);
        let raw_stream = backend.default_stream();
        let measured = rate(|| {
            // SAFETY: the packet is `marshal`'s output for a launch `check` accepted on live
            // buffers of this device; only the grid differs, and the kernel is a grid-stride
            // loop. The emulator checks every access anyway.
            unsafe {
                backend
                    .launch(
                        k.bound().function(),
                        &*raw_stream,
                        Geometry {
                            grid: 64,
                            block: 256,
                        },
                        &packet,
                    )
                    .expect("launch");
            }
        });
        report("add_f32_scalar, grid 64 x 256", measured, plain);
    }
    let result = stream.read(&out).expect("read");
    assert!(result.iter().enumerate().all(|(i, &v)| v == 1.5 * i as f32));
}
