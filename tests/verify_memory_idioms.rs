//! The verifier's memory idioms of real kernels, each by its general rule: accesses of any
//! width (1–16 bytes) through a custom pointer, local memory, `__constant__` tables, XOR
//! partners in shared memory and CUDA's `assert`. For each, a safe kernel (written by hand in
//! NVRTC's style) is proven and runs on the emulator with buffers of exactly its extents; each
//! unsafe variant is declined at the line of its violation, and run through `load_unverified`
//! on the emulator it faults there.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::device::{Arg, ArgMut};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, Error, Kernel, LaunchConfig, ParamValue, Signature,
};
use jitseam_verify::{ClaimTarget, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// Runs `entry` of `text` under `signature` on the emulator, unverified (the kernel may be
/// unsafe: the emulator's memory checker is then what stops it), with `inputs` and `outputs`
/// as f32 buffers and `params` in order.
fn run_unverified(
    text: &str,
    entry: &str,
    signature: &str,
    config: LaunchConfig,
    inputs: &[Vec<f32>],
    outputs: &mut [Vec<f32>],
    params: &[ParamValue],
) -> Result<(), Error> {
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    let described = Kernel::describe(Artifact::ptx(text, entry, spec))?;
    // SAFETY: the emulator checks every access against the operands' allocations, so an unsafe
    // body faults there instead of touching memory it does not own.
    let kernel = unsafe { described.load_unverified() }
        .map_err(|t| t.error)?
        .bind(&device)
        .map_err(|t| t.error)?;
    let ins: Vec<_> = inputs.iter().map(|v| device.upload(v).unwrap()).collect();
    let mut outs: Vec<_> = outputs.iter().map(|v| device.upload(v).unwrap()).collect();
    {
        let in_args: Vec<Arg<'_>> = ins.iter().map(Into::into).collect();
        let mut out_args: Vec<ArgMut<'_>> = outs.iter_mut().map(Into::into).collect();
        kernel.launch_custom(&stream, Some(config), &in_args, &mut out_args, params)?;
    }
    for (out, buf) in outputs.iter_mut().zip(&outs) {
        *out = stream.read(buf)?;
    }
    Ok(())
}

fn faults(result: Result<(), Error>) {
    match result {
        Err(Error::MemoryFault(_)) => {}
        other => panic!("expected a memory fault, got {other:?}"),
    }
}

// ---- wide accesses of a custom pointer ----

/// `float4` copies of an `f32` pointer: thread `i < m` moves elements `4i..4i+4` as one
/// 16-byte load and one 16-byte store (`reinterpret_cast<const float4*>(x)[i]`).
const COPY4: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry copy4(
	.param .u64 copy4_param_0,
	.param .u64 copy4_param_1,
	.param .u32 copy4_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<5>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [copy4_param_0];
	ld.param.u64 	%rd2, [copy4_param_1];
	ld.param.u32 	%r2, [copy4_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.s32 	%rd5, %r1, 16;
	add.s64 	%rd6, %rd3, %rd5;
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6];
	add.s64 	%rd7, %rd4, %rd5;
	st.global.v4.f32 	[%rd7], {%f1, %f2, %f3, %f4};
$L__BB0_2:
	ret;
}
"#;

const COPY4_SIG: &str = "x: in f32[4 * m], out: out f32[4 * m], m: i32";

fn copy4_config(m: u32) -> LaunchConfig {
    LaunchConfig::new([m.div_ceil(32).max(1), 1, 1], [32, 1, 1])
}

#[test]
fn a_float4_access_of_an_f32_pointer_is_proven_and_runs() {
    let proof = verify(COPY4, "copy4", COPY4_SIG).unwrap();
    // Both pointers need a 16-byte base: the launch checks it.
    let align: Vec<u32> = proof.accesses.iter().map(|s| s.align).collect();
    assert_eq!(align, [16, 16]);
    for m in [1usize, 5, 32, 33] {
        let x: Vec<f32> = (0..4 * m).map(|i| i as f32).collect();
        let mut out = vec![vec![f32::NAN; 4 * m]];
        run_unverified(
            COPY4,
            "copy4",
            COPY4_SIG,
            copy4_config(m as u32),
            std::slice::from_ref(&x),
            &mut out,
            &[ParamValue::I32(m as i32)],
        )
        .unwrap();
        assert_eq!(out[0], x);
    }
}

#[test]
fn a_float4_access_that_may_pass_the_extent_is_declined_and_faults() {
    // Declared as `m` floats, the last thread's four reach three past them.
    let signature = "x: in f32[m], out: out f32[4 * m], m: i32";
    rejects(
        COPY4,
        "copy4",
        signature,
        RejectKind::OutOfBounds,
        "ld.global.v4.f32",
    );
    faults(run_unverified(
        COPY4,
        "copy4",
        signature,
        copy4_config(5),
        &[vec![1.0; 5]],
        &mut [vec![0.0; 20]],
        &[ParamValue::I32(5)],
    ));
}

#[test]
fn a_float4_access_off_its_width_is_declined_and_faults() {
    // Four bytes past a multiple of 16: inside the extent, but not aligned to its width.
    let text = mutate(
        COPY4,
        "copy4",
        "ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6];",
        "ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6+4];",
    );
    let signature = "x: in f32[4 * m + 1], out: out f32[4 * m], m: i32";
    rejects(
        &text,
        "copy4",
        signature,
        RejectKind::Misaligned,
        "ld.global.v4.f32",
    );
    faults(run_unverified(
        &text,
        "copy4",
        signature,
        copy4_config(2),
        &[vec![1.0; 9]],
        &mut [vec![0.0; 8]],
        &[ParamValue::I32(2)],
    ));
}

#[test]
fn a_float4_access_is_proven_narrower_too() {
    // `float2` halves and single floats of the same rows, and bytes of them: every power of
    // two up to 16 at a multiple of itself.
    for (from, to) in [
        (
            "ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6];",
            "ld.global.v2.f32 	{%f1, %f2}, [%rd6+8];",
        ),
        (
            "ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6];",
            "ld.global.f32 	%f1, [%rd6+12];",
        ),
        (
            "ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd6];",
            "ld.global.u8 	%rs1, [%rd6+15];",
        ),
    ] {
        let text = mutate(COPY4, "copy4", from, to).replace(
            "\t.reg .pred 	%p<2>;",
            "\t.reg .pred 	%p<2>;\n\t.reg .b16 	%rs<2>;",
        );
        verify(&text, "copy4", COPY4_SIG).unwrap_or_else(|r| panic!("{to}: {r}"));
    }
}

#[test]
fn a_proven_float4_kernel_refuses_a_base_off_16_bytes_at_launch() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(COPY4_SIG, None).unwrap();
    let kernel = Kernel::describe(Artifact::ptx(COPY4, "copy4", spec))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    let x = device.upload(&[1.0f32; 12]).unwrap();
    let mut out = device.upload(&[0.0f32; 8]).unwrap();
    let params = [ParamValue::I32(2)];
    let aligned = x.slice(0..8).unwrap();
    kernel
        .launch_custom(
            &stream,
            Some(copy4_config(2)),
            &[(&aligned).into()],
            &mut [(&mut out).into()],
            &params,
        )
        .unwrap();
    // One float in: the proof's 16-byte accesses would be misaligned.
    let shifted = x.slice(1..9).unwrap();
    match kernel.launch_custom(
        &stream,
        Some(copy4_config(2)),
        &[(&shifted).into()],
        &mut [(&mut out).into()],
        &params,
    ) {
        Err(Error::PointerMisaligned {
            required, address, ..
        }) => {
            assert_eq!(required, 16);
            assert_eq!(address, x.address() + 4);
        }
        other => panic!("expected a misaligned pointer, got {other:?}"),
    }
}

// ---- local memory ----

/// A per-thread array of eight floats (`float a[8]` read at a thread-dependent index, which
/// NVRTC keeps in the thread's `.local` frame): thread `i < n` fills `a[k] = x[i] + k` and
/// writes `a[i & 7]` to `out[i]`; the fill goes through the frame's local-space address, the
/// read through its generic one.
const LOCAL8: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry local8(
	.param .u64 local8_param_0,
	.param .u64 local8_param_1,
	.param .u32 local8_param_2
)
{
	.local .align 4 .b8 	__local_depot0[32];
	.reg .b64 	%SP;
	.reg .b64 	%SPL;
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<10>;

	mov.u64 	%SPL, __local_depot0;
	cvta.local.u64 	%SP, %SPL;
	ld.param.u64 	%rd1, [local8_param_0];
	ld.param.u64 	%rd2, [local8_param_1];
	ld.param.u32 	%r2, [local8_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	st.local.f32 	[%SPL], %f1;
	add.f32 	%f2, %f1, 0f3F800000;
	st.local.f32 	[%SPL+4], %f2;
	add.f32 	%f2, %f1, 0f40000000;
	st.local.f32 	[%SPL+8], %f2;
	add.f32 	%f2, %f1, 0f40400000;
	st.local.f32 	[%SPL+12], %f2;
	add.f32 	%f2, %f1, 0f40800000;
	st.volatile.local.f32 	[%SPL+16], %f2;
	add.f32 	%f2, %f1, 0f40A00000;
	st.local.f32 	[%SPL+20], %f2;
	add.f32 	%f2, %f1, 0f40C00000;
	st.local.f32 	[%SPL+24], %f2;
	add.f32 	%f2, %f1, 0f40E00000;
	st.local.f32 	[%SPL+28], %f2;
	and.b32 	%r6, %r1, 7;
	mul.wide.u32 	%rd6, %r6, 4;
	add.s64 	%rd7, %SP, %rd6;
	ld.f32 	%f3, [%rd7];
	cvta.to.global.u64 	%rd8, %rd2;
	add.s64 	%rd9, %rd8, %rd4;
	st.global.f32 	[%rd9], %f3;
$L__BB0_2:
	ret;
}
"#;

const LOCAL8_SIG: &str = "x: in f32[n], out: out f32[n], n: i32";

fn local8_expected(x: &[f32]) -> Vec<f32> {
    x.iter()
        .enumerate()
        .map(|(i, v)| v + (i & 7) as f32)
        .collect()
}

#[test]
fn a_per_thread_local_array_is_proven_and_runs() {
    let proof = verify(LOCAL8, "local8", LOCAL8_SIG).unwrap();
    // Every frame access is claimed, against the frame, at its width.
    let local: Vec<_> = proof
        .claims
        .iter()
        .filter(|c| c.target == ClaimTarget::Local("__local_depot0".to_owned()))
        .collect();
    assert_eq!(local.len(), 9, "{:?}", proof.claims);
    assert!(local.iter().all(|c| c.bytes == 4));
    for n in [1usize, 7, 33, 100] {
        let x: Vec<f32> = (0..n).map(|i| (i * 10) as f32).collect();
        let mut out = vec![vec![f32::NAN; n]];
        run_unverified(
            LOCAL8,
            "local8",
            LOCAL8_SIG,
            copy4_config(n as u32),
            std::slice::from_ref(&x),
            &mut out,
            &[ParamValue::I32(n as i32)],
        )
        .unwrap();
        assert_eq!(out[0], local8_expected(&x));
    }
}

/// Each unsafe variant of [`LOCAL8`]: what it changes, what the verifier says, and whether the
/// emulator faults on it (a misuse of address spaces the emulator may read as another byte
/// of the frame, which is wrong all the same).
const LOCAL8_UNSAFE: &[(&str, &str, &str, RejectKind, bool)] = &[
    // An index past the frame: `a[i & 15]` of eight floats.
    (
        "and.b32 	%r6, %r1, 7;",
        "and.b32 	%r6, %r1, 15;",
        "ld.f32",
        RejectKind::OutOfBounds,
        true,
    ),
    // Negative: `a[(i & 7) - 1]`.
    (
        "ld.f32 	%f3, [%rd7];",
        "ld.f32 	%f3, [%rd7+-4];",
        "ld.f32",
        RejectKind::OutOfBounds,
        true,
    ),
    // A store past the frame's last byte.
    (
        "st.local.f32 	[%SPL+28], %f2;",
        "st.local.f32 	[%SPL+32], %f2;",
        "[%SPL+32]",
        RejectKind::OutOfBounds,
        true,
    ),
    // Wider than the frame's alignment.
    (
        "ld.f32 	%f3, [%rd7];",
        "ld.v2.f32 	{%f3, %f2}, [%rd7];",
        "ld.v2.f32",
        RejectKind::WrongWidth,
        false,
    ),
    // The generic address read as a local-space one.
    (
        "ld.f32 	%f3, [%rd7];",
        "ld.local.f32 	%f3, [%rd7];",
        "ld.local.f32",
        RejectKind::UnattributedAddress,
        true,
    ),
    // The local-space address read as a generic one.
    (
        "add.s64 	%rd7, %SP, %rd6;",
        "add.s64 	%rd7, %SPL, %rd6;",
        "ld.f32",
        RejectKind::UnattributedAddress,
        true,
    ),
    // A pointer parameter read in the local space.
    (
        "ld.global.f32 	%f1, [%rd5];",
        "ld.local.f32 	%f1, [%rd5];",
        "ld.local.f32",
        RejectKind::UnattributedAddress,
        true,
    ),
];

#[test]
fn unsafe_uses_of_a_local_frame_are_declined() {
    for &(from, to, at, kind, faulting) in LOCAL8_UNSAFE {
        let text = mutate(LOCAL8, "local8", from, to);
        rejects(&text, "local8", LOCAL8_SIG, kind, at);
        if faulting {
            let n = 40;
            faults(run_unverified(
                &text,
                "local8",
                LOCAL8_SIG,
                copy4_config(n as u32),
                &[vec![1.0; n]],
                &mut [vec![0.0; n]],
                &[ParamValue::I32(n as i32)],
            ));
        }
    }
}

// ---- vector element types ----

/// [`COPY4`] declared honestly: its pointers are `float4*`, their extents count vectors.
const COPY4_VEC_SIG: &str = "x: in f32x4[m], out: out f32x4[m], m: i32";

/// [`COPY4`] through `#[kernel]`: `In<[f32; 4]>` is the text's `f32x4`.
#[jitseam::kernel(abi = custom, symbol = "copy4")]
fn copy4_vec(#[len(m)] x: jitseam::In<[f32; 4]>, #[len(m)] out: jitseam::Out<[f32; 4]>, m: i32);

#[test]
fn a_float4_buffer_kernel_is_declared_proven_and_launched() {
    let spec = AbiSpec::parse_custom(COPY4_VEC_SIG, None).unwrap();
    assert_eq!(spec, Copy4Vec::SPEC);
    let AbiKind::Custom(custom) = &spec.abi else {
        panic!("not custom")
    };
    assert_eq!(custom.signature_text(), COPY4_VEC_SIG);
    assert_eq!(
        spec.cuda_prototype("copy4"),
        "extern \"C\" __global__ void copy4(const float4* __restrict__ x, float4* __restrict__ out, int m);"
    );
    // The proof's unit is the whole vector: one element per access.
    let proof = verify(COPY4, "copy4", COPY4_VEC_SIG).unwrap();
    assert!(proof.accesses.iter().all(|s| s.align == 16));
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<Copy4Vec, _>::describe_typed(Copy4Vec::ptx_artifact(COPY4))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    for m in [1usize, 5, 33] {
        let data: Vec<f32> = (0..4 * m).map(|i| i as f32).collect();
        let x = device.upload(&data).unwrap();
        let mut out = device.upload(&vec![f32::NAN; 4 * m]).unwrap();
        kernel
            .launch_with(
                &stream,
                copy4_config(m as u32),
                Copy4Vec::args(&x, &mut out, m as i32),
            )
            .unwrap();
        assert_eq!(stream.read(&out).unwrap(), data);
    }
}

#[test]
fn a_float4_buffer_is_checked_in_vectors_and_for_its_alignment_at_launch() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(COPY4_VEC_SIG, None).unwrap();
    // Checked whether the body is proven or not: the kernel's `float4*` assumes it.
    // SAFETY: COPY4 is proven under this signature (above); the launch checks are the subject.
    let kernel = unsafe {
        Kernel::describe(Artifact::ptx(COPY4, "copy4", spec))
            .unwrap()
            .load_unverified()
    }
    .unwrap()
    .bind(&device)
    .unwrap();
    let x = device.upload(&[1.0f32; 13]).unwrap();
    let mut out = device.upload(&[0.0f32; 12]).unwrap();
    let params = [ParamValue::I32(3)];
    // `m = 3` vectors are 12 floats; 11 are short by one.
    let short = x.slice(0..11).unwrap();
    match kernel.launch_custom(
        &stream,
        Some(copy4_config(3)),
        &[(&short).into()],
        &mut [(&mut out).into()],
        &params,
    ) {
        Err(Error::ExtentShort(short)) => {
            assert_eq!((short.needed, short.found), (12, 11), "{short:?}");
        }
        other => panic!("expected a short extent, got {other:?}"),
    }
    // One float in: the vectors' base is off 16 bytes.
    let shifted = x.slice(1..13).unwrap();
    match kernel.launch_custom(
        &stream,
        Some(copy4_config(3)),
        &[(&shifted).into()],
        &mut [(&mut out).into()],
        &params,
    ) {
        Err(Error::PointerMisaligned { required, .. }) => assert_eq!(required, 16),
        other => panic!("expected a misaligned pointer, got {other:?}"),
    }
    let aligned = x.slice(0..12).unwrap();
    kernel
        .launch_custom(
            &stream,
            Some(copy4_config(3)),
            &[(&aligned).into()],
            &mut [(&mut out).into()],
            &params,
        )
        .unwrap();
}

#[test]
fn vector_element_types_that_do_not_exist_are_refused_in_the_text() {
    for (signature, says) in [
        ("x: in f32x3[n], n: i32", "unknown type `f32x3`"),
        ("x: in f64x4[n], n: i32", "unknown type `f64x4`"),
        ("x: in f32x1[n], n: i32", "unknown type `f32x1`"),
        (
            "x: in f32[n], v: f32x4, n: i32",
            "a vector type is an element type of a pointer",
        ),
    ] {
        let err = AbiSpec::parse_custom(signature, None).unwrap_err();
        assert!(err.to_string().contains(says), "{signature}: {err}");
    }
    // Every other width of at most 16 bytes reads back as written.
    for signature in [
        "x: in u8x16[n], n: i32",
        "x: out f64x2[n], n: i32",
        "x: in u32x2[n], n: i32",
    ] {
        let spec = AbiSpec::parse_custom(signature, None).unwrap();
        let AbiKind::Custom(custom) = &spec.abi else {
            panic!("not custom")
        };
        assert_eq!(custom.signature_text(), signature);
    }
}

// ---- `__constant__` tables ----

/// `__constant__ float coef[64]` read at a fixed index and at `threadIdx.x`: thread `i < n`
/// writes `x[i] * coef[threadIdx.x] + coef[3]`. In bounds only for blocks of at most 64 threads
/// along x, a launch condition then, as for a shared tile.
const COEF: &str = r#".version 8.8
.target sm_80
.address_size 64

.const .align 4 .b8 coef[256];

.visible .entry scale_by_table(
	.param .u64 scale_by_table_param_0,
	.param .u64 scale_by_table_param_1,
	.param .u32 scale_by_table_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<6>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<10>;

	ld.param.u64 	%rd1, [scale_by_table_param_0];
	ld.param.u64 	%rd2, [scale_by_table_param_1];
	ld.param.u32 	%r2, [scale_by_table_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	mul.wide.u32 	%rd6, %r5, 4;
	mov.u64 	%rd7, coef;
	add.s64 	%rd8, %rd7, %rd6;
	ld.const.f32 	%f2, [%rd8];
	ld.const.f32 	%f3, [coef+12];
	fma.rn.f32 	%f4, %f1, %f2, %f3;
	cvta.to.global.u64 	%rd9, %rd2;
	add.s64 	%rd9, %rd9, %rd4;
	st.global.f32 	[%rd9], %f4;
$L__BB0_2:
	ret;
}
"#;

const COEF_SIG: &str = "x: in f32[n], out: out f32[n], n: i32";

#[test]
fn a_constant_table_read_at_the_thread_index_is_proven_for_blocks_no_wider_than_it() {
    let proof = verify(COEF, "scale_by_table", COEF_SIG).unwrap();
    let block = proof
        .conditions
        .iter()
        .find_map(|c| match c {
            jitseam_verify::LaunchCondition::BlockAtMost { x, .. } => Some(*x),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no block condition: {:?}", proof.conditions));
    assert_eq!(block, 64);
    let table: Vec<_> = proof
        .claims
        .iter()
        .filter(|c| c.target == ClaimTarget::Table("coef".to_owned()))
        .collect();
    assert_eq!(table.len(), 2, "{:?}", proof.claims);
    // The emulator runs it (the table reads zero: nothing initializes it); a block of 128
    // threads is declined at launch.
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(COEF_SIG, None).unwrap();
    let kernel = Kernel::describe(Artifact::ptx(COEF, "scale_by_table", spec))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    let x = device.upload(&vec![2.0f32; 200]).unwrap();
    let mut out = device.upload(&vec![f32::NAN; 200]).unwrap();
    let params = [ParamValue::I32(200)];
    kernel
        .launch_custom(
            &stream,
            Some(LaunchConfig::new([4, 1, 1], [64, 1, 1])),
            &[(&x).into()],
            &mut [(&mut out).into()],
            &params,
        )
        .unwrap();
    assert_eq!(stream.read(&out).unwrap(), vec![0.0f32; 200]);
    match kernel.launch_custom(
        &stream,
        Some(LaunchConfig::new([2, 1, 1], [128, 1, 1])),
        &[(&x).into()],
        &mut [(&mut out).into()],
        &params,
    ) {
        Err(Error::LaunchCondition { .. }) => {}
        other => panic!("expected a launch condition, got {other:?}"),
    }
}

#[test]
fn unsafe_reads_of_a_constant_table_are_declined() {
    for (from, to, at, kind) in [
        // Indexed by the global index: no block shape bounds it.
        (
            "mul.wide.u32 	%rd6, %r5, 4;",
            "mul.wide.u32 	%rd6, %r1, 4;",
            "ld.const.f32 	%f2",
            RejectKind::OutOfBounds,
        ),
        // Past the last element at a fixed index.
        (
            "ld.const.f32 	%f3, [coef+12];",
            "ld.const.f32 	%f3, [coef+256];",
            "[coef+256]",
            RejectKind::OutOfBounds,
        ),
        // The table's address read as a global pointer's.
        (
            "ld.const.f32 	%f2, [%rd8];",
            "ld.global.f32 	%f2, [%rd8];",
            "ld.global.f32 	%f2",
            RejectKind::UnattributedAddress,
        ),
        // A pointer parameter read in the constant space.
        (
            "ld.global.f32 	%f1, [%rd5];",
            "ld.const.f32 	%f1, [%rd5];",
            "ld.const.f32 	%f1",
            RejectKind::UnattributedAddress,
        ),
    ] {
        let text = mutate(COEF, "scale_by_table", from, to);
        rejects(&text, "scale_by_table", COEF_SIG, kind, at);
    }
}

// ---- `assert` ----

/// PyTorch's `index_select` of the real corpus (an `assert` that each loaded index lies in
/// `[0, srcSelectDimSize)`), launched with one index out of range: the emulator ends the launch
/// with the assertion, as a GPU does, instead of reading past `src`.
#[test]
fn a_failing_assert_ends_the_launch_with_the_assertion() {
    let ptx = include_str!("fixtures/real/torch_index_select.ptx");
    let signature = "dst: out f32[totalSize], src: in f32[srcSelectDimSize * innerSize], \
                     indices: in i64[div_ceil(totalSize, innerSize)], totalSize: u32, \
                     innerSize: u32, srcSelectDimSize: i64";
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    let described = Kernel::describe(Artifact::ptx(ptx, "torch_index_select_large_index", spec));
    // SAFETY: the emulator checks every access against the operands' allocations.
    let kernel = unsafe { described.unwrap().load_unverified() }
        .unwrap()
        .bind(&device)
        .unwrap();
    let (total, inner, select) = (30u32, 15u32, 3i64);
    let src = device
        .upload(&vec![1.0f32; (select as usize) * inner as usize])
        .unwrap();
    let config = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    let params = [
        ParamValue::U32(total),
        ParamValue::U32(inner),
        ParamValue::I64(select),
    ];
    let mut dst = device.upload(&vec![f32::NAN; total as usize]).unwrap();
    let good = device.upload(&[2i64, 0]).unwrap();
    kernel
        .launch_custom(
            &stream,
            Some(config),
            &[(&src).into(), (&good).into()],
            &mut [(&mut dst).into()],
            &params,
        )
        .unwrap();
    assert_eq!(stream.read(&dst).unwrap(), vec![1.0f32; total as usize]);
    let bad = device.upload(&[1i64, select]).unwrap();
    let outcome = kernel
        .launch_custom(
            &stream,
            Some(config),
            &[(&src).into(), (&bad).into()],
            &mut [(&mut dst).into()],
            &params,
        )
        .and_then(|()| stream.read(&dst).map(|_| ()));
    match outcome {
        Err(Error::AssertFailed { failure }) => {
            assert!(failure.message.contains("srcSelectDimSize"), "{failure}");
            assert!(failure.line > 0, "{failure}");
        }
        other => panic!("expected the assertion, got {other:?}"),
    }
}
