//! The custom ABI on the emulator: kernels in their own parameter order (NVRTC output of
//! tests/fixtures/custom/custom.cu) bound with `#[jitseam::kernel(abi = custom)]`, launched with
//! `covers` and with explicit launch configs, and every decline of their checks; plus what
//! `load()` says about their bodies and how the spec travels as data.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/custom_suite.rs"]
mod custom_suite;

use custom_suite::{Matmul, PTX, Saxpy};
use jitseam::{AbiSpec, Device, Error, In, Kernel, Out, Signature};
use jitseam_verify::RejectKind;

custom_suite_tests!(Device::emulator);

#[test]
fn load_proves_custom_bodies_against_their_declared_extents() {
    use jitseam_verify::LaunchCondition;
    // saxpy's `int i` must read exactly: every axis's grid × block below 2^31.
    let loaded = Kernel::<Saxpy, _>::describe_typed(Saxpy::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap();
    let proof = loaded.loaded().proof().unwrap();
    assert_eq!(
        proof.conditions,
        [LaunchCondition::AxisThreadsAtMost {
            limit: (1 << 31) - 1
        }]
    );
    // matmul's unrolled k loop and its remainder loop, which starts at i = 4·floor(k/4):
    // `unsigned` indices, so every axis and every extent below 2^32.
    let loaded = Kernel::<Matmul, _>::describe_typed(Matmul::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(
        loaded.loaded().proof().unwrap().conditions,
        [
            LaunchCondition::AxisThreadsAtMost {
                limit: (1 << 32) - 1
            },
            LaunchCondition::ExtentsAtMost {
                limit: (1 << 32) - 1
            },
        ]
    );
    // Its remainder loop reading `a[row*k + i + 1]`: declined, naming the entry.
    let mutated = PTX.replacen(
        "ld.global.f32 \t%f24, [%rd23];",
        "ld.global.f32 \t%f24, [%rd23+4];",
        1,
    );
    assert_ne!(
        mutated, PTX,
        "the fixture's text changed: update the mutation"
    );
    // Every access proven or nothing: declined (`load_proven`).
    let described = Kernel::<Matmul, _>::describe_typed(Matmul::ptx_artifact(&mutated)).unwrap();
    let err = described.load_proven().map(|_| ()).unwrap_err().error;
    let line = match &err {
        Error::BodyRejected {
            entry, rejection, ..
        } => {
            assert_eq!(entry, "matmul");
            assert_eq!(rejection.kind, RejectKind::OutOfBounds, "{err}");
            rejection.line
        }
        other => panic!("expected a body decline, got {other}"),
    };
    assert_eq!(err.kind_name(), "body_rejected");
    // `load()` guards that access at run time instead: its operand and role are proven.
    let described = Kernel::<Matmul, _>::describe_typed(Matmul::ptx_artifact(&mutated)).unwrap();
    let loaded = described.load().unwrap();
    let guarded = loaded.loaded().guarded().expect("guarded");
    assert!(
        guarded
            .table()
            .sites
            .iter()
            .any(|s| s.line == line && s.operand == "a"),
        "{:?}",
        guarded.table()
    );
}

/// A launch the proof's conditions refuse: saxpy's `int` index with more than 2^31 − 1
/// threads along x.
#[test]
fn a_launch_outside_the_proofs_conditions_is_declined() {
    let device = Device::emulator();
    let kernel = custom_suite::bind_verified::<Saxpy>(&device);
    let xs = device.upload(&[1.0f32; 4]).unwrap();
    let mut out = device.upload(&[0.0f32; 4]).unwrap();
    let stream = device.default_stream();
    let config = jitseam::LaunchConfig::new([1 << 22, 1, 1], [1024, 1, 1]);
    let err = kernel
        .launch_with(&stream, config, Saxpy::args(&mut out, &xs, 4, 2.0))
        .unwrap_err();
    assert_eq!(err.kind_name(), "launch_condition", "{err}");
}

/// `matmul` declared with `n: u64`: the entry's `.u32` fourth param no longer fits.
#[jitseam::kernel(abi = custom, symbol = "matmul")]
fn matmul_wide(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u64,
    n: u32,
    k: u32,
);

#[test]
fn the_param_list_is_checked_in_the_kernels_own_order() {
    let described = Kernel::<MatmulWide, _>::describe_typed(MatmulWide::ptx_artifact(PTX)).unwrap();
    // SAFETY: the load is refused at the parameter list, before anything could launch.
    let err = unsafe { described.load_unverified() }
        .map(|_| ())
        .unwrap_err()
        .error;
    assert!(
        matches!(err, Error::ParamMismatch { index: 3, .. }),
        "expected parameter 3 to mismatch: {err}"
    );
    assert!(err.to_string().contains("unsigned long long m") || err.to_string().contains("m"));
}

#[test]
fn the_spec_travels_as_data() {
    let json = serde_json::to_string(&Saxpy::SPEC).unwrap();
    assert_eq!(
        json,
        r#"{"abi":"custom","inputs":["f32"],"outputs":["f32"],"params":["i32","f32"],"custom":{"signature":"out: out f32[n], x: in f32[n], n: i32, a: f32","covers":"n"}}"#
    );
    let back: AbiSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, Saxpy::SPEC);
    assert_eq!(
        Matmul::SPEC.cuda_prototype("matmul"),
        "extern \"C\" __global__ void matmul(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, unsigned m, unsigned n, unsigned k);"
    );
    // A spec whose lists disagree with its table describes no kernel.
    let mut wrong = back.clone();
    wrong.params = vec![jitseam::ElementKind::I64, jitseam::ElementKind::F32].into();
    assert!(wrong.validate().is_err());
}

jitseam::slot_table!(static CUSTOM_TABLE: 2);

#[test]
fn a_custom_kernel_dispatches_through_a_slot() {
    let device = Device::emulator();
    let spec = AbiSpec::parse_custom(
        "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32",
        None,
    )
    .unwrap();
    assert_eq!(spec, Matmul::SPEC);
    let artifact = jitseam::Artifact::ptx(PTX, "matmul", spec);
    // SAFETY: matmul touches `a`, `b` and `c` only below `m * k`, `k * n` and `m * n` (`load()`
    // proves it: see load_proves_custom_bodies_against_their_declared_extents).
    let kernel = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }
        .unwrap()
        .bind(&device)
        .unwrap();
    let slot = CUSTOM_TABLE.claim(kernel).unwrap();
    let (m, n, k) = (3u32, 5u32, 2u32);
    let a = device.upload(&[1.0f32; 6]).unwrap();
    let b = device.upload(&[2.0f32; 10]).unwrap();
    let mut c = device.upload(&[f32::NAN; 15]).unwrap();
    let stream = device.default_stream();
    let params = [
        jitseam::ParamValue::U32(m),
        jitseam::ParamValue::U32(n),
        jitseam::ParamValue::U32(k),
    ];
    let inputs = [(&a).into(), (&b).into()];
    let config = jitseam::LaunchConfig::new([1, 1, 1], [8, 4, 1]);
    slot.launch(&slot.call_custom(
        &stream,
        Some(config),
        &inputs,
        &mut [(&mut c).into()],
        &params,
    ))
    .unwrap();
    assert_eq!(stream.read(&c).unwrap(), [4.0f32; 15]);
    // Without a config (no `covers`): declined, as by the kernel itself.
    let err = slot
        .launch(&slot.call_custom(&stream, None, &inputs, &mut [(&mut c).into()], &params))
        .unwrap_err();
    assert_eq!(err.kind_name(), "launch_config");
}
