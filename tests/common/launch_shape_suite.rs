//! Declared launch shapes, written once, generic over the device: a custom kernel written for a
//! fixed tile (cuda-samples' matrixMul with 16 × 16 tiles, from the real-kernel corpus) declares
//! `block = (16, 16, 1)`, and every launch with another block is declined with a typed error
//! naming both shapes before the device sees it — on every load path, `load_unverified`
//! included, through the typed face and the erased one; a tiled transpose
//! (tests/fixtures/shapes/tile.ptx) that `load()` proves only under its declared block is held
//! to it the same way. Outputs start as NaN (one element past
//! the extent too), so a launch that reached the device, or wrote past its extent, fails.
//! Instantiated with [`launch_shape_suite_tests!`] for the emulator in tests/launch_shape.rs,
//! for the CUDA driver model in tests/cuda_model.rs and for CUDA in tests/gpu_custom.rs
//! (feature `gpu-tests`).
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use jitseam::error::ConfigProblem;
use jitseam::{
    AbiSpec, Artifact, Device, DeviceBuffer, Error, In, Kernel, LaunchConfig, Out, ParamValue,
    Signature,
};

/// NVRTC's PTX for tests/fixtures/real/samples_basics.cu.
pub const PTX: &str = include_str!("../fixtures/real/samples_basics.ptx");

/// Bodies safe only in a fixed block, proven under it.
pub const TILE_PTX: &str = include_str!("../fixtures/shapes/tile.ptx");

/// A 16 × 16 tile read back transposed (`tile[threadIdx.x][threadIdx.y]`): in bounds only for
/// blocks within (16, 16, 1).
#[jitseam::kernel(abi = custom, block = (16, 16, 1))]
pub fn tile_transpose_2d(#[len(256 * grid.x)] out: Out<f32>, #[len(256 * grid.x)] x: In<f32>);

/// The tiled matrix product's signature text, without its block.
pub const SIGNATURE: &str = "c: out f32[w_b * (16 * grid.y - 1) + 16 * grid.x], \
     a: in f32[16 * div_ceil(w_a, 16) + w_a * (16 * grid.y - 1)], \
     b: in f32[16 * grid.x + w_b * (16 * div_ceil(w_a, 16) - 1)], w_a: i32, w_b: i32";

/// `MatrixMulCUDA<16>`: 16 × 16 shared tiles indexed `[threadIdx.y][threadIdx.x]`, no bounds
/// checks — safe only in blocks of exactly 16 × 16 threads.
#[jitseam::kernel(abi = custom, block = (16, 16, 1), symbol = "samples_matrix_mul_tiled")]
pub fn matrix_mul(
    #[len(w_b * (16 * grid.y - 1) + 16 * grid.x)] c: Out<f32>,
    #[len(16 * div_ceil(w_a, 16) + w_a * (16 * grid.y - 1))] a: In<f32>,
    #[len(16 * grid.x + w_b * (16 * div_ceil(w_a, 16) - 1))] b: In<f32>,
    w_a: i32,
    w_b: i32,
);

/// The grid of the test product: C is (16 · 3) × (16 · 2), A is 48 × 48, B is 48 × 32.
const GRID: [u32; 3] = [2, 3, 1];
const W_A: usize = 48;
const W_B: usize = 32;
const H_A: usize = 16 * 3;

/// The host product, `C[r][c] = Σ_k A[r][k] · B[k][c]`, summed in the kernel's order.
fn host_product(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut c = vec![0.0f32; H_A * W_B];
    for r in 0..H_A {
        for col in 0..W_B {
            let mut sum = 0.0f32;
            for k in 0..W_A {
                sum += a[r * W_A + k] * b[k * W_B + col];
            }
            c[r * W_B + col] = sum;
        }
    }
    c
}

/// Multiples of 1/4 small enough that every product and sum is exact in `f32`.
fn data(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + seed) % 9) as f32 * 0.25 - 1.0)
        .collect()
}

struct Operands {
    a: Vec<f32>,
    b: Vec<f32>,
    da: DeviceBuffer<f32>,
    db: DeviceBuffer<f32>,
    dc: DeviceBuffer<f32>,
}

/// A, B and a NaN-filled C one element longer than its extent.
fn operands(device: &Device) -> Operands {
    let (a, b) = (data(H_A * W_A, 3), data(W_A * W_B, 5));
    Operands {
        da: device.upload(&a).unwrap(),
        db: device.upload(&b).unwrap(),
        dc: device.upload(&vec![f32::NAN; H_A * W_B + 1]).unwrap(),
        a,
        b,
    }
}

/// The block `(32, 8, 1)` over the same 256 threads per block: declined, naming both shapes.
fn assert_wrong_block(err: &Error) {
    assert!(
        matches!(
            err,
            Error::LaunchConfig {
                problem: ConfigProblem::DeclaredBlock {
                    declared: [16, 16, 1],
                    block: [32, 8, 1],
                },
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("samples_matrix_mul_tiled")
            && text.contains("(32, 8, 1)")
            && text.contains("`block = (16, 16, 1)`"),
        "{text}"
    );
}

/// C after a launch: the product, and the element past the extent untouched.
fn assert_product(got: &[f32], ops: &Operands) {
    let want = host_product(&ops.a, &ops.b);
    assert_eq!(&got[..want.len()], &want[..]);
    assert!(got[want.len()].is_nan(), "written past C's extent");
}

fn wrong() -> LaunchConfig {
    LaunchConfig::new(GRID, [32, 8, 1])
}

fn right() -> LaunchConfig {
    LaunchConfig::new(GRID, [16, 16, 1])
}

/// `load_unverified` keeps the declared block: the wrong block is declined before the device
/// sees it (on the driver model it would fault and poison the context), nothing is written,
/// and the next allocation and the right launch work.
pub fn unverified_tiled_kernel_keeps_its_block(device: &Device) {
    let described = Kernel::<MatrixMul, _>::describe_typed(MatrixMul::ptx_artifact(PTX)).unwrap();
    // SAFETY: the body touches C, A and B only inside their declared extents for a block of
    // exactly (16, 16, 1) (the corpus proves it), which every launch checks.
    let kernel = unsafe { described.load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap();
    assert!(!kernel.loaded().body_verified());
    let mut ops = operands(device);
    let stream = device.default_stream();
    let err = kernel
        .launch_with(
            &stream,
            wrong(),
            MatrixMul::args(&mut ops.dc, &ops.da, &ops.db, W_A as i32, W_B as i32),
        )
        .unwrap_err();
    assert_wrong_block(&err);
    assert!(err.is_decline(), "{err}");
    assert!(stream.read(&ops.dc).unwrap().iter().all(|v| v.is_nan()));
    // The context is healthy: an allocation and the declared launch both work.
    let _more = device.upload(&[0.0f32; 64]).unwrap();
    kernel
        .launch_with(
            &stream,
            right(),
            MatrixMul::args(&mut ops.dc, &ops.da, &ops.db, W_A as i32, W_B as i32),
        )
        .unwrap();
    assert_product(&stream.read(&ops.dc).unwrap(), &ops);
}

/// Through `load()`, which proves the tiled transpose only because of its declared block, the
/// same check holds for every other block.
pub fn verified_tiled_kernel_keeps_its_block(device: &Device) {
    let kernel =
        Kernel::<TileTranspose2d, _>::describe_typed(TileTranspose2d::ptx_artifact(TILE_PTX))
            .unwrap()
            .load()
            .unwrap()
            .bind(device)
            .unwrap();
    assert!(kernel.loaded().body_verified());
    let blocks = 3usize;
    let x = data(256 * blocks, 1);
    let dx = device.upload(&x).unwrap();
    let mut out = device.upload(&vec![f32::NAN; 256 * blocks + 1]).unwrap();
    let stream = device.default_stream();
    // A smaller block is as safe for the body, but not the block the kernel declares.
    for block in [[32, 8, 1], [16, 16, 2], [16, 8, 1]] {
        let err = kernel
            .launch_with(
                &stream,
                LaunchConfig::new([blocks as u32, 1, 1], block),
                TileTranspose2d::args(&mut out, &dx),
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::LaunchConfig {
                    problem: ConfigProblem::DeclaredBlock {
                        declared: [16, 16, 1],
                        block: b,
                    },
                    ..
                } if b == block
            ),
            "{err}"
        );
    }
    assert!(stream.read(&out).unwrap().iter().all(|v| v.is_nan()));
    kernel
        .launch_with(
            &stream,
            LaunchConfig::new([blocks as u32, 1, 1], [16, 16, 1]),
            TileTranspose2d::args(&mut out, &dx),
        )
        .unwrap();
    let got = stream.read(&out).unwrap();
    for b in 0..blocks {
        for r in 0..16 {
            for c in 0..16 {
                let i = b * 256 + r * 16 + c;
                assert_eq!(got[i], 2.0 * x[b * 256 + c * 16 + r], "element {i}");
            }
        }
    }
    assert!(got[256 * blocks].is_nan(), "written past out's extent");
}

/// The erased face with the signature text the CLI takes (`; block = (16, 16, 1)`), loaded
/// unverified: the same spec as the macro's, the same decline.
pub fn erased_signature_keeps_its_block(device: &Device) {
    let spec = AbiSpec::parse_custom(&format!("{SIGNATURE}; block = (16, 16, 1)"), None).unwrap();
    assert_eq!(spec, MatrixMul::SPEC, "the macro and the text form agree");
    let artifact = Artifact::ptx(PTX, "samples_matrix_mul_tiled", spec);
    // SAFETY: as in `unverified_tiled_kernel_keeps_its_block`.
    let kernel = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap();
    let mut ops = operands(device);
    let stream = device.default_stream();
    let params = [ParamValue::I32(W_A as i32), ParamValue::I32(W_B as i32)];
    let launch = |ops: &mut Operands, config| {
        kernel.launch_custom(
            &stream,
            Some(config),
            &[(&ops.da).into(), (&ops.db).into()],
            &mut [(&mut ops.dc).into()],
            &params,
        )
    };
    assert_wrong_block(&launch(&mut ops, wrong()).unwrap_err());
    assert!(stream.read(&ops.dc).unwrap().iter().all(|v| v.is_nan()));
    launch(&mut ops, right()).unwrap();
    assert_product(&stream.read(&ops.dc).unwrap(), &ops);
}

#[macro_export]
macro_rules! launch_shape_suite_tests {
    ($open:path) => {
        $crate::launch_shape_suite_tests!($open, via $crate::launch_shape_suite::run_here);
    };
    ($open:path, via $run:path) => {
        $crate::launch_shape_suite_tests!(@each $open, $run;
            unverified_tiled_kernel_keeps_its_block, verified_tiled_kernel_keeps_its_block,
            erased_signature_keeps_its_block,
        );
    };
    (@each $open:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || launch_shape_suite::$name(&$open()));
        }
    )*};
}

/// Runs a suite test in this process (the default for [`launch_shape_suite_tests!`]).
pub fn run_here(_test: &str, body: impl FnOnce()) {
    body();
}
