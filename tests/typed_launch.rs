//! Typed launches go through the same `check` and `marshal` as erased ones: launched on a
//! recording backend (which keeps each argument packet instead of running it), a typed launch
//! and the erased launch of the same operands produce byte-identical packets, and a bad launch
//! is declined with the same error. Runs on the host; the fixtures are real NVRTC output.

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic)]

mod common;

use std::sync::Arc;

use jitseam::device::{Arg, ArgMut};
use jitseam::testing::{FakeBackend as Recorder, Launched as Recorded};
use jitseam::{Device, DeviceBound, Erased, Error, In, Kernel, Out, ParamValue, Signature, Stream};

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_scalar_mul_scalar_f32_scalar")]
fn axpb(x: In<f32>, out: Out<f32>, scale: f32, shift: f32);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_sub_f32_mo2_scalar")]
fn add_sub(a: In<f32>, b: In<f32>, sum: Out<f32>, diff: Out<f32>);

#[jitseam::kernel(abi = vectorized(4), symbol = "baracuda_gen_add_f32_co_v4")]
fn add_v4(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = strided(2), symbol = "baracuda_gen_mul_scalar_f64_strided_r2")]
fn mul_scalar_r2(x: In<f64>, out: Out<f64>, factor: f64);

fn fixture(file: &str) -> String {
    common::fixtures::ptx(file)
        .unwrap_or_else(|| panic!("no fixture {file}"))
        .to_owned()
}

/// The same fixture bound twice on `device`: through the typed face and the erased face.
fn bind_both<K: Signature>(
    device: &Device,
    file: &str,
) -> (Kernel<K, DeviceBound>, Kernel<Erased, DeviceBound>) {
    let artifact = K::ptx_artifact(fixture(file));
    let typed = Kernel::<K, _>::describe_typed(artifact.clone())
        .and_then(|k| k.load().map_err(|r| r.error))
        .and_then(|k| k.bind(device).map_err(|r| r.error));
    let erased = Kernel::describe(artifact)
        .and_then(|k| k.load().map_err(|r| r.error))
        .and_then(|k| k.bind(device).map_err(|r| r.error));
    match (typed, erased) {
        (Ok(typed), Ok(erased)) => (typed, erased),
        (typed, erased) => panic!("{file} should bind: {typed:?} / {erased:?}"),
    }
}

fn setup() -> (Device, Arc<Recorder>, Stream) {
    let (device, recorder) = common::fake::recording();
    let stream = device.default_stream();
    (device, recorder, stream)
}

/// What the backend received for one launch that must have been accepted.
fn recorded(recorder: &Recorder, result: Result<(), Error>) -> Vec<Recorded> {
    assert!(result.is_ok(), "launch: {result:?}");
    recorder.take_launches()
}

#[test]
fn scalar_with_params_marshals_the_erased_packet() -> Result<(), Error> {
    let (device, recorder, stream) = setup();
    let (typed, erased) = bind_both::<Axpb>(&device, "add_scalar_mul_scalar_f32_scalar.ptx");
    let x = device.alloc::<f32>(1000)?;
    let mut out = device.alloc::<f32>(1000)?;
    let t = recorded(
        &recorder,
        typed.launch(&stream, Axpb::args(&x, &mut out, 2.5, -1.0)),
    );
    let e = recorded(
        &recorder,
        erased.launch(
            &stream,
            &[Arg::from(&x)],
            &mut [ArgMut::from(&mut out)],
            &[1000],
            &[ParamValue::F32(2.5), ParamValue::F32(-1.0)],
        ),
    );
    assert_eq!(t.len(), 1);
    assert_eq!(t, e);
    // x, out, n = 1000, then the params, f32 little-endian at their own offsets.
    let packet = &t[0].packet;
    assert_eq!(packet[16..24], 1000u64.to_le_bytes());
    assert_eq!(packet[24..28], 2.5f32.to_le_bytes());
    assert_eq!(packet[28..32], (-1.0f32).to_le_bytes());
    Ok(())
}

#[test]
fn two_outputs_marshal_the_erased_packet() -> Result<(), Error> {
    let (device, recorder, stream) = setup();
    let (typed, erased) = bind_both::<AddSub>(&device, "add_sub_f32_mo2_scalar.ptx");
    let a = device.alloc::<f32>(64)?;
    let b = device.alloc::<f32>(64)?;
    let mut sum = device.alloc::<f32>(64)?;
    let mut diff = device.alloc::<f32>(64)?;
    let t = recorded(
        &recorder,
        typed.launch(&stream, AddSub::args(&a, &b, &mut sum, &mut diff)),
    );
    let e = recorded(
        &recorder,
        erased.launch(
            &stream,
            &[Arg::from(&a), Arg::from(&b)],
            &mut [ArgMut::from(&mut sum), ArgMut::from(&mut diff)],
            &[64],
            &[],
        ),
    );
    assert_eq!(t.len(), 1);
    assert_eq!(t, e);
    Ok(())
}

#[test]
fn vectorized_views_marshal_the_erased_packet() -> Result<(), Error> {
    let (device, recorder, stream) = setup();
    let (typed, erased) = bind_both::<AddV4>(&device, "add_f32_co_v4.ptx");
    let a = device.alloc::<f32>(4096)?;
    let b = device.alloc::<f32>(1024)?;
    let mut out = device.alloc::<f32>(1024)?;
    let a_view = a.slice(1024..2048)?;
    let t = recorded(
        &recorder,
        typed.launch(&stream, AddV4::args(&a_view, &b, &mut out)),
    );
    let e = recorded(
        &recorder,
        erased.launch(
            &stream,
            &[Arg::from(&a_view), Arg::from(&b)],
            &mut [ArgMut::from(&mut out)],
            &[1024],
            &[],
        ),
    );
    assert_eq!(t.len(), 1);
    assert_eq!(t, e);
    // The count is in vectors, and input 0 points into the middle of its allocation.
    assert_eq!(t[0].packet[24..32], 256u64.to_le_bytes());
    assert_eq!(t[0].packet[0..8], (a.address() + 1024 * 4).to_le_bytes());
    Ok(())
}

#[test]
fn strided_views_marshal_the_erased_packet() -> Result<(), Error> {
    let (device, recorder, stream) = setup();
    let (typed, erased) = bind_both::<MulScalarR2>(&device, "mul_scalar_f64_strided_r2.ptx");
    let x = device.alloc::<f64>(6)?;
    let mut out = device.alloc::<f64>(6)?;
    // A transposed input: shape [3, 2] over a row-major [2, 3] buffer.
    let x_t = x.strided(0, &[3, 2], &[1, 3])?;
    let t = {
        let mut out_view = out.shaped_mut(&[3, 2])?;
        let result = typed.launch(&stream, MulScalarR2::args(&x_t, &mut out_view, 0.5));
        assert!(result.is_ok(), "{result:?}");
        recorder.take_launches()
    };
    let e = {
        let mut out_view = out.shaped_mut(&[3, 2])?;
        let result = erased.launch(
            &stream,
            &[Arg::from(&x_t)],
            &mut [ArgMut::from(&mut out_view)],
            &[3, 2],
            &[ParamValue::F64(0.5)],
        );
        assert!(result.is_ok(), "{result:?}");
        recorder.take_launches()
    };
    assert_eq!(t.len(), 1);
    assert_eq!(t, e);
    Ok(())
}

#[test]
fn a_typed_launch_is_declined_like_an_erased_one() -> Result<(), Error> {
    let (device, recorder, stream) = setup();
    let (typed, erased) = bind_both::<AddV4>(&device, "add_f32_co_v4.ptx");
    let a = device.alloc::<f32>(1024)?;
    let short = device.alloc::<f32>(1020)?;
    let mut out = device.alloc::<f32>(1024)?;
    let typed_error = typed.launch(&stream, AddV4::args(&a, &short, &mut out));
    let erased_error = erased.launch(
        &stream,
        &[Arg::from(&a), Arg::from(&short)],
        &mut [ArgMut::from(&mut out)],
        &[1024],
        &[],
    );
    assert!(
        matches!(typed_error, Err(Error::ElementCount { .. })),
        "{typed_error:?}"
    );
    assert_eq!(
        typed_error.map_err(|e| e.to_string()),
        erased_error.map_err(|e| e.to_string())
    );
    assert!(
        recorder.take_launches().is_empty(),
        "a declined launch must not reach the backend"
    );
    Ok(())
}
