//! A thread's coordinate scaled by a vector's width in 32 bits, as an `int`: `4 · (blockIdx.x ·
//! blockDim.x + threadIdx.x)` in llm.c's `residual_forward` over `Packed128`, four floats a
//! thread. It reads exactly only for fewer than `2^29` threads along the axis, so it is proven
//! under that launch condition (`2^27` for a scale of up to 16), which every launch checks; a
//! scale no condition of the kind covers is declined.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, Error, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// NVRTC 12.9's PTX of the corpus kernel `llmc_residual_forward_packed128`
/// (`tests/fixtures/real/llmc.cu`): `idx = 4 · thread`, behind `idx < N`, one 16-byte load of
/// each input and one 16-byte store.
const PTX: &str = include_str!("fixtures/real/llmc.ptx");
const ENTRY: &str = "llmc_residual_forward_packed128";
const SIG: &str = "out: out f32[4 * div_ceil(N, 4)], inp1: in f32[4 * div_ceil(N, 4)], \
                   inp2: in f32[4 * div_ceil(N, 4)], N: i32";
const SCALE: &str = "shl.b32 	%r1, %r6, 2;";

const BY_4: LaunchCondition = LaunchCondition::AxisThreadsAtMost {
    limit: (1 << 29) - 1,
};
const BY_16: LaunchCondition = LaunchCondition::AxisThreadsAtMost {
    limit: (1 << 27) - 1,
};

#[test]
fn a_coordinate_scaled_by_4_is_proven_for_fewer_than_2_pow_29_threads() {
    let proof = verify(PTX, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert_eq!(proof.conditions, [BY_4]);
}

#[test]
fn a_coordinate_scaled_by_8_is_proven_for_fewer_than_2_pow_27_threads() {
    // Each thread's four floats eight apart (the other four skipped): `8 · thread < 2^31`
    // needs fewer than `2^28` threads, which the next condition, `2^27 − 1`, gives.
    let text = mutate(PTX, ENTRY, SCALE, "shl.b32 	%r1, %r6, 3;");
    let proof = verify(&text, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert_eq!(proof.conditions, [BY_16]);
}

#[test]
fn a_coordinate_scaled_by_32_is_declined() {
    // `32 · thread` wraps negative below `2^27` threads already: past `idx < N`, a read
    // before the input.
    let text = mutate(PTX, ENTRY, SCALE, "shl.b32 	%r1, %r6, 5;");
    rejects(
        &text,
        ENTRY,
        SIG,
        RejectKind::MayWrap,
        "ld.global.cs.v4.s32 {%r7",
    );
}

#[jitseam::kernel(abi = custom)]
fn llmc_residual_forward_packed128(
    #[len(4 * div_ceil(n, 4))] out: Out<f32>,
    #[len(4 * div_ceil(n, 4))] inp1: In<f32>,
    #[len(4 * div_ceil(n, 4))] inp2: In<f32>,
    n: i32,
);

#[test]
fn sums_match_and_a_launch_of_2_pow_29_threads_is_declined() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<LlmcResidualForwardPacked128, _>::describe_typed(
        LlmcResidualForwardPacked128::ptx_artifact(PTX),
    )
    .unwrap()
    .load()
    .unwrap()
    .bind(&device)
    .unwrap();
    // 250 elements padded to 252: 63 threads of 64 take four each.
    let n = 250usize;
    let a: Vec<f32> = (0..252).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..252).map(|i| 100.0 - i as f32).collect();
    let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut dout = device.upload(&[f32::NAN; 252]).unwrap();
    let mut add = |config: LaunchConfig| {
        kernel
            .launch_with(
                &stream,
                config,
                LlmcResidualForwardPacked128::args(&mut dout, &da, &db, n as i32),
            )
            .unwrap();
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(stream.read(&dout).unwrap(), want);
    };
    add(LaunchConfig::new([2, 1, 1], [32, 1, 1]));

    // 2^29 threads along x with no elements: in every device's limits, yet `4 · thread`
    // would wrap as an `int`. Declined before the device sees it.
    let empty = device.upload::<f32>(&[]).unwrap();
    let mut empty_out = device.upload::<f32>(&[]).unwrap();
    let wide = LaunchConfig::new([1 << 20, 1, 1], [512, 1, 1]);
    let err = kernel
        .launch_with(
            &stream,
            wide,
            LlmcResidualForwardPacked128::args(&mut empty_out, &empty, &empty, 0),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::LaunchCondition { condition, .. } if *condition == BY_4),
        "{err}"
    );
    // The kernel and the device stay usable.
    add(LaunchConfig::new([1, 1, 1], [64, 1, 1]));
}
