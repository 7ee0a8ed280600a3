//! What a slot dispatch costs before it launches: the slot resolve + generation check.
//!
//! Measured: `SlotTable::validate(&slot)`, which runs exactly the code a dispatcher runs before
//! it launches — index → slot (bounds-checked), the slot's `RwLock` read lock (acquire and
//! release), the generation load and compare, the occupant check and the device-liveness check
//! (one atomic load of the weak device's strong count). Not measured: the call through the
//! `fn` pointer, building the `SlotCall`, `check`, `marshal` and the backend's launch — those are
//! the launch path every launch shares, not what a slot adds.
//!
//! Single thread: goal ≤ 20 ns per resolve. Two threads, each on its own slot (slots are padded
//! to 128 bytes, so they share no cache line): goal ≥ 1.8× the single-thread throughput. After
//! criterion's report a plain timed run prints both numbers and the ratio.
//!
//! Run with `cargo bench --bench slot_dispatch`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::{fixtures, recording};
use criterion::Criterion;
use jitseam::{Device, DeviceBound, Erased, Kernel, SlotRef, SlotTable};

jitseam::slot_table!(static BENCH: 8);

fn bound(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(entry).artifact())
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap_or_else(|e| panic!("binding {entry}: {e}"))
}

/// Runs `iters` resolves of `slot` on each of `slots.len()` threads at once; the wall time from
/// the common start to the last finish.
fn parallel(table: &'static SlotTable, slots: &[SlotRef], iters: u64) -> Duration {
    let barrier = Barrier::new(slots.len() + 1);
    std::thread::scope(|scope| {
        for slot in slots {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                for _ in 0..iters {
                    let _ = black_box(table.validate(black_box(slot)));
                }
            });
        }
        barrier.wait();
        let start = Instant::now();
        // The scope joins every thread before returning.
        start
    })
    .elapsed()
}

fn single(table: &'static SlotTable, slot: &SlotRef, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        let _ = black_box(table.validate(black_box(slot)));
    }
    start.elapsed()
}

fn main() {
    let (device, _backend) = recording::device();
    let first = BENCH
        .claim(bound("baracuda_gen_relu_f32_scalar", &device))
        .unwrap_or_else(|e| panic!("{e}"));
    let second = BENCH
        .claim(bound("baracuda_gen_silu_f32_scalar", &device))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(BENCH.validate(&first).is_ok() && BENCH.validate(&second).is_ok());

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("slot_resolve_and_generation_check");
    group.bench_function("1_thread", |b| b.iter(|| BENCH.validate(black_box(&first))));
    group.bench_function("2_threads_per_pair", |b| {
        b.iter_custom(|iters| parallel(&BENCH, &[first, second], iters))
    });
    group.finish();
    criterion.final_summary();

    // The two numbers this benchmark exists for, measured plainly: best of several runs, since
    // the machine may be shared.
    const OPS: u64 = 20_000_000;
    const RUNS: usize = 7;
    let best = |run: &dyn Fn() -> Duration| (0..RUNS).map(|_| run()).min().unwrap_or_default();
    let one = best(&|| single(&BENCH, &first, OPS));
    let two = best(&|| parallel(&BENCH, &[first, second], OPS));
    let ns_one = one.as_secs_f64() * 1e9 / OPS as f64;
    let throughput_one = OPS as f64 / one.as_secs_f64();
    let throughput_two = 2.0 * OPS as f64 / two.as_secs_f64();
    let ratio = throughput_two / throughput_one;
    println!(
        "slot resolve + generation check, 1 thread: {ns_one:.2} ns/op ({:.1} M/s; goal ≤ 20 ns)",
        throughput_one / 1e6
    );
    println!(
        "slot resolve + generation check, 2 threads on 2 slots: {:.1} M/s total, {ratio:.2}× one thread (goal ≥ 1.8×)",
        throughput_two / 1e6
    );
    println!(
        "available parallelism: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}
