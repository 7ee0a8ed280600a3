//! Custom-ABI launch tests written once, generic over the device: each `pub fn` takes a
//! `&Device`, binds NVRTC kernels from tests/fixtures/custom/ in their own parameter order with
//! exactly the declaration syntax of `#[jitseam::kernel(abi = custom)]`, launches them and
//! checks every output element against a host reference (outputs start as NaN, so an element
//! never written fails). Instantiated with [`custom_suite_tests!`] for the emulator in
//! tests/custom_abi.rs and for CUDA in tests/gpu_custom.rs (feature `gpu-tests`).
//!
//! Kernels with shared memory, barriers and warp shuffles have their own suite:
//! tests/common/custom_shared_suite.rs.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use jitseam::error::{ConfigProblem, Operand};
use jitseam::{Device, DeviceBound, DeviceBuffer, Error, In, Kernel, LaunchConfig, Out, Signature};

/// NVRTC's PTX for tests/fixtures/custom/custom.cu.
pub const PTX: &str = include_str!("../fixtures/custom/custom.ptx");

#[jitseam::kernel(abi = custom, covers = n, symbol = "saxpy_out_first")]
pub fn saxpy(#[len(n)] out: Out<f32>, #[len(n)] x: In<f32>, n: i32, a: f32);

#[jitseam::kernel(abi = custom, covers = num_elements, symbol = "vectorAdd")]
pub fn vector_add(
    #[len(num_elements)] a: In<f32>,
    #[len(num_elements)] b: In<f32>,
    #[len(num_elements)] c: Out<f32>,
    num_elements: i32,
);

#[jitseam::kernel(abi = custom)]
pub fn matmul(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

#[jitseam::kernel(abi = custom)]
pub fn stencil5(
    #[len(width * height)] input: In<f32>,
    #[len(width * height)] out: Out<f32>,
    width: i32,
    height: i32,
);

/// `matmul`'s entry, declared with an extent that overflows 64 bits for large enough params.
#[jitseam::kernel(abi = custom, symbol = "matmul")]
pub fn matmul_overflowing(
    #[len(m * k * 65536 * 65536)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

#[jitseam::kernel(abi = custom, symbol = "vectorAdd128")]
pub fn vector_add_128(
    #[len(num_elements)] a: In<f32>,
    #[len(num_elements)] b: In<f32>,
    #[len(num_elements)] c: Out<f32>,
    num_elements: i32,
);

/// Binds `K` from [`PTX`] on `device` through `load()`: its body is proven against the declared
/// extents (saxpy, vectorAdd, vectorAdd128, stencil5, matmul with its unrolled k loop).
pub fn bind_verified<K: Signature>(device: &Device) -> Kernel<K, DeviceBound> {
    bind_from::<K>(device, PTX)
}

/// Binds `K` from `ptx` on `device` through `load()`, which proves its body.
pub fn bind_from<K: Signature>(device: &Device, ptx: &str) -> Kernel<K, DeviceBound> {
    Kernel::<K, _>::describe_typed(K::ptx_artifact(ptx))
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

fn nan(device: &Device, len: usize) -> DeviceBuffer<f32> {
    device.upload(&vec![f32::NAN; len]).unwrap()
}

fn data(len: usize, seed: f32) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 7 + 3) % 23) as f32 * 0.25 - seed)
        .collect()
}

pub fn saxpy_out_first(device: &Device) {
    let kernel = bind_verified::<Saxpy>(device);
    let n = 1003;
    let (x, y) = (data(n, 1.0), data(n, -2.0));
    let xs = device.upload(&x).unwrap();
    let mut out = device.upload(&y).unwrap();
    let stream = device.default_stream();
    kernel
        .launch(&stream, Saxpy::args(&mut out, &xs, n as i32, 2.0))
        .unwrap();
    let got = stream.read(&out).unwrap();
    for i in 0..n {
        assert_eq!(got[i], 2.0 * x[i] + y[i], "element {i}");
    }
}

pub fn vector_add_nvcc(device: &Device) {
    let kernel = bind_verified::<VectorAdd>(device);
    let n = 50_000;
    let (a, b) = (data(n, 0.5), data(n, 3.0));
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c = nan(device, n);
    let stream = device.default_stream();
    kernel
        .launch(&stream, VectorAdd::args(&da, &db, &mut c, n as i32))
        .unwrap();
    let got = stream.read(&c).unwrap();
    assert!((0..n).all(|i| got[i] == a[i] + b[i]));
    // The same kernel with the CUDA sample's own configuration: 256 threads, ceil(n/256) blocks.
    let mut c = nan(device, n);
    let config = LaunchConfig::linear(n.div_ceil(256) as u32, 256);
    kernel
        .launch_with(&stream, config, VectorAdd::args(&da, &db, &mut c, n as i32))
        .unwrap();
    let got = stream.read(&c).unwrap();
    assert!((0..n).all(|i| got[i] == a[i] + b[i]));
}

fn host_matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for row in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for i in 0..k {
                acc += a[row * k + i] * b[i * n + col];
            }
            c[row * n + col] = acc;
        }
    }
    c
}

fn matmul_config(m: u32, n: u32) -> LaunchConfig {
    LaunchConfig::new([n.div_ceil(16), m.div_ceil(8), 1], [16, 8, 1])
}

pub fn matmul_2d_grid(device: &Device) {
    let kernel = bind_verified::<Matmul>(device);
    let (m, n, k) = (37usize, 29usize, 13usize);
    let (a, b) = (data(m * k, 1.5), data(k * n, 0.75));
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c = nan(device, m * n);
    let stream = device.default_stream();
    let config = matmul_config(m as u32, n as u32);
    kernel
        .launch_with(
            &stream,
            config,
            Matmul::args(&da, &db, &mut c, m as u32, n as u32, k as u32),
        )
        .unwrap();
    let got = stream.read(&c).unwrap();
    let want = host_matmul(&a, &b, m, n, k);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "c[{i}] = {g}, want {w}"
        );
    }
}

pub fn stencil_2d_grid(device: &Device) {
    let kernel = bind_verified::<Stencil5>(device);
    let (w, h) = (45usize, 33usize);
    let input = data(w * h, 2.0);
    let din = device.upload(&input).unwrap();
    let mut out = nan(device, w * h);
    let stream = device.default_stream();
    let config = LaunchConfig::new(
        [(w as u32).div_ceil(16), (h as u32).div_ceil(8), 1],
        [16, 8, 1],
    );
    kernel
        .launch_with(
            &stream,
            config,
            Stencil5::args(&din, &mut out, w as i32, h as i32),
        )
        .unwrap();
    let got = stream.read(&out).unwrap();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let want = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                input[i]
            } else {
                0.2 * (input[i] + input[i - 1] + input[i + 1] + input[i - w] + input[i + w])
            };
            assert!(
                (got[i] - want).abs() <= 1e-5,
                "({x}, {y}): {} vs {want}",
                got[i]
            );
        }
    }
}

/// Each operand of the matmul one element short: declined before the device sees anything,
/// naming the operand, its extent and both numbers; the output stays untouched.
pub fn short_operands_are_declined(device: &Device) {
    let kernel = bind_verified::<Matmul>(device);
    let (m, n, k) = (8usize, 6usize, 5usize);
    let config = matmul_config(m as u32, n as u32);
    let stream = device.default_stream();
    let cases: [(usize, Operand, &str, usize); 3] = [
        (0, Operand::Input(0), "m * k", m * k),
        (1, Operand::Input(1), "k * n", k * n),
        (2, Operand::Output(0), "m * n", m * n),
    ];
    for (short, operand, extent, needed) in cases {
        let len = |i: usize, full: usize| if i == short { full - 1 } else { full };
        let da = device.upload(&data(len(0, m * k), 1.0)).unwrap();
        let db = device.upload(&data(len(1, k * n), 1.0)).unwrap();
        let mut c = nan(device, len(2, m * n));
        let err = kernel
            .launch_with(
                &stream,
                config,
                Matmul::args(&da, &db, &mut c, m as u32, n as u32, k as u32),
            )
            .unwrap_err();
        match &err {
            Error::ExtentShort(short) => {
                assert_eq!(short.operand, operand);
                assert_eq!(short.extent, extent);
                assert_eq!(short.needed, needed as u64);
                assert_eq!(short.found, needed - 1);
            }
            other => panic!("expected a short extent, got {other}"),
        }
        assert!(err.is_decline());
        assert_eq!(err.kind_name(), "extent_short");
        let message = err.to_string();
        assert!(
            message.contains(extent) && message.contains(&needed.to_string()),
            "{message}"
        );
        assert!(stream.read(&c).unwrap().iter().all(|v| v.is_nan()));
    }
}

pub fn overflowing_extent_is_declined(device: &Device) {
    let kernel = bind_verified::<MatmulOverflowing>(device);
    let da = device.upload(&[0.0f32; 4]).unwrap();
    let db = device.upload(&[0.0f32; 4]).unwrap();
    let mut c = nan(device, 4);
    let stream = device.default_stream();
    let err = kernel
        .launch_with(
            &stream,
            LaunchConfig::linear(1, 32),
            MatmulOverflowing::args(&da, &db, &mut c, 65536, 0, 65536),
        )
        .unwrap_err();
    match &err {
        Error::ExtentInvalid(invalid) => {
            assert_eq!(invalid.extent, "m * k * 65536 * 65536");
            assert_eq!(invalid.problem, jitseam::abi::ExtentProblem::Overflow);
        }
        other => panic!("expected an invalid extent, got {other}"),
    }
    assert_eq!(err.kind_name(), "extent_invalid");
    // A negative `int` param is no element count either.
    let kernel = bind_verified::<VectorAdd>(device);
    let err = kernel
        .launch(&stream, VectorAdd::args(&da, &db, &mut c, -1))
        .unwrap_err();
    assert!(
        matches!(&err, Error::ExtentInvalid(e) if e.reason.contains("`num_elements` is negative")),
        "{err}"
    );
}

pub fn configs_over_device_limits_are_declined(device: &Device) {
    let kernel = bind_verified::<Matmul>(device);
    let da = device.upload(&[0.0f32; 64]).unwrap();
    let db = device.upload(&[0.0f32; 64]).unwrap();
    let mut c = nan(device, 64);
    let stream = device.default_stream();
    let limits = device.properties().limits;
    let over_threads = LaunchConfig::new([1, 1, 1], [32, limits.max_threads_per_block / 32 + 1, 1]);
    let over_z = LaunchConfig::new([1, 1, 1], [1, 1, limits.max_block[2] + 1]);
    let over_grid = LaunchConfig::new([1, limits.max_grid[1] + 1, 1], [1, 1, 1]);
    let over_smem =
        LaunchConfig::linear(1, 32).dynamic_shared_bytes(limits.max_shared_bytes_per_block + 1);
    let empty = LaunchConfig::new([1, 0, 1], [32, 1, 1]);
    for (config, what) in [
        (over_threads, "threads per block"),
        (over_z, "block.z"),
        (over_grid, "grid.y"),
        (over_smem, "dynamic shared memory bytes"),
        (empty, ""),
    ] {
        let err = kernel
            .launch_with(&stream, config, Matmul::args(&da, &db, &mut c, 8, 8, 8))
            .unwrap_err();
        match &err {
            Error::LaunchConfig {
                problem:
                    ConfigProblem::OverLimit {
                        what: found, by, ..
                    },
                ..
            } => {
                assert_eq!(*found, what);
                assert_eq!(*by, "the device");
            }
            Error::LaunchConfig {
                problem:
                    ConfigProblem::Empty {
                        what: "grid",
                        axis: 1,
                    },
                ..
            } => assert!(what.is_empty()),
            other => panic!("{config:?}: expected a config decline, got {other}"),
        }
        assert_eq!(err.kind_name(), "launch_config");
    }
    // Without a config and without `covers`, there is no grid to choose: the typed `launch`
    // does not compile (ui-tests/ui/custom/launch_without_covers.rs); the erased face, whose
    // spec is only known at run time, declines it.
    let artifact = jitseam::Artifact::ptx(PTX, Matmul::SYMBOL, Matmul::SPEC);
    // SAFETY: matmul indexes `a`, `b` and `c` only below `m * k`, `k * n` and `m * n` (`load()`
    // proves it for `bind_from`); the launch is declined before the device sees anything.
    let erased = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap();
    let dims = jitseam::ParamValue::U32(8);
    let err = erased
        .launch_custom(
            &stream,
            None,
            &[(&da).into(), (&db).into()],
            &mut [(&mut c).into()],
            &[dims, dims, dims],
        )
        .unwrap_err();
    assert!(matches!(
        err,
        Error::LaunchConfig {
            problem: ConfigProblem::NeedsConfig,
            ..
        }
    ));
    assert!(stream.read(&c).unwrap().iter().all(|v| v.is_nan()));
}

/// `.maxntid` (from `__launch_bounds__(128)`) and `.reqntid` (added to vectorAdd's text) bound
/// the block of every launch.
pub fn kernel_block_directives_are_enforced(device: &Device) {
    let n = 1000;
    let (a, b) = (data(n, 0.5), data(n, 3.0));
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c = nan(device, n);
    let stream = device.default_stream();
    let bounded = bind_verified::<VectorAdd128>(device);
    let err = bounded
        .launch_with(
            &stream,
            LaunchConfig::linear(4, 256),
            VectorAdd128::args(&da, &db, &mut c, n as i32),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::LaunchConfig {
                problem: ConfigProblem::OverLimit {
                    value: 256,
                    limit: 128,
                    by: "the kernel's `.maxntid`",
                    ..
                },
                ..
            }
        ),
        "{err}"
    );
    bounded
        .launch_with(
            &stream,
            LaunchConfig::linear(8, 128),
            VectorAdd128::args(&da, &db, &mut c, n as i32),
        )
        .unwrap();
    assert!(
        stream
            .read(&c)
            .unwrap()
            .iter()
            .zip(a.iter().zip(&b))
            .all(|(c, (a, b))| *c == a + b)
    );

    let required = PTX.replacen(
        ".param .u32 vectorAdd_param_3\n)\n",
        ".param .u32 vectorAdd_param_3\n)\n.reqntid 256, 1, 1\n",
        1,
    );
    assert_ne!(
        required, PTX,
        "the fixture's text changed: update the .reqntid splice"
    );
    let kernel = bind_from::<VectorAdd>(device, &required);
    let mut c = nan(device, n);
    for block in [128, 512] {
        let err = kernel
            .launch_with(
                &stream,
                LaunchConfig::linear(n.div_ceil(block) as u32, block as u32),
                VectorAdd::args(&da, &db, &mut c, n as i32),
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::LaunchConfig {
                    problem: ConfigProblem::RequiredBlock {
                        required: [256, 1, 1],
                        ..
                    },
                    ..
                }
            ),
            "{err}"
        );
    }
    // `covers` launches blocks of 256, which the directive accepts.
    kernel
        .launch(&stream, VectorAdd::args(&da, &db, &mut c, n as i32))
        .unwrap();
    assert!(
        stream
            .read(&c)
            .unwrap()
            .iter()
            .zip(a.iter().zip(&b))
            .all(|(c, (a, b))| *c == a + b)
    );
}

/// The erased face: a runtime spec from the CLI's signature text, the same check and marshal.
pub fn erased_custom_launch(device: &Device) {
    let spec =
        jitseam::AbiSpec::parse_custom("out: out f32[n], x: in f32[n], n: i32, a: f32", Some("n"))
            .unwrap();
    assert_eq!(spec, Saxpy::SPEC, "the macro and the text form agree");
    let artifact = jitseam::Artifact::ptx(PTX, "saxpy_out_first", spec);
    // SAFETY: saxpy touches `out` and `x` only below `n` (`load()` proves it for `bind_from`).
    let kernel = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap();
    let n = 777;
    let (x, y) = (data(n, 1.0), data(n, 4.0));
    let xs = device.upload(&x).unwrap();
    let mut out = device.upload(&y).unwrap();
    let stream = device.default_stream();
    kernel
        .launch_custom(
            &stream,
            None,
            &[(&xs).into()],
            &mut [(&mut out).into()],
            &[
                jitseam::ParamValue::I32(n as i32),
                jitseam::ParamValue::F32(-1.0),
            ],
        )
        .unwrap();
    let got = stream.read(&out).unwrap();
    assert!((0..n).all(|i| got[i] == -x[i] + y[i]));
    // The erased launch of another ABI's shape is refused for a custom kernel.
    let err = kernel
        .launch(
            &stream,
            &[(&xs).into()],
            &mut [(&mut out).into()],
            &[n],
            &[],
        )
        .unwrap_err();
    assert!(err.is_decline(), "{err}");
    // And promotes to the typed face, whose spec it equals.
    assert!(kernel.typed::<Saxpy>().is_ok());
}

#[macro_export]
macro_rules! custom_suite_tests {
    ($open:path) => {
        $crate::custom_suite_tests!($open, via $crate::custom_suite::run_here);
    };
    ($open:path, via $run:path) => {
        $crate::custom_suite_tests!(@each $open, $run;
            saxpy_out_first, vector_add_nvcc, matmul_2d_grid, stencil_2d_grid,
            short_operands_are_declined, overflowing_extent_is_declined,
            configs_over_device_limits_are_declined, kernel_block_directives_are_enforced,
            erased_custom_launch,
        );
    };
    (@each $open:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || custom_suite::$name(&$open()));
        }
    )*};
}

/// Runs a suite test in this process (the default for [`custom_suite_tests!`]).
pub fn run_here(_test: &str, body: impl FnOnce()) {
    body();
}
