//! The memory API written once, generic over the device: zeroed allocation, fills and
//! device-to-device copies of buffers and views (lengths and devices checked), their order
//! against other streams' uses, and the time between two events. Outputs start as a sentinel
//! (NaN, or a value no result has), so an element that was not written, or written wrongly,
//! fails.
//!
//! Instantiated with [`memory_suite_tests!`] for the emulator in tests/memory.rs (streams held
//! by pausing their workers, so a missing wait always shows), for the CUDA backend on the
//! driver model in tests/cuda_model.rs, and on a GPU in tests/gpu_streams.rs (feature
//! `gpu-tests`; streams held by slow work, see [`super::hazards::Busy`]).

use std::time::Duration;

use jitseam::{Device, Error};

use super::hazards::{Hold, N, assert_all, filled, kernels, neg, streams};

/// A value no test writes: an element that still holds it was never written.
const SENTINEL: f32 = -7.25;

fn read(device: &Device, buffer: &jitseam::DeviceBuffer<f32>) -> Vec<f32> {
    device.default_stream().read(buffer).unwrap()
}

/// `0, 1, 2, …` as f32.
fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

/// A zeroed allocation holds zeros (bit for bit: `+0.0`), also after memory was used.
pub fn alloc_zeros_is_zeroed(device: &Device) {
    // Memory a freed buffer held: a driver that reuses it must still hand out zeros.
    drop(device.upload(&vec![SENTINEL; N]).unwrap());
    let zeros = device.alloc_zeros::<f32>(N).unwrap();
    assert_eq!(zeros.len(), N);
    let got = read(device, &zeros);
    assert!(got.iter().all(|v| v.to_bits() == 0), "{:?}", &got[..8]);
    let ints = device.alloc_zeros::<u64>(3).unwrap();
    assert_eq!(device.default_stream().read(&ints).unwrap(), [0u64; 3]);
}

/// `fill_zeros` of a whole buffer and of a view: the view's elements, and only those.
pub fn fill_zeros_of_buffers_and_views(device: &Device) {
    let stream = device.default_stream();
    let mut whole = device.upload(&vec![f32::NAN; N]).unwrap();
    stream.fill_zeros(&mut whole).unwrap();
    assert!(read(device, &whole).iter().all(|v| v.to_bits() == 0));

    let mut buffer = device.upload(&vec![SENTINEL; N]).unwrap();
    let (lo, hi) = (100, N - 37);
    stream
        .fill_zeros(&mut buffer.slice_mut(lo..hi).unwrap())
        .unwrap();
    let got = read(device, &buffer);
    for (i, v) in got.iter().enumerate() {
        let want = if (lo..hi).contains(&i) { 0.0 } else { SENTINEL };
        assert_eq!(v.to_bits(), want.to_bits(), "element {i}");
    }
    // An empty view fills nothing and is not refused.
    stream
        .fill_zeros(&mut buffer.slice_mut(5..5).unwrap())
        .unwrap();
}

/// `copy` between two buffers, and between two views of one buffer (`split_at_mut`).
pub fn copy_between_buffers_and_views(device: &Device) {
    let stream = device.default_stream();
    let src = device.upload(&ramp(N)).unwrap();
    let mut dst = device.upload(&vec![SENTINEL; N]).unwrap();
    stream.copy(&src, &mut dst).unwrap();
    assert_eq!(read(device, &dst), ramp(N));
    assert_eq!(read(device, &src), ramp(N), "the source is unchanged");

    // The upper half of one buffer from its lower half, and a view of another buffer into a
    // view of this one.
    let mut halves = device.upload(&ramp(N)).unwrap();
    let half = N / 2;
    {
        let (lower, mut upper) = halves.split_at_mut(half).unwrap();
        stream.copy(&lower, &mut upper).unwrap();
    }
    let got = read(device, &halves);
    assert_eq!(&got[..half], &ramp(half)[..]);
    assert_eq!(&got[half..], &ramp(half)[..]);

    let mut target = device.upload(&[SENTINEL; 8]).unwrap();
    let window = src.slice(40..44).unwrap();
    stream
        .copy(&window, &mut target.slice_mut(2..6).unwrap())
        .unwrap();
    let got = read(device, &target);
    let want = [
        SENTINEL, SENTINEL, 40.0, 41.0, 42.0, 43.0, SENTINEL, SENTINEL,
    ];
    assert_eq!(got, want);
}

/// A copy between memory of different lengths is declined before the device sees it.
pub fn copy_of_another_length_is_declined(device: &Device) {
    let stream = device.default_stream();
    let src = device.upload(&ramp(N)).unwrap();
    let mut short = device.upload(&vec![SENTINEL; N - 1]).unwrap();
    let err = stream.copy(&src, &mut short).unwrap_err();
    assert!(
        matches!(err, Error::CopyLengthMismatch { src, dst } if src == N && dst == N - 1),
        "{err}"
    );
    assert!(err.is_decline());
    assert!(read(device, &short).iter().all(|&v| v == SENTINEL));
}

/// Memory of another device is refused by fills and copies.
pub fn memory_of_another_device_is_declined(device: &Device, other: &Device) {
    let stream = device.default_stream();
    let mut theirs = other.upload(&[SENTINEL; 4]).unwrap();
    let mine = device.upload(&[1.0f32; 4]).unwrap();
    let refusals = [
        stream.fill_zeros(&mut theirs).unwrap_err(),
        stream.copy(&mine, &mut theirs).unwrap_err(),
    ];
    for err in refusals {
        assert!(
            matches!(err, Error::CopyDeviceMismatch { buffer, stream: s, .. }
                if buffer == other.id() && s == device.id()),
            "{err}"
        );
        assert!(err.is_decline());
    }
    assert!(read(other, &theirs).iter().all(|&v| v == SENTINEL));
}

/// A copy on `b` of what a write on held `a` is writing copies the written values
/// (read-after-write across streams).
pub fn copy_waits_for_the_write_of_its_source(device: &Device, hold: &dyn Hold) {
    let [a, b] = streams(device);
    let mut src = filled(device, 0.0);
    let mut dst = filled(device, f32::NAN);
    hold.hold(&a);
    a.write_from(&mut src, &vec![1.0; N]).unwrap();
    b.copy(&src, &mut dst).unwrap();
    hold.settle(&b);
    hold.release(&a);
    b.synchronize().unwrap();
    assert_all("a copy after a write of its source", &b, &dst, 1.0);
}

/// A write on `b` of what a copy on held `a` still reads waits for the copy
/// (write-after-read across streams).
pub fn a_write_waits_for_a_copy_reading_it(device: &Device, hold: &dyn Hold) {
    let [a, b] = streams(device);
    let mut src = filled(device, 1.0);
    let mut dst = filled(device, f32::NAN);
    hold.hold(&a);
    a.copy(&src, &mut dst).unwrap();
    b.write_from(&mut src, &vec![2.0; N]).unwrap();
    hold.settle(&b);
    hold.release(&a);
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_all("what the copy read", &a, &dst, 1.0);
    assert_all("the write after the copy", &b, &src, 2.0);
}

/// A fill on `b` after a write on held `a` wins (write-after-write), and a launch on `c`
/// reads what a copy on held `a` wrote (read-after-write through a launch).
pub fn fills_and_copies_order_with_launches(device: &Device, hold: &dyn Hold) {
    let k = kernels(device);
    let [a, b, c] = streams(device);
    let mut x = filled(device, f32::NAN);
    hold.hold(&a);
    a.write_from(&mut x, &vec![3.0; N]).unwrap();
    b.fill_zeros(&mut x).unwrap();
    hold.settle(&b);
    hold.release(&a);
    a.synchronize().unwrap();
    assert_all("a fill after a write", &b, &x, 0.0);

    let src = filled(device, 4.0);
    let mut copied = filled(device, f32::NAN);
    let mut y = filled(device, f32::NAN);
    hold.hold(&a);
    a.copy(&src, &mut copied).unwrap();
    neg(&k, &c, &copied, &mut y);
    hold.settle(&c);
    hold.release(&a);
    c.synchronize().unwrap();
    assert_all("a launch reading a copy's output", &c, &y, -4.0);
}

/// The time between two events covers what happened between their records: here a pause of
/// the host, since an event recorded on an idle stream completes at once. The other order, or
/// events of two devices, are refused.
pub fn events_measure_the_time_between_them(device: &Device, other: &Device) {
    const PAUSE: Duration = Duration::from_millis(30);
    let stream = device.new_stream().unwrap();
    let first = stream.record_event().unwrap();
    first.synchronize().unwrap();
    std::thread::sleep(PAUSE);
    let second = stream.record_event().unwrap();
    let elapsed = second.elapsed_since(&first).unwrap();
    // A little slack below: a device clock and the host's may tick at slightly different rates.
    assert!(
        elapsed >= PAUSE.mul_f32(0.9) && elapsed < Duration::from_secs(30),
        "{elapsed:?}"
    );
    let backwards = first.elapsed_since(&second).unwrap_err();
    assert!(
        matches!(backwards, Error::EventTiming { .. }),
        "{backwards}"
    );

    let theirs = other.default_stream().record_event().unwrap();
    let across = second.elapsed_since(&theirs).unwrap_err();
    assert!(matches!(across, Error::EventTiming { .. }), "{across}");
}

/// One `#[test]` per memory test, each on fresh devices from `$setup` (a
/// `fn() -> (Device, impl Hold)`, called twice where a test needs a second device). With
/// `via $run`, each body runs as `$run(name, body)` (the driver model runs it in a child
/// process).
#[macro_export]
macro_rules! memory_suite_tests {
    ($setup:path) => {
        $crate::memory_suite_tests!($setup, via $crate::common::launch_suite::run_here);
    };
    ($setup:path, via $run:path) => {
        $crate::memory_suite_tests!(@one $setup, $run;
            alloc_zeros_is_zeroed, fill_zeros_of_buffers_and_views,
            copy_between_buffers_and_views, copy_of_another_length_is_declined,
        );
        $crate::memory_suite_tests!(@two $setup, $run;
            memory_of_another_device_is_declined, events_measure_the_time_between_them,
        );
        $crate::memory_suite_tests!(@held $setup, $run;
            copy_waits_for_the_write_of_its_source, a_write_waits_for_a_copy_reading_it,
            fills_and_copies_order_with_launches,
        );
    };
    (@one $setup:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || common::memory_suite::$name(&$setup().0));
        }
    )*};
    (@two $setup:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || {
                common::memory_suite::$name(&$setup().0, &$setup().0)
            });
        }
    )*};
    (@held $setup:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || {
                let (device, hold) = $setup();
                common::memory_suite::$name(&device, &hold);
            });
        }
    )*};
}
