//! The body verifier on shared memory (custom contracts): NVRTC's block reduction of
//! tests/fixtures/custom_shared/ and a hand-written 16 × 16 tile kernel are proven with the
//! launch conditions their shared arrays need, a warp slot addressed through a mask with no
//! condition at all; hand-mutated copies, each with one shared-memory
//! violation, are rejected with the kind and line of the violation; launches that break a
//! shared-memory condition are declined before the device sees anything.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, DeviceBound, Error, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

const PTX: &str = include_str!("fixtures/custom_shared/custom_shared.ptx");

const BLOCK_SUM: &str = "x: in f32[n], partial: out f32[grid.x], n: u32";
const TILE: &str = "x: in f32[n], partial: out f32[grid.x], n: u32";

/// A 16 × 16 static tile in NVRTC's style: each thread of a 16 × 16 block stores
/// `x[ctaid.x * ntid.x + tx]` (0 past `n`) at `tile[ty][tx]`, then reads `tile[tx][ty]` and
/// `tile[15][15]`; thread (0, 0) writes their sum to `partial[ctaid.x]`.
const TILE_PTX: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry tile_corner(
	.param .u64 tile_corner_param_0,
	.param .u64 tile_corner_param_1,
	.param .u32 tile_corner_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<12>;
	.shared .align 4 .b8 tile[1024];

	ld.param.u64 	%rd1, [tile_corner_param_0];
	ld.param.u64 	%rd2, [tile_corner_param_1];
	ld.param.u32 	%r1, [tile_corner_param_2];
	mov.u32 	%r2, %tid.x;
	mov.u32 	%r3, %tid.y;
	mov.u32 	%r4, %ctaid.x;
	mov.u32 	%r7, %ntid.x;
	mad.lo.s32 	%r6, %r4, %r7, %r2;
	mov.f32 	%f1, 0f00000000;
	setp.ge.u32 	%p1, %r6, %r1;
	@%p1 bra 	$L__skip;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.u32 	%rd4, %r6, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
$L__skip:
	mul.wide.u32 	%rd6, %r3, 64;
	mov.u64 	%rd7, tile;
	add.s64 	%rd8, %rd7, %rd6;
	mul.wide.u32 	%rd9, %r2, 4;
	add.s64 	%rd10, %rd8, %rd9;
	st.shared.f32 	[%rd10], %f1;
	bar.sync 	0;
	mul.wide.u32 	%rd6, %r2, 64;
	add.s64 	%rd8, %rd7, %rd6;
	mul.wide.u32 	%rd9, %r3, 4;
	add.s64 	%rd10, %rd8, %rd9;
	ld.shared.f32 	%f2, [%rd10];
	ld.shared.f32 	%f3, [tile+1020];
	add.f32 	%f2, %f2, %f3;
	or.b32 	%r5, %r2, %r3;
	setp.ne.s32 	%p1, %r5, 0;
	@%p1 bra 	$L__done;
	cvta.to.global.u64 	%rd11, %rd2;
	mul.wide.u32 	%rd4, %r4, 4;
	add.s64 	%rd11, %rd11, %rd4;
	st.global.f32 	[%rd11], %f2;
$L__done:
	ret;
}
"#;

const AXIS_32: LaunchCondition = LaunchCondition::AxisThreadsAtMost {
    limit: (1 << 32) - 1,
};

#[test]
fn the_shared_memory_kernels_are_proven_with_their_conditions() {
    // `i = blockIdx.x · blockDim.x + threadIdx.x` is tested `i < n` unsigned before it reads
    // `x[i]`: whatever the 32-bit sum wrapped to, the test bounds it, so the grid needs no
    // condition.
    let proof = verify(PTX, "block_sum", BLOCK_SUM).unwrap();
    assert_eq!(
        proof.conditions,
        [LaunchCondition::DynamicSharedAtLeast {
            bytes_per_thread_x: 4
        }]
    );
    let proof = verify(TILE_PTX, "tile_corner", TILE).unwrap();
    assert_eq!(
        proof.conditions,
        [
            AXIS_32,
            LaunchCondition::BlockAtMost {
                x: 16,
                y: 16,
                z: 1024
            }
        ]
    );
}

#[test]
fn the_tree_step_without_its_guard_is_rejected() {
    // `s[tid] += s[tid + stride]` for every `tid`, not only `tid < stride`.
    let text = mutate(PTX, "block_sum", "\t@%p3 bra \t$L__BB0_5;\n", "");
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::OutOfBounds,
        "ld.shared.f32 \t%f5, [%rd11];",
    );
}

#[test]
fn a_dynamic_index_of_tid_plus_block_x_is_rejected() {
    // `s[tid + blockDim.x] = …`: one block past the `4 * block.x` bytes the launch gives.
    let text = mutate(
        PTX,
        "block_sum",
        "\tmul.wide.u32 \t%rd7, %r3, 4;",
        "\tadd.s32 \t%r9, %r3, %r1;\n\tmul.wide.u32 \t%rd7, %r9, 4;",
    );
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::OutOfBounds,
        "st.shared.f32 \t[%rd1], %f8;",
    );
}

#[test]
fn a_static_tile_read_one_past_its_last_row_is_rejected() {
    // `tile[15][16]`: the element after the last row's last one, past the tile.
    let text = mutate(TILE_PTX, "tile_corner", "[tile+1020]", "[tile+1024]");
    rejects(
        &text,
        "tile_corner",
        TILE,
        RejectKind::OutOfBounds,
        "[tile+1024]",
    );
    // `tile[tx][ty]` read with a row stride one float long (`tile[tx][ty + tx]`) leaves the
    // tile for the last row at 16 × 16: it is proven only for a narrower block, which the
    // launch then must respect.
    let text = mutate(
        TILE_PTX,
        "tile_corner",
        "mul.wide.u32 \t%rd6, %r2, 64;",
        "mul.wide.u32 \t%rd6, %r2, 68;",
    );
    let proof = verify(&text, "tile_corner", TILE).unwrap();
    assert!(
        proof
            .conditions
            .iter()
            .any(|c| matches!(c, LaunchCondition::BlockAtMost { x, .. } if *x < 16)),
        "{proof:?}"
    );
}

#[test]
fn a_store_at_a_shared_address_computed_from_global_data_is_rejected() {
    let text = mutate(
        PTX,
        "block_sum",
        "\tmul.wide.u32 \t%rd7, %r3, 4;",
        "\tcvt.rzi.u32.f32 \t%r9, %f8;\n\tmul.wide.u32 \t%rd7, %r9, 4;",
    );
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::DataDependentIndex,
        "st.shared.f32 \t[%rd1], %f8;",
    );
}

#[test]
fn a_shared_access_wider_than_its_variable_is_rejected() {
    // Eight bytes in a tile aligned to four.
    let text = mutate(
        TILE_PTX,
        "tile_corner",
        "st.shared.f32 \t[%rd10], %f1;",
        "st.shared.u64 \t[%rd10], %rd9;",
    );
    rejects(
        &text,
        "tile_corner",
        TILE,
        RejectKind::WrongWidth,
        "st.shared.u64",
    );
    // Eight bytes at `4 * tid` in the dynamic array: misaligned for odd `tid`.
    let text = mutate(
        PTX,
        "block_sum",
        "\tst.shared.f32 \t[%rd1], %f8;",
        "\tst.shared.v2.f32 \t[%rd1], {%f8, %f8};",
    );
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::Misaligned,
        "st.shared.v2.f32",
    );
}

#[test]
fn a_shared_address_used_as_a_generic_one_is_rejected() {
    // A shared-window offset read as a generic address names some other byte.
    let text = mutate(
        PTX,
        "block_sum",
        "\tld.shared.f32 \t%f4, [%rd1];",
        "\tld.f32 \t%f4, [%rd1];",
    );
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::UnattributedAddress,
        "ld.f32 \t%f4, [%rd1];",
    );
    // `cvta.shared` (a generic address in the shared window) is not modeled.
    let text = mutate(
        PTX,
        "block_sum",
        "\tadd.s64 \t%rd1, %rd8, %rd7;",
        "\tadd.s64 \t%rd1, %rd8, %rd7;\n\tcvta.shared.u64 \t%rd6, %rd1;",
    );
    rejects(
        &text,
        "block_sum",
        BLOCK_SUM,
        RejectKind::Unsupported,
        "cvta.shared.u64",
    );
}

/// A warp's slot in a 32-slot static array, as ggml's `soft_max` addresses it: the byte offset
/// `(4 · tid.x) & 124`, a multiple of 4 below 128 for any block, since the mask keeps the low
/// two bits clear. Thread 0 of each block stores its slot back to `partial[ctaid.x]`.
const SLOT_PTX: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry warp_slot(
	.param .u64 warp_slot_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<8>;
	.shared .align 4 .b8 slots[128];

	ld.param.u64 	%rd1, [warp_slot_param_0];
	mov.u32 	%r1, %tid.x;
	cvt.rn.f32.u32 	%f1, %r1;
	shl.b32 	%r2, %r1, 2;
	cvt.u64.u32 	%rd2, %r2;
	and.b64 	%rd3, %rd2, 124;
	mov.u64 	%rd4, slots;
	add.s64 	%rd5, %rd4, %rd3;
	st.shared.f32 	[%rd5], %f1;
	bar.sync 	0;
	ld.shared.f32 	%f2, [%rd5];
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__done;
	mov.u32 	%r3, %ctaid.x;
	cvta.to.global.u64 	%rd6, %rd1;
	mul.wide.u32 	%rd7, %r3, 4;
	add.s64 	%rd6, %rd6, %rd7;
	st.global.f32 	[%rd6], %f2;
$L__done:
	ret;
}
"#;

const SLOT: &str = "partial: out f32[grid.x]";

#[test]
fn a_masked_slot_offset_is_proven_aligned_and_in_bounds() {
    let proof = verify(SLOT_PTX, "warp_slot", SLOT).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert!(proof.conditions.is_empty(), "{:?}", proof.conditions);
}

#[test]
fn a_masked_slot_one_slot_short_or_misaligned_is_declined() {
    // 31 slots: the mask reaches the 32nd.
    let short = mutate(SLOT_PTX, "warp_slot", ".b8 slots[128];", ".b8 slots[124];");
    rejects(
        &short,
        "warp_slot",
        SLOT,
        RejectKind::OutOfBounds,
        "st.shared.f32",
    );
    // A mask with bit 1 set: the offset is only known a multiple of 2, an opaque offset the
    // 4-byte store cannot be shown aligned at (declined as unbounded, as such offsets are).
    let odd = mutate(
        SLOT_PTX,
        "warp_slot",
        "and.b64 	%rd3, %rd2, 124;",
        "and.b64 	%rd3, %rd2, 126;",
    );
    rejects(
        &odd,
        "warp_slot",
        SLOT,
        RejectKind::OutOfBounds,
        "st.shared.f32",
    );
}

// ---- launches ----

#[jitseam::kernel(abi = custom)]
fn block_sum(#[len(n)] x: In<f32>, #[len(grid.x)] partial: Out<f32>, n: u32);

#[jitseam::kernel(abi = custom)]
fn tile_corner(#[len(n)] x: In<f32>, #[len(grid.x)] partial: Out<f32>, n: u32);

fn load<K: Signature>(device: &Device, text: &str) -> Kernel<K, DeviceBound> {
    Kernel::<K, _>::describe_typed(K::ptx_artifact(text))
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

#[test]
fn launches_that_break_a_shared_memory_condition_are_declined() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let x: Vec<f32> = (0..512).map(|i| i as f32).collect();
    let dx = device.upload(&x).unwrap();

    let kernel = load::<BlockSum>(&device, PTX);
    let mut partial = device.upload(&[f32::NAN; 2]).unwrap();
    let short = LaunchConfig::linear(2, 256).dynamic_shared_bytes(4 * 256 - 4);
    let err = kernel
        .launch_with(&stream, short, BlockSum::args(&dx, &mut partial, 512))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::LaunchCondition {
                condition: LaunchCondition::DynamicSharedAtLeast {
                    bytes_per_thread_x: 4
                },
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.kind_name(), "launch_condition");
    assert!(stream.read(&partial).unwrap().iter().all(|v| v.is_nan()));
    let exact = LaunchConfig::linear(2, 256).dynamic_shared_bytes(4 * 256);
    kernel
        .launch_with(&stream, exact, BlockSum::args(&dx, &mut partial, 512))
        .unwrap();
    let want: Vec<f32> = x.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(stream.read(&partial).unwrap(), want);

    let kernel = load::<TileCorner>(&device, TILE_PTX);
    let mut partial = device.upload(&[f32::NAN; 2]).unwrap();
    let wide = LaunchConfig::new([2, 1, 1], [32, 8, 1]);
    let err = kernel
        .launch_with(&stream, wide, TileCorner::args(&dx, &mut partial, 512))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::LaunchCondition {
                condition: LaunchCondition::BlockAtMost { x: 16, y: 16, .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(stream.read(&partial).unwrap().iter().all(|v| v.is_nan()));
    kernel
        .launch_with(
            &stream,
            LaunchConfig::new([2, 1, 1], [16, 16, 1]),
            TileCorner::args(&dx, &mut partial, 512),
        )
        .unwrap();
    assert_eq!(stream.read(&partial).unwrap(), [15.0, 47.0]);
}
