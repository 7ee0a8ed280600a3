//! What a launch on the emulator may touch and how long it may run: exactly its operands' bytes
//! (inputs read-only), a budget that ends a kernel that never ends, and a device whose memory
//! stays usable from other threads while a launch runs.

mod common;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jitseam::device::{Backend, EmulatorBackend, EmulatorConfig, ViewDesc};
use jitseam::launch::{check, marshal};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, ElementKind, Erased, Error, Kernel,
};
use jitseam_emu::interp::{Access, FaultKind};

/// A kernel of the scalar ABI taking one f32 input, one f32 output and `n`, with `body`.
fn ptx(entry: &str, body: &str) -> String {
    format!(
        ".version 8.8\n.target sm_80\n.address_size 64\n\
         .visible .entry {entry}(.param .u64 a, .param .u64 o, .param .u64 n)\n{{\n{body}}}\n"
    )
}

fn bind(device: &Device, entry: &str, body: &str) -> Kernel<Erased, DeviceBound> {
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let described = Kernel::describe(Artifact::ptx(ptx(entry, body), entry, spec)).unwrap();
    // These bodies break the ABI on purpose (the body verifier refuses them at `load()`): what
    // is under test is the emulator's memory checking, the second line of defence.
    // SAFETY: the promise of `load_unverified` is broken deliberately, but only on the emulator,
    // whose checked memory turns every stray access into a typed fault, never into a write
    // outside the launch's own operands.
    unsafe { described.load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap()
}

/// The 1-based line of the first line of `body` containing `needle`, in [`ptx`]'s text.
fn line_of(body: &str, needle: &str) -> u32 {
    let header = 5; // .version, .target, .address_size, .entry, {
    let at = body.lines().position(|l| l.contains(needle)).unwrap();
    header + at as u32 + 1
}

/// `L: bra L;`: a loop that never ends.
const SPIN: &str = "L:\n\tbra L;\n";

/// Stores 1.0 into the input's first element.
const POKE_INPUT: &str = "\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<2>;\n\
    \tld.param.u64 %rd1, [a];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
    \tmov.f32 %f1, 0f3F800000;\n\tst.global.f32 [%rd2], %f1;\n\tret;\n";

/// Stores 1.0 one MiB past the output's start.
const OVERRUN_1MIB: &str = "\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<2>;\n\
    \tld.param.u64 %rd1, [o];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
    \tadd.s64 %rd3, %rd2, 1048576;\n\
    \tmov.f32 %f1, 0f3F800000;\n\tst.global.f32 [%rd3], %f1;\n\tret;\n";

/// Copies the input's element `n` — one past the view — to the output's first element.
const PEEK_PAST_INPUT: &str = "\t.reg .b64 %rd<6>;\n\t.reg .f32 %f<2>;\n\
    \tld.param.u64 %rd1, [a];\n\tld.param.u64 %rd2, [o];\n\tld.param.u64 %rd3, [n];\n\
    \tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\
    \tshl.b64 %rd4, %rd3, 2;\n\tadd.s64 %rd5, %rd1, %rd4;\n\
    \tld.global.f32 %f1, [%rd5];\n\tst.global.f32 [%rd2], %f1;\n\tret;\n";

const TRAP: &str = "\ttrap;\n\tret;\n";

fn fault_of(result: Result<(), Error>) -> Box<jitseam::error::MemoryFault> {
    match result {
        Err(Error::MemoryFault(fault)) => fault,
        other => panic!("expected a memory fault, got {other:?}"),
    }
}

#[test]
fn a_store_into_an_input_is_a_write_to_input_fault() {
    let device = Device::emulator();
    let k = bind(&device, "poke", POKE_INPUT);
    let a = device.upload(&[5.0f32; 64]).unwrap();
    let mut out = device.alloc::<f32>(64).unwrap();
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&a).into()],
        &mut [(&mut out).into()],
        &[64],
        &[],
    )
    .unwrap();
    let fault = fault_of(stream.synchronize());
    assert_eq!(fault.kind, FaultKind::WriteToInput);
    assert_eq!(fault.access, Access::Store);
    assert_eq!(fault.address, a.address());
    assert_eq!(fault.line, line_of(POKE_INPUT, "st.global"));
    let message = Error::MemoryFault(fault).to_string();
    assert!(message.contains("write to input"), "{message}");
    assert_eq!(stream.read(&a).unwrap(), vec![5.0f32; 64]);
}

#[test]
fn a_store_one_mib_past_an_output_faults_even_inside_another_allocation() {
    let device = Device::emulator();
    let k = bind(&device, "overrun", OVERRUN_1MIB);
    let a = device.upload(&[0.0f32; 64]).unwrap();
    let mut out = device.alloc::<f32>(64).unwrap();
    // Allocated after `out`: its 2 MiB hold `out + 1 MiB`, which every allocation being mapped
    // would have let the kernel write.
    let neighbour = device.alloc::<f32>(1 << 19).unwrap();
    let target = out.address() + (1 << 20);
    assert!(
        (neighbour.address()..neighbour.address() + (1 << 21)).contains(&target),
        "the neighbour should hold the target"
    );
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&a).into()],
        &mut [(&mut out).into()],
        &[64],
        &[],
    )
    .unwrap();
    let fault = fault_of(stream.synchronize());
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.access, Access::Store);
    assert_eq!(fault.address, target);
    assert_eq!(fault.nearest, Some((out.address(), 256)));
    assert!(stream.read(&neighbour).unwrap().iter().all(|&x| x == 0.0));
}

#[test]
fn bytes_of_an_operands_allocation_outside_its_view_are_out_of_bounds() {
    let device = Device::emulator();
    let k = bind(&device, "peek", PEEK_PAST_INPUT);
    let a = device.upload(&[7.0f32; 128]).unwrap();
    let mut out = device.upload(&[0.0f32; 64]).unwrap();
    let window = a.slice(0..64).unwrap();
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&window).into()],
        &mut [(&mut out).into()],
        &[64],
        &[],
    )
    .unwrap();
    let fault = fault_of(stream.synchronize());
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.access, Access::Load);
    // Element 64 exists in the allocation, but not in the launch.
    assert_eq!(fault.address, a.address() + 256);
    assert_eq!(fault.nearest, Some((a.address(), 256)));
    assert_eq!(stream.read(&out).unwrap(), vec![0.0f32; 64]);
}

#[test]
fn operands_sharing_one_allocation_are_lent_apart() {
    // Two inputs on the same 100 elements and an output on the next 100, all in one allocation:
    // the launch locks it once and lends the first half read-only, the second read-write.
    let backend = Arc::new(EmulatorBackend::new());
    let device = Device::with_backend(backend.clone());
    let k = common::launch_suite::bind(&device, common::launch_suite::ADD_F32);
    let data: Vec<f32> = (0..200).map(|i| i as f32).collect();
    let buf = device.upload(&data).unwrap();
    let view = |offset| {
        ViewDesc::contiguous(
            device.id(),
            ElementKind::F32,
            buf.address(),
            200,
            offset,
            100,
        )
    };
    let (ins, outs) = ([view(0), view(0)], [view(100)]);
    let checked = check(k.facts(), device.id(), &ins, &outs, &[100], &[]).unwrap();
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    // SAFETY: `check` accepted the launch over a live buffer of this device (the output shares
    // no byte with the inputs) and `marshal` built the packet; nothing else uses the buffer.
    unsafe {
        backend
            .launch(k.bound().function(), &*stream, checked.geometry(), &packet)
            .unwrap();
    }
    backend.synchronize(&*stream).unwrap();
    let got = device.default_stream().read(&buf).unwrap();
    let want: Vec<f32> = (0..200)
        .map(|i| {
            if i < 100 {
                i as f32
            } else {
                2.0 * (i - 100) as f32
            }
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_kernel_that_never_ends_stops_at_its_budget_naming_the_loop() {
    let device = Device::emulator_with(EmulatorConfig {
        budget: Some(1 << 16),
        workers: 0,
        ..EmulatorConfig::default()
    });
    let k = bind(&device, "spin", SPIN);
    let a = device.upload(&[0.0f32; 1024]).unwrap();
    let mut out = device.alloc::<f32>(1024).unwrap();
    let stream = device.default_stream();
    let start = Instant::now();
    k.launch(
        &stream,
        &[(&a).into()],
        &mut [(&mut out).into()],
        &[1024],
        &[],
    )
    .unwrap();
    let result = stream.synchronize();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    match result {
        Err(ref e @ Error::BudgetExceeded { ref at, budget }) => {
            assert_eq!(budget, 1 << 16);
            assert_eq!(at.entry, "spin");
            assert_eq!(at.line, line_of(SPIN, "bra"));
            assert!(at.instruction.starts_with("bra"), "{}", at.instruction);
            assert!(!e.is_decline());
            let message = e.to_string();
            assert!(message.contains("instruction budget"), "{message}");
            assert!(message.contains(&format!("line {}", at.line)), "{message}");
        }
        other => panic!("expected the budget error, got {other:?}"),
    }
    // The device goes on working.
    assert_eq!(stream.read(&a).unwrap(), vec![0.0f32; 1024]);
}

/// Launches [`SPIN`] on `n` elements of `device` and waits for it to end.
fn spin_on(device: &Device, n: usize) -> Result<(), Error> {
    let k = bind(device, "spin", SPIN);
    let a = device.upload(&vec![0.0f32; n]).unwrap();
    let mut out = device.alloc::<f32>(n).unwrap();
    let stream = device.default_stream();
    k.launch(&stream, &[(&a).into()], &mut [(&mut out).into()], &[n], &[])
        .unwrap();
    stream.synchronize()
}

#[test]
fn a_kernel_of_four_threads_that_never_ends_stops_at_the_default_budget() {
    // The default configuration: a budget scaled with the launch, the least for a few threads.
    match spin_on(&Device::emulator(), 4) {
        Err(ref e @ Error::BudgetExceeded { ref at, budget }) => {
            assert_eq!(budget, jitseam_emu::interp::MIN_BUDGET);
            assert_eq!(at.line, line_of(SPIN, "bra"));
            assert_eq!(e.kind_name(), "budget_exceeded");
        }
        other => panic!("expected the budget error, got {other:?}"),
    }
}

#[test]
fn a_timeout_ends_a_launch_that_its_budget_would_not() {
    let device = Device::emulator_with(EmulatorConfig {
        budget: Some(u64::MAX),
        timeout: Some(Duration::from_millis(100)),
        ..EmulatorConfig::default()
    });
    match spin_on(&device, 1024) {
        Err(ref e @ Error::DeadlineExceeded { ref at, timeout }) => {
            assert_eq!(timeout, Duration::from_millis(100));
            assert_eq!(at.entry, "spin");
            assert_eq!(at.line, line_of(SPIN, "bra"));
            assert!(!e.is_decline());
            assert_eq!(e.kind_name(), "deadline_exceeded");
            assert!(e.to_string().contains("deadline"), "{e}");
        }
        other => panic!("expected the deadline error, got {other:?}"),
    }
    // The device goes on working.
    assert_eq!(device.upload(&[1u8; 8]).unwrap().len(), 8);
}

#[test]
fn a_launch_that_could_never_finish_within_its_budget_is_refused_before_it_runs() {
    let device = Device::emulator_with(EmulatorConfig {
        budget: Some(100),
        ..EmulatorConfig::default()
    });
    match spin_on(&device, 1 << 16) {
        Err(ref e @ Error::LaunchTooCostly { budget, cost, .. }) => {
            assert_eq!(budget, 100);
            assert!(cost > budget, "{e}");
            assert!(!e.is_decline());
            assert_eq!(e.kind_name(), "launch_too_costly");
        }
        other => panic!("expected the up-front refusal, got {other:?}"),
    }
}

#[test]
fn trap_is_a_typed_error_with_its_line() {
    let device = Device::emulator();
    let k = bind(&device, "trapper", TRAP);
    let a = device.upload(&[0.0f32; 4]).unwrap();
    let mut out = device.alloc::<f32>(4).unwrap();
    let stream = device.default_stream();
    k.launch(&stream, &[(&a).into()], &mut [(&mut out).into()], &[4], &[])
        .unwrap();
    match stream.synchronize() {
        Err(Error::Trap { at }) => {
            assert_eq!(at.entry, "trapper");
            assert_eq!(at.line, line_of(TRAP, "trap"));
            assert_eq!((at.block, at.thread), (0, 0));
        }
        other => panic!("expected a trap, got {other:?}"),
    }
}

/// Runs `f` on another thread and gives its result, or fails the test if it takes longer than
/// `limit` (a blocked memory lock would hang it forever).
fn within<R: Send + 'static>(limit: Duration, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(e) => panic!("blocked behind the running launch ({e})"),
    }
}

#[test]
fn a_spinning_launch_blocks_no_alloc_copy_or_free_elsewhere() {
    // A budget far beyond the test's length: the spin runs until the device is dropped, which
    // cancels it.
    let device = Device::emulator_with(EmulatorConfig {
        budget: Some(u64::MAX),
        workers: 1,
        ..EmulatorConfig::default()
    });
    let k = bind(&device, "spin", SPIN);
    let a = device.upload(&[0.0f32; 256]).unwrap();
    let mut out = device.alloc::<f32>(256).unwrap();
    let spinning = device.new_stream().unwrap();
    device.synchronize().unwrap();
    k.launch(
        &spinning,
        &[(&a).into()],
        &mut [(&mut out).into()],
        &[256],
        &[],
    )
    .unwrap();
    // Let the worker start the launch and take its locks.
    std::thread::sleep(Duration::from_millis(200));
    let other = device.clone();
    let limit = Duration::from_secs(10);
    within(limit, move || {
        let mut buffer = other.alloc::<u32>(1000).unwrap();
        let stream = other.new_stream().unwrap();
        stream.write(&mut buffer, &[7u32; 1000]).unwrap();
        assert_eq!(stream.read(&buffer).unwrap(), vec![7u32; 1000]);
        drop(buffer);
        other.upload(&[1u8; 64]).unwrap();
    });
    // Reading an input of the running launch shares its lock.
    let other = device.clone();
    let input = Arc::new(a);
    let shared = Arc::clone(&input);
    within(limit, move || {
        let stream = other.new_stream().unwrap();
        assert_eq!(stream.read(&*shared).unwrap(), vec![0.0f32; 256]);
    });
    // Dropping every handle cancels the spin; nothing here waits for it.
}

#[test]
fn dropping_the_device_cancels_a_launch_that_never_ends() {
    let backend = Arc::new(EmulatorBackend::with_config(EmulatorConfig {
        budget: Some(u64::MAX),
        workers: 1,
        ..EmulatorConfig::default()
    }));
    let device = Device::with_backend(backend.clone());
    let k = bind(&device, "spin", SPIN);
    let a = device.upload(&[0.0f32; 256]).unwrap();
    let mut out = device.alloc::<f32>(256).unwrap();
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&a).into()],
        &mut [(&mut out).into()],
        &[256],
        &[],
    )
    .unwrap();
    // An event after the spin holds the stream's queue, not the device.
    let event = backend.record_event(&*backend.default_stream()).unwrap();
    assert!(!backend.event_complete(&*event).unwrap());
    drop((k, a, out, stream, device, backend));
    // Any emulator can wait for an emulator event.
    let other = EmulatorBackend::new();
    within(Duration::from_secs(10), move || {
        other.synchronize_event(&*event).unwrap();
    });
}

/// A module whose `.global` counter thread 0 of block 0 increments, storing the old value (and
/// a value round-tripped through its `.local` frame) in the output.
const COUNTER: &str = ".version 8.8\n.target sm_80\n.address_size 64\n\
    .global .align 4 .u32 launches = 10;\n\
    .visible .entry count(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
    \t.local .align 4 .b8 __local_depot0[8];\n\
    \t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .f32 %f<3>;\n\
    \tmov.u32 %r0, %tid.x;\n\tmov.u32 %r3, %ctaid.x;\n\tor.b32 %r0, %r0, %r3;\n\
    \tsetp.ne.u32 %p1, %r0, 0;\n\t@%p1 bra DONE;\n\
    \tatom.global.add.u32 %r1, [launches], 1;\n\
    \tmov.u64 %rd3, __local_depot0;\n\tst.local.u32 [%rd3+4], %r1;\n\
    \tld.local.u32 %r2, [%rd3+4];\n\
    \tcvt.rn.f32.u32 %f1, %r2;\n\
    \tld.param.u64 %rd1, [o];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
    \tst.global.f32 [%rd2], %f1;\n\
    DONE:\n\tret;\n}\n";

#[test]
fn module_globals_persist_across_launches_of_a_loaded_function() {
    let device = Device::emulator();
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let load = || {
        let described = Kernel::describe(Artifact::ptx(COUNTER, "count", spec.clone())).unwrap();
        // SAFETY: only on the emulator, whose checked memory turns any stray access into a
        // typed fault.
        unsafe { described.load_unverified() }.unwrap()
    };
    let a = device.upload(&[0.0f32; 4]).unwrap();
    let mut out = device.alloc::<f32>(4).unwrap();
    let stream = device.default_stream();
    let k = load().bind(&device).unwrap();
    for expected in [10.0f32, 11.0, 12.0] {
        k.launch(&stream, &[(&a).into()], &mut [(&mut out).into()], &[4], &[])
            .unwrap();
        assert_eq!(stream.read(&out).unwrap()[0], expected);
    }
    // A function loaded again is a module of its own, starting from the initializer.
    let again = load().bind(&device).unwrap();
    again
        .launch(&stream, &[(&a).into()], &mut [(&mut out).into()], &[4], &[])
        .unwrap();
    assert_eq!(stream.read(&out).unwrap()[0], 10.0);
}
