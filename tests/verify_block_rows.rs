//! A kernel launched one block per row, its row the block's linear index
//! `(blockIdx.z · gridDim.y + blockIdx.y) · gridDim.x + blockIdx.x` taken as an `int`
//! (llama.cpp's `soft_max` and `norm` rows): proven under the launch condition that the grid
//! has at most `2^31 − 1` blocks, which every launch checks; unsafe variants (a row past the
//! grid, an extent one short) are declined at the access that leaves the extent.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, Error, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// NVRTC 12.9's PTX (`compute_80`) of
///
/// ```cuda
/// extern "C" __global__ void row_scale(const float* x, float* y, const int ncols, const float s) {
///     const int row = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
///     const int col = threadIdx.x;
///     if (col < ncols) {
///         y[(long long)row * ncols + col] = s * x[(long long)row * ncols + col];
///     }
/// }
/// ```
const PTX: &str = r".version 8.8
.target sm_80
.address_size 64

	// .globl	row_scale

.visible .entry row_scale(
	.param .u64 row_scale_param_0,
	.param .u64 row_scale_param_1,
	.param .u32 row_scale_param_2,
	.param .f32 row_scale_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<11>;


	ld.param.u64 	%rd1, [row_scale_param_0];
	ld.param.u64 	%rd2, [row_scale_param_1];
	ld.param.u32 	%r2, [row_scale_param_2];
	ld.param.f32 	%f1, [row_scale_param_3];
	mov.u32 	%r1, %tid.x;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd3, %rd1;
	mov.u32 	%r3, %nctaid.x;
	mov.u32 	%r4, %ctaid.y;
	mov.u32 	%r5, %ctaid.z;
	mov.u32 	%r6, %nctaid.y;
	mad.lo.s32 	%r7, %r6, %r5, %r4;
	mov.u32 	%r8, %ctaid.x;
	mad.lo.s32 	%r9, %r7, %r3, %r8;
	mul.wide.s32 	%rd4, %r9, %r2;
	cvt.s64.s32 	%rd5, %r1;
	add.s64 	%rd6, %rd4, %rd5;
	shl.b64 	%rd7, %rd6, 2;
	add.s64 	%rd8, %rd3, %rd7;
	ld.global.f32 	%f2, [%rd8];
	mul.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd2;
	add.s64 	%rd10, %rd9, %rd7;
	st.global.f32 	[%rd10], %f3;

$L__BB0_2:
	ret;

}

";

const SIG: &str = "x: in f32[grid.x * grid.y * grid.z * ncols], \
                   y: out f32[grid.x * grid.y * grid.z * ncols], ncols: i32, s: f32";

const BLOCKS: LaunchCondition = LaunchCondition::BlocksAtMost {
    limit: (1 << 31) - 1,
};

#[test]
fn a_row_per_block_is_proven_under_a_block_count_condition() {
    let proof = verify(PTX, "row_scale", SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert!(proof.conditions.contains(&BLOCKS), "{:?}", proof.conditions);
}

#[test]
fn a_row_past_the_grid_is_declined() {
    // `gridDim.x` where `blockIdx.x` was: the last block's row is one past the grid's.
    let text = mutate(
        PTX,
        "row_scale",
        "mad.lo.s32 	%r9, %r7, %r3, %r8;",
        "mad.lo.s32 	%r9, %r7, %r3, %r3;",
    );
    rejects(
        &text,
        "row_scale",
        SIG,
        RejectKind::OutOfBounds,
        "ld.global.f32",
    );
}

#[test]
fn an_extent_one_short_is_declined() {
    rejects(
        PTX,
        "row_scale",
        "x: in f32[grid.x * grid.y * grid.z * ncols - 1], \
         y: out f32[grid.x * grid.y * grid.z * ncols], ncols: i32, s: f32",
        RejectKind::OutOfBounds,
        "ld.global.f32",
    );
}

#[jitseam::kernel(abi = custom)]
fn row_scale(
    #[len(grid.x * grid.y * grid.z * ncols)] x: In<f32>,
    #[len(grid.x * grid.y * grid.z * ncols)] y: Out<f32>,
    ncols: i32,
    s: f32,
);

#[test]
fn rows_scale_and_a_grid_of_2_pow_31_blocks_is_declined() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<RowScale, _>::describe_typed(RowScale::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    // Two rows of blocks by three planes, eight columns each: every element scaled once.
    let (grid, ncols) = ([2u32, 2, 3], 8usize);
    let len = 12 * ncols;
    let x: Vec<f32> = (0..len).map(|i| i as f32 - 40.0).collect();
    let dx = device.upload(&x).unwrap();
    let mut y = device.upload(&vec![f32::NAN; len]).unwrap();
    let config = LaunchConfig::new(grid, [ncols as u32 + 3, 1, 1]);
    let mut scale_rows = |s: f32| {
        kernel
            .launch_with(
                &stream,
                config,
                RowScale::args(&dx, &mut y, ncols as i32, s),
            )
            .unwrap();
        let want: Vec<f32> = x.iter().map(|v| v * s).collect();
        assert_eq!(stream.read(&y).unwrap(), want);
    };
    scale_rows(0.5);

    // 2^31 blocks of rows of no columns (every extent 0): in every device's limits, yet the
    // block's linear index would wrap as an `int`. Declined before the device sees it.
    let empty_x = device.upload::<f32>(&[]).unwrap();
    let mut empty_y = device.upload::<f32>(&[]).unwrap();
    let wide = LaunchConfig::new([1 << 16, 1 << 15, 1], [32, 1, 1]);
    let err = kernel
        .launch_with(
            &stream,
            wide,
            RowScale::args(&empty_x, &mut empty_y, 0, 0.5),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::LaunchCondition { condition, .. } if *condition == BLOCKS),
        "{err}"
    );
    // The kernel and the device stay usable.
    scale_rows(2.0);
}
