//! Guarded launches across streams and kernels on the emulator: a kernel remembers the fault
//! record and tag of its last launch, so these check that a launch on another stream, on a
//! fresh stream after others were dropped, or of another kernel on the same stream still
//! writes the record of the stream it runs on, under its own kernel's tag.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Error,
    Kernel, Stream,
};

const GATHER: &str = include_str!("fixtures/guards/gather_scalar.ptx");
const N: usize = 8;

/// The guarded gather, its entry renamed to `entry`.
fn gather(device: &Device, entry: &str) -> Kernel<Erased, DeviceBound> {
    let spec = AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32, ElementKind::I32],
        vec![ElementKind::F32],
        Vec::new(),
    );
    let text = GATHER.replace("gather", entry);
    let kernel = Kernel::describe(Artifact::ptx(text, entry, spec))
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap();
    assert!(kernel.loaded().guarded().is_some());
    kernel
}

struct Operands {
    x: DeviceBuffer<f32>,
    good: DeviceBuffer<i32>,
    /// Index 3 is `N + 2`: element 3 faults, 8 bytes past `x`'s end.
    bad: DeviceBuffer<i32>,
    out: DeviceBuffer<f32>,
}

impl Operands {
    fn new(device: &Device) -> Self {
        let x: Vec<f32> = (0..N).map(|i| i as f32 + 0.5).collect();
        let mut bad: Vec<i32> = (0..N as i32).rev().collect();
        bad[3] = N as i32 + 2;
        Self {
            x: device.upload(&x).unwrap(),
            good: device
                .upload(&(0..N as i32).rev().collect::<Vec<_>>())
                .unwrap(),
            bad: device.upload(&bad).unwrap(),
            out: device.alloc_zeros::<f32>(N).unwrap(),
        }
    }

    fn launch(&mut self, kernel: &Kernel<Erased, DeviceBound>, stream: &Stream, bad: bool) {
        let idx = if bad { &self.bad } else { &self.good };
        kernel
            .launch(
                stream,
                &[(&self.x).into(), idx.into()],
                &mut [(&mut self.out).into()],
                &[N],
                &[],
            )
            .unwrap();
    }
}

/// `stream` synchronized: `Ok` where `fault` is `None`, else the guard fault of `fault`'s
/// kernel at element 3 (offset `(N + 2)·4`, limit `N`).
fn expect(stream: &Stream, fault: Option<&str>, what: &str) {
    match (stream.synchronize(), fault) {
        (Ok(()), None) => {}
        (Err(Error::GuardFault(f)), Some(entry)) => {
            assert_eq!(f.entry, entry, "{what}: {f}");
            assert_eq!(f.thread[0], 3, "{what}: {f}");
            assert_eq!(
                (f.offset, f.limit),
                ((N as u64 + 2) * 4, N as u64),
                "{what}: {f}"
            );
        }
        (got, want) => panic!("{what}: want a fault of {want:?}, got {got:?}"),
    }
}

/// A kernel that alternates between two streams writes each launch's fault into the record of
/// the stream it ran on: the other stream's synchronization reports nothing.
#[test]
fn a_fault_is_reported_by_the_stream_it_ran_on() {
    let device = Device::emulator();
    let kernel = gather(&device, "gather");
    let mut ops = Operands::new(&device);
    let (a, b) = (device.new_stream().unwrap(), device.new_stream().unwrap());
    for round in 0..3 {
        ops.launch(&kernel, &a, true);
        expect(&b, None, "b before its launch");
        ops.launch(&kernel, &b, false);
        expect(&b, None, "b, in bounds");
        expect(&a, Some("gather"), "a, out of range");
        ops.launch(&kernel, &b, true);
        ops.launch(&kernel, &a, false);
        expect(&a, None, &format!("a, in bounds (round {round})"));
        expect(
            &b,
            Some("gather"),
            &format!("b, out of range (round {round})"),
        );
    }
}

/// Streams made and dropped one after another (each new stream's first guarded launch frees
/// the records of the dropped ones): each launch's fault is its own stream's, reported once.
#[test]
fn a_fresh_stream_gets_its_own_record() {
    let device = Device::emulator();
    let kernel = gather(&device, "gather");
    let mut ops = Operands::new(&device);
    let kept = device.new_stream().unwrap();
    for i in 0..12 {
        let stream = device.new_stream().unwrap();
        ops.launch(&kernel, &stream, i % 3 != 2);
        ops.launch(&kernel, &kept, false);
        expect(&kept, None, &format!("kept stream, launch {i}"));
        expect(
            &stream,
            (i % 3 != 2).then_some("gather"),
            &format!("fresh stream {i}"),
        );
        // Cleared once reported.
        expect(&stream, None, &format!("fresh stream {i}, again"));
    }
}

/// Two guarded kernels on one stream: each fault names the kernel that faulted, whichever ran
/// last.
#[test]
fn each_kernel_keeps_its_tag_on_a_shared_stream() {
    let device = Device::emulator();
    let first = gather(&device, "gather_one");
    let second = gather(&device, "gather_two");
    let mut ops = Operands::new(&device);
    let stream = device.default_stream();
    for (bad_first, bad_second) in [(true, false), (false, true), (false, false), (true, false)] {
        ops.launch(&first, &stream, bad_first);
        ops.launch(&second, &stream, bad_second);
        let fault = match (bad_first, bad_second) {
            (true, _) => Some("gather_one"),
            (false, true) => Some("gather_two"),
            (false, false) => None,
        };
        expect(&stream, fault, &format!("{bad_first} {bad_second}"));
    }
}
