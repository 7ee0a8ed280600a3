//! The slot table of `src/slot/` under loom: the real `SlotTable`, its hazard pointers and the
//! real liveness registry, built with loom's primitives (`--cfg loom` swaps them in), driven
//! through a backend that launches nothing and logs what it saw.
//!
//! Loom runs the interleavings of each model (up to a preemption bound, which keeps the run to
//! CI's minutes) and fails on a deadlock, a failed assertion or a panic. What the models show:
//! - a dispatch never launches a kernel other than the one its generation was claimed for, while
//!   its slot is released and reused, or reclaimed after its device died;
//! - an occupant is dropped only after every dispatch that reached it has queued its launch
//!   (the log never shows a launch of a kernel after its drop), and a release returns only
//!   after that drop;
//! - a slot whose device a dispatch still holds is never reclaimed under it, and a dispatch on
//!   a slot whose device died is refused;
//! - a claim declined after the fact (a dropped `SlotClaim`) frees its slot and drops its
//!   kernel once, while a dispatch races it;
//! - claim, reclamation (slot bank → liveness registry) and device drops (registry only) never
//!   deadlock.
//!
//! Compiled only with `--cfg loom`; a plain `cargo test` builds nothing here, and not loom.
//! Run with `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" cargo test --release --test
//! loom_slot` (the separate target dir keeps the normal build's artifacts warm).
#![cfg(loom)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use jitseam::device::{Arg, ArgMut};
use jitseam::slot::{Slot, SlotCall, SlotFn, SlotRef, SlotTable, Slots, empty_slots};
use jitseam::testing::{FakeBackend, Seen};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, ElementKind, Erased, Error, Kernel, Loaded,
};
use loom::thread;

const RELU: &str = "baracuda_gen_relu_f32_scalar";
const SILU: &str = "baracuda_gen_silu_f32_scalar";

/// What the backend saw, in order: launches, and drops of the kernels' functions (which happen
/// when the slot table drops an occupant).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Launched(String),
    Dropped(String),
}

type Log = Arc<Mutex<Vec<Event>>>;

fn record(log: &Log, event: Event) {
    log.lock().unwrap().push(event);
}

fn events(log: &Log) -> Vec<Event> {
    log.lock().unwrap().clone()
}

/// A device on the fake backend that logs every launch and every function drop to `log`, each
/// function named `symbol#number` (two loads of one symbol differ: a kernel given back by a
/// failed claim and a later one).
fn device(log: &Log) -> Device {
    let log = log.clone();
    FakeBackend::builder()
        .name("noop")
        .observe(move |seen| match seen {
            Seen::Launched { symbol, function } => {
                record(&log, Event::Launched(format!("{symbol}#{function}")))
            }
            Seen::Dropped { symbol, function } => {
                record(&log, Event::Dropped(format!("{symbol}#{function}")))
            }
        })
        .build()
        .device()
}

fn loaded(entry: &str) -> Kernel<Erased, Loaded> {
    let ptx = match entry {
        RELU => include_str!("fixtures/relu_f32_scalar.ptx"),
        _ => include_str!("fixtures/silu_f32_scalar.ptx"),
    };
    let spec = AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32],
        vec![ElementKind::F32],
        vec![],
    );
    Kernel::describe(Artifact::ptx(ptx, entry, spec))
        .unwrap()
        .load()
        .unwrap()
}

fn kernel(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    loaded(entry).bind(device).unwrap()
}

fn never_called(_: &SlotCall<'_>) -> Result<(), Error> {
    unreachable!("the model dispatches through SlotTable::__dispatch")
}

/// A table of `N` slots made for this execution (loom's primitives live for one).
fn table<const N: usize>() -> &'static SlotTable {
    let slots: &'static Slots<[Slot]> = Box::leak(Box::new(empty_slots::<N>()));
    let dispatchers: &'static [SlotFn] = Box::leak(Box::new([never_called as SlotFn; N]));
    Box::leak(Box::new(SlotTable::__new("LOOM", slots, dispatchers)))
}

/// Dispatches `slot` through the table's real dispatch path on a stream of `device`.
fn dispatch(table: &SlotTable, slot: SlotRef, device: &Device) -> Result<(), Error> {
    let x = device.alloc::<f32>(8)?;
    let mut y = device.alloc::<f32>(8)?;
    let stream = device.default_stream();
    let inputs = [Arg::from(&x)];
    let mut outputs = [ArgMut::from(&mut y)];
    table.__dispatch(
        slot.index(),
        &slot.call(&stream, &inputs, &mut outputs, &[8], &[]),
    )
}

/// No kernel launches after its drop, and each is dropped at most once.
fn assert_no_launch_after_drop(events: &[Event]) {
    for (i, event) in events.iter().enumerate() {
        if let Event::Dropped(symbol) = event {
            let later = &events[i + 1..];
            assert!(
                !later.contains(&Event::Launched(symbol.clone())),
                "{symbol} launched after its drop: {events:?}"
            );
            assert!(!later.contains(event), "{symbol} dropped twice: {events:?}");
        }
    }
}

/// Launches of any load of `symbol`.
fn launches(events: &[Event], symbol: &str) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Launched(s) if s.starts_with(symbol)))
        .count()
}

/// Drops of any load of `symbol`.
fn drops(events: &[Event], symbol: &str) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Dropped(s) if s.starts_with(symbol)))
        .count()
}

fn model(name: &str, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    // Four preemptions cover every ordering of the protocol's steps that the models below
    // race (each thread takes at most a few), and keep the run to seconds; LOOM_MAX_PREEMPTIONS
    // raises it (at 5 the run takes about three times as long).
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(4);
    }
    // The proofs are made here, on the test thread's stack, and the model's loads find them in
    // the process-wide proof cache: a model thread's stack is loom's 32 KiB, too small for the
    // verifier, and proving is no part of the protocol modelled.
    loaded(RELU);
    loaded(SILU);
    let executions = Arc::new(AtomicU64::new(0));
    let counted = executions.clone();
    builder.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    eprintln!(
        "{name}: {} executions explored (preemption bound {:?})",
        executions.load(Ordering::Relaxed),
        builder.preemption_bound
    );
}

/// One thread releases the relu kernel's slot and claims silu into it (the same slot); another
/// dispatches the relu binding meanwhile. It launches relu or is refused as stale, never silu,
/// and relu is dropped only after that launch.
#[test]
fn a_stale_binding_never_reaches_the_slots_next_occupant() {
    model(
        "a_stale_binding_never_reaches_the_slots_next_occupant",
        || {
            let log = Log::default();
            let table = table::<1>();
            let device = device(&log);
            let old = table.claim(kernel(RELU, &device)).unwrap();

            let reuser = {
                let device = device.clone();
                thread::spawn(move || {
                    table.release(old).unwrap();
                    table.claim(kernel(SILU, &device)).unwrap()
                })
            };
            match dispatch(table, old, &device) {
                Ok(()) | Err(Error::StaleSlot { .. }) => {}
                Err(other) => panic!("{other}"),
            }
            let new = reuser.join().unwrap();
            assert_eq!(new.index(), old.index());
            assert_eq!(launches(&events(&log), SILU), 0, "{:?}", events(&log));
            assert!(matches!(
                dispatch(table, old, &device),
                Err(Error::StaleSlot { .. })
            ));
            dispatch(table, new, &device).unwrap();
            let seen = events(&log);
            assert_eq!(launches(&seen, SILU), 1);
            assert_eq!(drops(&seen, RELU), 1);
            assert_no_launch_after_drop(&seen);
        },
    );
}

/// Two threads dispatch one slot while a third releases it. Each dispatch launches or is
/// refused as stale; the occupant is dropped once, after every launch of it, and before the
/// release returns.
#[test]
fn a_release_waits_for_dispatches_in_flight() {
    model("a_release_waits_for_dispatches_in_flight", || {
        let log = Log::default();
        let table = table::<1>();
        let device = device(&log);
        let slot = table.claim(kernel(RELU, &device)).unwrap();

        let dispatchers: Vec<_> = (0..2)
            .map(|_| {
                let device = device.clone();
                thread::spawn(move || match dispatch(table, slot, &device) {
                    Ok(()) | Err(Error::StaleSlot { .. }) => {}
                    Err(other) => panic!("{other}"),
                })
            })
            .collect();
        table.release(slot).unwrap();
        assert_eq!(
            drops(&events(&log), RELU),
            1,
            "release returned before the drop"
        );
        for dispatcher in dispatchers {
            dispatcher.join().unwrap();
        }
        assert_eq!(table.generation(0), 0);
        assert_no_launch_after_drop(&events(&log));
    });
}

/// A full one-slot table holds relu on device A. One thread drops its handle of A; another
/// dispatches relu through a stream of A (another handle) and then drops it; a third claims
/// silu on device B, reclaiming the slot if A is dead by then. Nothing deadlocks; the dispatch
/// always launches relu (A is live while the stream is, so the slot cannot be reclaimed under
/// it); the claim either reclaimed A's slot or was told the table is full.
#[test]
fn reclamation_never_takes_a_slot_whose_device_a_dispatch_holds() {
    model(
        "reclamation_never_takes_a_slot_whose_device_a_dispatch_holds",
        || {
            let log = Log::default();
            let table = table::<1>();
            let a = device(&log);
            let b = device(&log);
            let old = table.claim(kernel(RELU, &a)).unwrap();
            let stream_a = a.clone();

            let dropper = thread::spawn(move || drop(a));
            let dispatcher = thread::spawn(move || {
                let launched = dispatch(table, old, &stream_a);
                drop(stream_a);
                launched
            });
            let claimer = {
                let b = b.clone();
                thread::spawn(move || table.claim(kernel(SILU, &b)).map_err(|e| e.into_parts().0))
            };
            dropper.join().unwrap();
            dispatcher.join().unwrap().unwrap();
            let new = match claimer.join().unwrap() {
                Ok(new) => new,
                Err(Error::SlotTableFull { .. }) => table.claim(kernel(SILU, &b)).unwrap(),
                Err(other) => panic!("{other}"),
            };
            assert!(matches!(
                dispatch(table, old, &b),
                Err(Error::StaleSlot { .. })
            ));
            dispatch(table, new, &b).unwrap();
            let seen = events(&log);
            assert_eq!(launches(&seen, RELU), 1);
            assert_eq!(launches(&seen, SILU), 1);
            assert_no_launch_after_drop(&seen);
        },
    );
}

/// A dispatch through a stream of device B on a slot whose device A dies meanwhile, while
/// another thread reclaims dead devices' slots: the dispatch is refused (A gone, A's kernel on
/// B's stream, or its slot already reclaimed), never launched, and A's kernel is dropped once.
#[test]
fn a_dispatch_on_a_dead_devices_slot_is_refused() {
    model("a_dispatch_on_a_dead_devices_slot_is_refused", || {
        let log = Log::default();
        let table = table::<1>();
        let a = device(&log);
        let b = device(&log);
        let slot = table.claim(kernel(RELU, &a)).unwrap();

        let dropper = thread::spawn(move || drop(a));
        let reclaimer = thread::spawn(move || table.reclaim_dead());
        match dispatch(table, slot, &b) {
            Err(
                Error::DeviceGone { .. } | Error::DeviceMismatch { .. } | Error::StaleSlot { .. },
            ) => {}
            other => panic!("{other:?}"),
        }
        dropper.join().unwrap();
        let reclaimed = reclaimer.join().unwrap();
        let again = table.reclaim_dead();
        assert_eq!([reclaimed, again].concat(), [0]);
        let seen = events(&log);
        assert_eq!(launches(&seen, RELU), 0);
        assert_eq!(drops(&seen, RELU), 1);
    });
}

/// A claim declined after the fact (its guard dropped uncommitted) while another thread
/// dispatches it: the dispatch launches or is refused, the kernel is dropped exactly once,
/// after any launch, and the slot is free for the next claim.
#[test]
fn a_late_decline_frees_the_slot_and_leaks_nothing() {
    model("a_late_decline_frees_the_slot_and_leaks_nothing", || {
        let log = Log::default();
        let table = table::<1>();
        let device = device(&log);
        let guard = table.claim_guarded(kernel(RELU, &device)).unwrap();
        let slot = guard.slot().unwrap();

        let dispatcher = {
            let device = device.clone();
            thread::spawn(move || match dispatch(table, slot, &device) {
                Ok(()) | Err(Error::StaleSlot { .. }) => {}
                Err(other) => panic!("{other}"),
            })
        };
        drop(guard);
        dispatcher.join().unwrap();
        assert_eq!(table.generation(0), 0);
        let seen = events(&log);
        assert_eq!(drops(&seen, RELU), 1);
        assert_no_launch_after_drop(&seen);
        // The slot is free again without reclaiming anything: the device is still live.
        let next = table.claim(kernel(SILU, &device)).unwrap();
        assert_eq!(next.index(), 0);
    });
}
