//! Stress: worker threads claim, dispatch and release slots of one small table while devices
//! are created and dropped, keeping every binding they retire and dispatching it again later.
//! Bounded in rounds and in time; a watchdog turns a hang into a failure ("deadlock").
//!
//! Every device belongs to one round of one worker and has its own recording backend, so the
//! launches a backend recorded are exactly the launches that round's bindings reached: after
//! each round they must be exactly the two kernels it claimed, in order. A retired binding
//! (released, or left behind on a device that was then dropped) must be refused with
//! `StaleSlot` or `DeviceGone`; anything else — a launch, or a check that only the device
//! comparison caught — counts as a wrong-kernel launch.
//!
//! The second test runs the same protocol with real launches on emulator devices: kernels are
//! adopted into the table with `adopt_into_slot` (synthesized, bound and claimed), and each of
//! them computes a different value from the same input, so the output itself proves which
//! kernel ran; a refused call must leave its output untouched.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use common::{fake, fixtures};
use jitseam::adopt::{AdoptDecline, adopt_into_slot};
use jitseam::device::{Arg, ArgMut};
use jitseam::synth::{Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region};
use jitseam::{Device, DeviceBound, ElementKind, Erased, Error, Kernel, SlotRef};

jitseam::slot_table!(static STRESS: 4);
jitseam::slot_table!(static EMULATED: 3);

const KERNELS: [&str; 4] = [
    "baracuda_gen_relu_f32_scalar",
    "baracuda_gen_silu_f32_scalar",
    "baracuda_gen_neg_f32_scalar",
    "baracuda_gen_abs_f32_scalar",
];
const WORKERS: usize = 4;
const ROUNDS: usize = 300;
const TIME_BUDGET: Duration = Duration::from_secs(4);
const WATCHDOG: Duration = Duration::from_secs(120);

#[derive(Debug, Default)]
struct Counts {
    rounds: AtomicUsize,
    launches: AtomicUsize,
    stale_refused: AtomicUsize,
    gone_refused: AtomicUsize,
    full: AtomicUsize,
    reclaimed_eagerly: AtomicUsize,
    wrong: AtomicUsize,
}

fn bound(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(entry).artifact())
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

fn run(slot: &SlotRef, device: &Device) -> Result<(), Error> {
    let x = device.alloc::<f32>(32).unwrap();
    let mut y = device.alloc::<f32>(32).unwrap();
    let stream = device.default_stream();
    let inputs = [Arg::from(&x)];
    let mut outputs = [ArgMut::from(&mut y)];
    let call = slot.call(&stream, &inputs, &mut outputs, &[32], &[]);
    (slot.dispatch())(&call)
}

/// xorshift64: deterministic per worker, no dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn worker(seed: u64, counts: &Counts, deadline: Instant) {
    let mut rng = seed;
    let mut retired: Vec<SlotRef> = Vec::new();
    for _ in 0..ROUNDS {
        if Instant::now() > deadline {
            break;
        }
        counts.rounds.fetch_add(1, Ordering::Relaxed);
        let (device, backend) = fake::recording();
        let i = (next(&mut rng) % 4) as usize;
        let (k1, k2) = (KERNELS[i], KERNELS[(i + 1) % 4]);
        let mut expected: Vec<&str> = Vec::new();

        // Every binding retired so far, by any round of this worker, is refused on this
        // round's device: its slot was released, reclaimed and perhaps reused by anyone.
        for slot in &retired {
            match run(slot, &device) {
                Err(Error::StaleSlot { .. }) => {
                    counts.stale_refused.fetch_add(1, Ordering::Relaxed);
                }
                Err(Error::DeviceGone { .. }) => {
                    counts.gone_refused.fetch_add(1, Ordering::Relaxed);
                }
                _ => {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                }
            }
        }

        let first = match STRESS.claim(bound(k1, &device)) {
            Ok(slot) => slot,
            Err(e) if matches!(e.error, Error::SlotTableFull { .. }) => {
                counts.full.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Err(e) => panic!("claim: {e}"),
        };
        run(&first, &device).unwrap();
        expected.push(k1);
        STRESS.release(first).unwrap();
        retired.push(first);

        match STRESS.claim(bound(k2, &device)) {
            Ok(second) => {
                // Same device: if `second` reused `first`'s slot, only the generation stands
                // between the old binding and the new kernel.
                match run(&first, &device) {
                    Err(Error::StaleSlot { .. }) => {
                        counts.stale_refused.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {
                        counts.wrong.fetch_add(1, Ordering::Relaxed);
                    }
                }
                run(&second, &device).unwrap();
                expected.push(k2);
                if next(&mut rng).is_multiple_of(2) {
                    STRESS.release(second).unwrap();
                }
                // Otherwise the slot is left to the device, which dies below: reclaimable.
                retired.push(second);
            }
            Err(e) if matches!(e.error, Error::SlotTableFull { .. }) => {
                counts.full.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("claim: {e}"),
        }

        let launched: Vec<String> = backend.launched().into_iter().map(|l| l.symbol).collect();
        if launched != expected {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
        }
        counts.launches.fetch_add(launched.len(), Ordering::Relaxed);
        if retired.len() > 24 {
            retired.drain(..8);
        }
        drop(device);
    }
}

/// Creates and drops devices (the liveness registry churns), holds a few claims on live devices
/// for a while (so the table sometimes fills), and reclaims eagerly now and then.
fn churn(counts: &Counts, stop: &AtomicBool) {
    let mut rng = 0x9e37_79b9_7f4a_7c15;
    let mut held: Vec<(Device, SlotRef)> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let (device, _) = fake::recording();
        match next(&mut rng) % 4 {
            0 => {
                if let Ok(slot) = STRESS.claim(bound(KERNELS[0], &device)) {
                    held.push((device, slot));
                }
            }
            1 => {
                counts
                    .reclaimed_eagerly
                    .fetch_add(STRESS.reclaim_dead().len(), Ordering::Relaxed);
            }
            _ => drop(device),
        }
        if held.len() > 2 {
            let (device, slot) = held.remove(0);
            if next(&mut rng).is_multiple_of(2) {
                STRESS.release(slot).unwrap();
            }
            drop(device);
        }
        std::thread::yield_now();
    }
}

/// Runs `workers` threads of `work(seed, deadline)` beside one `churn(stop)` thread until every
/// worker has finished, failing as a deadlock if they have not within [`WATCHDOG`].
fn stress(
    workers: usize,
    seed: u64,
    budget: Duration,
    work: impl Fn(u64, Instant) + Send + Sync + 'static,
    churn: impl FnOnce(&AtomicBool) + Send + 'static,
) {
    let work = Arc::new(work);
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + budget;
    let (done, finished) = mpsc::channel();
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (work, done) = (work.clone(), done.clone());
            std::thread::spawn(move || {
                work(seed ^ (w as u64 + 1), deadline);
                let _ = done.send(());
            })
        })
        .collect();
    let churner = {
        let stop = stop.clone();
        std::thread::spawn(move || churn(&stop))
    };
    let watchdog = Instant::now() + WATCHDOG;
    for _ in 0..workers {
        let left = watchdog.saturating_duration_since(Instant::now());
        finished
            .recv_timeout(left)
            .expect("deadlock: a worker did not finish within the watchdog");
    }
    stop.store(true, Ordering::Relaxed);
    for handle in handles {
        handle.join().unwrap();
    }
    churner.join().unwrap();
}

#[test]
fn claims_dispatches_and_releases_under_device_churn_launch_no_wrong_kernel() {
    let counts = Arc::new(Counts::default());
    let (work_counts, churn_counts) = (counts.clone(), counts.clone());
    stress(
        WORKERS,
        0x2545_f491_4f6c_dd1d,
        TIME_BUDGET,
        move |seed, deadline| worker(seed, &work_counts, deadline),
        move |stop| churn(&churn_counts, stop),
    );

    println!("{counts:#?}");
    assert_eq!(counts.wrong.load(Ordering::Relaxed), 0, "{counts:#?}");
    assert!(counts.rounds.load(Ordering::Relaxed) >= WORKERS);
    assert!(counts.launches.load(Ordering::Relaxed) > 0);
    assert!(counts.stale_refused.load(Ordering::Relaxed) > 0);
}

// ---------------------------------------------------------------------------------------------
// Real launches on emulator devices
// ---------------------------------------------------------------------------------------------

const EMU_WORKERS: usize = 3;
const EMU_ROUNDS: usize = 150;
const EMU_TIME_BUDGET: Duration = Duration::from_secs(6);
const EMU_N: usize = 16;
/// Every input element; each kernel maps it to its own value.
const X: f32 = -2.5;
/// Param-less kernels (so the caller supplies nothing that could make two of them agree) and
/// what each computes from `X`, all different and exact.
const EMU_KERNELS: [(&str, f32); 4] = [
    ("neg", 2.5),
    ("twice", -5.0),
    ("square", 6.25),
    ("relu", 0.0),
];

fn emu_region(kernel: usize) -> Region {
    let x = || Region::bind(0);
    match kernel {
        0 => Region::op("neg", vec![x()]),
        1 => Region::op("add", vec![x(), x()]),
        2 => Region::op("mul", vec![x(), x()]),
        _ => Region::op("relu", vec![x()]),
    }
}

fn emu_request(kernel: usize) -> JitRequest {
    JitRequest {
        region: emu_region(kernel),
        operands: vec![OperandDesc::contiguous(ElementKind::F32, &[EMU_N as u64], 256); 2],
        arch: Arch::sm(80),
        budget: JitBudget::millis(60_000),
    }
}

#[derive(Debug, Default)]
struct EmuCounts {
    rounds: AtomicUsize,
    launches: AtomicUsize,
    stale_refused: AtomicUsize,
    gone_refused: AtomicUsize,
    full: AtomicUsize,
    wrong: AtomicUsize,
}

/// What a call through a slot did, as its output shows.
#[derive(Debug)]
enum Outcome {
    /// Launched; every element holds this value (`None`: the elements disagree).
    Ran(Option<f32>),
    /// Refused, output untouched.
    Refused(Error),
    /// Refused, yet the output was written: a launch happened anyway.
    RefusedButWritten(Error),
}

fn emu_run(slot: &SlotRef, device: &Device) -> Outcome {
    let x = device.upload(&[X; EMU_N]).unwrap();
    let mut y = device.upload(&[f32::NAN; EMU_N]).unwrap();
    let stream = device.default_stream();
    let inputs = [Arg::from(&x)];
    let mut outputs = [ArgMut::from(&mut y)];
    let result = (slot.dispatch())(&slot.call(&stream, &inputs, &mut outputs, &[EMU_N], &[]));
    let got = stream.read(&y).unwrap();
    let untouched = got.iter().all(|v| v.is_nan());
    match result {
        Ok(()) => Outcome::Ran(got.iter().all(|&v| v == got[0]).then_some(got[0])),
        Err(e) if untouched => Outcome::Refused(e),
        Err(e) => Outcome::RefusedButWritten(e),
    }
}

fn emu_adopt(kernel: usize, device: &Device) -> Result<SlotRef, Error> {
    match adopt_into_slot::<(), _>(
        &emu_request(kernel),
        &ElementwiseSynthesizer::new(),
        device,
        &EMULATED,
    ) {
        Ok(adopted) => Ok(adopted.slot),
        Err(AdoptDecline::Slot(error)) => Err(error),
        Err(other) => panic!("adopt {}: {other}", EMU_KERNELS[kernel].0),
    }
}

fn emu_expect_refused(outcome: Outcome, counts: &EmuCounts) {
    match outcome {
        Outcome::Refused(Error::StaleSlot { .. }) => {
            counts.stale_refused.fetch_add(1, Ordering::Relaxed);
        }
        Outcome::Refused(Error::DeviceGone { .. }) => {
            counts.gone_refused.fetch_add(1, Ordering::Relaxed);
        }
        Outcome::RefusedButWritten(error) => {
            eprintln!("retired binding: refused ({error}) but the output was written");
            counts.wrong.fetch_add(1, Ordering::Relaxed);
        }
        other => {
            eprintln!("retired binding: {other:?}");
            counts.wrong.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn emu_expect_ran(outcome: Outcome, kernel: usize, counts: &EmuCounts) {
    counts.launches.fetch_add(1, Ordering::Relaxed);
    let want = EMU_KERNELS[kernel].1;
    if !matches!(outcome, Outcome::Ran(Some(v)) if v == want) {
        eprintln!("expected {} to run: {outcome:?}", EMU_KERNELS[kernel].0);
        counts.wrong.fetch_add(1, Ordering::Relaxed);
    }
}

fn emu_worker(seed: u64, counts: &EmuCounts, deadline: Instant) {
    let mut rng = seed;
    let mut retired: Vec<SlotRef> = Vec::new();
    for _ in 0..EMU_ROUNDS {
        if Instant::now() > deadline {
            break;
        }
        counts.rounds.fetch_add(1, Ordering::Relaxed);
        let device = Device::emulator();
        let i = (next(&mut rng) % 4) as usize;
        let j = (i + 1) % 4;

        // Released or reclaimed bindings of earlier rounds: refused, nothing written.
        for slot in &retired {
            emu_expect_refused(emu_run(slot, &device), counts);
        }

        let first = match emu_adopt(i, &device) {
            Ok(slot) => slot,
            Err(Error::SlotTableFull { .. }) => {
                counts.full.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            Err(e) => panic!("claim: {e}"),
        };
        emu_expect_ran(emu_run(&first, &device), i, counts);
        EMULATED.release(first).unwrap();
        retired.push(first);

        match emu_adopt(j, &device) {
            Ok(second) => {
                // If `second` took `first`'s slot, only the generation keeps the old binding
                // from running kernel `j`.
                match emu_run(&first, &device) {
                    Outcome::Refused(Error::StaleSlot { .. }) => {
                        counts.stale_refused.fetch_add(1, Ordering::Relaxed);
                    }
                    other => {
                        eprintln!("released binding: {other:?}");
                        counts.wrong.fetch_add(1, Ordering::Relaxed);
                    }
                }
                emu_expect_ran(emu_run(&second, &device), j, counts);
                if next(&mut rng).is_multiple_of(2) {
                    EMULATED.release(second).unwrap();
                }
                // Otherwise the slot is left to the device, which dies below: reclaimable.
                retired.push(second);
            }
            Err(Error::SlotTableFull { .. }) => {
                counts.full.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("claim: {e}"),
        }
        if retired.len() > 16 {
            retired.drain(..8);
        }
        drop(device);
    }
}

/// Holds a claim on a live emulator device now and then (so the table sometimes fills) and
/// reclaims eagerly.
fn emu_churn(stop: &AtomicBool) {
    let mut rng = 0x6a09_e667_f3bc_c908;
    let mut held: Vec<(Device, SlotRef)> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let device = Device::emulator();
        match next(&mut rng) % 3 {
            0 => {
                if let Ok(slot) = emu_adopt(3, &device) {
                    held.push((device, slot));
                }
            }
            1 => {
                EMULATED.reclaim_dead();
            }
            _ => drop(device),
        }
        if held.len() > 1 {
            let (device, slot) = held.remove(0);
            if next(&mut rng).is_multiple_of(2) {
                EMULATED.release(slot).unwrap();
            }
            drop(device);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn adopted_slots_on_emulator_devices_launch_exactly_their_own_kernel() {
    let counts = Arc::new(EmuCounts::default());
    let started = Instant::now();
    let work_counts = counts.clone();
    stress(
        EMU_WORKERS,
        0x9e37_79b9_7f4a_7c15,
        EMU_TIME_BUDGET,
        move |seed, deadline| emu_worker(seed, &work_counts, deadline),
        emu_churn,
    );

    println!("{counts:#?} in {:?}", started.elapsed());
    assert_eq!(counts.wrong.load(Ordering::Relaxed), 0, "{counts:#?}");
    assert!(counts.rounds.load(Ordering::Relaxed) >= EMU_WORKERS);
    assert!(counts.launches.load(Ordering::Relaxed) > 0);
    assert!(counts.stale_refused.load(Ordering::Relaxed) > 0);
}
