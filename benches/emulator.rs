//! Element throughput of the emulator device on real NVRTC output, by worker count and grid,
//! and how far it is from a plain Rust loop doing the same arithmetic, measured in the same run.
//!
//! The scalar f32 add and the float4 add fixtures run on 2^20 elements through the emulator
//! device: the launch is checked and marshaled once, then each sample queues it on the
//! backend and waits for it (so a sample is one whole launch: operand lending, every block,
//! the result in device memory). Each kernel runs
//! - with one worker thread and with every core (`EmulatorConfig::workers`), and
//! - over the full grid (one thread per element, blocks of 256, per-thread setup included) and
//!   over the grid a grid-stride body gets (`LaunchFacts::grid_stride`: the emulator caps it at
//!   4 blocks per worker).
//!
//! Every figure is the MEDIAN of `RUNS` timed launches after two warm-up launches, printed with
//! the fastest and slowest, with the ratios the emulator's goals are stated in: one core to
//! every core, full grid to capped grid. Each line also gives the cores the process kept busy
//! and the elements per CPU-second: on a shared, loaded machine a second worker may get no
//! second core, and these tell that apart from a second worker that does no work. Goals: ≥ 100 M elements/s for the float4 add on two
//! cores, and ≥ 1.8× from one core to two.
//!
//! Run with `cargo bench --bench emulator`.

#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::hint::black_box;
use std::sync::Arc;

use jitseam::device::{Backend, EmulatorBackend, EmulatorConfig};
use jitseam::launch::{LaunchFacts, check, marshal};
use jitseam::{AbiSpec, Artifact, Device, DeviceBound, Erased, Kernel};
use jitseam_emu::interp::available_workers;

const N: usize = 1 << 20;

/// Launches timed per configuration.
const RUNS: usize = 21;
/// Untimed launches before them.
const WARM_UP: usize = 2;

fn kernel(device: &Device, ptx: &str, entry: &str, spec: AbiSpec) -> Kernel<Erased, DeviceBound> {
    let loaded = Kernel::describe(Artifact::ptx(ptx, entry, spec))
        .and_then(|k| k.load().map_err(Into::into));
    match loaded.and_then(|k| k.bind(device).map_err(Into::into)) {
        Ok(k) => k,
        Err(e) => panic!("cannot bind {entry}: {e}"),
    }
}

/// One kernel to measure.
struct Case {
    name: &'static str,
    ptx: &'static str,
    entry: &'static str,
    spec: fn() -> AbiSpec,
}

fn cases() -> [Case; 2] {
    use jitseam::{AbiKind, ElementKind::F32};
    [
        Case {
            name: "scalar add",
            ptx: include_str!("../tests/fixtures/add_f32_scalar.ptx"),
            entry: "baracuda_gen_add_f32_scalar",
            spec: || AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[]),
        },
        Case {
            name: "float4 add",
            ptx: include_str!("../tests/fixtures/add_f32_co_v4.ptx"),
            entry: "baracuda_gen_add_f32_co_v4",
            spec: || AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[]),
        },
    ]
}

/// What the process used while the timed launches ran.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    /// Cores kept busy: CPU time over wall time.
    busy: f64,
    /// Elements per CPU-second: the rate the launches would reach if the process had all the
    /// CPU time it asked for (on a loaded machine the wall-clock rate is far lower).
    per_cpu_second: f64,
}

/// Elements per second of `RUNS` timed calls of `f` after `WARM_UP` untimed ones, and the CPU the
/// process used meanwhile (`None` where it cannot tell).
fn rate(mut f: impl FnMut()) -> (stats::Summary, Option<Cpu>) {
    for _ in 0..WARM_UP {
        f();
    }
    let (cpu0, wall0) = (cpu_seconds(), std::time::Instant::now());
    let times = stats::times(RUNS, f);
    let cpu = cpu_seconds()
        .zip(cpu0)
        .map(|(end, start)| end - start)
        .filter(|&used| used > 0.0)
        .map(|used| Cpu {
            busy: used / wall0.elapsed().as_secs_f64(),
            per_cpu_second: (N * RUNS) as f64 / used,
        });
    (
        stats::Summary::of(stats::secs(&times)).inverted(|secs| N as f64 / secs),
        cpu,
    )
}

/// User and system CPU time of this process so far (Linux `/proc/self/stat`, in clock ticks of
/// 10 ms), so that a rate that does not grow with the workers can be told apart from workers
/// that did not run: on a loaded machine two workers may keep two cores busy and still finish no
/// sooner.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn millions(rate: stats::Summary) -> String {
    format!(
        "median {:8.1} M elements/s (min {:.1}, max {:.1}, n={})",
        rate.median / 1e6,
        rate.min / 1e6,
        rate.max / 1e6,
        rate.samples
    )
}

/// The median rate of `case` on an emulator with `workers` threads, over the full grid or the
/// capped one, and the cores kept busy; checks the sum.
fn measure(
    case: &Case,
    workers: usize,
    grid_stride: bool,
    a: &[f32],
    b: &[f32],
) -> (stats::Summary, Option<Cpu>) {
    let backend = Arc::new(EmulatorBackend::with_config(EmulatorConfig {
        workers,
        ..EmulatorConfig::default()
    }));
    let device = Device::with_backend(backend.clone());
    let k = kernel(&device, case.ptx, case.entry, (case.spec)());
    let (a, b) = (
        device.upload(a).expect("upload"),
        device.upload(b).expect("upload"),
    );
    let out = device.alloc::<f32>(N).expect("alloc");
    let (ins, outs, shape) = ([a.desc(), b.desc()], [out.desc()], [N]);
    // The loaded kernel does not yet say whether its body is a grid-stride loop (both fixtures
    // are), so the bench sets the launch's one hook itself.
    let facts = LaunchFacts {
        grid_stride,
        ..k.facts()
    };
    let checked = check(facts, device.id(), &ins, &outs, &shape, &[]).expect("check");
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    let measured = rate(|| {
        // SAFETY: the packet is `marshal`'s output for a launch `check` accepted on live
        // buffers of this device, which nothing else uses while the bench runs.
        unsafe {
            backend
                .launch(k.bound().function(), &*stream, checked.geometry(), &packet)
                .expect("launch");
        }
        backend.synchronize(&*stream).expect("synchronize");
    });
    let result = device.default_stream().read(&out).expect("read");
    assert!(
        result.iter().enumerate().all(|(i, &v)| v == 1.5 * i as f32),
        "{} computed a wrong sum",
        case.name
    );
    measured
}

fn plain_loop(a: &[f32], b: &[f32], out: &mut [f32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}

fn main() {
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let all = available_workers();
    println!("emulator: 2^20 f32 elements, {all} cores available, medians of {RUNS} launches");
    let mut host_out = vec![0.0f32; N];
    let (plain, _) = rate(|| {
        plain_loop(black_box(&a), black_box(&b), &mut host_out);
        black_box(&host_out);
    });
    println!(
        "plain Rust loop (one core)                     {}",
        millions(plain)
    );
    for case in &cases() {
        // [workers][grid]: rates by (1 worker, all workers) × (full grid, capped grid).
        let mut rates = [[None; 2]; 2];
        for (w, workers) in [1, all].into_iter().enumerate() {
            for (g, grid_stride) in [false, true].into_iter().enumerate() {
                let (r, cpu) = measure(case, workers, grid_stride, &a, &b);
                let grid = if grid_stride {
                    "capped grid"
                } else {
                    "full grid  "
                };
                let cpu = cpu.map_or("cpu n/a".to_owned(), |c| {
                    format!(
                        "cores busy {:.2}, {:.1} M elements per CPU-second",
                        c.busy,
                        c.per_cpu_second / 1e6
                    )
                });
                println!(
                    "emulator {:<10} {workers} worker(s), {grid}: {} ({:.4}x the plain loop; {cpu})",
                    case.name,
                    millions(r),
                    r.median / plain.median
                );
                rates[w][g] = Some(r.median);
            }
        }
        let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => format!("{:.2}x", x / y),
            _ => "n/a".to_owned(),
        };
        println!(
            "emulator {:<10} 1 -> {all} workers: {} (full grid), {} (capped grid); full -> capped grid: {} (1 worker), {} ({all} workers)",
            case.name,
            ratio(rates[1][0], rates[0][0]),
            ratio(rates[1][1], rates[0][1]),
            ratio(rates[0][1], rates[0][0]),
            ratio(rates[1][1], rates[1][0]),
        );
    }
}
