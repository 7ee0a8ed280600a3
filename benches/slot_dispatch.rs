//! What a slot dispatch costs, and how it scales across threads.
//!
//! Two operations, each timed on one thread, on two threads that dispatch the SAME slot, and on
//! two threads that dispatch two DIFFERENT slots:
//! - **resolve + check**: `SlotTable::validate(&slot)`, exactly the code a dispatcher runs
//!   before it launches — index → slot, the occupant's hazard-pointer protection, the
//!   generation compare and the device-liveness check (one atomic load of the weak device's
//!   strong count).
//! - **real dispatch**: the slot's dispatcher called through its `fn` pointer with a
//!   `SlotCall`, which also runs `check`, `marshal` and the erased launch, on a backend whose
//!   launch does nothing (so the backend costs nothing and shares nothing between threads).
//!
//! Goals: one-thread resolve + check no slower than the read-lock version it replaced (12.2 ns
//! on the reference machine), and two threads ≥ 1.8× one thread's throughput, on the same slot
//! as well as on different ones. Every figure is the MEDIAN of `ROUNDS` timed rounds (min and
//! max beside it); the one-thread, same-slot and different-slot rounds alternate, so all three
//! see the same machine. A control that shares nothing (a register-only loop) shows how much
//! two threads can gain on this machine at the moment: on a busy 2-core box it stays under 2.
//!
//! Run with `cargo bench --bench slot_dispatch`.

// A benchmark that cannot set up should stop loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::fixtures;
use jitseam::device::{Arg, ArgMut};
use jitseam::{Device, DeviceBound, Erased, Kernel, SlotRef};

jitseam::slot_table!(static BENCH: 8);

/// Resolves per thread per round (validation), and dispatches per thread per round.
const RESOLVES: u64 = 10_000_000;
const DISPATCHES: u64 = 1_000_000;
const ROUNDS: usize = 11;

/// A device whose launch does nothing and whose state is immutable: threads share nothing
/// through it.
fn noop_device() -> Device {
    common::fake::noop()
}

fn bound(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(entry).artifact())
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap_or_else(|e| panic!("binding {entry}: {e}"))
}

/// What one thread runs `iters` times on `slot`.
#[derive(Clone, Copy)]
enum Op {
    Resolve,
    Dispatch,
}

/// One thread's work: `iters` resolves or dispatches of `slot`, with its own buffers and stream.
fn work(op: Op, device: &Device, slot: &SlotRef, iters: u64) {
    match op {
        Op::Resolve => {
            for _ in 0..iters {
                let _ = black_box(BENCH.validate(black_box(slot)));
            }
        }
        Op::Dispatch => {
            let x = device.alloc::<f32>(1024).unwrap();
            let mut y = device.alloc::<f32>(1024).unwrap();
            let stream = device.default_stream();
            let dispatch = slot.dispatch();
            for _ in 0..iters {
                let inputs = [Arg::from(&x)];
                let mut outputs = [ArgMut::from(&mut y)];
                let call = slot.call(&stream, &inputs, &mut outputs, &[1024], &[]);
                dispatch(black_box(&call)).unwrap();
            }
        }
    }
}

/// Runs `work` on one thread per slot of `slots`, all started together; the wall time from the
/// common start to the last finish.
fn threads(op: Op, device: &Device, slots: &[SlotRef], iters: u64) -> Duration {
    let barrier = Barrier::new(slots.len() + 1);
    std::thread::scope(|scope| {
        for slot in slots {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                work(op, device, slot, iters);
            });
        }
        barrier.wait();
        // The scope joins every thread before returning.
        Instant::now()
    })
    .elapsed()
}

fn one_thread(op: Op, device: &Device, slot: &SlotRef, iters: u64) -> Duration {
    let start = Instant::now();
    work(op, device, slot, iters);
    start.elapsed()
}

/// The control: `threads` threads each running `iters` steps of a register-only xorshift, which
/// shares nothing and so scales with the cores the machine really gives at the moment.
fn control(threads: usize, iters: u64) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for seed in 0..threads as u64 {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                let mut x = black_box(seed + 0x9e37_79b9);
                for _ in 0..iters {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x = black_box(x);
                }
            });
        }
        barrier.wait();
        Instant::now()
    })
    .elapsed()
}

/// Median, min and max of per-round throughputs (operations per second).
struct Rates {
    median: f64,
    min: f64,
    max: f64,
}

impl Rates {
    fn of(mut rates: Vec<f64>) -> Self {
        rates.sort_by(f64::total_cmp);
        Self {
            median: rates[rates.len() / 2],
            min: rates[0],
            max: rates[rates.len() - 1],
        }
    }

    fn line(&self, what: &str, threads: u64) -> String {
        // ns per operation on each thread, at the median rate.
        let ns = 1e9 * threads as f64 / self.median;
        format!(
            "{what}: median {:.1} M/s total ({ns:.2} ns/op per thread), min {:.1}, max {:.1} M/s",
            self.median / 1e6,
            self.min / 1e6,
            self.max / 1e6
        )
    }
}

fn measure(label: &str, op: Op, device: &Device, first: &SlotRef, second: &SlotRef, iters: u64) {
    // Warm-up: the threads' hazard records, the branch predictor, the allocator.
    one_thread(op, device, first, iters / 10);
    threads(op, device, &[*first, *second], iters / 10);
    let (mut one, mut same, mut different) = (Vec::new(), Vec::new(), Vec::new());
    let per_second = |ops: u64, took: Duration| ops as f64 / took.as_secs_f64();
    for _ in 0..ROUNDS {
        one.push(per_second(iters, one_thread(op, device, first, iters)));
        same.push(per_second(
            2 * iters,
            threads(op, device, &[*first, *first], iters),
        ));
        different.push(per_second(
            2 * iters,
            threads(op, device, &[*first, *second], iters),
        ));
    }
    let (one, same, different) = (Rates::of(one), Rates::of(same), Rates::of(different));
    println!("{}", one.line(&format!("{label}, 1 thread"), 1));
    println!(
        "{}; {:.2}× one thread (goal ≥ 1.8×)",
        same.line(&format!("{label}, 2 threads, same slot"), 2),
        same.median / one.median
    );
    println!(
        "{}; {:.2}× one thread (goal ≥ 1.8×)",
        different.line(&format!("{label}, 2 threads, different slots"), 2),
        different.median / one.median
    );
}

fn main() {
    let device = noop_device();
    let first = BENCH
        .claim(bound("baracuda_gen_relu_f32_scalar", &device))
        .unwrap_or_else(|e| panic!("{e}"));
    let second = BENCH
        .claim(bound("baracuda_gen_silu_f32_scalar", &device))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(BENCH.validate(&first).is_ok() && BENCH.validate(&second).is_ok());
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs this binary with `--test`: one short round is enough there.
    let quick = args.iter().any(|a| a == "--test");
    let scale = if quick { 1000 } else { 1 };

    println!("slot dispatch: medians of {ROUNDS} interleaved rounds");
    measure(
        "resolve + generation check",
        Op::Resolve,
        &device,
        &first,
        &second,
        RESOLVES / scale,
    );
    measure(
        "real dispatch (check + marshal + erased launch, no-op backend)",
        Op::Dispatch,
        &device,
        &first,
        &second,
        DISPATCHES / scale,
    );
    // What two threads can gain on this machine right now, whatever they run: a ratio well
    // under 2 here means the cores are busy elsewhere, not that the slots contend.
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let one = control(1, 4 * RESOLVES / scale);
            let two = control(2, 4 * RESOLVES / scale);
            2.0 * one.as_secs_f64() / two.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "control (2 threads sharing nothing): median {:.2}× one thread (min {:.2}, max {:.2}); \
         available parallelism: {}",
        ratios[ROUNDS / 2],
        ratios[0],
        ratios[ROUNDS - 1],
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}
