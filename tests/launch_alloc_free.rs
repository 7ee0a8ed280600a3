//! A launch allocates nothing: erased, typed and slot launches of a 3-operand kernel (and of a
//! vectorized and a strided one) on a no-op backend, counted by a global allocator that counts
//! every allocation this thread makes while a launch runs.
//!
//! One test only, so no other test thread allocates while the counter is armed (the counter is
//! per thread anyway).

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{fake, fixtures};
use jitseam::device::{Arg, ArgMut};
use jitseam::{Device, DeviceBound, Erased, In, Kernel, Out, ParamValue, Signature};

/// Counts the allocations (and reallocations) of the current thread while armed.
struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = ARMED.try_with(|armed| {
        if armed.get() {
            let _ = COUNT.try_with(|count| count.set(count.get() + 1));
        }
    });
}

// SAFETY: every method forwards to the system allocator unchanged; counting touches only
// const-initialized thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded with the caller's layout, under the caller's contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|count| count.set(0));
    ARMED.with(|armed| armed.set(true));
    f();
    ARMED.with(|armed| armed.set(false));
    COUNT.with(Cell::get)
}

const ADD: &str = "baracuda_gen_add_f32_scalar";
const ADD_V4: &str = "baracuda_gen_add_f32_co_v4";
const AXPB: &str = "baracuda_gen_add_scalar_mul_scalar_f32_scalar";
const STRIDED: &str = "baracuda_gen_mul_scalar_f64_strided_r2";
const LAUNCHES: usize = 1000;

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = custom)]
fn matmul(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

jitseam::slot_table!(static TABLE: 1);

fn bound_matmul(device: &Device) -> Kernel<Matmul, DeviceBound> {
    let ptx = include_str!("fixtures/custom/custom.ptx");
    let described = Kernel::<Matmul, _>::describe_typed(Matmul::ptx_artifact(ptx)).unwrap();
    // SAFETY: bound to the no-op backend, which runs nothing; only the launch path is counted.
    unsafe { described.load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap()
}

fn bound<K: Signature>(device: &Device) -> Kernel<K, DeviceBound> {
    Kernel::<K, _>::describe_typed(K::ptx_artifact(fixtures::by_entry(ADD).ptx))
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap()
}

fn erased(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(entry).artifact())
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap()
}

const FACES: [&str; 7] = [
    "custom (extents, 2-D config)",
    "erased",
    "erased vectorized",
    "erased with params",
    "erased strided",
    "typed",
    "slot",
];

#[test]
fn no_launch_face_allocates() {
    let device = fake::noop();
    let stream = device.default_stream();
    let n = 1 << 12;
    let a = device.alloc::<f32>(n).unwrap();
    let b = device.alloc::<f32>(n).unwrap();
    let mut out = device.alloc::<f32>(n).unwrap();
    let x = device.alloc::<f64>(64 * 32).unwrap();
    let mut y = device.alloc::<f64>(64 * 32).unwrap();

    let erased_add = erased(ADD, &device);
    let erased_v4 = erased(ADD_V4, &device);
    let erased_axpb = erased(AXPB, &device);
    let erased_strided = erased(STRIDED, &device);
    let typed = bound::<Add>(&device);
    let slot = TABLE.claim(erased(ADD, &device)).unwrap();
    let matmul = bound_matmul(&device);
    let x_view = x.strided(0, &[32, 64], &[1, 32]).unwrap();
    let mut y_view = y.strided_mut(0, &[32, 64], &[64, 1]).unwrap();

    let mut launch = |face: &str| {
        let result = match face {
            "erased" => erased_add.launch(
                &stream,
                &[(&a).into(), (&b).into()],
                &mut [(&mut out).into()],
                &[n],
                &[],
            ),
            "erased vectorized" => erased_v4.launch(
                &stream,
                &[(&a).into(), (&b).into()],
                &mut [(&mut out).into()],
                &[n],
                &[],
            ),
            "erased with params" => erased_axpb.launch(
                &stream,
                &[(&a).into()],
                &mut [(&mut out).into()],
                &[n],
                &[ParamValue::F32(2.0), ParamValue::F32(1.0)],
            ),
            "erased strided" => erased_strided.launch(
                &stream,
                &[(&x_view).into()],
                &mut [(&mut y_view).into()],
                &[32, 64],
                &[ParamValue::F64(0.5)],
            ),
            "typed" => typed.launch(&stream, Add::args(&a, &b, &mut out)),
            "custom (extents, 2-D config)" => matmul.launch_with(
                &stream,
                jitseam::LaunchConfig::new([4, 4, 1], [16, 16, 1]),
                Matmul::args(&a, &b, &mut out, 64, 64, 64),
            ),
            _ => {
                let inputs = [Arg::from(&a), Arg::from(&b)];
                let mut outputs = [ArgMut::from(&mut out)];
                slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[n], &[]))
            }
        };
        result.unwrap_or_else(|e| panic!("{face}: {e}"));
    };
    for face in FACES {
        // The first launch may set up per-thread state; only the steady state must not allocate.
        launch(face);
        let count = allocations(|| {
            for _ in 0..LAUNCHES {
                launch(face);
            }
        });
        assert_eq!(
            count, 0,
            "{face}: {count} allocations in {LAUNCHES} launches"
        );
    }
    // The counter does count: a launch that fails builds its error on the heap.
    let refused = allocations(|| {
        let _ = erased_add.launch(&stream, &[(&a).into()], &mut [(&mut out).into()], &[n], &[]);
    });
    assert!(refused > 0, "a refused launch allocates its error");
}
