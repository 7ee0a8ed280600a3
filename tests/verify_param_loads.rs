//! An integer `.param` loaded into a wider register is sign-extended (a signed load type) or
//! zero-extended (any other): `ld.param.s32 %rd, [ne]` is `ne` at 64 bits, so `i < ne` bounds a
//! 64-bit index (llama.cpp's `cpy` kernels compare their `int64_t` index against it). A signed
//! index loaded the same way may be negative, and is declined when only bounded from above; on
//! the emulator it faults.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{AbiSpec, Artifact, Device, Error, Kernel, LaunchConfig, ParamValue};
use jitseam_verify::RejectKind;

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// `dst[k] = x[k]` for `k < ne`, both loaded into 64-bit registers, in NVRTC's style.
const PICK: &str = r".version 8.5
.target sm_80
.address_size 64

.visible .entry pick(
	.param .u64 pick_param_0,
	.param .u64 pick_param_1,
	.param .u32 pick_param_2,
	.param .u32 pick_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b64 	%rd<10>;

	ld.param.u64 	%rd1, [pick_param_0];
	ld.param.u64 	%rd2, [pick_param_1];
	ld.param.s32 	%rd3, [pick_param_2];
	ld.param.u32 	%rd4, [pick_param_3];
	setp.ge.s64 	%p1, %rd4, %rd3;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd5, %rd1;
	shl.b64 	%rd6, %rd4, 2;
	add.s64 	%rd7, %rd5, %rd6;
	ld.global.f32 	%f1, [%rd7];
	cvta.to.global.u64 	%rd8, %rd2;
	add.s64 	%rd9, %rd8, %rd6;
	st.global.f32 	[%rd9], %f1;

$L__BB0_2:
	ret;

}
";

const SIG: &str = "x: in f32[ne], dst: out f32[ne], ne: i32, k: i32";

#[test]
fn a_sign_extended_count_bounds_a_64_bit_index() {
    let proof = verify(PICK, "pick", SIG).unwrap();
    assert!(proof.guards().is_empty());
}

/// `k` sign-extended: `-1` is below `ne` and no index.
fn signed_k() -> String {
    mutate(
        PICK,
        "pick",
        "ld.param.u32 	%rd4, [pick_param_3];",
        "ld.param.s32 	%rd4, [pick_param_3];",
    )
}

#[test]
fn a_sign_extended_index_bounded_only_from_above_is_declined() {
    rejects(
        &signed_k(),
        "pick",
        SIG,
        RejectKind::OutOfBounds,
        "ld.global.f32",
    );
}

#[test]
fn a_sign_extended_index_bounded_only_from_above_faults_on_the_emulator() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    let described = Kernel::describe(Artifact::ptx(signed_k(), "pick", spec)).unwrap();
    // SAFETY: the emulator checks every access against the operands' allocations, so the
    // unsafe body faults there instead of touching memory it does not own.
    let kernel = unsafe { described.load_unverified() }
        .map_err(|t| t.error)
        .unwrap()
        .bind(&device)
        .map_err(|t| t.error)
        .unwrap();
    let x = device.upload(&[1.0f32; 8]).unwrap();
    let mut dst = device.upload(&[0.0f32; 8]).unwrap();
    let mut run = |k: i32| {
        kernel.launch_custom(
            &stream,
            Some(LaunchConfig::new([1, 1, 1], [1, 1, 1])),
            &[(&x).into()],
            &mut [(&mut dst).into()],
            &[ParamValue::I32(8), ParamValue::I32(k)],
        )?;
        stream.synchronize()
    };
    run(3).unwrap();
    match run(-1) {
        Err(Error::MemoryFault(_)) => {}
        other => panic!("expected a memory fault, got {other:?}"),
    }
}
