//! Custom-ABI launch tests for kernels that use shared memory, barriers and warp shuffles,
//! written once, generic over the device: each `pub fn` takes a `&Device`, binds NVRTC kernels
//! from tests/fixtures/custom_shared/ with exactly the declaration syntax of
//! `#[jitseam::kernel(abi = custom)]`, launches them with explicit configs (dynamic shared
//! memory where the kernel takes it) and checks every output element against a host reference.
//! Outputs start as NaN and are one element longer than the extent asks, so an element never
//! written, or written past the extent, fails. The inputs are multiples of 1/4 small enough that
//! every sum and product here is exact in `f32` in any order, so results compare exactly.
//! Instantiated with [`custom_shared_suite_tests!`] for the emulator in tests/custom_shared.rs,
//! for the CUDA driver model in tests/cuda_model.rs and for CUDA in tests/gpu_custom.rs
//! (feature `gpu-tests`).
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use jitseam::error::{ConfigProblem, Operand};
use jitseam::{Device, DeviceBound, DeviceBuffer, Error, In, Kernel, LaunchConfig, Out, Signature};

/// NVRTC's PTX for tests/fixtures/custom_shared/custom_shared.cu.
pub const PTX: &str = include_str!("../fixtures/custom_shared/custom_shared.ptx");

#[jitseam::kernel(abi = custom)]
pub fn block_sum(#[len(n)] x: In<f32>, #[len(grid.x)] partial: Out<f32>, n: u32);

#[jitseam::kernel(abi = custom)]
pub fn matmul_tiled(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

#[jitseam::kernel(abi = custom)]
pub fn warp_sum(
    #[len(n)] x: In<f32>,
    #[len(div_ceil(grid.x * block.x, 32))] partial: Out<f32>,
    n: u32,
);

#[jitseam::kernel(abi = custom, symbol = "transposeNoBankConflicts")]
pub fn transpose(
    #[len(width * height)] odata: Out<f32>,
    #[len(width * height)] idata: In<f32>,
    width: i32,
    height: i32,
);

#[jitseam::kernel(abi = custom)]
pub fn reduce3(#[len(n)] g_idata: In<f32>, #[len(grid.x)] g_odata: Out<f32>, n: u32);

/// The entries `load()` proves: [`bind`] loads them verified.
pub const PROVEN: [&str; 1] = ["block_sum"];

/// Binds `K` from [`PTX`] on `device`: verified for the entries in [`PROVEN`], else through
/// `load_unverified`.
pub fn bind<K: Signature>(device: &Device) -> Kernel<K, DeviceBound> {
    let described = Kernel::<K, _>::describe_typed(K::ptx_artifact(PTX)).unwrap();
    if PROVEN.contains(&described.entry()) {
        // block_sum: the proof needs `dynamic shared bytes >= 4 * block.x` (and
        // `grid.a * block.a <= 2^32 - 1`), checked at every launch.
        return described.load().unwrap().bind(device).unwrap();
    }
    // SAFETY: the test promises what `load_unverified` asks for these bodies
    // (custom_shared.cu), for the launches this suite makes:
    // - reduce3 reads `x` only at `i < n` and `i + blockDim.x < n` and writes
    //   `partial[blockIdx.x]`, below `grid.x`; its dynamic shared array is indexed below
    //   `blockDim.x`, and every launch gives `4 * blockDim.x` dynamic bytes with a power-of-two
    //   `blockDim.x`. Its shared accesses are proven, but `load()` declines its global read
    //   `g_idata[i + blockDim.x]` (`i = blockIdx.x * 2 * blockDim.x + tid`): the verifier does
    //   not bound that sum under the guard `i + blockDim.x < n` (may_wrap at line 497);
    // - matmul_tiled reads `a[row*k+ak]` with `row < m`, `ak < k`, `b[bk*n+col]` with `bk < k`,
    //   `col < n`, writes `c[row*n+col]` likewise, and indexes its static 16 x 16 tiles by
    //   `threadIdx` below 16 — every launch uses 16 x 16 blocks. `load()` declines it for its
    //   strength-reduced global index `row*k + t*16 + tx` (may_wrap at line 156), not for its
    //   tiles, which need `block <= (16, 16)`;
    // - warp_sum reads `x` at `i < n` and writes `partial[i / 32]` with `i` below
    //   `grid.x * block.x`, and uses no shared memory; `load()` declines `shfl.sync`, which it
    //   does not model;
    // - transposeNoBankConflicts reads `idata[(y+j)*width+x]` with `x < width`,
    //   `y + j < height`, writes `odata[(y+j)*height+x]` with `x < height`, `y + j < width`, and
    //   indexes its 32 x 33 tile below 32 on both axes — every launch uses 32 x 8 blocks.
    //   `load()` declines its `int` global index `(y+j)*width + x` (may_wrap at line 360);
    // - each stores only through its `Out` pointer, and the sizes here keep every 32-bit index
    //   far below 2^31, so no `int` or `unsigned` arithmetic wraps.
    unsafe { described.load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap()
}

fn nan(device: &Device, len: usize) -> DeviceBuffer<f32> {
    device.upload(&vec![f32::NAN; len]).unwrap()
}

/// Multiples of 1/4 in [-seed, 5.5 - seed]: sums of a few thousand are exact in `f32`.
fn data(len: usize, seed: f32) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + 3) % 23) as f32 * 0.25 - seed)
        .collect()
}

/// `got` is `want` followed by one untouched (NaN) element.
fn assert_exact_then_untouched(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len() + 1, "{what}: buffer length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}: element {i} is {g}, want {w}"
        );
    }
    assert!(
        got[want.len()].is_nan(),
        "{what}: the element past the extent was written"
    );
}

/// Sums of consecutive `chunk`-element runs of `x` (the last run may be short).
fn chunk_sums(x: &[f32], chunk: usize) -> Vec<f32> {
    x.chunks(chunk).map(|c| c.iter().sum()).collect()
}

pub fn block_sum_with_dynamic_shared_memory(device: &Device) {
    let kernel = bind::<BlockSum>(device);
    let stream = device.default_stream();
    for (n, block) in [
        (1usize, 32u32),
        (255, 256),
        (256, 256),
        (1000, 128),
        (4097, 256),
        (3000, 1024),
    ] {
        let x = data(n, 1.25);
        let dx = device.upload(&x).unwrap();
        let grid = (n as u32).div_ceil(block);
        let mut partial = nan(device, grid as usize + 1);
        let config = LaunchConfig::linear(grid, block).dynamic_shared_bytes(block * 4);
        kernel
            .launch_with(&stream, config, BlockSum::args(&dx, &mut partial, n as u32))
            .unwrap();
        let got = stream.read(&partial).unwrap();
        let want = chunk_sums(&x, block as usize);
        assert_exact_then_untouched(&got, &want, &format!("block_sum n={n} block={block}"));
    }
}

pub fn matmul_tiled_with_static_shared_memory(device: &Device) {
    let kernel = bind::<MatmulTiled>(device);
    let stream = device.default_stream();
    for (m, n, k) in [
        (16usize, 16usize, 16usize),
        (37, 29, 13),
        (1, 50, 70),
        (33, 17, 48),
    ] {
        let (a, b) = (data(m * k, 1.5), data(k * n, 0.75));
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let mut c = nan(device, m * n + 1);
        let config = LaunchConfig::new(
            [(n as u32).div_ceil(16), (m as u32).div_ceil(16), 1],
            [16, 16, 1],
        );
        kernel
            .launch_with(
                &stream,
                config,
                MatmulTiled::args(&da, &db, &mut c, m as u32, n as u32, k as u32),
            )
            .unwrap();
        let mut want = vec![0.0f32; m * n];
        for row in 0..m {
            for col in 0..n {
                want[row * n + col] = (0..k).map(|i| a[row * k + i] * b[i * n + col]).sum();
            }
        }
        let got = stream.read(&c).unwrap();
        assert_exact_then_untouched(&got, &want, &format!("matmul_tiled {m}x{n}x{k}"));
    }
}

pub fn warp_sum_with_shuffles(device: &Device) {
    let kernel = bind::<WarpSum>(device);
    let stream = device.default_stream();
    for (n, block) in [(32usize, 32u32), (100, 64), (1000, 128), (4100, 256)] {
        let x = data(n, 2.5);
        let dx = device.upload(&x).unwrap();
        let grid = (n as u32).div_ceil(block);
        let warps = (grid * block / 32) as usize;
        let mut partial = nan(device, warps + 1);
        kernel
            .launch_with(
                &stream,
                LaunchConfig::linear(grid, block),
                WarpSum::args(&dx, &mut partial, n as u32),
            )
            .unwrap();
        let mut want = chunk_sums(&x, 32);
        // Whole warps past `n` sum zeros.
        want.resize(warps, 0.0);
        let got = stream.read(&partial).unwrap();
        assert_exact_then_untouched(&got, &want, &format!("warp_sum n={n} block={block}"));
    }
}

pub fn transpose_no_bank_conflicts(device: &Device) {
    let kernel = bind::<Transpose>(device);
    let stream = device.default_stream();
    for (w, h) in [(32usize, 32usize), (45, 33), (1, 70), (100, 7), (64, 96)] {
        let input = data(w * h, 3.0);
        let din = device.upload(&input).unwrap();
        let mut out = nan(device, w * h + 1);
        let config = LaunchConfig::new(
            [(w as u32).div_ceil(32), (h as u32).div_ceil(32), 1],
            [32, 8, 1],
        );
        kernel
            .launch_with(
                &stream,
                config,
                Transpose::args(&mut out, &din, w as i32, h as i32),
            )
            .unwrap();
        // out is w rows of h: out[x][y] = in[y][x].
        let mut want = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                want[x * h + y] = input[y * w + x];
            }
        }
        let got = stream.read(&out).unwrap();
        assert_exact_then_untouched(&got, &want, &format!("transpose {w}x{h}"));
    }
}

pub fn reduce3_first_add_during_load(device: &Device) {
    let kernel = bind::<Reduce3>(device);
    let stream = device.default_stream();
    for (n, block) in [(1usize, 32u32), (512, 256), (1000, 128), (5000, 512)] {
        let x = data(n, 0.5);
        let dx = device.upload(&x).unwrap();
        let grid = (n as u32).div_ceil(2 * block);
        let mut partial = nan(device, grid as usize + 1);
        let config = LaunchConfig::linear(grid, block).dynamic_shared_bytes(block * 4);
        kernel
            .launch_with(&stream, config, Reduce3::args(&dx, &mut partial, n as u32))
            .unwrap();
        let want = chunk_sums(&x, 2 * block as usize);
        let got = stream.read(&partial).unwrap();
        assert_exact_then_untouched(&got, &want, &format!("reduce3 n={n} block={block}"));
    }
}

/// `partial` one element shorter than `grid.x`: declined before the device sees anything,
/// naming the operand, the extent and both numbers; the buffer stays untouched.
pub fn partial_short_by_one_is_declined(device: &Device) {
    let kernel = bind::<BlockSum>(device);
    let stream = device.default_stream();
    let (n, block) = (1000usize, 128u32);
    let grid = (n as u32).div_ceil(block);
    let dx = device.upload(&data(n, 1.0)).unwrap();
    let mut partial = nan(device, grid as usize - 1);
    let config = LaunchConfig::linear(grid, block).dynamic_shared_bytes(block * 4);
    let err = kernel
        .launch_with(&stream, config, BlockSum::args(&dx, &mut partial, n as u32))
        .unwrap_err();
    match &err {
        Error::ExtentShort(short) => {
            assert_eq!(short.operand, Operand::Output(0));
            assert_eq!(short.extent, "grid.x");
            assert_eq!(short.needed, u64::from(grid));
            assert_eq!(short.found, grid as usize - 1);
        }
        other => panic!("expected a short extent, got {other}"),
    }
    assert!(err.is_decline());
    assert_eq!(err.kind_name(), "extent_short");
    assert!(stream.read(&partial).unwrap().iter().all(|v| v.is_nan()));
    // `x` one short of `n` likewise.
    let dx = device.upload(&data(n - 1, 1.0)).unwrap();
    let mut partial = nan(device, grid as usize);
    let err = kernel
        .launch_with(&stream, config, BlockSum::args(&dx, &mut partial, n as u32))
        .unwrap_err();
    assert!(
        matches!(&err, Error::ExtentShort(s) if s.operand == Operand::Input(0) && s.extent == "n"),
        "{err}"
    );
    // The warp reduction's computed extent: one short of `ceil(grid.x * block.x / 32)`.
    let kernel = bind::<WarpSum>(device);
    let dx = device.upload(&data(n, 1.0)).unwrap();
    let mut partial = nan(device, (grid * block / 32) as usize - 1);
    let err = kernel
        .launch_with(
            &stream,
            LaunchConfig::linear(grid, block),
            WarpSum::args(&dx, &mut partial, n as u32),
        )
        .unwrap_err();
    match &err {
        Error::ExtentShort(short) => {
            assert_eq!(short.extent, "div_ceil(grid.x * block.x, 32)");
            assert_eq!(short.needed, u64::from(grid * block / 32));
        }
        other => panic!("expected a short extent, got {other}"),
    }
    assert!(stream.read(&partial).unwrap().iter().all(|v| v.is_nan()));
}

/// Dynamic shared memory over what the device allows a block: declined at the config check.
pub fn dynamic_shared_over_the_device_limit_is_declined(device: &Device) {
    let kernel = bind::<BlockSum>(device);
    let stream = device.default_stream();
    let limit = device.properties().limits.max_shared_bytes_per_block;
    let dx = device.upload(&data(256, 1.0)).unwrap();
    let mut partial = nan(device, 1);
    let err = kernel
        .launch_with(
            &stream,
            LaunchConfig::linear(1, 256).dynamic_shared_bytes(limit + 1),
            BlockSum::args(&dx, &mut partial, 256),
        )
        .unwrap_err();
    match &err {
        Error::LaunchConfig {
            problem:
                ConfigProblem::OverLimit {
                    what,
                    value,
                    limit: found_limit,
                    by,
                },
            ..
        } => {
            assert_eq!(*what, "dynamic shared memory bytes");
            assert_eq!(*value, u64::from(limit) + 1);
            assert_eq!(*found_limit, u64::from(limit));
            assert_eq!(*by, "the device");
        }
        other => panic!("expected a config decline, got {other}"),
    }
    assert_eq!(err.kind_name(), "launch_config");
    assert!(stream.read(&partial).unwrap()[0].is_nan());
    // Exactly the limit is a launch the device takes (the kernel uses only the first kilobyte).
    let x = data(256, 1.0);
    let dx = device.upload(&x).unwrap();
    kernel
        .launch_with(
            &stream,
            LaunchConfig::linear(1, 256).dynamic_shared_bytes(limit),
            BlockSum::args(&dx, &mut partial, 256),
        )
        .unwrap();
    assert_eq!(stream.read(&partial).unwrap(), chunk_sums(&x, 256));
}

/// The device's per-block shared memory holds the kernel's static shared memory too: the
/// transpose's 32 × 33 tile (4,224 bytes) leaves that much less for dynamic shared memory, as on
/// a GPU, where the launch would fail.
pub fn static_shared_memory_counts_against_the_limit(device: &Device) {
    let kernel = bind::<Transpose>(device);
    assert_eq!(kernel.bound().limits().static_shared_bytes, 32 * 33 * 4);
    let stream = device.default_stream();
    let left = device.properties().limits.max_shared_bytes_per_block - 32 * 33 * 4;
    let (w, h) = (40usize, 20usize);
    let input = data(w * h, 3.0);
    let din = device.upload(&input).unwrap();
    let mut out = nan(device, w * h);
    let config = |dynamic| LaunchConfig::new([2, 1, 1], [32, 8, 1]).dynamic_shared_bytes(dynamic);
    let err = kernel
        .launch_with(
            &stream,
            config(left + 1),
            Transpose::args(&mut out, &din, w as i32, h as i32),
        )
        .unwrap_err();
    match &err {
        Error::LaunchConfig {
            problem: ConfigProblem::OverLimit {
                what, limit, by, ..
            },
            ..
        } => {
            assert_eq!(*what, "dynamic shared memory bytes");
            assert_eq!(*limit, u64::from(left));
            assert_eq!(*by, "the device, less the kernel's static shared memory");
        }
        other => panic!("expected a config decline, got {other}"),
    }
    assert!(stream.read(&out).unwrap().iter().all(|v| v.is_nan()));
    kernel
        .launch_with(
            &stream,
            config(left),
            Transpose::args(&mut out, &din, w as i32, h as i32),
        )
        .unwrap();
    assert!(stream.read(&out).unwrap().iter().all(|v| !v.is_nan()));
}

#[macro_export]
macro_rules! custom_shared_suite_tests {
    ($open:path) => {
        $crate::custom_shared_suite_tests!($open, via $crate::custom_shared_suite::run_here);
    };
    ($open:path, via $run:path) => {
        $crate::custom_shared_suite_tests!(@each $open, $run;
            block_sum_with_dynamic_shared_memory, matmul_tiled_with_static_shared_memory,
            warp_sum_with_shuffles, transpose_no_bank_conflicts, reduce3_first_add_during_load,
            partial_short_by_one_is_declined, dynamic_shared_over_the_device_limit_is_declined,
            static_shared_memory_counts_against_the_limit,
        );
    };
    (@each $open:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || custom_shared_suite::$name(&$open()));
        }
    )*};
}

/// Runs a suite test in this process (the default for [`custom_shared_suite_tests!`]).
pub fn run_here(_test: &str, body: impl FnOnce()) {
    body();
}
