//! Errors a runtime can act on: signature and parameter-list mismatches printed as signatures
//! with the declared names, the verifier's rejection reachable and matchable from jitseam
//! itself, driver result codes as values, which errors are declines, and which poison a
//! context (a device fault on the emulator does not; on the driver model it does, see
//! tests/cuda_model.rs).
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::{faulty, fixtures};
use jitseam::error::RejectKind;
use jitseam::{
    AbiKind, AbiSpec, Device, DriverCode, ElementKind, Error, In, Kernel, Out, Rejection, Signature,
};

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_relu_f32_scalar")]
fn relu(x: In<f32>, activated: Out<f32>);

/// The f64 fixture's params are `.f64`; this signature declares them `f32`.
#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_axpb_f64_scalar")]
fn axpb(x: In<f64>, y: Out<f64>, scale: f32, shift: f32);

#[test]
fn a_spec_mismatch_prints_both_signatures_with_the_declared_names() {
    let halves = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F16],
        &[ElementKind::F16],
        &[],
    );
    let artifact = jitseam::Artifact::ptx(fixtures::by_entry(Relu::SYMBOL).ptx, "relu", halves);
    let err = Kernel::<Relu, _>::describe_typed(artifact).unwrap_err();
    assert!(matches!(err, Error::SpecMismatch { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "kernel `relu`: the signature declares `scalar(x: in f32, activated: out f32)`, \
         the artifact carries `scalar(in f16, out f16)`"
    );
    assert_eq!(Relu::NAMES, ["x", "activated"]);
}

#[test]
fn a_param_mismatch_names_the_declared_parameters() {
    let artifact = Axpb::ptx_artifact(fixtures::by_entry(Axpb::SYMBOL).ptx);
    let refused = Kernel::<Axpb, _>::describe_typed(artifact)
        .unwrap()
        .load()
        .unwrap_err();
    let message = refused.error.to_string();
    assert!(
        matches!(refused.error, Error::ParamMismatch { index: 3, .. }),
        "{message}"
    );
    assert!(
        message.contains("parameter 3 (`scale`, runtime param 0) has the wrong class"),
        "{message}"
    );
    assert!(
        message.contains("the abi expects (.u64 x, .u64 y, .u64 n, .f32 scale, .f32 shift)"),
        "{message}"
    );
    assert!(
        !message.contains("in0") && !message.contains("p0"),
        "{message}"
    );

    // The same artifact on the erased face has no declared names: the ABI's own.
    let erased = Kernel::describe(Axpb::ptx_artifact(fixtures::by_entry(Axpb::SYMBOL).ptx))
        .unwrap()
        .load()
        .unwrap_err()
        .error
        .to_string();
    assert!(
        erased.contains("(.u64 in0, .u64 out0, .u64 n, .f32 p0, .f32 p1)"),
        "{erased}"
    );
}

#[test]
fn a_body_rejection_is_matchable_through_jitseam() {
    let refused = Kernel::describe(faulty::artifact(None))
        .unwrap()
        .load_proven()
        .unwrap_err();
    let Error::BodyRejected { rejection, .. } = &refused.error else {
        panic!("{}", refused.error);
    };
    let rejection: &Rejection = rejection;
    assert_eq!(rejection.kind, RejectKind::OutOfBounds, "{rejection}");
    assert!(
        rejection.instruction.starts_with("st.global.f32"),
        "{rejection}"
    );
    assert!(refused.error.is_decline());
}

#[test]
fn driver_codes_are_values() {
    let driver = |code| Error::Driver {
        stage: "synchronize a stream".to_owned(),
        code,
        message: "an illegal memory access was encountered".to_owned(),
    };
    let fault = driver(DriverCode::ILLEGAL_ADDRESS);
    assert!(matches!(
        fault,
        Error::Driver {
            code: DriverCode::ILLEGAL_ADDRESS,
            ..
        }
    ));
    assert_eq!(
        fault.to_string(),
        "synchronize a stream failed on the device: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal \
         memory access was encountered"
    );
    assert!(fault.is_context_poisoned() && !fault.is_decline());
    let full = driver(DriverCode::OUT_OF_MEMORY);
    assert!(!full.is_context_poisoned() && !full.is_decline());
    assert_eq!(DriverCode(700), DriverCode::ILLEGAL_ADDRESS);
    assert_eq!(DriverCode(12345).to_string(), "CUresult 12345");
    assert_eq!(DriverCode(12345).name(), None);
    for sticky in [700, 702, 710, 714, 715, 716, 717, 718, 719] {
        assert!(DriverCode(sticky).is_sticky(), "{sticky}");
    }
    for transient in [1, 2, 200, 218, 400, 500, 600, 701, 801, 999] {
        assert!(!DriverCode(transient).is_sticky(), "{transient}");
    }
}

#[test]
fn declines_are_what_jitseam_refused_before_the_device() {
    let declines = [
        Error::CopyLengthMismatch { src: 4, dst: 3 },
        Error::InvalidView {
            reason: "r".to_owned(),
        },
    ];
    for error in &declines {
        assert!(error.is_decline(), "{error}");
    }
    let not = [
        Error::EventTiming {
            reason: "r".to_owned(),
        },
        Error::Device {
            stage: "s".to_owned(),
            message: "m".to_owned(),
        },
        Error::DriverUnavailable {
            reason: "r".to_owned(),
        },
    ];
    for error in &not {
        assert!(!error.is_decline(), "{error}");
    }
}

/// The emulator reports a fault once and clears it: the device goes on working, so nothing is
/// poisoned.
#[test]
fn an_emulator_fault_does_not_poison_the_device() {
    let device = Device::emulator();
    let kernel = faulty::bind(&device, None);
    faulty::launch(&kernel, 4);
    let fault = device.synchronize().unwrap_err();
    assert!(matches!(fault, Error::MemoryFault(_)), "{fault}");
    assert!(!fault.is_context_poisoned() && !fault.is_decline());
    let after = device.upload(&[1.0f32; 4]).unwrap();
    assert_eq!(device.default_stream().read(&after).unwrap(), [1.0; 4]);
}
