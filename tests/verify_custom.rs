//! The body verifier against custom-ABI contracts (declared extents, three-dimensional
//! launches): the NVRTC fixtures of tests/fixtures/custom/ are proven and run on the emulator
//! with exact-size buffers at several shapes; hand-mutated copies of them, each with one
//! violation, are rejected with the kind and line of the violation.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, DeviceBound, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

const PTX: &str = include_str!("fixtures/custom/custom.ptx");

const SAXPY: &str = "out: out f32[n], x: in f32[n], n: i32, a: f32";
const VECTOR_ADD: &str = "a: in f32[num_elements], b: in f32[num_elements], \
                          c: out f32[num_elements], num_elements: i32";
const MATMUL: &str =
    "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32";
const STENCIL: &str =
    "input: in f32[width * height], out: out f32[width * height], width: i32, height: i32";

/// `matmul` of custom.cu as a plain (not unrolled) k loop, written by hand in NVRTC's style:
/// `c[row*n + col] = Σ_i a[row*k + i] · b[i*n + col]` on a 2-D grid, with `unsigned` indices.
const MM_SIMPLE: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry mm_simple(
	.param .u64 mm_simple_param_0,
	.param .u64 mm_simple_param_1,
	.param .u64 mm_simple_param_2,
	.param .u32 mm_simple_param_3,
	.param .u32 mm_simple_param_4,
	.param .u32 mm_simple_param_5
)
{
	.reg .pred 	%p<4>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<12>;
	.reg .b64 	%rd<10>;

	ld.param.u64 	%rd1, [mm_simple_param_0];
	ld.param.u64 	%rd2, [mm_simple_param_1];
	ld.param.u64 	%rd3, [mm_simple_param_2];
	ld.param.u32 	%r1, [mm_simple_param_3];
	ld.param.u32 	%r2, [mm_simple_param_4];
	ld.param.u32 	%r3, [mm_simple_param_5];
	mov.u32 	%r4, %ctaid.y;
	mov.u32 	%r5, %ntid.y;
	mov.u32 	%r6, %tid.y;
	mad.lo.s32 	%r7, %r4, %r5, %r6;
	mov.u32 	%r4, %ctaid.x;
	mov.u32 	%r5, %ntid.x;
	mov.u32 	%r6, %tid.x;
	mad.lo.s32 	%r8, %r4, %r5, %r6;
	setp.ge.u32 	%p1, %r7, %r1;
	setp.ge.u32 	%p2, %r8, %r2;
	or.pred  	%p3, %p1, %p2;
	@%p3 bra 	$L__done;
	mov.f32 	%f1, 0f00000000;
	mov.u32 	%r9, 0;
	setp.eq.s32 	%p1, %r3, 0;
	@%p1 bra 	$L__store;
$L__loop:
	mad.lo.s32 	%r10, %r7, %r3, %r9;
	mul.wide.u32 	%rd4, %r10, 4;
	add.s64 	%rd5, %rd1, %rd4;
	ld.global.f32 	%f2, [%rd5];
	mad.lo.s32 	%r11, %r9, %r2, %r8;
	mul.wide.u32 	%rd6, %r11, 4;
	add.s64 	%rd7, %rd2, %rd6;
	ld.global.f32 	%f3, [%rd7];
	fma.rn.f32 	%f1, %f2, %f3, %f1;
	add.s32 	%r9, %r9, 1;
	setp.lt.u32 	%p1, %r9, %r3;
	@%p1 bra 	$L__loop;
$L__store:
	mad.lo.s32 	%r10, %r7, %r2, %r8;
	mul.wide.u32 	%rd8, %r10, 4;
	add.s64 	%rd9, %rd3, %rd8;
	st.global.f32 	[%rd9], %f1;
$L__done:
	ret;
}
"#;

const AXIS_31: LaunchCondition = LaunchCondition::AxisThreadsAtMost {
    limit: (1 << 31) - 1,
};

#[test]
fn the_fixtures_are_proven() {
    for (text, entry, signature, conditions) in [
        (PTX, "saxpy_out_first", SAXPY, vec![AXIS_31]),
        (PTX, "vectorAdd", VECTOR_ADD, vec![AXIS_31]),
        (PTX, "vectorAdd128", VECTOR_ADD, vec![AXIS_31]),
        (
            PTX,
            "stencil5",
            STENCIL,
            vec![
                AXIS_31,
                LaunchCondition::ExtentsAtMost {
                    limit: (1 << 31) - 1,
                },
            ],
        ),
        (
            PTX,
            "matmul",
            MATMUL,
            vec![
                LaunchCondition::AxisThreadsAtMost {
                    limit: (1 << 32) - 1,
                },
                LaunchCondition::ExtentsAtMost {
                    limit: (1 << 32) - 1,
                },
            ],
        ),
        (
            MM_SIMPLE,
            "mm_simple",
            MATMUL,
            vec![
                LaunchCondition::AxisThreadsAtMost {
                    limit: (1 << 32) - 1,
                },
                LaunchCondition::ExtentsAtMost {
                    limit: (1 << 32) - 1,
                },
            ],
        ),
    ] {
        match verify(text, entry, signature) {
            Ok(proof) => assert_eq!(proof.conditions, conditions, "{entry}"),
            Err(r) => panic!("{entry}: {r}"),
        }
    }
}

#[test]
fn an_extent_of_the_launch_geometry_is_proven() {
    // Every thread of the grid along x, unguarded by n: within `grid.x * block.x`.
    let unguarded = mutate(PTX, "saxpy_out_first", "\t@%p1 bra \t$L__BB0_2;\n", "\n");
    let geometry = "out: out f32[grid.x * block.x], x: in f32[block.x * grid.x], n: i32, a: f32";
    verify(&unguarded, "saxpy_out_first", geometry).unwrap();
}

#[test]
fn an_index_one_past_the_extent_is_rejected() {
    let text = mutate(
        PTX,
        "saxpy_out_first",
        "ld.global.f32 \t%f2, [%rd6];",
        "ld.global.f32 \t%f2, [%rd6+4];",
    );
    rejects(
        &text,
        "saxpy_out_first",
        SAXPY,
        RejectKind::OutOfBounds,
        "[%rd6+4]",
    );
}

#[test]
fn a_guard_with_le_is_rejected() {
    // `if (i <= n)`: the branch away is taken only for i > n.
    let text = mutate(
        PTX,
        "saxpy_out_first",
        "setp.ge.s32 \t%p1, %r1, %r2;\n\t@%p1 bra \t$L__BB0_2;",
        "setp.gt.s32 \t%p1, %r1, %r2;\n\t@%p1 bra \t$L__BB0_2;",
    );
    rejects(
        &text,
        "saxpy_out_first",
        SAXPY,
        RejectKind::OutOfBounds,
        "ld.global.f32 \t%f2, [%rd6];",
    );
}

#[test]
fn a_missing_guard_is_rejected() {
    let text = mutate(PTX, "saxpy_out_first", "\t@%p1 bra \t$L__BB0_2;\n", "\n");
    rejects(
        &text,
        "saxpy_out_first",
        SAXPY,
        RejectKind::OutOfBounds,
        "ld.global.f32 \t%f2, [%rd6];",
    );
}

#[test]
fn swapped_row_and_column_strides_are_rejected() {
    // `c[row * m + col]`: below m·m, not m·n. The 32-bit index is then below no extent, so
    // its widening (`mul.wide.u32`, exact only below 2^32) is the first step not proven.
    let text = mutate(
        MM_SIMPLE,
        "mm_simple",
        "mad.lo.s32 \t%r10, %r7, %r2, %r8;",
        "mad.lo.s32 \t%r10, %r7, %r1, %r8;",
    );
    rejects(
        &text,
        "mm_simple",
        MATMUL,
        RejectKind::MayWrap,
        "st.global.f32",
    );
}

#[test]
fn matmuls_remainder_loop_one_past_its_row_is_rejected() {
    // NVRTC's matmul unrolls the k loop by four and finishes in a remainder loop that starts
    // at i = 4·floor(k/4). Reading `a[row*k + i + 1]` there passes the row's end, and for the
    // last row the buffer's.
    let text = mutate(
        PTX,
        "matmul",
        "ld.global.f32 \t%f24, [%rd23];",
        "ld.global.f32 \t%f24, [%rd23+4];",
    );
    rejects(
        &text,
        "matmul",
        MATMUL,
        RejectKind::OutOfBounds,
        "[%rd23+4]",
    );
}

#[test]
fn matmuls_remainder_loop_entered_with_nothing_left_is_rejected() {
    // Without the `k & 3 == 0` test before it, the remainder loop runs for k a multiple of 4
    // with its down-counter at 0: 2^32 iterations, reading on from i = k until the 32-bit
    // index wraps, so its first read is no longer bounded.
    let text = mutate(PTX, "matmul", "\t@%p7 bra \t$L__BB2_8;\n", "\n");
    rejects(
        &text,
        "matmul",
        MATMUL,
        RejectKind::MayWrap,
        "ld.global.f32 \t%f23, [%rd25];",
    );
}

#[test]
fn matmuls_unrolled_loop_entered_for_k_3_is_rejected() {
    // `k − 1 < 2` skips the unrolled loop only for k ≤ 2. At k = 3 its exit test
    // `(k & 3) − k + i == 0` never holds for i = 4, 8, …: the loop runs until its indices
    // wrap, so the first read of its body is no longer bounded.
    let text = mutate(
        PTX,
        "matmul",
        "setp.lt.u32 \t%p5, %r43, 3;",
        "setp.lt.u32 \t%p5, %r43, 2;",
    );
    rejects(
        &text,
        "matmul",
        MATMUL,
        RejectKind::MayWrap,
        "ld.global.f32 \t%f12, [%rd9];",
    );
}

#[test]
fn an_extent_naming_the_wrong_param_is_rejected() {
    // As for swapped strides: an index below no extent is not proven to read exactly at 32
    // bits (the conditions bound only the extents), so it is reported where it widens.
    let wrong = "a: in f32[m * k], b: in f32[k * n], c: out f32[m * k], m: u32, n: u32, k: u32";
    rejects(
        MM_SIMPLE,
        "mm_simple",
        wrong,
        RejectKind::MayWrap,
        "st.global.f32",
    );
    // `b` as `k * m`: its first read, `b[i*n + col]`, may pass it.
    let wrong = "a: in f32[m * k], b: in f32[k * m], c: out f32[m * n], m: u32, n: u32, k: u32";
    rejects(
        MM_SIMPLE,
        "mm_simple",
        wrong,
        RejectKind::MayWrap,
        "ld.global.f32 \t%f3, [%rd7];",
    );
}

#[test]
fn a_store_through_an_input_is_rejected() {
    // C's store goes to A.
    let text = mutate(
        PTX,
        "vectorAdd",
        "cvta.to.global.u64 \t%rd9, %rd3;\n\tadd.s64 \t%rd10, %rd9, %rd5;\n\tst.global.f32 \t[%rd10], %f4;",
        "cvta.to.global.u64 \t%rd9, %rd1;\n\tadd.s64 \t%rd10, %rd9, %rd5;\n\tst.global.f32 \t[%rd10], %f4;",
    );
    rejects(
        &text,
        "vectorAdd",
        VECTOR_ADD,
        RejectKind::StoreThroughInput,
        "st.global.f32 \t[%rd10], %f4;",
    );
}

#[test]
fn a_byte_offset_computed_in_32_bits_asks_for_fewer_threads() {
    // `4 * i` computed in 32 bits, then widened: it wraps for i ≥ 2^30, so it is proven only
    // under a launch of fewer threads along x than the geometry allows (`2^31 − 1`).
    let text = mutate(
        PTX,
        "saxpy_out_first",
        "mul.wide.s32 \t%rd5, %r1, 4;\n\tadd.s64 \t%rd6, %rd4, %rd5;",
        "shl.b32 \t%r5, %r1, 2;\n\tcvt.u64.u32 \t%rd5, %r5;\n\tadd.s64 \t%rd6, %rd4, %rd5;",
    );
    let proof = verify(&text, "saxpy_out_first", SAXPY).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert_eq!(
        proof.conditions,
        [LaunchCondition::AxisThreadsAtMost {
            limit: (1 << 29) - 1
        }]
    );
}

#[test]
fn data_sized_by_grid_y_under_a_grid_x_guard_is_rejected() {
    let unguarded = mutate(PTX, "saxpy_out_first", "\t@%p1 bra \t$L__BB0_2;\n", "\n");
    let geometry = "out: out f32[grid.x * block.x], x: in f32[grid.y * block.y], n: i32, a: f32";
    rejects(
        &unguarded,
        "saxpy_out_first",
        geometry,
        RejectKind::OutOfBounds,
        "ld.global.f32 \t%f2, [%rd6];",
    );
}

#[test]
fn a_stencil_whose_border_test_is_off_by_one_is_rejected() {
    // `y == height` for the bottom border: the interior reads in[i + width] at y = height − 1,
    // one row past the end. (The same slip on x only reads the next row's first element,
    // which is still inside the buffer, and is proven.)
    let text = mutate(
        PTX,
        "stencil5",
        "add.s32 \t%r13, %r4, -1;",
        "add.s32 \t%r13, %r4, 0;",
    );
    rejects(
        &text,
        "stencil5",
        STENCIL,
        RejectKind::OutOfBounds,
        "ld.global.f32 \t%f8, [%rd12];",
    );
    let x_slip = mutate(
        PTX,
        "stencil5",
        "add.s32 \t%r12, %r3, -1;",
        "add.s32 \t%r12, %r3, 0;",
    );
    verify(&x_slip, "stencil5", STENCIL).unwrap();
}

/// A static shared declaration alone touches nothing: proven (tests/verify_shared.rs covers
/// shared accesses); an access in a cluster's shared window, which reaches other blocks'
/// shared memory, is not modeled.
#[test]
fn shared_memory_in_a_cluster_window_is_unsupported() {
    let text = mutate(
        PTX,
        "saxpy_out_first",
        "\t.reg .pred \t%p<2>;\n\t.reg .f32 \t%f<5>;\n\t.reg .b32 \t%r<6>;\n\t.reg .b64 \t%rd<8>;",
        "\t.reg .pred \t%p<2>;\n\t.reg .f32 \t%f<5>;\n\t.reg .b32 \t%r<6>;\n\t.reg .b64 \t%rd<8>;\n\t.shared .align 4 .b8 tile[64];",
    );
    verify(&text, "saxpy_out_first", SAXPY).unwrap();
    let text = mutate(
        &text,
        "saxpy_out_first",
        "\tret;",
        "\tmov.u64 \t%rd7, tile;\n\tst.shared::cluster.f32 \t[%rd7], %f1;\n\tret;",
    );
    rejects(
        &text,
        "saxpy_out_first",
        SAXPY,
        RejectKind::Unsupported,
        "st.shared::cluster.f32",
    );
}

// ---- proven bodies on the emulator, with buffers of exactly their extents ----

#[jitseam::kernel(abi = custom, covers = n, symbol = "saxpy_out_first")]
fn saxpy(#[len(n)] out: Out<f32>, #[len(n)] x: In<f32>, n: i32, a: f32);

#[jitseam::kernel(abi = custom, symbol = "stencil5")]
fn stencil5(
    #[len(width * height)] input: In<f32>,
    #[len(width * height)] out: Out<f32>,
    width: i32,
    height: i32,
);

#[jitseam::kernel(abi = custom)]
fn matmul(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

#[jitseam::kernel(abi = custom, symbol = "mm_simple")]
fn mm_simple(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

fn load<K: Signature>(device: &Device, text: &str) -> Kernel<K, DeviceBound> {
    Kernel::<K, _>::describe_typed(K::ptx_artifact(text))
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

#[test]
fn proven_bodies_run_on_exact_buffers_without_faults() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let saxpy = load::<Saxpy>(&device, PTX);
    for n in [1usize, 31, 256, 257, 1000] {
        let x = device.upload(&vec![1.0f32; n]).unwrap();
        let mut out = device.upload(&vec![2.0f32; n]).unwrap();
        saxpy
            .launch(&stream, Saxpy::args(&mut out, &x, n as i32, 3.0))
            .unwrap();
        // A grid far larger than n: the guard keeps every thread inside.
        saxpy
            .launch_with(
                &stream,
                LaunchConfig::new([7, 1, 1], [192, 1, 1]),
                Saxpy::args(&mut out, &x, n as i32, 3.0),
            )
            .unwrap();
        assert!(stream.read(&out).unwrap().iter().all(|&v| v == 8.0));
    }
    let stencil = load::<Stencil5>(&device, PTX);
    for (w, h) in [(1usize, 1usize), (3, 3), (17, 1), (1, 9), (45, 33)] {
        let input = device.upload(&vec![1.0f32; w * h]).unwrap();
        let mut out = device.upload(&vec![0.0f32; w * h]).unwrap();
        let config = LaunchConfig::new(
            [(w as u32).div_ceil(8) + 1, (h as u32).div_ceil(4) + 1, 1],
            [8, 4, 2],
        );
        stencil
            .launch_with(
                &stream,
                config,
                Stencil5::args(&input, &mut out, w as i32, h as i32),
            )
            .unwrap();
        let got = stream.read(&out).unwrap();
        assert!(got.iter().all(|&v| (v - 1.0).abs() < 1e-6), "{w}x{h}");
    }
    // NVRTC's matmul: k below, at and past the unroll factor, and not a multiple of it, so
    // that either loop runs alone, both run, or neither does.
    let mm = load::<Matmul>(&device, PTX);
    for (m, n, k) in [
        (1u32, 1u32, 0u32),
        (3, 5, 1),
        (2, 7, 2),
        (5, 3, 3),
        (4, 4, 4),
        (3, 9, 5),
        (7, 4, 9),
        (2, 33, 12),
        (17, 6, 31),
    ] {
        let (m_, n_, k_) = (m as usize, n as usize, k as usize);
        let a: Vec<f32> = (0..m_ * k_).map(|i| (i % 5) as f32).collect();
        let b: Vec<f32> = (0..k_ * n_).map(|i| (i % 3) as f32 - 1.0).collect();
        let da = device.upload(&a).unwrap();
        let db = device.upload(&b).unwrap();
        let mut c = device.upload(&vec![f32::NAN; m_ * n_]).unwrap();
        let config = LaunchConfig::new([n.div_ceil(4) + 1, m.div_ceil(4) + 1, 1], [4, 4, 1]);
        mm.launch_with(&stream, config, Matmul::args(&da, &db, &mut c, m, n, k))
            .unwrap();
        let got = stream.read(&c).unwrap();
        for row in 0..m_ {
            for col in 0..n_ {
                let want: f32 = (0..k_).map(|i| a[row * k_ + i] * b[i * n_ + col]).sum();
                assert_eq!(got[row * n_ + col], want, "{m}x{n}x{k} ({row}, {col})");
            }
        }
    }
    let mm = load::<MmSimple>(&device, MM_SIMPLE);
    for (m, n, k) in [
        (1u32, 1u32, 1u32),
        (3, 5, 2),
        (7, 4, 9),
        (16, 16, 0),
        (2, 33, 5),
    ] {
        let (m_, n_, k_) = (m as usize, n as usize, k as usize);
        let a = device.upload(&vec![1.0f32; m_ * k_]).unwrap();
        let b = device.upload(&vec![2.0f32; k_ * n_]).unwrap();
        let mut c = device.upload(&vec![f32::NAN; m_ * n_]).unwrap();
        let config = LaunchConfig::new([n.div_ceil(4) + 1, m.div_ceil(4), 1], [4, 4, 1]);
        mm.launch_with(&stream, config, MmSimple::args(&a, &b, &mut c, m, n, k))
            .unwrap();
        let got = stream.read(&c).unwrap();
        assert!(got.iter().all(|&v| v == 2.0 * k as f32), "{m}x{n}x{k}");
    }
}
