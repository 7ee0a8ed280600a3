//! Row-major indices over a three-dimensional grid, `(blockIdx.z · gridDim.y + blockIdx.y) ·
//! n + i` for `i < n`, proven below `n · grid.y · grid.z` by a fact scaled by a product of
//! atoms (llama.cpp's `concat` and `pad`); unsafe variants (a plane stride past the row, a
//! row index past the grid, an extent one short) are declined at the access that leaves the
//! extent.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{In, Out};
use jitseam_verify::RejectKind;

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// One `n`-wide row of `y` per `(blockIdx.y, blockIdx.z)`, its first `m` columns copied from
/// the `m`-wide rows of `x`, in NVRTC's style (ggml's `concat_f32` without its second source).
const PLANES: &str = r".version 8.5
.target sm_80
.address_size 64

.visible .entry plane_copy(
	.param .u64 plane_copy_param_0,
	.param .u64 plane_copy_param_1,
	.param .u32 plane_copy_param_2,
	.param .u32 plane_copy_param_3
)
{
	.reg .pred 	%p<3>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<14>;
	.reg .b64 	%rd<10>;

	ld.param.u64 	%rd1, [plane_copy_param_0];
	ld.param.u64 	%rd2, [plane_copy_param_1];
	ld.param.u32 	%r3, [plane_copy_param_2];
	ld.param.u32 	%r4, [plane_copy_param_3];
	mov.u32 	%r5, %ntid.x;
	mov.u32 	%r6, %ctaid.x;
	mov.u32 	%r7, %tid.x;
	mad.lo.s32 	%r1, %r6, %r5, %r7;
	setp.ge.s32 	%p1, %r1, %r3;
	@%p1 bra 	$L__BB0_2;

	mov.u32 	%r8, %ctaid.y;
	mov.u32 	%r9, %nctaid.y;
	mov.u32 	%r10, %ctaid.z;
	mad.lo.s32 	%r2, %r9, %r10, %r8;
	mad.lo.s32 	%r11, %r2, %r3, %r1;
	cvta.to.global.u64 	%rd6, %rd2;
	mul.wide.s32 	%rd4, %r11, 4;
	add.s64 	%rd7, %rd6, %rd4;
	setp.ge.s32 	%p2, %r1, %r4;
	@%p2 bra 	$L__BB0_2;

	mad.lo.s32 	%r12, %r2, %r4, %r1;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd8, %r12, 4;
	add.s64 	%rd5, %rd3, %rd8;
	ld.global.f32 	%f1, [%rd5];
	st.global.f32 	[%rd7], %f1;

$L__BB0_2:
	ret;

}
";

const SIG: &str = "x: in f32[m * grid.y * grid.z], y: out f32[n * grid.y * grid.z], n: i32, m: i32";

#[test]
fn a_row_major_index_over_a_3d_grid_is_proven() {
    let proof = verify(PLANES, "plane_copy", SIG).unwrap();
    assert!(proof.guards().is_empty());
}

/// An unsafe variant is declined as out of bounds at the load, the first access past the
/// extent.
fn declined(text: &str, signature: &str) {
    rejects(
        text,
        "plane_copy",
        signature,
        RejectKind::OutOfBounds,
        "ld.global.f32",
    );
}

#[test]
fn a_plane_stride_past_the_row_is_declined() {
    // `x`'s rows at `y`'s stride `n`, which may exceed `m`.
    let text = mutate(
        PLANES,
        "plane_copy",
        "mad.lo.s32 	%r12, %r2, %r4, %r1;",
        "mad.lo.s32 	%r12, %r2, %r3, %r1;",
    );
    declined(&text, SIG);
}

#[test]
fn a_row_index_past_the_grid_is_declined() {
    // `gridDim.y` where `blockIdx.y` was: the last plane's row is one past the grid's.
    let text = mutate(
        PLANES,
        "plane_copy",
        "mad.lo.s32 	%r2, %r9, %r10, %r8;",
        "mad.lo.s32 	%r2, %r9, %r10, %r9;",
    );
    declined(&text, SIG);
}

#[test]
fn an_extent_one_short_is_declined() {
    declined(
        PLANES,
        "x: in f32[m * grid.y * grid.z - 1], y: out f32[n * grid.y * grid.z], n: i32, m: i32",
    );
}

/// A tile's row-major index taken as an `int`: `(16·blockIdx.y + threadIdx.y)·wA + threadIdx.x`
/// (`mad.lo.s32`) for the block (16, 16, 1), then widened. It reads exactly because it lies
/// below `A`'s extent, which every launch keeps within `2^31 − 1`; no one search shows both.
const TILE_ROWS: &str = r".version 8.5
.target sm_80
.address_size 64

.visible .entry tile_rows(
	.param .u64 tile_rows_param_0,
	.param .u64 tile_rows_param_1,
	.param .u32 tile_rows_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<20>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [tile_rows_param_0];
	ld.param.u64 	%rd2, [tile_rows_param_1];
	ld.param.u32 	%r10, [tile_rows_param_2];
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %tid.y;
	mov.u32 	%r3, %ctaid.y;
	setp.lt.s32 	%p1, %r10, 1;
	@%p1 bra 	$L__BB0_2;

	shl.b32 	%r16, %r3, 4;
	add.s32 	%r17, %r2, %r16;
	mad.lo.s32 	%r18, %r10, %r17, %r1;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r18, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	cvta.to.global.u64 	%rd6, %rd2;
	st.global.f32 	[%rd6], %f1;

$L__BB0_2:
	ret;

}
";

const TILE_SIG: &str =
    "A: in f32[16 + wA * (16 * grid.y - 1)], o: out f32[1], wA: i32; block = (16, 16, 1)";

#[test]
fn a_tile_index_below_its_extent_reads_exactly_as_an_int() {
    let proof = verify(TILE_ROWS, "tile_rows", TILE_SIG).unwrap();
    assert!(proof.guards().is_empty());
    assert!(
        proof
            .conditions
            .iter()
            .any(|c| matches!(c, jitseam_verify::LaunchCondition::ExtentsAtMost { limit } if *limit == (1 << 31) - 1)),
        "{:?}",
        proof.conditions
    );
}

#[test]
fn a_tile_index_past_its_extent_is_declined() {
    // One row of `wA` short: the last tile row's index passes the extent, and nothing else
    // bounds the `int` it is computed in.
    for signature in [
        "A: in f32[wA * (16 * grid.y - 1)], o: out f32[1], wA: i32; block = (16, 16, 1)",
        "A: in f32[16 + wA * (16 * grid.y - 1)], o: out f32[1], wA: i32; block = (32, 16, 1)",
    ] {
        let err = verify(TILE_ROWS, "tile_rows", signature).unwrap_err();
        assert!(
            matches!(err.kind, RejectKind::MayWrap | RejectKind::OutOfBounds),
            "{signature}: {err}"
        );
        assert!(
            err.instruction.contains("ld.global.f32"),
            "{signature}: {err}"
        );
    }
}

/// llama.cpp's `concat` along dim 0 (`tests/fixtures/real/`, NVRTC 12.9): the second source's
/// rows are `ne0 - ne00` wide, `(nidx - ne00) + (blockIdx.z·gridDim.y + blockIdx.y)·(ne0 -
/// ne00)` for `ne00 ≤ nidx < ne0`. The stride is a difference, whose expansion has terms of
/// both signs: each coordinate is put at its bound by its cofactor's sign.
const CONCAT: &str = include_str!("fixtures/real/ggml_concat_pad.ptx");

const CONCAT_SIG: &str = "x: in f32[ne00 * grid.y * grid.z], y: in f32[(ne0 - ne00) * grid.y * grid.z], \
     dst: out f32[ne0 * grid.y * grid.z], ne0: i32, ne00: i32";

#[test]
fn a_row_stride_that_is_a_difference_is_proven() {
    let proof = verify(CONCAT, "ggml_concat_f32_dim0", CONCAT_SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
}

/// An unsafe variant of `concat` is declined as out of bounds at the second source's load.
fn concat_declined(text: &str, signature: &str) {
    let entry = "ggml_concat_f32_dim0";
    let err = verify(text, entry, signature).unwrap_err();
    assert!(
        matches!(err.kind, RejectKind::OutOfBounds | RejectKind::MayWrap),
        "{signature}: {err}"
    );
    let load = custom_verify::line_of(text, entry, "ld.global.f32 	%f1");
    assert_eq!(err.line, load, "{err}");
}

#[test]
fn a_difference_stride_past_its_extent_is_declined() {
    let entry = "ggml_concat_f32_dim0";
    // The second source one element short.
    concat_declined(
        CONCAT,
        &CONCAT_SIG.replace(
            "(ne0 - ne00) * grid.y * grid.z]",
            "(ne0 - ne00) * grid.y * grid.z - 1]",
        ),
    );
    // Its rows `ne0` apart, past the `ne0 - ne00` they hold.
    let wide = mutate(
        CONCAT,
        entry,
        "mad.lo.s32 	%r14, %r2, %r12, %r13;",
        "mad.lo.s32 	%r14, %r2, %r3, %r13;",
    );
    concat_declined(&wide, CONCAT_SIG);
    // Its column `nidx`, not `nidx - ne00`.
    let column = mutate(
        CONCAT,
        entry,
        "mad.lo.s32 	%r14, %r2, %r12, %r13;",
        "mad.lo.s32 	%r14, %r2, %r12, %r1;",
    );
    concat_declined(&column, CONCAT_SIG);
    // Every column through the second source: `nidx - ne00` may be negative, and `ne0 - ne00`
    // of either sign.
    let unguarded = mutate(
        CONCAT,
        entry,
        "setp.lt.s32 	%p2, %r1, %r4;",
        "setp.lt.s32 	%p2, %r1, 0;",
    );
    concat_declined(&unguarded, CONCAT_SIG);
}

/// NVRTC 12.9's PTX of the corpus kernel `ggml_pad_f32` (`tests/fixtures/real/ggml_concat_pad.cu`):
/// its copy tests `blockIdx.z < ne02 * ne03` unsigned against the product computed in 32
/// bits, which may wrap; the product of sizes `≥ 0` wraps only down, so the test bounds the
/// plane by the exact product all the same.
const PAD: &str = include_str!("fixtures/real/ggml_concat_pad.ptx");
const PAD_SIG: &str = "x: in f32[ne00 * ne01 * ne02 * ne03], dst: out f32[ne0 * grid.y * grid.z], \
                       ne0: i32, ne00: i32, ne01: i32, ne02: i32, ne03: i32";

#[test]
fn a_plane_below_a_product_that_may_wrap_is_proven() {
    let proof = verify(PAD, "ggml_pad_f32", PAD_SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    // Read signed, the product's bits are still at most the product.
    let signed = mutate(
        PAD,
        "ggml_pad_f32",
        "setp.lt.u32 	%p5, %r3, %r15;",
        "setp.lt.s32 	%p5, %r3, %r15;",
    );
    assert!(
        verify(&signed, "ggml_pad_f32", PAD_SIG)
            .unwrap()
            .guards()
            .is_empty()
    );
}

#[test]
fn a_plane_past_the_product_is_declined() {
    // One plane more than the source has.
    let past = mutate(
        PAD,
        "ggml_pad_f32",
        "mul.lo.s32 	%r15, %r8, %r7;",
        "mad.lo.s32 	%r15, %r8, %r7, 1;",
    );
    rejects(
        &past,
        "ggml_pad_f32",
        PAD_SIG,
        RejectKind::MayWrap,
        "ld.global.f32",
    );
    // The test turned round: `ne02 * ne03 < blockIdx.z` says nothing of a plane below it.
    let turned = mutate(
        PAD,
        "ggml_pad_f32",
        "setp.lt.u32 	%p5, %r3, %r15;",
        "setp.gt.u32 	%p5, %r3, %r15;",
    );
    rejects(
        &turned,
        "ggml_pad_f32",
        PAD_SIG,
        RejectKind::MayWrap,
        "ld.global.f32",
    );
    // Rows below the grid's, not the source's.
    let rows = mutate(
        PAD,
        "ggml_pad_f32",
        "setp.lt.u32 	%p2, %r2, %r6;",
        "setp.lt.u32 	%p2, %r2, %r12;",
    );
    rejects(
        &rows,
        "ggml_pad_f32",
        PAD_SIG,
        RejectKind::MayWrap,
        "ld.global.f32",
    );
}

#[jitseam::kernel(abi = custom)]
fn ggml_pad_f32(
    #[len(ne00 * ne01 * ne02 * ne03)] x: In<f32>,
    #[len(ne0 * grid.y * grid.z)] dst: Out<f32>,
    ne0: i32,
    ne00: i32,
    ne01: i32,
    ne02: i32,
    ne03: i32,
);

/// Pad runs as the reference does, and the launches whose sizes would break the proof's
/// arithmetic never reach the device: negative sizes have no extent, and sizes whose product
/// passes an `int` break the proof's condition.
#[test]
fn pad_pads_and_sizes_past_an_int_are_declined() {
    use jitseam::{Device, Error, Kernel, LaunchConfig, Signature};
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<GgmlPadF32, _>::describe_typed(GgmlPadF32::ptx_artifact(PAD))
        .unwrap()
        .load()
        .unwrap();
    assert!(kernel.loaded().proof().unwrap().guards().is_empty());
    let kernel = kernel.bind(&device).unwrap();
    // Two planes of two rows 3 wide padded to rows of 5, in a grid of 3 rows by 3 planes.
    let x: Vec<f32> = (1..=12).map(|v| v as f32).collect();
    let dx = device.upload(&x).unwrap();
    let mut dst = device.upload(&[f32::NAN; 45]).unwrap();
    let config = LaunchConfig::new([1, 3, 3], [8, 1, 1]);
    kernel
        .launch_with(
            &stream,
            config,
            GgmlPadF32::args(&dx, &mut dst, 5, 3, 2, 2, 1),
        )
        .unwrap();
    let want: Vec<f32> = (0..45)
        .map(|i| {
            let (z, y, c) = (i / 15, i / 5 % 3, i % 5);
            if c < 3 && y < 2 && z < 2 {
                x[(z * 2 + y) * 3 + c]
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(stream.read(&dst).unwrap(), want);

    let one = device.upload(&[0.0f32]).unwrap();
    let mut out = device.upload(&[0.0f32]).unwrap();
    let single = LaunchConfig::new([1, 1, 1], [1, 1, 1]);
    // `ne01 = ne02 = −1`: no extent is negative, so no launch has such sizes.
    let err = kernel
        .launch_with(
            &stream,
            single,
            GgmlPadF32::args(&one, &mut out, 1, 1, -1, -1, 1),
        )
        .unwrap_err();
    assert!(matches!(err, Error::ExtentInvalid(_)), "{err}");
    // `ne02 · ne03 = 2^32`, which wraps to 0 in 32 bits, over rows of no columns: the
    // extent is 0 and the copy never reads, so the launch runs and pads.
    let empty = device.upload::<f32>(&[]).unwrap();
    let mut out = device.upload(&[f32::NAN]).unwrap();
    kernel
        .launch_with(
            &stream,
            single,
            GgmlPadF32::args(&empty, &mut out, 1, 0, 1, 1 << 16, 1 << 16),
        )
        .unwrap();
    assert_eq!(stream.read(&out).unwrap(), [0.0]);
    // Over a row of one column the same sizes make `x`'s extent `2^32`: the proof's condition
    // that every extent is at most `2^31 − 1` declines that launch before the device sees it
    // (a buffer that large is past the emulator).
    let condition = jitseam_verify::LaunchCondition::ExtentsAtMost {
        limit: (1 << 31) - 1,
    };
    assert!(
        kernel
            .loaded()
            .proof()
            .unwrap()
            .conditions
            .contains(&condition)
    );
}
