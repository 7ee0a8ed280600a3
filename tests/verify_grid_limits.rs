//! The launch shapes every proof assumes: grids of at most 65535 blocks along y and z, and
//! blocks of at most 64 threads along z (every CUDA device's own limits, which each launch
//! check enforces whatever a device reports). A row index `blockIdx.y · blockDim.y +
//! threadIdx.y` is then below `65535 · 1024`, so `32 · row` still reads exactly as an `int` —
//! and `64 · row` may not: it may wrap to a negative index that passes `64 · row < n`, which
//! is declined.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::abi::AbiContract;
use jitseam::device::ArgMut;
use jitseam::{AbiSpec, Artifact, Device, Error, Kernel, LaunchConfig, ParamValue};
use jitseam_verify::{RejectKind, verify_entry};

/// `if (row << SHIFT < n) out[row << SHIFT] = 1` for `row = blockIdx.y · blockDim.y +
/// threadIdx.y`, the shift taken as an `int` (`shl.b32`) and compared signed: a product that
/// wrapped would be negative, pass the test and store before `out`.
fn rows(shift: u32) -> String {
    format!(
        ".version 8.0
.target sm_80
.address_size 64

.visible .entry rows(
	.param .u64 rows_param_0,
	.param .u32 rows_param_1
)
{{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<7>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [rows_param_0];
	ld.param.u32 	%r6, [rows_param_1];
	mov.u32 	%r1, %ctaid.y;
	mov.u32 	%r2, %ntid.y;
	mov.u32 	%r3, %tid.y;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	shl.b32 	%r5, %r4, {shift};
	setp.ge.s32 	%p1, %r5, %r6;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.f32 	[%rd4], 0f3F800000;

$L__BB0_2:
	ret;

}}
"
    )
}

/// The store's line in [`rows`].
const STORE_LINE: u32 = 27;

const SIGNATURE: &str = "out: out f32[n], n: i32";

#[test]
fn a_row_index_times_32_is_proven_times_64_declined() {
    let spec = AbiSpec::parse_custom(SIGNATURE, None).unwrap();
    for shift in [1, 4, 5] {
        if let Err(r) = verify_entry(&rows(shift), "rows", &spec.contract()) {
            panic!("×{}: {r}", 1 << shift);
        }
    }
    // 64 · (65535 · 1024 − 1) is past 2^31: the product may wrap to a negative index.
    let r = verify_entry(&rows(6), "rows", &spec.contract()).unwrap_err();
    assert_eq!(r.line, STORE_LINE, "{r}");
    assert!(
        matches!(r.kind, RejectKind::MayWrap | RejectKind::OutOfBounds),
        "{r}"
    );
}

/// The proven kernel runs on the emulator at the largest grid along y the proof allows
/// (scaled down along the other axes), and a grid past it is refused before any launch.
#[test]
fn the_proven_rows_launch_and_a_taller_grid_is_refused() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let text: &'static str = Box::leak(rows(1).into_boxed_str());
    let spec = AbiSpec::parse_custom(SIGNATURE, None).unwrap();
    let kernel = Kernel::describe(Artifact::ptx(text, "rows", spec))
        .unwrap()
        .load()
        .unwrap();
    assert!(kernel.loaded().guarded().is_none(), "proven without guards");
    let kernel = kernel.bind(&device).unwrap();
    let config = |grid_y: u32| LaunchConfig {
        grid: [1, grid_y, 1],
        block: [1, 4, 1],
        dynamic_shared_bytes: 0,
    };
    // 12 rows, `n = 21`: rows 0..=10 store at `2 · row`.
    let mut out = device.upload(&[0.0f32; 21]).unwrap();
    {
        let mut outs = [ArgMut::from(&mut out)];
        kernel
            .launch_custom(
                &stream,
                Some(config(3)),
                &[],
                &mut outs,
                &[ParamValue::I32(21)],
            )
            .unwrap();
    }
    let got = stream.read(&out).unwrap();
    let want: Vec<f32> = (0..21)
        .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
        .collect();
    assert_eq!(got, want);
    let mut outs = [ArgMut::from(&mut out)];
    let refused = kernel
        .launch_custom(
            &stream,
            Some(config(65_536)),
            &[],
            &mut outs,
            &[ParamValue::I32(21)],
        )
        .unwrap_err();
    assert!(matches!(refused, Error::LaunchConfig { .. }), "{refused}");
}
