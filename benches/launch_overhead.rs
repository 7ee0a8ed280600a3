//! What jitseam's checks cost per launch: `check` + `marshal` for a 3-operand scalar f32 kernel
//! (2 inputs, 1 output) versus writing the same packet by hand — three device pointers and `n`
//! into a byte array, what a cudarc `launch_builder` user pushes. No device is needed: the
//! operands live on a recording backend that only hands out addresses.
//!
//! Prints both medians and the ratio; the goal is check + marshal ≤ 100 ns. Where `valgrind` is
//! installed it also prints instructions per check + marshal call, by callgrind: a figure that
//! load on a shared machine cannot move.
//!
//! Also the whole launch through `Kernel::launch` on a backend that runs nothing (check, the
//! streams' access logs, marshal, the hand-off), on one stream and alternating between two
//! streams (every launch then waits for the other stream's events): see `streams.rs`.
//!
//! `cargo bench --bench launch_overhead`

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/common/recording.rs"]
mod recording;

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/common/fixtures.rs"]
mod fixtures;

#[path = "support/launch_streams.rs"]
mod streams;

use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

use criterion::Criterion;
use jitseam::abi::{AbiKind, AbiSpec, ParamLayout};
use jitseam::device::{DeviceId, ViewDesc};
use jitseam::launch::{LaunchFacts, check, marshal_with};
use jitseam::{DeviceBuffer, ElementKind};

const N: usize = 1 << 20;

struct Setup {
    spec: AbiSpec,
    layout: ParamLayout,
    device: DeviceId,
    inputs: [ViewDesc; 2],
    outputs: [ViewDesc; 1],
    // Keep the buffers (and so the device id) alive while their descriptions are used.
    _buffers: [DeviceBuffer<f32>; 3],
}

impl Setup {
    fn new() -> Self {
        let (device, _backend) = recording::device();
        let spec = AbiSpec::new(
            AbiKind::Scalar,
            &[ElementKind::F32, ElementKind::F32],
            &[ElementKind::F32],
            &[],
        );
        let layout = ParamLayout::new(&spec.expected_params());
        let alloc = || device.alloc::<f32>(N).unwrap();
        let buffers = [alloc(), alloc(), alloc()];
        Self {
            inputs: [buffers[0].desc(), buffers[1].desc()],
            outputs: [buffers[2].desc()],
            device: device.id(),
            spec,
            layout,
            _buffers: buffers,
        }
    }

    fn facts(&self) -> LaunchFacts<'_> {
        LaunchFacts {
            entry: "baracuda_gen_add_f32_scalar",
            spec: &self.spec,
            layout: &self.layout,
            device: self.device,
            max_grid_x: 2_147_483_647,
        }
    }

    /// The checked path; returns one packet byte so nothing is optimized away.
    fn checked(&self) -> u8 {
        let checked = check(
            black_box(self.facts()),
            black_box(self.device),
            black_box(&self.inputs),
            black_box(&self.outputs),
            black_box(&[N]),
            black_box(&[]),
        )
        .unwrap();
        // As the launch path does: the packet is lent where it was built, never moved.
        marshal_with(&checked, |packet| black_box(packet.bytes())[24])
    }

    /// The hand-written packet: three pointers and `n`, no checks.
    fn raw(&self) -> u8 {
        let pointers = black_box([
            self.inputs[0].base,
            self.inputs[1].base,
            self.outputs[0].base,
        ]);
        let n = black_box(N as u64);
        let mut packet = [0u8; 32];
        for (slot, value) in packet
            .chunks_exact_mut(8)
            .zip(pointers.into_iter().chain([n]))
        {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        black_box(&packet)[24]
    }
}

/// Set to `k` for a run of `k` checked calls and nothing else (see [`instructions_per_call`]).
const CALLS_VAR: &str = "LAUNCH_OVERHEAD_CALLS";

/// Instructions per checked call: this binary run twice under callgrind with different call
/// counts, so setup and process start cancel out. `None` without valgrind.
fn instructions_per_call() -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let run = |calls: u64| -> Option<u64> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(&exe)
            .env(CALLS_VAR, calls.to_string())
            .output()
            .ok()?;
        let log = String::from_utf8_lossy(&out.stderr);
        let (_, rest) = log.split_once("Collected : ")?;
        rest.split_whitespace().next()?.parse().ok()
    };
    let (low, high) = (run(1_000)?, run(11_000)?);
    Some(high.checked_sub(low)? / 10_000)
}

/// Median nanoseconds per call over `samples` batches of `batch` calls.
fn median_ns(samples: usize, batch: usize, f: impl Fn() -> u8) -> f64 {
    let mut per_call: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                black_box(f());
            }
            start.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[samples / 2]
}

fn main() {
    let setup = Setup::new();
    assert_eq!(
        setup.checked(),
        setup.raw(),
        "both packets carry the same n"
    );

    // Under `instructions_per_call`: only the checked calls, then exit.
    if let Some(calls) = std::env::var(CALLS_VAR)
        .ok()
        .and_then(|k| k.parse::<usize>().ok())
    {
        for _ in 0..calls {
            black_box(setup.checked());
        }
        return;
    }

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("launch_overhead");
    group.bench_function("check+marshal (3-operand scalar f32)", |b| {
        b.iter(|| setup.checked())
    });
    group.bench_function("hand-written packet (3 pointers + n)", |b| {
        b.iter(|| setup.raw())
    });
    group.finish();

    let checked = median_ns(101, 20_000, || setup.checked());
    let raw = median_ns(101, 20_000, || setup.raw());
    println!(
        "launch_overhead: check+marshal median {checked:.1} ns, hand-written packet median {raw:.1} ns, \
         ratio {:.1}x, overhead {:.1} ns/launch (goal: check+marshal <= 100 ns: {})",
        checked / raw,
        checked - raw,
        if checked <= 100.0 { "met" } else { "NOT met" }
    );
    streams::report(&mut c, checked);
    c.final_summary();
    match instructions_per_call() {
        Some(count) => {
            println!("launch_overhead: check+marshal {count} instructions per call (callgrind)")
        }
        None => println!("launch_overhead: instruction count skipped (no valgrind)"),
    }
}
