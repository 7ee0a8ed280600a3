//! Slot tables: claim → dispatch → release → reuse with generations, reclamation of exactly the
//! dead device's slot, a full table, device checks on every operand, guarded claims, and the
//! distinct dispatchers `slot_table!` generates. Run on the recording backend, which remembers
//! which symbol every launch reached.

mod common;

use std::collections::HashSet;

use common::{fake, fixtures};
use jitseam::device::{Arg, ArgMut, is_live};
use jitseam::error::Operand;
use jitseam::slot::SlotFn;
use jitseam::{Device, DeviceBound, Erased, Error, Kernel, SlotRef, SlotTable};

const RELU: &str = "baracuda_gen_relu_f32_scalar";
const SILU: &str = "baracuda_gen_silu_f32_scalar";
const NEG: &str = "baracuda_gen_neg_f32_scalar";
const ADD: &str = "baracuda_gen_add_f32_scalar";

fn bound(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(entry).artifact())
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

/// Dispatches a one-input, one-output f32 kernel of `n` elements through `slot` on `device`.
fn run(slot: &SlotRef, device: &Device) -> Result<(), Error> {
    run_with(slot.dispatch(), slot, device)
}

/// Calls `dispatch` (any slot's dispatcher) with a call made from `slot`.
fn run_with(dispatch: SlotFn, slot: &SlotRef, device: &Device) -> Result<(), Error> {
    let x = device.alloc::<f32>(64).unwrap();
    let mut y = device.alloc::<f32>(64).unwrap();
    let stream = device.default_stream();
    let inputs = [Arg::from(&x)];
    let mut outputs = [ArgMut::from(&mut y)];
    dispatch(&slot.call(&stream, &inputs, &mut outputs, &[64], &[]))
}

fn symbols(backend: &jitseam::testing::FakeBackend) -> Vec<String> {
    backend.launched().into_iter().map(|l| l.symbol).collect()
}

fn assert_stale(result: Result<(), Error>, slot: usize, expected: u64, found: u64) {
    match result {
        Err(Error::StaleSlot {
            slot: s,
            expected: e,
            found: f,
            ..
        }) => assert_eq!((s, e, f), (slot, expected, found)),
        other => panic!("expected StaleSlot {{ {slot}, {expected}, {found} }}, got {other:?}"),
    }
}

jitseam::slot_table!(static REUSE: 1);

#[test]
fn claim_dispatch_release_reuse_refuses_the_old_binding() {
    let (device, backend) = fake::recording();
    let old = REUSE.claim(bound(RELU, &device)).unwrap();
    assert_eq!((old.index(), REUSE.generation(0)), (0, old.generation()));
    assert_eq!(REUSE.device_of(0), Some(device.id()));
    run(&old, &device).unwrap();
    assert_eq!(symbols(&backend), [RELU]);

    REUSE.release(old).unwrap();
    assert_eq!((REUSE.generation(0), REUSE.device_of(0)), (0, None));
    assert_stale(run(&old, &device), 0, 0, old.generation());
    assert_stale(REUSE.release(old), 0, 0, old.generation());

    let new = REUSE.claim(bound(SILU, &device)).unwrap();
    assert_eq!(new.index(), old.index(), "a one-slot table reuses its slot");
    assert_eq!(new.dispatch() as usize, old.dispatch() as usize);
    assert_ne!(new.generation(), old.generation());
    assert_stale(run(&old, &device), 0, new.generation(), old.generation());
    assert_stale(REUSE.release(old), 0, new.generation(), old.generation());
    assert_eq!(
        symbols(&backend),
        [RELU],
        "a stale binding launched nothing"
    );

    run(&new, &device).unwrap();
    assert_eq!(symbols(&backend), [RELU, SILU]);
    REUSE.release(new).unwrap();
}

jitseam::slot_table!(static NEVER_AGAIN: 2);

#[test]
fn a_released_binding_never_launches_again() {
    // Every way a runtime can still reach a released binding — its own dispatcher, any other
    // dispatcher of the table, the slot's next occupant's dispatcher, the binding's `launch` —
    // is refused, whatever the table holds by then; the only call it can make carries its own
    // (stale) generation.
    let (device, backend) = fake::recording();
    let released = NEVER_AGAIN.claim(bound(RELU, &device)).unwrap();
    NEVER_AGAIN.release(released).unwrap();
    let occupants = [
        NEVER_AGAIN.claim(bound(SILU, &device)).unwrap(),
        NEVER_AGAIN.claim(bound(NEG, &device)).unwrap(),
    ];
    assert_eq!(
        occupants[0].index(),
        released.index(),
        "the slot was reused"
    );
    for dispatch in NEVER_AGAIN.dispatchers() {
        assert!(matches!(
            run_with(*dispatch, &released, &device),
            Err(Error::StaleSlot { .. })
        ));
    }
    let x = device.alloc::<f32>(8).unwrap();
    let mut y = device.alloc::<f32>(8).unwrap();
    let stream = device.default_stream();
    let inputs = [Arg::from(&x)];
    let mut outputs = [ArgMut::from(&mut y)];
    let call = released.call(&stream, &inputs, &mut outputs, &[8], &[]);
    assert_eq!(call.generation(), released.generation());
    assert_ne!(call.generation(), NEVER_AGAIN.generation(released.index()));
    assert!(matches!(
        released.launch(&call),
        Err(Error::StaleSlot { .. })
    ));
    assert!(matches!(
        NEVER_AGAIN.validate(&released),
        Err(Error::StaleSlot { .. })
    ));
    assert!(backend.launched().is_empty(), "a released binding launched");
    for slot in occupants {
        NEVER_AGAIN.release(slot).unwrap();
    }
}

jitseam::slot_table!(static SAME_PACKET: 1);

#[test]
fn a_slot_dispatch_sends_the_packet_the_erased_launch_sends() {
    let (device, backend) = fake::recording();
    let direct = bound(ADD, &device);
    let slot = SAME_PACKET.claim(bound(ADD, &device)).unwrap();
    let a = device.alloc::<f32>(1000).unwrap();
    let b = device.alloc::<f32>(1000).unwrap();
    let mut out = device.alloc::<f32>(1000).unwrap();
    let stream = device.default_stream();
    direct
        .launch(
            &stream,
            &[(&a).into(), (&b).into()],
            &mut [(&mut out).into()],
            &[1000],
            &[],
        )
        .unwrap();
    let inputs = [Arg::from(&a), Arg::from(&b)];
    let mut outputs = [ArgMut::from(&mut out)];
    slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[1000], &[]))
        .unwrap();
    let launched = backend.launched();
    assert_eq!(launched.len(), 2);
    assert_eq!(launched[0], launched[1]);
    SAME_PACKET.release(slot).unwrap();
}

jitseam::slot_table!(static RECLAIM: 3);

#[test]
fn a_full_table_reclaims_exactly_the_dead_devices_slot() {
    let (a, _) = fake::recording();
    let (c, _) = fake::recording();
    let r0 = RECLAIM.claim(bound(RELU, &a)).unwrap();
    let (dead, dead_id) = {
        let (b, _) = fake::recording();
        let r1 = RECLAIM.claim(bound(SILU, &b)).unwrap();
        assert_eq!(RECLAIM.device_of(1), Some(b.id()));
        (r1, b.id())
        // `b` and its backend drop here: the slot alone must not keep the device live.
    };
    let r2 = RECLAIM.claim(bound(NEG, &c)).unwrap();
    assert_eq!((r0.index(), dead.index(), r2.index()), (0, 1, 2));
    assert!(!is_live(dead_id));
    match run(&dead, &a) {
        Err(Error::DeviceGone { slot, device, .. }) => assert_eq!((slot, device), (1, dead_id)),
        other => panic!("expected DeviceGone, got {other:?}"),
    }

    let new = RECLAIM.claim(bound(NEG, &a)).unwrap();
    assert_eq!(
        new.index(),
        1,
        "the dead device's slot, and only it, was reclaimed"
    );
    assert_eq!(
        [
            RECLAIM.device_of(0),
            RECLAIM.device_of(1),
            RECLAIM.device_of(2)
        ],
        [Some(a.id()), Some(a.id()), Some(c.id())]
    );
    RECLAIM.validate(&r0).unwrap();
    RECLAIM.validate(&r2).unwrap();
    RECLAIM.validate(&new).unwrap();
    assert_stale(
        RECLAIM.validate(&dead),
        1,
        new.generation(),
        dead.generation(),
    );
    assert!(
        RECLAIM.reclaim_dead().is_empty(),
        "every remaining device is live"
    );
    for slot in [r0, r2, new] {
        RECLAIM.release(slot).unwrap();
    }
}

jitseam::slot_table!(static EAGER: 4);

#[test]
fn reclaim_dead_names_the_slots_it_freed() {
    let (live, _) = fake::recording();
    let keep = EAGER.claim(bound(RELU, &live)).unwrap();
    {
        let (gone, _) = fake::recording();
        EAGER.claim(bound(RELU, &gone)).unwrap();
        EAGER.claim(bound(SILU, &gone)).unwrap();
    }
    assert_eq!(EAGER.reclaim_dead(), [1, 2]);
    assert_eq!(EAGER.reclaim_dead(), Vec::<usize>::new());
    EAGER.validate(&keep).unwrap();
    EAGER.release(keep).unwrap();
}

jitseam::slot_table!(static FULL: 2);

#[test]
fn a_full_table_of_live_devices_answers_full_and_gives_the_kernel_back() {
    let (a, backend) = fake::recording();
    let (b, _) = fake::recording();
    let r0 = FULL.claim(bound(RELU, &a)).unwrap();
    let r1 = FULL.claim(bound(SILU, &b)).unwrap();
    let refused = FULL.claim(bound(NEG, &a)).unwrap_err();
    assert!(
        matches!(refused.error, Error::SlotTableFull { capacity: 2, table: "FULL", ref entry } if entry == NEG),
        "{:?}",
        refused.error
    );
    assert!(refused.error.is_decline());
    let (_, kernel) = refused.into_parts();
    let x = a.alloc::<f32>(8).unwrap();
    let mut y = a.alloc::<f32>(8).unwrap();
    kernel
        .launch(
            &a.default_stream(),
            &[(&x).into()],
            &mut [(&mut y).into()],
            &[8],
            &[],
        )
        .unwrap();
    assert_eq!(symbols(&backend), [NEG], "the kernel came back still bound");
    FULL.validate(&r0).unwrap();
    FULL.validate(&r1).unwrap();
    FULL.release(r0).unwrap();
    FULL.release(r1).unwrap();
}

jitseam::slot_table!(static MISMATCH: 1);

#[test]
fn a_device_mismatch_is_refused_on_every_operand() {
    let (home, home_backend) = fake::recording();
    let (other, other_backend) = fake::recording();
    let slot = MISMATCH.claim(bound(ADD, &home)).unwrap();
    for wrong in [
        Operand::Stream,
        Operand::Input(0),
        Operand::Input(1),
        Operand::Output(0),
    ] {
        let pick = |operand: Operand| {
            if operand == wrong { &other } else { &home }
        };
        let a = pick(Operand::Input(0)).alloc::<f32>(16).unwrap();
        let b = pick(Operand::Input(1)).alloc::<f32>(16).unwrap();
        let mut out = pick(Operand::Output(0)).alloc::<f32>(16).unwrap();
        let stream = pick(Operand::Stream).default_stream();
        let inputs = [Arg::from(&a), Arg::from(&b)];
        let mut outputs = [ArgMut::from(&mut out)];
        match slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[16], &[])) {
            Err(Error::DeviceMismatch {
                operand,
                expected,
                found,
                ..
            }) => assert_eq!((operand, expected, found), (wrong, home.id(), other.id())),
            result => panic!("{wrong}: expected DeviceMismatch, got {result:?}"),
        }
    }
    assert!(home_backend.launched().is_empty() && other_backend.launched().is_empty());
    MISMATCH.release(slot).unwrap();
}

jitseam::slot_table!(static GUARDED: 1);

#[test]
fn a_guarded_claim_that_a_later_step_declines_leaks_nothing() {
    let (device, backend) = fake::recording();
    let declined = {
        let claim = GUARDED.claim_guarded(bound(RELU, &device)).unwrap();
        let slot = claim.slot().unwrap();
        assert_eq!(GUARDED.generation(0), slot.generation());
        slot
        // The runtime's next step failed: the guard drops uncommitted.
    };
    assert_eq!(GUARDED.generation(0), 0, "the slot is free again");
    assert_stale(run(&declined, &device), 0, 0, declined.generation());

    let kept = GUARDED
        .claim_guarded(bound(SILU, &device))
        .unwrap()
        .commit()
        .unwrap();
    assert_eq!(kept.index(), 0);
    run(&kept, &device).unwrap();
    assert_eq!(symbols(&backend), [SILU]);
    GUARDED.release(kept).unwrap();
}

jitseam::slot_table!(
    /// The largest table `slot_table!` accepts.
    pub static LARGEST: 4096
);
jitseam::slot_table!(static SMALL: 4);

#[test]
fn every_dispatcher_is_a_distinct_function() {
    assert_eq!((LARGEST.capacity(), SMALL.capacity()), (4096, 4));
    let addresses: HashSet<usize> = LARGEST
        .dispatchers()
        .iter()
        .chain(SMALL.dispatchers())
        .map(|&f| f as usize)
        .collect();
    assert_eq!(addresses.len(), 4096 + 4);
}

jitseam::slot_table!(static ROUTED: 4);
jitseam::slot_table!(static ELSEWHERE: 4);

#[test]
fn a_dispatcher_serves_only_its_own_slot_of_its_own_table() {
    let (device, backend) = fake::recording();
    let slots: Vec<SlotRef> = [RELU, SILU, NEG, RELU]
        .iter()
        .map(|e| ROUTED.claim(bound(e, &device)).unwrap())
        .collect();
    let other = ELSEWHERE.claim(bound(SILU, &device)).unwrap();
    for (i, slot) in slots.iter().enumerate() {
        for (j, dispatch) in ROUTED.dispatchers().iter().enumerate() {
            let result = run_with(*dispatch, slot, &device);
            if i == j {
                result.unwrap();
            } else {
                assert_stale(result, j, slots[j].generation(), slot.generation());
            }
        }
        // Table ELSEWHERE's slot 0 with a generation of table ROUTED.
        assert_stale(
            run_with(other.dispatch(), slot, &device),
            0,
            other.generation(),
            slot.generation(),
        );
    }
    assert_eq!(symbols(&backend), [RELU, SILU, NEG, RELU]);
    for slot in slots {
        ROUTED.release(slot).unwrap();
    }
    ELSEWHERE.release(other).unwrap();
}

#[test]
fn slot_errors_are_lowercase_and_name_the_slot_and_kernel() {
    let stale = Error::StaleSlot {
        table: "T",
        slot: 3,
        expected: 0,
        found: 7,
    };
    assert_eq!(
        stale.to_string(),
        "slot 3 of slot table `T`: binding of generation 7 is stale, the slot is empty"
    );
    let full = Error::SlotTableFull {
        entry: "k".into(),
        table: "T",
        capacity: 2,
    };
    assert_eq!(
        full.to_string(),
        "kernel `k`: slot table `T` is full: all 2 slots hold kernels of live devices"
    );
    let (device, _) = fake::recording();
    let gone = Error::DeviceGone {
        entry: "k".into(),
        table: "T",
        slot: 1,
        device: device.id(),
    };
    assert_eq!(
        gone.to_string(),
        format!(
            "kernel `k` in slot 1 of slot table `T`: its device #{} is gone",
            device.id().get()
        )
    );
}

#[test]
fn tables_describe_themselves() {
    let table: &SlotTable = &SMALL;
    assert_eq!(table.name(), "SMALL");
    assert!(format!("{table:?}").contains("capacity: 4"));
}

// Tables named like the items the macro declares inside its expansion.
jitseam::slot_table!(static SLOTS: 1);
jitseam::slot_table!(static DISPATCHERS: 1);
jitseam::slot_table!(#[allow(non_upper_case_globals)] static Table: 1);

#[test]
fn a_table_may_take_any_name() {
    let (device, backend) = fake::recording();
    for table in [&SLOTS, &DISPATCHERS, &Table] {
        let slot = table.claim(bound(RELU, &device)).unwrap();
        run(&slot, &device).unwrap();
        table.release(slot).unwrap();
    }
    assert_eq!(symbols(&backend), [RELU, RELU, RELU]);
}

/// Two tables made over one slot array with the hidden constructor `slot_table!` expands to.
mod shared_slots {
    use jitseam::__private::{
        Slot, SlotFn, SlotTable, SlotTableMarker, Slots, dispatch_slot, empty_slots,
    };

    pub(crate) struct First;
    impl SlotTableMarker for First {
        fn table() -> &'static SlotTable {
            &FIRST
        }
    }
    pub(crate) struct Second;
    impl SlotTableMarker for Second {
        fn table() -> &'static SlotTable {
            &SECOND
        }
    }
    static SLOTS: Slots<[Slot; 2]> = empty_slots::<2>();
    static FIRST_DISPATCHERS: [SlotFn; 2] = [dispatch_slot::<First, 0>, dispatch_slot::<First, 1>];
    static SECOND_DISPATCHERS: [SlotFn; 2] =
        [dispatch_slot::<Second, 0>, dispatch_slot::<Second, 1>];
    pub(crate) static FIRST: SlotTable = SlotTable::__new("FIRST", &SLOTS, &FIRST_DISPATCHERS);
    pub(crate) static SECOND: SlotTable = SlotTable::__new("SECOND", &SLOTS, &SECOND_DISPATCHERS);
}

#[test]
fn tables_made_over_one_slot_array_never_evict_each_other() {
    let (device, _backend) = fake::recording();
    let first = shared_slots::FIRST.claim(bound(RELU, &device)).unwrap();
    let second = shared_slots::SECOND.claim(bound(SILU, &device)).unwrap();
    assert_ne!(
        first.index(),
        second.index(),
        "the second table's claim took the slot the first table's occupant is in"
    );
    run(&first, &device).unwrap();
    run(&second, &device).unwrap();
    shared_slots::FIRST.release(first).unwrap();
    shared_slots::SECOND.release(second).unwrap();
}

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_relu_f32_scalar")]
fn relu(x: jitseam::In<f32>, y: jitseam::Out<f32>);

jitseam::slot_table!(static ERASED: 2);

/// A typed kernel enters a slot table through `erase`, in the state it is in: a bound one keeps
/// its very function (no second load, no second proof), a loaded one binds as erased, and both
/// dispatch like any erased kernel.
#[test]
fn a_typed_kernel_enters_a_slot_through_erase() {
    use jitseam::Signature;
    let (device, backend) = fake::recording();
    let artifact = Relu::ptx_artifact(fixtures::by_entry(RELU).ptx);
    let typed = Kernel::<Relu, _>::describe_typed(artifact.clone())
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    let address =
        |kernel: &dyn jitseam::device::BackendFunction| std::ptr::from_ref(kernel).cast::<()>();
    let function = address(typed.bound().function());
    let erased: Kernel<Erased, DeviceBound> = typed.erase();
    assert_eq!(address(erased.bound().function()), function);
    assert_eq!(backend.loads(), 1, "erase loaded nothing again");
    let slot = ERASED.claim(erased).unwrap();
    run(&slot, &device).unwrap();
    assert_eq!(symbols(&backend), [RELU]);

    // Loaded, erased, then bound: still the proof `load()` made for the typed face.
    let loaded = Kernel::<Relu, _>::describe_typed(artifact.clone())
        .unwrap()
        .load()
        .unwrap();
    let proof = loaded.loaded().proof().cloned();
    let erased = loaded.erase();
    assert_eq!(erased.loaded().proof().cloned(), proof);
    let second = ERASED.claim(erased.bind(&device).unwrap()).unwrap();
    run(&second, &device).unwrap();
    assert_eq!(symbols(&backend), [RELU, RELU]);
    ERASED.release(slot).unwrap();
    ERASED.release(second).unwrap();
    // A described kernel, erased, goes back to the typed face (which checks the spec again).
    let described = Kernel::<Relu, _>::describe_typed(artifact).unwrap();
    assert!(described.erase().typed::<Relu>().is_ok());
}
