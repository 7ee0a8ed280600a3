//! A typed launcher takes its launch shape from its operands, so an extent error names the
//! operand that differs from the others — an output as readily as an input — with both numbers,
//! and names both operands when no majority says which one is wrong.

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic)]

mod common;

use jitseam::error::{Extent, Operand};
use jitseam::{Device, DeviceBound, Error, In, Kernel, Out, Signature};

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_relu_f32_scalar")]
fn relu(x: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = strided(2), symbol = "baracuda_gen_add_f32_strided_r2")]
fn add_r2(a: In<f32>, b: In<f32>, out: Out<f32>);

fn bound<K: Signature>(device: &Device, file: &str) -> Kernel<K, DeviceBound> {
    let text = common::fixtures::ptx(file).unwrap_or_else(|| panic!("no fixture {file}"));
    Kernel::<K, _>::describe_typed(K::ptx_artifact(text))
        .and_then(|k| k.load().map_err(|r| r.error))
        .and_then(|k| k.bind(device).map_err(|r| r.error))
        .unwrap_or_else(|e| panic!("{file} should bind: {e}"))
}

fn element_count(result: Result<(), Error>) -> (Operand, usize, usize) {
    match result {
        Err(Error::ElementCount {
            operand,
            expected,
            found,
            ..
        }) => (operand, expected, found),
        other => panic!("expected ElementCount, got {other:?}"),
    }
}

#[test]
fn a_short_output_is_named_as_the_output() -> Result<(), Error> {
    let (device, recorder) = common::fake::recording();
    let stream = device.default_stream();
    let kernel = bound::<Add>(&device, "add_f32_scalar.ptx");
    let a = device.alloc::<f32>(1000)?;
    let b = device.alloc::<f32>(1000)?;
    let mut out = device.alloc::<f32>(999)?;
    let result = kernel.launch(&stream, Add::args(&a, &b, &mut out));
    assert_eq!(
        result.as_ref().map_err(ToString::to_string),
        Err(
            "kernel `baracuda_gen_add_f32_scalar`: output 0 has 999 elements, the launch covers 1000"
                .to_owned()
        )
    );
    assert_eq!(element_count(result), (Operand::Output(0), 1000, 999));
    assert!(
        recorder.take_launches().is_empty(),
        "a declined launch reached the backend"
    );
    Ok(())
}

#[test]
fn a_short_input_is_named_as_that_input() -> Result<(), Error> {
    let (device, recorder) = common::fake::recording();
    let stream = device.default_stream();
    let kernel = bound::<Add>(&device, "add_f32_scalar.ptx");
    let a = device.alloc::<f32>(1000)?;
    let b = device.alloc::<f32>(999)?;
    let mut out = device.alloc::<f32>(1000)?;
    let result = kernel.launch(&stream, Add::args(&a, &b, &mut out));
    assert_eq!(element_count(result), (Operand::Input(1), 1000, 999));
    // A long one too: the majority, not the smallest, is the launch.
    let long = device.alloc::<f32>(1001)?;
    let result = kernel.launch(&stream, Add::args(&long, &a, &mut out));
    assert_eq!(element_count(result), (Operand::Input(0), 1000, 1001));
    assert!(
        recorder.take_launches().is_empty(),
        "a declined launch reached the backend"
    );
    Ok(())
}

#[test]
fn without_a_majority_both_operands_are_named() -> Result<(), Error> {
    let (device, recorder) = common::fake::recording();
    let stream = device.default_stream();
    let kernel = bound::<Relu>(&device, "relu_f32_scalar.ptx");
    let x = device.alloc::<f32>(1000)?;
    let mut out = device.alloc::<f32>(999)?;
    let result = kernel.launch(&stream, Relu::args(&x, &mut out));
    match &result {
        Err(Error::OperandsDisagree(d)) => assert_eq!(
            (d.first, &d.first_extent, d.second, &d.second_extent),
            (
                Operand::Input(0),
                &Extent::Elements(1000),
                Operand::Output(0),
                &Extent::Elements(999)
            )
        ),
        other => panic!("expected OperandsDisagree, got {other:?}"),
    }
    assert_eq!(
        result.map_err(|e| e.to_string()),
        Err("kernel `baracuda_gen_relu_f32_scalar`: input 0 has 1000 elements, output 0 has 999 elements: the operands of one launch must agree".to_owned())
    );
    assert!(
        recorder.take_launches().is_empty(),
        "a declined launch reached the backend"
    );
    Ok(())
}

#[test]
fn a_strided_operand_of_another_shape_is_the_one_named() -> Result<(), Error> {
    let (device, recorder) = common::fake::recording();
    let stream = device.default_stream();
    let kernel = bound::<AddR2>(&device, "add_f32_strided_r2.ptx");
    let a = device.alloc::<f32>(6)?;
    let b = device.alloc::<f32>(6)?;
    let mut out = device.alloc::<f32>(6)?;
    // The output is [3, 2] over the inputs' [2, 3].
    let (a_v, b_v) = (a.shaped(&[2, 3])?, b.shaped(&[2, 3])?);
    let result = {
        let mut out_v = out.shaped_mut(&[3, 2])?;
        kernel.launch(&stream, AddR2::args(&a_v, &b_v, &mut out_v))
    };
    match &result {
        Err(Error::ShapeMismatch {
            operand,
            expected,
            found,
            ..
        }) => assert_eq!(
            (*operand, &expected[..], &found[..]),
            (Operand::Output(0), &[2, 3][..], &[3, 2][..])
        ),
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    // A transposed input (strides (1, 3)) of the launch's shape is fine; one of another shape
    // is named, with its shape.
    let a_t = a.strided(0, &[3, 2], &[1, 3])?;
    let result = {
        let mut out_v = out.shaped_mut(&[2, 3])?;
        kernel.launch(&stream, AddR2::args(&a_t, &b_v, &mut out_v))
    };
    match &result {
        Err(Error::ShapeMismatch { operand, found, .. }) => {
            assert_eq!((*operand, &found[..]), (Operand::Input(0), &[3, 2][..]))
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    assert!(
        recorder.take_launches().is_empty(),
        "a declined launch reached the backend"
    );
    let ok = {
        let a_t = a.strided(0, &[2, 3], &[1, 2])?;
        let mut out_v = out.shaped_mut(&[2, 3])?;
        kernel.launch(&stream, AddR2::args(&a_t, &b_v, &mut out_v))
    };
    assert!(ok.is_ok(), "{ok:?}");
    Ok(())
}
