//! `#[jitseam::kernel]` on the host: the generated `SPEC` is the spec a user would build by hand
//! for every ABI, a typed signature that disagrees with a real NVRTC `.param` list is declined
//! at `load()` with the parameter index, and an erased kernel is promoted only to its own spec.

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic)]

use jitseam::ElementKind::{BF16, F16, F32, F64, I64, U32};
use jitseam::{AbiKind, AbiSpec, Artifact, Error, In, Kernel, Out, Signature};

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add_f32(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_scalar_mul_scalar_f32_scalar")]
fn axpb_f32(x: In<f32>, out: Out<f32>, scale: f32, shift: f32);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_sub_f32_mo2_scalar")]
fn add_sub(a: In<f32>, b: In<f32>, sum: Out<f32>, diff: Out<f32>);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_bf16_scalar")]
fn add_bf16(a: In<bf16>, b: In<half::bf16>, out: Out<bf16>);

#[jitseam::kernel(abi = vectorized(4), symbol = "baracuda_gen_add_f32_co_v4")]
fn add_f32_v4(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = vectorized(2), symbol = "baracuda_gen_add_f64_co_v2")]
fn add_f64_v2(a: In<f64>, b: In<f64>, out: Out<f64>);

#[jitseam::kernel(abi = vectorized(8), symbol = "baracuda_gen_add_f16_co_v8")]
fn add_f16_v8(a: In<f16>, b: In<f16>, out: Out<f16>);

#[jitseam::kernel(abi = strided(2), symbol = "baracuda_gen_add_f32_strided_r2")]
fn add_f32_r2(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = strided(2), symbol = "baracuda_gen_mul_scalar_f64_strided_r2")]
fn mul_scalar_f64_r2(x: In<f64>, out: Out<f64>, factor: f64);

#[jitseam::kernel(abi = strided(3), symbol = "baracuda_gen_add_f32_strided_r3")]
fn add_f32_r3(a: In<f32>, b: In<f32>, out: Out<f32>);

/// Element types named through an alias are left to the `Element` bound.
type Weight = f32;
#[jitseam::kernel(abi = scalar)]
fn aliased(a: In<Weight>, out: Out<u32>, count: u32, seed: i64);

// Disagree with the fixtures on purpose.
#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add_f32_extra_param(a: In<f32>, b: In<f32>, out: Out<f32>, extra: f32);

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_scalar_mul_scalar_f32_scalar")]
fn axpb_f64_param(x: In<f32>, out: Out<f32>, scale: f64, shift: f32);

#[jitseam::kernel(abi = strided(3), symbol = "baracuda_gen_add_f32_strided_r2")]
fn add_f32_wrong_rank(a: In<f32>, b: In<f32>, out: Out<f32>);

fn fixture(file: &str) -> String {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn generated_spec_equals_the_hand_built_spec_for_every_abi() {
    let cases: [(AbiSpec, AbiSpec); 11] = [
        (
            AddF32::SPEC,
            AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[]),
        ),
        (
            AxpbF32::SPEC,
            AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[F32, F32]),
        ),
        (
            AddSub::SPEC,
            AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32, F32], &[]),
        ),
        (
            AddBf16::SPEC,
            AbiSpec::new(AbiKind::Scalar, &[BF16, BF16], &[BF16], &[]),
        ),
        (
            AddF32V4::SPEC,
            AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[]),
        ),
        (
            AddF64V2::SPEC,
            AbiSpec::new(AbiKind::Vectorized { width: 2 }, &[F64, F64], &[F64], &[]),
        ),
        (
            AddF16V8::SPEC,
            AbiSpec::new(AbiKind::Vectorized { width: 8 }, &[F16, F16], &[F16], &[]),
        ),
        (
            AddF32R2::SPEC,
            AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F32, F32], &[F32], &[]),
        ),
        (
            MulScalarF64R2::SPEC,
            AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F64], &[F64], &[F64]),
        ),
        (
            AddF32R3::SPEC,
            AbiSpec::new(AbiKind::Strided { rank: 3 }, &[F32, F32], &[F32], &[]),
        ),
        (
            Aliased::SPEC,
            AbiSpec::new(AbiKind::Scalar, &[F32], &[U32], &[U32, I64]),
        ),
    ];
    for (generated, by_hand) in cases {
        assert_eq!(generated, by_hand);
        assert_eq!(generated.validate(), Ok(()));
    }
}

#[test]
fn symbol_defaults_to_the_fn_name() {
    assert_eq!(Aliased::SYMBOL, "aliased");
    assert_eq!(AddF32V4::SYMBOL, "baracuda_gen_add_f32_co_v4");
}

/// Describes and loads `K` against a fixture, through the typed face.
fn load_typed<K: Signature>(file: &str) -> Result<(), Error> {
    let kernel = Kernel::<K, _>::describe_typed(K::ptx_artifact(fixture(file)))?;
    kernel.load().map(drop).map_err(|refused| refused.error)
}

#[test]
fn matching_signatures_load_against_real_fixtures() {
    let results = [
        ("add_f32_scalar", load_typed::<AddF32>("add_f32_scalar.ptx")),
        (
            "axpb",
            load_typed::<AxpbF32>("add_scalar_mul_scalar_f32_scalar.ptx"),
        ),
        (
            "add_sub",
            load_typed::<AddSub>("add_sub_f32_mo2_scalar.ptx"),
        ),
        ("add_bf16", load_typed::<AddBf16>("add_bf16_scalar.ptx")),
        ("v4", load_typed::<AddF32V4>("add_f32_co_v4.ptx")),
        ("v2 f64", load_typed::<AddF64V2>("add_f64_co_v2.ptx")),
        ("v8 f16", load_typed::<AddF16V8>("add_f16_co_v8.ptx")),
        ("r2", load_typed::<AddF32R2>("add_f32_strided_r2.ptx")),
        (
            "r2 f64",
            load_typed::<MulScalarF64R2>("mul_scalar_f64_strided_r2.ptx"),
        ),
        ("r3", load_typed::<AddF32R3>("add_f32_strided_r3.ptx")),
    ];
    for (name, result) in results {
        assert!(result.is_ok(), "{name}: {result:?}");
    }
}

#[test]
fn an_extra_declared_param_is_declined_at_load_with_the_counts() {
    let error = load_typed::<AddF32ExtraParam>("add_f32_scalar.ptx");
    // a, b, out, n: the PTX has 4 parameters; the signature implies a fifth.
    assert!(
        matches!(&error, Err(Error::ParamCount { entry, expected: 5, found: 4, .. })
            if entry == "baracuda_gen_add_f32_scalar"),
        "{error:?}"
    );
}

#[test]
fn an_f64_param_over_an_f32_kernel_is_declined_at_load_with_its_index() {
    let error = load_typed::<AxpbF64Param>("add_scalar_mul_scalar_f32_scalar.ptx");
    // x, out, n, then `scale` at index 3: declared f64, the PTX takes .f32.
    assert!(
        matches!(&error, Err(Error::ParamMismatch { index: 3, .. })),
        "{error:?}"
    );
    let message = error.map_err(|e| e.to_string()).err().unwrap_or_default();
    assert!(
        message.contains("baracuda_gen_add_scalar_mul_scalar_f32_scalar"),
        "{message}"
    );
}

#[test]
fn a_wrong_rank_is_declined_at_load() {
    let error = load_typed::<AddF32WrongRank>("add_f32_strided_r2.ptx");
    assert!(
        matches!(
            &error,
            Err(Error::ParamCount { .. } | Error::ParamMismatch { .. })
        ),
        "{error:?}"
    );
}

#[test]
fn describe_typed_refuses_an_artifact_whose_spec_is_not_the_signature() {
    let artifact = Artifact::ptx(
        fixture("add_f32_scalar.ptx"),
        "baracuda_gen_add_f32_scalar",
        AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[F32]),
    );
    let error = Kernel::<AddF32, _>::describe_typed(artifact).map(drop);
    assert!(
        matches!(error, Err(Error::SpecMismatch { .. })),
        "{error:?}"
    );
}

#[test]
fn an_erased_kernel_is_promoted_only_to_its_own_spec() {
    let artifact = Artifact::ptx(
        fixture("add_f32_co_v4.ptx"),
        "baracuda_gen_add_f32_co_v4",
        AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[]),
    );
    let erased = Kernel::describe(artifact).and_then(|k| k.load().map_err(|r| r.error));
    let Ok(erased) = erased else {
        panic!("fixture should load: {erased:?}");
    };
    // The wrong signature hands the kernel back untouched ...
    let refused = match erased.typed::<AddF32>() {
        Ok(_) => panic!("a scalar signature must not accept a vectorized kernel"),
        Err(refused) => refused,
    };
    assert!(matches!(refused.error, Error::SpecMismatch { .. }));
    // ... and the right one accepts it, keeping what `load()` verified.
    let typed = refused.kernel.typed::<AddF32V4>();
    assert!(typed.is_ok_and(|k| k.loaded().layout().params().len() == 4));
}
