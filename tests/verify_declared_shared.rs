//! A dynamic shared array sized by the kernel's params, declared in its signature (`shared =
//! 4 * (32 + ncols)`: llama.cpp's `soft_max`, 32 warp slots then the row): every launch checks
//! its dynamic shared bytes against the declared size, and the proof takes them to be at least
//! that. A declared size one slot short is declined at the access past it; a launch that
//! gives fewer bytes than declared is declined before the device sees it.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::error::ConfigProblem;
use jitseam::{AbiSpec, Artifact, Device, Error, Kernel, LaunchConfig, ParamValue};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
#[allow(dead_code, reason = "these kernels are not mutated")]
mod custom_verify;
use custom_verify::{rejects, verify};

/// NVRTC 12.9's PTX of the corpus kernel `ggml_soft_max_f32`
/// (`tests/fixtures/real/ggml_softmax.cu`).
const SOFTMAX: &str = include_str!("fixtures/real/ggml_softmax.ptx");
const ENTRY: &str = "ggml_soft_max_f32";
const ROWS: &str = "x: in f32[grid.x * grid.y * grid.z * ncols], \
                    dst: out f32[grid.x * grid.y * grid.z * ncols], ncols: i32, scale: f32";

fn signature(shared: &str) -> String {
    format!("{ROWS}; shared = {shared}")
}

/// One warp slot per thread lane at `(4 · tid) & 124`, below a dynamic size declared over a
/// param: proven only where the declared size's least value covers the 32 slots.
const SLOTS: &str = r".version 8.5
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 buf[];

.visible .entry slots(
	.param .u64 slots_param_0,
	.param .u32 slots_param_1
)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<8>;

	mov.u32 	%r1, %tid.x;
	shl.b32 	%r3, %r1, 2;
	cvt.u64.u32 	%rd1, %r3;
	and.b64  	%rd2, %rd1, 124;
	mov.u64 	%rd3, buf;
	add.s64 	%rd4, %rd3, %rd2;
	mov.u32 	%r4, 0;
	st.shared.u32 	[%rd4], %r4;
	ret;
}
";

#[test]
fn softmax_is_proven_under_its_declared_shared_size() {
    let proof = verify(SOFTMAX, ENTRY, &signature("4 * (32 + ncols)")).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    // The declared size is the launch's fact: no per-thread condition is asked for.
    assert!(
        !proof
            .conditions
            .iter()
            .any(|c| matches!(c, LaunchCondition::DynamicSharedAtLeast { .. })),
        "{:?}",
        proof.conditions
    );
    // The threads along an axis are bounded only as far as an `int` index needs: the
    // conditions for a coordinate scaled by a vector's width come last, and this body has none.
    assert!(
        !proof.conditions.iter().any(
            |c| matches!(c, LaunchCondition::AxisThreadsAtMost { limit } if *limit < (1 << 31) - 1)
        ),
        "{:?}",
        proof.conditions
    );
    // Without it, the row's cache has no size the proof can use.
    assert!(verify(SOFTMAX, ENTRY, ROWS).is_err());
}

#[test]
fn a_declared_size_without_the_warp_slots_is_declined() {
    // `4 * ncols`: the row, cached after the 32 slots, runs 128 bytes past it.
    rejects(
        SOFTMAX,
        ENTRY,
        &signature("4 * ncols"),
        RejectKind::OutOfBounds,
        "st.shared.f32 	[%rd13+128], %f18;",
    );
}

#[test]
fn fixed_slots_are_proven_below_the_declared_sizes_least_value() {
    let at = "st.shared.u32 	[%rd4], %r4;";
    for (shared, proven) in [
        ("4 * (32 + n)", true),
        ("128", true),
        ("4 * n + 124", false),
        ("4 * n", false),
    ] {
        let sig = format!("y: out f32[n], n: i32; shared = {shared}");
        match verify(SLOTS, "slots", &sig) {
            Ok(proof) => assert!(proven && proof.guards().is_empty(), "{sig}: {proof:?}"),
            Err(_) if !proven => rejects(SLOTS, "slots", &sig, RejectKind::OutOfBounds, at),
            Err(r) => panic!("{sig}: {r}"),
        }
    }
}

#[test]
fn softmax_runs_and_a_launch_short_of_the_declared_size_is_declined() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let spec = AbiSpec::parse_custom(&signature("4 * (32 + ncols)"), None).unwrap();
    let kernel = Kernel::describe(Artifact::ptx(SOFTMAX, ENTRY, spec))
        .unwrap()
        .load_proven()
        .unwrap()
        .bind(&device)
        .unwrap();
    // Three rows of 100 over blocks of 64 threads.
    let (rows, ncols, scale) = (3usize, 100usize, 0.5f32);
    let x: Vec<f32> = (0..rows * ncols)
        .map(|i| ((i * 37) % 23) as f32 - 11.0)
        .collect();
    let dx = device.upload(&x).unwrap();
    let mut dst = device.upload(&vec![f32::NAN; rows * ncols]).unwrap();
    let params = [ParamValue::I32(ncols as i32), ParamValue::F32(scale)];
    let needed = 4 * (32 + ncols as u32);
    let mut launch = |bytes: u32| {
        kernel.launch_custom(
            &stream,
            Some(LaunchConfig::new([rows as u32, 1, 1], [64, 1, 1]).dynamic_shared_bytes(bytes)),
            &[(&dx).into()],
            &mut [(&mut dst).into()],
            &params,
        )
    };
    let err = launch(needed - 1).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::LaunchConfig {
                problem: ConfigProblem::DeclaredShared { needed: n, bytes, .. },
                ..
            } if *n == u64::from(needed) && *bytes == needed - 1
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("shared = 4 * (32 + ncols)"),
        "{err}"
    );
    launch(needed).unwrap();
    let out = stream.read(&dst).unwrap();
    for (row, got) in x.chunks(ncols).zip(out.chunks(ncols)) {
        let top = row
            .iter()
            .map(|v| v * scale)
            .fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f64> = row
            .iter()
            .map(|v| f64::from(v * scale - top).exp())
            .collect();
        let sum: f64 = e.iter().sum();
        for (g, w) in got.iter().zip(&e) {
            assert!((f64::from(*g) - w / sum).abs() < 1e-6, "{g} vs {}", w / sum);
        }
    }
}

#[jitseam::kernel(abi = custom, shared = 4 * (32 + ncols))]
fn ggml_soft_max_f32(
    #[len(grid.x * grid.y * grid.z * ncols)] x: jitseam::In<f32>,
    #[len(grid.x * grid.y * grid.z * ncols)] dst: jitseam::Out<f32>,
    ncols: i32,
    scale: f32,
);

#[test]
fn the_typed_kernel_declares_its_shared_size_too() {
    use jitseam::Signature;
    let spec = GgmlSoftMaxF32::SPEC;
    let jitseam::AbiKind::Custom(custom) = &spec.abi else {
        panic!("{:?}", spec.abi)
    };
    assert_eq!(custom.shared_text().as_deref(), Some("4 * (32 + ncols)"));
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<GgmlSoftMaxF32, _>::describe_typed(GgmlSoftMaxF32::ptx_artifact(SOFTMAX))
        .unwrap()
        .load_proven()
        .unwrap()
        .bind(&device)
        .unwrap();
    let x = device.upload(&[1.0f32; 8]).unwrap();
    let mut dst = device.upload(&[f32::NAN; 8]).unwrap();
    let config = LaunchConfig::new([2, 1, 1], [32, 1, 1]);
    // Two rows of four: 4 · (32 + 4) = 144 bytes, or the launch is declined.
    let err = kernel
        .launch_with(&stream, config, GgmlSoftMaxF32::args(&x, &mut dst, 4, 1.0))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::LaunchConfig {
                problem: ConfigProblem::DeclaredShared {
                    needed: 144,
                    bytes: 0,
                    ..
                },
                ..
            }
        ),
        "{err}"
    );
    kernel
        .launch_with(
            &stream,
            config.dynamic_shared_bytes(144),
            GgmlSoftMaxF32::args(&x, &mut dst, 4, 1.0),
        )
        .unwrap();
    assert_eq!(stream.read(&dst).unwrap(), [0.25; 8]);
}
