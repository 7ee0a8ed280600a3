//! Element throughput of the emulator device on real NVRTC output, and how far it is from a
//! plain Rust loop doing the same arithmetic.
//!
//! The scalar f32 add and the float4 add fixtures run on 2^20 elements through the whole checked
//! path (`check`, `marshal`, the emulator's `launch`) with the launcher's own geometry (blocks
//! of 256, one element per thread, so per-thread setup is included). The summary printed first
//! gives elements/s and the ratio to a plain `for` loop over the same slices. Goal: ≥ 10 M
//! elements/s on a 2-core machine.
//!
//! Run with `cargo bench --bench emulator`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
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

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
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
    let plain = best_of(20, || {
        plain_loop(black_box(&a_host), black_box(&b_host), &mut host_out);
        black_box(&host_out);
    });
    let plain_rate = N as f64 / plain.as_secs_f64();
    println!("plain Rust loop: {:.1} M elements/s", plain_rate / 1e6);
    for case in &cases {
        let time = best_of(5, || {
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
        let rate = N as f64 / time.as_secs_f64();
        println!(
            "emulator {}: {:.1} M elements/s ({:.1} ns/element), {:.4}x the plain loop",
            case.name,
            rate / 1e6,
            time.as_secs_f64() * 1e9 / N as f64,
            rate / plain_rate
        );
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
        let time = best_of(5, || {
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
        let rate = N as f64 / time.as_secs_f64();
        println!(
            "emulator add_f32_scalar, grid 64 x 256: {:.1} M elements/s ({:.1} ns/element), {:.4}x the plain loop",
            rate / 1e6,
            time.as_secs_f64() * 1e9 / N as f64,
            rate / plain_rate
        );
    }
    let result = stream.read(&out).expect("read");
    assert!(result.iter().enumerate().all(|(i, &v)| v == 1.5 * i as f32));

    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    let mut group = criterion.benchmark_group("emulator");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("plain_loop", |bench| {
        bench.iter(|| plain_loop(black_box(&a_host), black_box(&b_host), &mut host_out));
    });
    for case in &cases {
        group.bench_function(case.name, |bench| {
            bench.iter(|| {
                case.kernel
                    .launch(
                        &stream,
                        &[(&a).into(), (&b).into()],
                        &mut [(&mut out).into()],
                        &[N],
                        &[],
                    )
                    .expect("launch")
            });
        });
    }
    group.finish();
    criterion.final_summary();
}
