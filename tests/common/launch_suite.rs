//! Launch checks written once, generic over the device (DESIGN §10): every NVRTC fixture is
//! launched through the erased face — describe, load, bind, launch, read back — on `&Device` and
//! compared with a Rust reference computed here. Instantiated for the emulator in
//! tests/emulator_fixtures.rs (and, by the lead at merge, for CUDA in tests/gpu.rs).
//!
//! Exactness: f32/f64 add, sub, mul and fma are compared bit for bit (the reference uses
//! `mul_add` for the contracted `x*p0+p1`), f16/bf16 bit for bit after one round-to-nearest-even
//! (the reference adds in f32, which is exact enough that rounding once to half is correct),
//! silu within `SILU_ULPS` ulp of an f64 reference (NVRTC's `expf` uses `ex2.approx.ftz.f32`,
//! within 2 ulp on a GPU; the emulator computes `exp2` within 1 ulp).
//!
//! Outputs are pre-filled with NaN so an element the kernel never wrote is caught.

use half::{bf16, f16};
use jitseam::device::{Arg, ArgMut};
use jitseam::{Device, DeviceBound, Element, Erased, Kernel, ParamValue};

use super::fixtures;

/// Tolerance of the silu fixture, in ulp of the f32 result.
pub const SILU_ULPS: u32 = 8;

/// Deterministic pseudo-random values in `[-range, range)`.
pub fn values(seed: u64, n: usize, range: f64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * range
        })
        .collect()
}

/// Binds a fixture entry on `device` through the erased face.
pub fn bind(device: &Device, entry: &str) -> Kernel<Erased, DeviceBound> {
    let f = fixtures::by_entry(entry);
    Kernel::describe(f.artifact())
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap_or_else(|e| panic!("bind {entry}: {e}"))
}

fn f32s(seed: u64, n: usize) -> Vec<f32> {
    values(seed, n, 8.0).into_iter().map(|v| v as f32).collect()
}

fn f64s(seed: u64, n: usize) -> Vec<f64> {
    values(seed, n, 8.0)
}

/// Launches a dense (scalar or vectorized) fixture with the given inputs; returns the outputs.
fn dense<T: Element>(
    device: &Device,
    entry: &str,
    inputs: &[Vec<T>],
    outputs: usize,
    sentinel: T,
    params: &[ParamValue],
) -> Vec<Vec<T>> {
    let k = bind(device, entry);
    let n = inputs.first().map_or(0, Vec::len);
    let ins: Vec<_> = inputs.iter().map(|v| device.upload(v).unwrap()).collect();
    let mut outs: Vec<_> = (0..outputs)
        .map(|_| device.upload(&vec![sentinel; n]).unwrap())
        .collect();
    let stream = device.default_stream();
    let in_args: Vec<Arg<'_>> = ins.iter().map(Arg::from).collect();
    let mut out_args: Vec<ArgMut<'_>> = outs.iter_mut().map(ArgMut::from).collect();
    k.launch(&stream, &in_args, &mut out_args, &[n], params)
        .unwrap_or_else(|e| panic!("launch {entry}: {e}"));
    stream.synchronize().unwrap();
    outs.iter().map(|o| stream.read(o).unwrap()).collect()
}

fn assert_bits<T: Element + std::fmt::Debug>(entry: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len());
    let bytes = |x: T| {
        let mut v = Vec::new();
        x.write_le(&mut v);
        v
    };
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            bytes(g),
            bytes(w),
            "{entry}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

/// One scalar/vectorized f32 fixture computing `f(a, b)`.
fn binary_f32(device: &Device, entry: &str, n: usize, f: fn(f32, f32) -> f32) {
    let (a, b) = (f32s(1, n), f32s(2, n));
    let out = dense(device, entry, &[a.clone(), b.clone()], 1, f32::NAN, &[]);
    let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
    assert_bits(entry, &out[0], &want);
}

fn binary_f64(device: &Device, entry: &str, n: usize, f: fn(f64, f64) -> f64) {
    let (a, b) = (f64s(3, n), f64s(4, n));
    let out = dense(device, entry, &[a.clone(), b.clone()], 1, f64::NAN, &[]);
    let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
    assert_bits(entry, &out[0], &want);
}

fn unary_f32(device: &Device, entry: &str, n: usize, f: fn(f32) -> f32) {
    let a = f32s(5, n);
    let out = dense(device, entry, std::slice::from_ref(&a), 1, f32::NAN, &[]);
    let want: Vec<f32> = a.iter().map(|&x| f(x)).collect();
    assert_bits(entry, &out[0], &want);
}

/// The ulp distance between two finite f32s of the same sign.
pub fn ulps(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits < 0 {
            i64::from(i32::MIN) - bits
        } else {
            bits
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u64::from(u32::MAX)) as u32
}

/// Launches `entry` on `device` with `n` elements and checks every output element.
pub fn check_fixture(device: &Device, entry: &str, n: usize) {
    match entry {
        "baracuda_gen_add_f32_scalar"
        | "baracuda_gen_add_f32_co_v2"
        | "baracuda_gen_add_f32_co_v4" => binary_f32(device, entry, n, |a, b| a + b),
        "baracuda_gen_add_f64_co_v2" => binary_f64(device, entry, n, |a, b| a + b),
        "baracuda_gen_mul_f64_scalar" => binary_f64(device, entry, n, |a, b| a * b),
        "baracuda_gen_relu_f32_scalar" => {
            unary_f32(device, entry, n, |x| if x > 0.0 { x } else { 0.0 })
        }
        "baracuda_gen_neg_f32_scalar" => unary_f32(device, entry, n, |x| -x),
        "baracuda_gen_abs_f32_scalar" => unary_f32(device, entry, n, f32::abs),
        "baracuda_gen_silu_f32_scalar" => {
            let a: Vec<f32> = values(6, n, 20.0).into_iter().map(|v| v as f32).collect();
            let out = dense(device, entry, std::slice::from_ref(&a), 1, f32::NAN, &[]);
            for (i, (&x, &got)) in a.iter().zip(&out[0]).enumerate() {
                let want = (f64::from(x) / (1.0 + (-f64::from(x)).exp())) as f32;
                assert!(
                    ulps(got, want) <= SILU_ULPS,
                    "{entry}: element {i}: silu({x}) = {got}, want {want}"
                );
            }
        }
        "baracuda_gen_add_sub_f32_mo2_scalar" => {
            let (a, b) = (f32s(7, n), f32s(8, n));
            let out = dense(device, entry, &[a.clone(), b.clone()], 2, f32::NAN, &[]);
            let sum: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| x + y).collect();
            let diff: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| x - y).collect();
            assert_bits(entry, &out[0], &sum);
            assert_bits(entry, &out[1], &diff);
        }
        "baracuda_gen_add_scalar_mul_scalar_f32_scalar" => {
            let a = f32s(9, n);
            let (p0, p1) = (1.337f32, -0.25f32);
            let params = [ParamValue::F32(p0), ParamValue::F32(p1)];
            let out = dense(
                device,
                entry,
                std::slice::from_ref(&a),
                1,
                f32::NAN,
                &params,
            );
            let want: Vec<f32> = a.iter().map(|&x| x.mul_add(p0, p1)).collect();
            assert_bits(entry, &out[0], &want);
        }
        "baracuda_gen_axpb_f64_scalar" => {
            let a = f64s(10, n);
            let (p0, p1) = (1.000_000_1f64, 1e-3f64);
            let params = [ParamValue::F64(p0), ParamValue::F64(p1)];
            let out = dense(
                device,
                entry,
                std::slice::from_ref(&a),
                1,
                f64::NAN,
                &params,
            );
            let want: Vec<f64> = a.iter().map(|&x| x.mul_add(p0, p1)).collect();
            assert_bits(entry, &out[0], &want);
        }
        "baracuda_gen_add_f16_scalar" | "baracuda_gen_add_f16_co_v8" => {
            let a: Vec<f16> = f32s(11, n).into_iter().map(f16::from_f32).collect();
            let b: Vec<f16> = f32s(12, n).into_iter().map(f16::from_f32).collect();
            let out = dense(device, entry, &[a.clone(), b.clone()], 1, f16::NAN, &[]);
            let want: Vec<f16> = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f16::from_f32(x.to_f32() + y.to_f32()))
                .collect();
            assert_bits(entry, &out[0], &want);
        }
        "baracuda_gen_add_bf16_scalar" => {
            let a: Vec<bf16> = f32s(13, n).into_iter().map(bf16::from_f32).collect();
            let b: Vec<bf16> = f32s(14, n).into_iter().map(bf16::from_f32).collect();
            let out = dense(device, entry, &[a.clone(), b.clone()], 1, bf16::NAN, &[]);
            let want: Vec<bf16> = a
                .iter()
                .zip(&b)
                .map(|(x, y)| bf16::from_f32(x.to_f32() + y.to_f32()))
                .collect();
            assert_bits(entry, &out[0], &want);
        }
        "baracuda_gen_add_f32_strided_r1"
        | "baracuda_gen_add_f32_strided_r2"
        | "baracuda_gen_add_f32_strided_r3" => strided_add(device, entry, n),
        "baracuda_gen_mul_scalar_f64_strided_r2" => strided_scale(device, entry, n),
        other => panic!("no reference for fixture entry {other}"),
    }
}

/// Row-major strides of `shape`.
fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &e) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step *= e as isize;
    }
    strides
}

/// Every multi-index of `shape` in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let total: usize = shape.iter().product();
    (0..total)
        .map(|mut flat| {
            let mut idx = vec![0; shape.len()];
            for (i, &e) in idx.iter_mut().zip(shape).rev() {
                *i = flat % e;
                flat /= e;
            }
            idx
        })
        .collect()
}

fn offset(origin: usize, idx: &[usize], strides: &[isize]) -> usize {
    let o = idx
        .iter()
        .zip(strides)
        .fold(origin as isize, |acc, (&i, &s)| acc + i as isize * s);
    o as usize
}

/// A shape of rank `rank` with about `n` elements.
fn shape_for(rank: usize, n: usize) -> Vec<usize> {
    match rank {
        1 => vec![n.max(1)],
        2 => vec![(n / 7).max(1), 7],
        _ => vec![(n / 12).max(1), 3, 4],
    }
}

/// `a + b` where `a` is read reversed along the last axis and `b` transposed (or reversed for
/// rank 1), written row-major.
fn strided_add(device: &Device, entry: &str, n: usize) {
    let rank = entry
        .chars()
        .last()
        .and_then(|c| c.to_digit(10))
        .unwrap_or(1) as usize;
    let shape = shape_for(rank, n);
    let total: usize = shape.iter().product();
    let a_data = f32s(15, total);
    let b_data = f32s(16, total);
    let a = device.upload(&a_data).unwrap();
    let b = device.upload(&b_data).unwrap();
    let mut out = device.upload(&vec![f32::NAN; total]).unwrap();
    // a: row-major storage, last axis reversed.
    let mut a_strides = row_major(&shape);
    let last = rank - 1;
    a_strides[last] = -a_strides[last];
    let a_origin = shape[last] - 1;
    // b: stored with axes reversed (transposed), read through permuted strides.
    let rev: Vec<usize> = shape.iter().rev().copied().collect();
    let rev_strides = row_major(&rev);
    let b_strides: Vec<isize> = if rank == 1 {
        vec![-1]
    } else {
        rev_strides.iter().rev().copied().collect()
    };
    let b_origin = if rank == 1 { total - 1 } else { 0 };
    let av = a.strided(a_origin, &shape, &a_strides).unwrap();
    let bv = b.strided(b_origin, &shape, &b_strides).unwrap();
    let mut ov = out.shaped_mut(&shape).unwrap();
    let k = bind(device, entry);
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&av).into(), (&bv).into()],
        &mut [(&mut ov).into()],
        &shape,
        &[],
    )
    .unwrap_or_else(|e| panic!("launch {entry}: {e}"));
    let got = stream.read(&out).unwrap();
    let out_strides = row_major(&shape);
    let mut want = vec![f32::NAN; total];
    for idx in indices(&shape) {
        let x = a_data[offset(a_origin, &idx, &a_strides)];
        let y = b_data[offset(b_origin, &idx, &b_strides)];
        want[offset(0, &idx, &out_strides)] = x + y;
    }
    assert_bits(entry, &got, &want);
}

/// `x * p0` with `x` transposed and the output written column-major.
fn strided_scale(device: &Device, entry: &str, n: usize) {
    let shape = shape_for(2, n);
    let total: usize = shape.iter().product();
    let data = f64s(17, total);
    let x = device.upload(&data).unwrap();
    let mut out = device.upload(&vec![f64::NAN; total]).unwrap();
    let x_strides = vec![1isize, shape[0] as isize];
    let o_strides = vec![1isize, shape[0] as isize];
    let xv = x.strided(0, &shape, &x_strides).unwrap();
    let mut ov = out.strided_mut(0, &shape, &o_strides).unwrap();
    let p0 = -2.5f64;
    let k = bind(device, entry);
    let stream = device.default_stream();
    k.launch(
        &stream,
        &[(&xv).into()],
        &mut [(&mut ov).into()],
        &shape,
        &[ParamValue::F64(p0)],
    )
    .unwrap_or_else(|e| panic!("launch {entry}: {e}"));
    let got = stream.read(&out).unwrap();
    let mut want = vec![f64::NAN; total];
    for idx in indices(&shape) {
        want[offset(0, &idx, &o_strides)] = data[offset(0, &idx, &x_strides)] * p0;
    }
    assert_bits(entry, &got, &want);
}

/// Element counts every fixture is checked with: small, odd-sized tails (for scalar kernels),
/// and more than one block.
pub fn sizes(entry: &str) -> Vec<usize> {
    let f = fixtures::by_entry(entry);
    let w = f.spec.abi.width();
    [w, 8 * w, 1000 * w, 1 + 3 * 256 * w]
        .into_iter()
        .map(|n| n - n % w)
        .collect()
}

/// Every fixture entry, every size.
pub fn all_fixtures(device: &Device) {
    for f in fixtures::all() {
        for n in sizes(f.entry) {
            check_fixture(device, f.entry, n);
        }
    }
}
