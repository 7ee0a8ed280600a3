//! Cross-stream hazards, written once, generic over the device and over how a stream is held
//! back ([`Hold`]): on the emulator a stream's worker is paused, so each test is deterministic
//! and fails when the wait it exercises is missing; on a GPU (or the driver model) a stream is
//! held by queueing slow work on it, so the tests check results only.
//!
//! Each test queues work on a held stream, then conflicting work on another stream, lets the
//! second stream run as far as it can, and only then releases the first: without the wait the
//! access log puts between them, the second stream's work runs first and the result is wrong.

use std::time::{Duration, Instant};

use jitseam::{Device, DeviceBound, DeviceBuffer, Erased, Kernel, Stream};

use super::launch_suite::{self, ADD_F32, NEG_F32};

/// Elements per buffer.
pub const N: usize = 4096;

/// How a test holds a stream back and waits for another to stop.
pub trait Hold: Sync {
    /// Work queued on `stream` from now on does not run until [`Hold::release`].
    fn hold(&self, stream: &Stream);
    /// Lets `stream` go on.
    fn release(&self, stream: &Stream);
    /// Returns once `stream` can make no progress by itself (finished, or waiting for another
    /// stream).
    fn settle(&self, stream: &Stream);
    /// Returns once `stream` waits for another stream's event, or after `timeout`.
    fn until_waiting(&self, stream: &Stream, timeout: Duration);
}

pub struct Kernels {
    neg: Kernel<Erased, DeviceBound>,
    add: Kernel<Erased, DeviceBound>,
}

pub fn kernels(device: &Device) -> Kernels {
    Kernels {
        neg: launch_suite::bind(device, NEG_F32),
        add: launch_suite::bind(device, ADD_F32),
    }
}

/// `N` elements of `value`, written and synchronized.
pub fn filled(device: &Device, value: f32) -> DeviceBuffer<f32> {
    let buffer = device.upload(&vec![value; N]).unwrap();
    device.synchronize().unwrap();
    buffer
}

/// `y = -x` over `N` elements on `stream`.
pub fn neg(k: &Kernels, stream: &Stream, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) {
    k.neg
        .launch(stream, &[x.into()], &mut [y.into()], &[N], &[])
        .unwrap();
}

/// Every element of `buffer` (read on `stream`) has exactly the bits of `want`.
pub fn assert_all(what: &str, stream: &Stream, buffer: &DeviceBuffer<f32>, want: f32) {
    let got = stream.read(buffer).unwrap();
    let wrong = got
        .iter()
        .filter(|&&v| v.to_bits() != want.to_bits())
        .count();
    assert_eq!(
        wrong,
        0,
        "{what}: {wrong} of {N} elements differ from {want} (first: {:?})",
        got.first()
    );
}

/// `K` new streams of `device`.
pub fn streams<const K: usize>(device: &Device) -> [Stream; K] {
    std::array::from_fn(|_| device.new_stream().unwrap())
}

/// Read-after-write, two streams: a launch on `b` reads what a copy on held `a` writes.
pub fn raw_two_streams(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b] = streams(device);
    let mut x = filled(device, 0.0);
    let mut y = filled(device, f32::NAN);
    hold.hold(&a);
    a.write_from(&mut x, &vec![1.0; N]).unwrap();
    neg(&k, &b, &x, &mut y);
    hold.settle(&b);
    hold.release(&a);
    b.synchronize().unwrap();
    assert_all("read after write", &b, &y, -1.0);
}

/// Write-after-read, two streams: a copy on `b` overwrites what a launch on held `a` reads.
pub fn war_two_streams(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b] = streams(device);
    let mut x = filled(device, 1.0);
    let mut y = filled(device, f32::NAN);
    hold.hold(&a);
    neg(&k, &a, &x, &mut y);
    b.write_from(&mut x, &vec![2.0; N]).unwrap();
    hold.settle(&b);
    hold.release(&a);
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_all("write after read: the launch's output", &a, &y, -1.0);
    assert_all("write after read: the copy", &b, &x, 2.0);
}

/// Write-after-write, two streams: the later copy (on `b`) wins over the earlier (held `a`).
pub fn waw_two_streams(device: &Device, hold: &dyn Hold) {
    let [a, b] = streams(device);
    let mut x = filled(device, 0.0);
    hold.hold(&a);
    a.write_from(&mut x, &vec![1.0; N]).unwrap();
    b.write_from(&mut x, &vec![2.0; N]).unwrap();
    hold.settle(&b);
    hold.release(&a);
    a.synchronize().unwrap();
    assert_all("write after write", &b, &x, 2.0);
}

/// Read-after-write through three streams: `c` reads what `b` computed from what held `a`
/// wrote.
pub fn raw_three_streams(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b, c] = streams(device);
    let mut x = filled(device, 0.0);
    let mut y = filled(device, f32::NAN);
    let mut z = filled(device, f32::NAN);
    hold.hold(&a);
    a.write_from(&mut x, &vec![3.0; N]).unwrap();
    neg(&k, &b, &x, &mut y);
    neg(&k, &c, &y, &mut z);
    hold.settle(&b);
    hold.settle(&c);
    hold.release(&a);
    c.synchronize().unwrap();
    assert_all("read after write after write", &c, &z, 3.0);
}

/// Write-after-read with two readers on two held streams: the write on `c` waits for both,
/// not only the last.
pub fn war_three_streams(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b, c] = streams(device);
    let mut x = filled(device, 1.0);
    let mut ya = filled(device, f32::NAN);
    let mut yb = filled(device, f32::NAN);
    hold.hold(&a);
    hold.hold(&b);
    neg(&k, &a, &x, &mut ya);
    neg(&k, &b, &x, &mut yb);
    c.write_from(&mut x, &vec![5.0; N]).unwrap();
    hold.settle(&c);
    hold.release(&a);
    hold.release(&b);
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_all("first reader", &a, &ya, -1.0);
    assert_all("second reader", &b, &yb, -1.0);
    assert_all("the write after both", &c, &x, 5.0);
}

/// Write-after-write through three streams: held `a`, then `b`, then `c` write; `c` wins.
pub fn waw_three_streams(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b, c] = streams(device);
    let mut x = filled(device, 0.0);
    let ones = filled(device, 1.0);
    let twos = filled(device, 2.0);
    hold.hold(&a);
    a.write_from(&mut x, &vec![7.0; N]).unwrap();
    neg(&k, &b, &ones, &mut x);
    k.add
        .launch(
            &c,
            &[(&ones).into(), (&twos).into()],
            &mut [(&mut x).into()],
            &[N],
            &[],
        )
        .unwrap();
    hold.settle(&b);
    hold.settle(&c);
    hold.release(&a);
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_all("write after write after write", &c, &x, 3.0);
}

/// A buffer dropped while a launch on a held stream still reads it is freed only after the
/// launch.
pub fn free_under_launch(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a] = streams(device);
    let x = filled(device, 4.0);
    let mut y = filled(device, f32::NAN);
    hold.hold(&a);
    neg(&k, &a, &x, &mut y);
    drop(x);
    // Allocations made meanwhile must not take its place either.
    let _other = device.alloc::<f32>(N).unwrap();
    hold.release(&a);
    a.synchronize().unwrap();
    assert_all("read of a buffer dropped under its launch", &a, &y, -4.0);
}

/// A copy to the host on `b` of an output a launch on held `a` is still writing returns the
/// launch's result, not what was there before.
pub fn read_of_in_flight_output(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b] = streams(device);
    let x = filled(device, 6.0);
    let mut y = filled(device, f32::NAN);
    hold.hold(&a);
    neg(&k, &a, &x, &mut y);
    std::thread::scope(|scope| {
        let releaser = scope.spawn(|| {
            // With the wait, `b` stops at `a`'s event and `a` is released; without it the read
            // has long returned when `a` is released after the timeout.
            hold.until_waiting(&b, Duration::from_secs(5));
            hold.release(&a);
        });
        assert_all("read of an in-flight output", &b, &y, -6.0);
        releaser.join().unwrap();
    });
}

/// Polls `ready` every millisecond until it is true or `timeout` has passed.
pub fn poll(timeout: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() && start.elapsed() < timeout {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Holds a stream by pausing its emulator worker: deterministic, so a missing wait always shows.
pub struct Paused(pub std::sync::Arc<jitseam::device::EmulatorBackend>);

impl Paused {
    /// A fresh emulator device and the hold on its streams.
    pub fn emulator() -> (Device, Self) {
        let backend = std::sync::Arc::new(jitseam::device::EmulatorBackend::new());
        (Device::with_backend(backend.clone()), Self(backend))
    }
}

impl Hold for Paused {
    fn hold(&self, stream: &Stream) {
        self.0.pause(stream).unwrap();
    }
    fn release(&self, stream: &Stream) {
        self.0.resume(stream).unwrap();
    }
    fn settle(&self, stream: &Stream) {
        self.0.settle(stream).unwrap();
    }
    fn until_waiting(&self, stream: &Stream, timeout: Duration) {
        poll(timeout, || self.0.is_waiting(stream).unwrap());
    }
}

/// Holds a stream by queueing slow work on it (launches over a large scratch buffer): what a
/// GPU or the driver model can do. Timing decides whether the hazard would have shown, so with
/// it the tests check results only.
pub struct Busy {
    kernel: Kernel<Erased, DeviceBound>,
    scratch: DeviceBuffer<f32>,
    out: std::sync::Mutex<DeviceBuffer<f32>>,
    launches: usize,
    n: usize,
}

impl Busy {
    /// `launches` launches over `n` elements per hold.
    pub fn new(device: &Device, n: usize, launches: usize) -> Self {
        Self {
            kernel: launch_suite::bind(device, NEG_F32),
            scratch: filled_n(device, n, 1.0),
            out: std::sync::Mutex::new(filled_n(device, n, 0.0)),
            launches,
            n,
        }
    }
}

fn filled_n(device: &Device, n: usize, value: f32) -> DeviceBuffer<f32> {
    let buffer = device.upload(&vec![value; n]).unwrap();
    device.synchronize().unwrap();
    buffer
}

impl Hold for Busy {
    fn hold(&self, stream: &Stream) {
        let mut out = self.out.lock().unwrap();
        for _ in 0..self.launches {
            self.kernel
                .launch(
                    stream,
                    &[(&self.scratch).into()],
                    &mut [(&mut *out).into()],
                    &[self.n],
                    &[],
                )
                .unwrap();
        }
    }
    fn release(&self, _: &Stream) {}
    fn settle(&self, _: &Stream) {}
    fn until_waiting(&self, _: &Stream, _: Duration) {}
}

/// One `#[test]` per hazard, each on a fresh device and [`Hold`] from `$setup`
/// (a `fn() -> (Device, impl Hold)`). With `via $run`, each body runs as `$run(name, body)`
/// (the driver model runs it in a child process).
#[macro_export]
macro_rules! hazard_tests {
    ($setup:path) => {
        $crate::hazard_tests!($setup, via $crate::common::launch_suite::run_here);
    };
    ($setup:path, via $run:path) => {
        $crate::hazard_tests!(@each $setup, $run;
            raw_two_streams, war_two_streams, waw_two_streams, raw_three_streams,
            war_three_streams, waw_three_streams, free_under_launch, read_of_in_flight_output,
        );
    };
    (@each $setup:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || {
                let (device, hold) = $setup();
                common::hazards::$name(&device, &hold);
            });
        }
    )*};
}
