//! Launch tests written once, generic over the device: each `pub fn` takes a
//! `&Device`, runs one NVRTC fixture through the erased API (describe → load → bind → launch)
//! and checks every output element against a host reference. Outputs start filled with NaN, so
//! an element the kernel never wrote fails the comparison.
//!
//! Instantiated once per backend with [`launch_suite_tests!`]: for the emulator in
//! tests/emulator_fixtures.rs (always) and for CUDA in tests/gpu.rs (feature `gpu-tests`).

use half::{bf16, f16};
use jitseam::device::{Arg, ArgMut};
use jitseam::error::Operand;
use jitseam::{Device, DeviceBound, DeviceBuffer, Element, Erased, Error, Kernel, ParamValue};

use super::fixtures;

/// Deliberately not a multiple of the block size, so the last block is partial.
const N: usize = 1003;
/// Vectorized fixtures need a multiple of the width (8 covers 2, 4 and 8).
const NV: usize = 1000;

pub const ADD_F32: &str = "baracuda_gen_add_f32_scalar";
pub const MUL_F64: &str = "baracuda_gen_mul_f64_scalar";
pub const ADD_F16: &str = "baracuda_gen_add_f16_scalar";
pub const ADD_BF16: &str = "baracuda_gen_add_bf16_scalar";
pub const RELU_F32: &str = "baracuda_gen_relu_f32_scalar";
pub const SILU_F32: &str = "baracuda_gen_silu_f32_scalar";
pub const ADD_SUB_F32: &str = "baracuda_gen_add_sub_f32_mo2_scalar";
pub const AXPB_F32: &str = "baracuda_gen_add_scalar_mul_scalar_f32_scalar";
pub const AXPB_F64: &str = "baracuda_gen_axpb_f64_scalar";
pub const ADD_F32_V4: &str = "baracuda_gen_add_f32_co_v4";
pub const ADD_F32_V2: &str = "baracuda_gen_add_f32_co_v2";
pub const ADD_F64_V2: &str = "baracuda_gen_add_f64_co_v2";
pub const ADD_F16_V8: &str = "baracuda_gen_add_f16_co_v8";
pub const ADD_F32_R1: &str = "baracuda_gen_add_f32_strided_r1";
pub const ADD_F32_R2: &str = "baracuda_gen_add_f32_strided_r2";
pub const ADD_F32_R3: &str = "baracuda_gen_add_f32_strided_r3";
pub const MUL_F64_R2: &str = "baracuda_gen_mul_scalar_f64_strided_r2";
pub const NEG_F32: &str = "baracuda_gen_neg_f32_scalar";
pub const ABS_F32: &str = "baracuda_gen_abs_f32_scalar";

/// The fixture `entry`, bound to `device`.
pub fn bind(device: &Device, entry: &str) -> Kernel<Erased, DeviceBound> {
    let fixture = fixtures::by_entry(entry);
    Kernel::describe(fixture.artifact())
        .unwrap_or_else(|e| panic!("describe {entry}: {e}"))
        .load()
        .unwrap_or_else(|e| panic!("load {entry}: {e}"))
        .bind(device)
        .unwrap_or_else(|e| panic!("bind {entry}: {e}"))
}

fn upload<T: Element>(device: &Device, data: &[T]) -> DeviceBuffer<T> {
    device
        .upload(data)
        .unwrap_or_else(|e| panic!("upload {} elements: {e}", data.len()))
}

fn read<T: Element>(device: &Device, buffer: &DeviceBuffer<T>) -> Vec<T> {
    device
        .default_stream()
        .read(buffer)
        .unwrap_or_else(|e| panic!("read back: {e}"))
}

/// Launches on the default stream and waits, so a failure names this launch.
fn launch(
    device: &Device,
    kernel: &Kernel<Erased, DeviceBound>,
    inputs: &[Arg<'_>],
    outputs: &mut [ArgMut<'_>],
    shape: &[usize],
    params: &[ParamValue],
) {
    let stream = device.default_stream();
    kernel
        .launch(&stream, inputs, outputs, shape, params)
        .unwrap_or_else(|e| panic!("launch {}: {e}", kernel.entry()));
    stream
        .synchronize()
        .unwrap_or_else(|e| panic!("synchronize after {}: {e}", kernel.entry()));
}

fn assert_exact<T: PartialEq + std::fmt::Debug>(entry: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{entry}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "{entry}: element {i}");
    }
}

fn f32s(n: usize, f: impl Fn(usize) -> f32) -> Vec<f32> {
    (0..n).map(f).collect()
}

fn f64s(n: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
    (0..n).map(f).collect()
}

/// Two inputs, one output, elementwise, exact comparison.
fn binary_exact<T: Element + PartialEq + std::fmt::Debug>(
    device: &Device,
    entry: &str,
    n: usize,
    a: impl Fn(usize) -> T,
    b: impl Fn(usize) -> T,
    op: impl Fn(T, T) -> T,
    sentinel: T,
) {
    let kernel = bind(device, entry);
    let (a, b): (Vec<T>, Vec<T>) = ((0..n).map(a).collect(), (0..n).map(b).collect());
    let want: Vec<T> = a.iter().zip(&b).map(|(&x, &y)| op(x, y)).collect();
    let (da, db) = (upload(device, &a), upload(device, &b));
    let mut out = upload(device, &vec![sentinel; n]);
    launch(
        device,
        &kernel,
        &[(&da).into(), (&db).into()],
        &mut [(&mut out).into()],
        &[n],
        &[],
    );
    assert_exact(entry, &read(device, &out), &want);
}

pub fn scalar_add_f32(device: &Device) {
    binary_exact(
        device,
        ADD_F32,
        N,
        |i| i as f32 * 0.5,
        |i| 1.0 - i as f32 * 0.25,
        |x, y| x + y,
        f32::NAN,
    );
}

pub fn scalar_mul_f64(device: &Device) {
    binary_exact(
        device,
        MUL_F64,
        N,
        |i| i as f64 * 0.1 + 1.0,
        |i| 3.0 - i as f64 * 1e-3,
        |x, y| x * y,
        f64::NAN,
    );
}

/// Sums of two halves are exact in f32, so rounding that sum once is the correctly rounded
/// half-precision sum the device computes.
pub fn scalar_add_f16(device: &Device) {
    binary_exact(
        device,
        ADD_F16,
        N,
        |i| f16::from_f32(i as f32 * 0.125 - 40.0),
        |i| f16::from_f32((i % 17) as f32 * 0.3),
        |x, y| f16::from_f32(x.to_f32() + y.to_f32()),
        f16::NAN,
    );
}

/// bf16 `__hadd` is `fma.rn.bf16(a, 1, b)`: one rounding of the exact sum, as here.
pub fn scalar_add_bf16(device: &Device) {
    binary_exact(
        device,
        ADD_BF16,
        N,
        |i| bf16::from_f32(i as f32 * 0.5 - 100.0),
        |i| bf16::from_f32((i % 13) as f32 * 0.7),
        |x, y| bf16::from_f32(x.to_f32() + y.to_f32()),
        bf16::NAN,
    );
}

fn unary(device: &Device, entry: &str, x: &[f32]) -> Vec<f32> {
    let kernel = bind(device, entry);
    let dx = upload(device, x);
    let mut out = upload(device, &vec![f32::NAN; x.len()]);
    launch(
        device,
        &kernel,
        &[(&dx).into()],
        &mut [(&mut out).into()],
        &[x.len()],
        &[],
    );
    read(device, &out)
}

pub fn scalar_relu_f32(device: &Device) {
    let x = f32s(N, |i| i as f32 * 0.25 - 125.0);
    let want: Vec<f32> = x.iter().map(|&v| if v > 0.0 { v } else { 0.0 }).collect();
    assert_exact(RELU_F32, &unary(device, RELU_F32, &x), &want);
}

/// `expf` on the device is not correctly rounded (ex2.approx): compare with a tolerance.
pub fn scalar_silu_f32(device: &Device) {
    let x = f32s(N, |i| i as f32 * 0.02 - 10.0);
    let got = unary(device, SILU_F32, &x);
    for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
        let want = (f64::from(v) / (1.0 + (-f64::from(v)).exp())) as f32;
        let tolerance = 1e-5 * want.abs() + 1e-6;
        assert!(
            (g - want).abs() <= tolerance,
            "{SILU_F32}: element {i}: silu({v}) = {g}, want {want}"
        );
    }
}

/// Both entries of the module with a shared non-inlined `.func`.
pub fn two_entries_neg_abs_f32(device: &Device) {
    let x = f32s(N, |i| i as f32 * 0.5 - 250.0);
    let neg: Vec<f32> = x.iter().map(|&v| -v).collect();
    let abs: Vec<f32> = x.iter().map(|&v| v.abs()).collect();
    assert_exact(NEG_F32, &unary(device, NEG_F32, &x), &neg);
    assert_exact(ABS_F32, &unary(device, ABS_F32, &x), &abs);
}

pub fn scalar_add_sub_two_outputs_f32(device: &Device) {
    let kernel = bind(device, ADD_SUB_F32);
    let a = f32s(N, |i| i as f32 * 1.5);
    let b = f32s(N, |i| 7.0 - i as f32 * 0.5);
    let (da, db) = (upload(device, &a), upload(device, &b));
    let mut sum = upload(device, &vec![f32::NAN; N]);
    let mut diff = upload(device, &vec![f32::NAN; N]);
    launch(
        device,
        &kernel,
        &[(&da).into(), (&db).into()],
        &mut [(&mut sum).into(), (&mut diff).into()],
        &[N],
        &[],
    );
    let want_sum: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let want_diff: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
    assert_exact("add_sub out0", &read(device, &sum), &want_sum);
    assert_exact("add_sub out1", &read(device, &diff), &want_diff);
}

/// `x*p0+p1` is contracted to one fused multiply-add: `mul_add` is the exact reference.
pub fn params_axpb_f32(device: &Device) {
    let kernel = bind(device, AXPB_F32);
    let x = f32s(N, |i| i as f32 * 0.37 - 50.0);
    let (p0, p1) = (1.7f32, -0.3f32);
    let dx = upload(device, &x);
    let mut out = upload(device, &vec![f32::NAN; N]);
    launch(
        device,
        &kernel,
        &[(&dx).into()],
        &mut [(&mut out).into()],
        &[N],
        &[ParamValue::F32(p0), ParamValue::F32(p1)],
    );
    let want: Vec<f32> = x.iter().map(|&v| v.mul_add(p0, p1)).collect();
    assert_exact(AXPB_F32, &read(device, &out), &want);
}

/// f64 params stay f64 (the old loader narrowed them to f32).
pub fn params_axpb_f64(device: &Device) {
    let kernel = bind(device, AXPB_F64);
    let x = f64s(N, |i| i as f64 * 0.37 - 50.0);
    // Not representable in f32: a narrowed param would change every result.
    let (p0, p1) = (1.000_000_000_1f64, -0.300_000_000_000_7f64);
    let dx = upload(device, &x);
    let mut out = upload(device, &vec![f64::NAN; N]);
    launch(
        device,
        &kernel,
        &[(&dx).into()],
        &mut [(&mut out).into()],
        &[N],
        &[ParamValue::F64(p0), ParamValue::F64(p1)],
    );
    let want: Vec<f64> = x.iter().map(|&v| v.mul_add(p0, p1)).collect();
    assert_exact(AXPB_F64, &read(device, &out), &want);
}

pub fn vectorized_add_f32_v4(device: &Device) {
    binary_exact(
        device,
        ADD_F32_V4,
        NV,
        |i| i as f32,
        |i| 0.5 - i as f32 * 2.0,
        |x, y| x + y,
        f32::NAN,
    );
}

pub fn vectorized_add_f32_v2(device: &Device) {
    binary_exact(
        device,
        ADD_F32_V2,
        NV,
        |i| i as f32 * 0.75,
        |i| 3.0 + i as f32,
        |x, y| x + y,
        f32::NAN,
    );
}

pub fn vectorized_add_f64_v2(device: &Device) {
    binary_exact(
        device,
        ADD_F64_V2,
        NV,
        |i| i as f64 * 1e-3,
        |i| 2.0 - i as f64,
        |x, y| x + y,
        f64::NAN,
    );
}

pub fn vectorized_add_f16_v8(device: &Device) {
    binary_exact(
        device,
        ADD_F16_V8,
        NV,
        |i| f16::from_f32(i as f32 * 0.25 - 60.0),
        |i| f16::from_f32((i % 11) as f32 * 0.5),
        |x, y| f16::from_f32(x.to_f32() + y.to_f32()),
        f16::NAN,
    );
}

/// Element index, in its allocation, of multi-index `index` of a view.
fn at(offset: usize, strides: &[isize], index: &[usize]) -> usize {
    let mut position = offset as isize;
    for (&i, &s) in index.iter().zip(strides) {
        position += i as isize * s;
    }
    usize::try_from(position).unwrap_or_else(|_| panic!("index {index:?} before the buffer"))
}

/// Every multi-index of `shape`, row-major.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for &extent in shape {
        all = all
            .into_iter()
            .flat_map(|prefix| {
                (0..extent).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    all
}

/// A strided view: origin element, and one signed stride per axis.
#[derive(Debug, Clone, Copy)]
struct Window<'s> {
    offset: usize,
    strides: &'s [isize],
}

/// `out = a + b` through `entry` over `shape`, with each operand a window into its own buffer;
/// every output element the window does not cover must stay NaN.
fn strided_add_f32(
    device: &Device,
    entry: &str,
    shape: &[usize],
    (a_len, a_win): (usize, Window<'_>),
    (b_len, b_win): (usize, Window<'_>),
    (out_len, out_win): (usize, Window<'_>),
) {
    let kernel = bind(device, entry);
    let a = f32s(a_len, |i| i as f32 * 0.5 + 1.0);
    let b = f32s(b_len, |i| 1000.0 - i as f32 * 3.0);
    let (da, db) = (upload(device, &a), upload(device, &b));
    let mut out = upload(device, &vec![f32::NAN; out_len]);
    let mut want = vec![f32::NAN; out_len];
    for index in indices(shape) {
        want[at(out_win.offset, out_win.strides, &index)] =
            a[at(a_win.offset, a_win.strides, &index)] + b[at(b_win.offset, b_win.strides, &index)];
    }
    {
        let va = da.strided(a_win.offset, shape, a_win.strides).unwrap();
        let vb = db.strided(b_win.offset, shape, b_win.strides).unwrap();
        let mut vo = out
            .strided_mut(out_win.offset, shape, out_win.strides)
            .unwrap();
        launch(
            device,
            &kernel,
            &[(&va).into(), (&vb).into()],
            &mut [(&mut vo).into()],
            shape,
            &[],
        );
    }
    let got = read(device, &out);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g == w || (g.is_nan() && w.is_nan()),
            "{entry}: output element {i} is {g}, want {w}"
        );
    }
}

/// Rank 1: a reversed input (stride −1) and an output written every other element.
pub fn strided_r1_reversed_input(device: &Device) {
    let n = 777;
    strided_add_f32(
        device,
        ADD_F32_R1,
        &[n],
        (
            n,
            Window {
                offset: n - 1,
                strides: &[-1],
            },
        ),
        (
            n,
            Window {
                offset: 0,
                strides: &[1],
            },
        ),
        (
            2 * n,
            Window {
                offset: 0,
                strides: &[2],
            },
        ),
    );
}

/// Rank 2: a transposed input and a broadcast (stride 0) row.
pub fn strided_r2_transposed_and_broadcast(device: &Device) {
    let (rows, cols) = (37, 29);
    // `a` is stored [cols, rows] row-major; read transposed as [rows, cols].
    let a_t = [1isize, rows as isize];
    strided_add_f32(
        device,
        ADD_F32_R2,
        &[rows, cols],
        (
            rows * cols,
            Window {
                offset: 0,
                strides: &a_t,
            },
        ),
        (
            cols,
            Window {
                offset: 0,
                strides: &[0, 1],
            },
        ),
        (
            rows * cols,
            Window {
                offset: 0,
                strides: &[cols as isize, 1],
            },
        ),
    );
}

/// Rank 2: a negative stride on the outer axis of an input (rows read bottom-up).
pub fn strided_r2_negative_stride(device: &Device) {
    let (rows, cols) = (16, 33);
    strided_add_f32(
        device,
        ADD_F32_R2,
        &[rows, cols],
        (
            rows * cols,
            Window {
                offset: (rows - 1) * cols,
                strides: &[-(cols as isize), 1],
            },
        ),
        (
            rows * cols,
            Window {
                offset: 0,
                strides: &[cols as isize, 1],
            },
        ),
        (
            rows * cols,
            Window {
                offset: 0,
                strides: &[cols as isize, 1],
            },
        ),
    );
}

/// Rank 3: a permuted input, a contiguous input and a padded output.
pub fn strided_r3_permuted(device: &Device) {
    let shape = [4usize, 6, 10];
    // `a` stored as [10, 4, 6]; viewed as [4, 6, 10] by permuting the axes.
    let a_strides = [6isize, 1, 24];
    // The output rows are padded to 12 elements; the padding must stay NaN.
    let out_strides = [72isize, 12, 1];
    strided_add_f32(
        device,
        ADD_F32_R3,
        &shape,
        (
            240,
            Window {
                offset: 0,
                strides: &a_strides,
            },
        ),
        (
            240,
            Window {
                offset: 0,
                strides: &[60, 10, 1],
            },
        ),
        (
            4 * 72,
            Window {
                offset: 0,
                strides: &out_strides,
            },
        ),
    );
}

/// Strided f64 with an f64 param: `out = x * p0` over a transposed view.
pub fn strided_f64_with_param(device: &Device) {
    let kernel = bind(device, MUL_F64_R2);
    let (rows, cols) = (21, 13);
    let x = f64s(rows * cols, |i| i as f64 * 0.25 - 7.0);
    let p0 = 1.000_000_000_3f64;
    let dx = upload(device, &x);
    let mut out = upload(device, &vec![f64::NAN; rows * cols]);
    {
        // `x` stored [cols, rows]; read transposed.
        let vx = dx.strided(0, &[rows, cols], &[1, rows as isize]).unwrap();
        let mut vo = out.shaped_mut(&[rows, cols]).unwrap();
        launch(
            device,
            &kernel,
            &[(&vx).into()],
            &mut [(&mut vo).into()],
            &[rows, cols],
            &[ParamValue::F64(p0)],
        );
    }
    let mut want = vec![f64::NAN; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[r * cols + c] = x[c * rows + r] * p0;
        }
    }
    assert_exact(MUL_F64_R2, &read(device, &out), &want);
}

/// Two handles from `open` have different ids, and a launch mixing them is refused before any
/// device sees it — for an operand and for the stream.
pub fn cross_device_launch_is_refused(open: impl Fn() -> Device) {
    let (one, two) = (open(), open());
    assert_ne!(one.id(), two.id(), "two handles share an id");
    let kernel = bind(&one, ADD_F32);
    let a = upload(&one, &f32s(64, |i| i as f32));
    let foreign = upload(&two, &f32s(64, |i| i as f32));
    let mut out = upload(&one, &[f32::NAN; 64]);
    let err = kernel
        .launch(
            &one.default_stream(),
            &[(&a).into(), (&foreign).into()],
            &mut [(&mut out).into()],
            &[64],
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeviceMismatch { operand: Operand::Input(1), expected, found, .. }
                if expected == one.id() && found == two.id()
        ),
        "{err:?}"
    );
    assert!(err.is_decline());
    let err = kernel
        .launch(
            &two.default_stream(),
            &[(&a).into(), (&a).into()],
            &mut [(&mut out).into()],
            &[64],
            &[],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::DeviceMismatch {
                operand: Operand::Stream,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        read(&one, &out).iter().all(|v| v.is_nan()),
        "a refused launch ran"
    );
}

/// A float4 kernel given views that start one element into their buffers is refused before the
/// driver; the output is untouched.
pub fn misaligned_vector_view_is_refused(device: &Device) {
    let kernel = bind(device, ADD_F32_V4);
    let a = upload(device, &f32s(NV + 4, |i| i as f32));
    let b = upload(device, &f32s(NV + 4, |i| i as f32));
    let mut out = upload(device, &vec![f32::NAN; NV + 4]);
    let err = {
        let va = a.slice(1..NV + 1).unwrap();
        let vb = b.slice(0..NV).unwrap();
        let mut vo = out.slice_mut(0..NV).unwrap();
        kernel
            .launch(
                &device.default_stream(),
                &[(&va).into(), (&vb).into()],
                &mut [(&mut vo).into()],
                &[NV],
                &[],
            )
            .unwrap_err()
    };
    assert!(
        matches!(
            err,
            Error::Misaligned {
                operand: Operand::Input(0),
                offset: 4,
                required: 16,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_decline());
    assert!(
        read(device, &out).iter().all(|v| v.is_nan()),
        "a refused launch ran"
    );
}

/// Dropping a kernel and its inputs right after queueing launches on a second stream — before
/// they can have finished — neither unloads the module nor frees memory under them.
pub fn drop_while_launches_are_queued(open: impl Fn() -> Device) {
    drop_while_launches_of_n_are_queued(open, 1 << 20);
}

/// [`drop_while_launches_are_queued`] with `n`-element launches, for devices where a large
/// launch is slow (the CUDA driver model interprets every thread).
pub fn drop_while_launches_of_n_are_queued(open: impl Fn() -> Device, n: usize) {
    let device = open();
    let stream = device.new_stream().unwrap();
    let a = f32s(n, |i| (i % 1024) as f32);
    let b = f32s(n, |i| (i % 7) as f32);
    let mut out = upload(&device, &vec![f32::NAN; n]);
    {
        // Declared before the kernel so they drop after it: each free synchronizes the device,
        // and the kernel must drop while its launches are still queued.
        let (da, db) = (upload(&device, &a), upload(&device, &b));
        let kernel = bind(&device, ADD_F32);
        for _ in 0..50 {
            kernel
                .launch(
                    &stream,
                    &[(&da).into(), (&db).into()],
                    &mut [(&mut out).into()],
                    &[n],
                    &[],
                )
                .unwrap();
        }
        // `kernel`, then `db` and `da`, drop here with the launches still queued.
    }
    stream.synchronize().unwrap();
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_exact("add after drops", &stream.read(&out).unwrap(), &want);
    // A later load and launch on the same device still work (the pending unload drained).
    scalar_add_f32(&device);
    device.synchronize().unwrap();
}

/// One `#[test]` per suite function, each on a fresh device from `$open` (a `fn() -> Device`).
///
/// With `via $run`, each test body runs as `$run(test_name, body)` instead of directly: the
/// CUDA driver model runs it in a child process (tests/cuda_model.rs).
#[macro_export]
macro_rules! launch_suite_tests {
    ($open:path) => {
        $crate::launch_suite_tests!($open, via $crate::common::launch_suite::run_here);
    };
    ($open:path, via $run:path) => {
        $crate::launch_suite_tests!(@each $open, $run;
            scalar_add_f32, scalar_mul_f64, scalar_add_f16, scalar_add_bf16, scalar_relu_f32,
            scalar_silu_f32, two_entries_neg_abs_f32, scalar_add_sub_two_outputs_f32,
            params_axpb_f32, params_axpb_f64, vectorized_add_f32_v4, vectorized_add_f32_v2,
            vectorized_add_f64_v2, vectorized_add_f16_v8, strided_r1_reversed_input,
            strided_r2_transposed_and_broadcast, strided_r2_negative_stride, strided_r3_permuted,
            strided_f64_with_param, misaligned_vector_view_is_refused,
        );

        #[test]
        fn cross_device_launch_is_refused() {
            $run("cross_device_launch_is_refused", || {
                common::launch_suite::cross_device_launch_is_refused($open)
            });
        }
    };
    (@each $open:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || common::launch_suite::$name(&$open()));
        }
    )*};
}

/// Runs a suite test in this process (the default for [`launch_suite_tests!`]).
pub fn run_here(_test: &str, body: impl FnOnce()) {
    body();
}
