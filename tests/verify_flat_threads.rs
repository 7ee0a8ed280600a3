//! A thread's linear index over a two-dimensional grid of one-dimensional blocks,
//! `blockDim.x · (gridDim.x · blockIdx.y + blockIdx.x) + threadIdx.x` taken as an `int`
//! (Rodinia's `nn`): proven under the launch condition that the launch has at most `2^31 − 1`
//! threads, which every launch checks; an index doubled past that reading is declined.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, Error, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// NVRTC 12.9's PTX of the corpus kernel `rodinia_nn_euclid` (`tests/fixtures/real/rodinia_nn.cu`):
/// each thread reads one 8-byte `{lat, lng}` record through a pointer advanced before its
/// guard `globalId < numRecords`, and writes the record's distance.
const PTX: &str = include_str!("fixtures/real/rodinia_nn.ptx");
const ENTRY: &str = "rodinia_nn_euclid";
const SIG: &str = "d_locations: in f32[2 * numRecords], d_distances: out f32[numRecords], \
                   numRecords: i32, lat: f32, lng: f32";

const THREADS: LaunchCondition = LaunchCondition::ThreadsAtMost {
    limit: (1 << 31) - 1,
};

#[test]
fn a_flattened_2d_grid_is_proven_under_a_thread_count_condition() {
    let proof = verify(PTX, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    assert!(
        proof.conditions.contains(&THREADS),
        "{:?}",
        proof.conditions
    );
}

#[test]
fn an_index_doubled_past_an_int_is_declined() {
    // `2 · globalId` wraps negative for a launch of more than 2^30 threads, which the
    // condition admits: past the guard `< numRecords`, a read below the records.
    let text = mutate(
        PTX,
        ENTRY,
        "mad.lo.s32 	%r1, %r6, %r7, %r8;",
        "mad.lo.s32 	%r1, %r6, %r7, %r8;\n\tshl.b32 	%r1, %r1, 1;",
    );
    rejects(&text, ENTRY, SIG, RejectKind::MayWrap, "ld.global.f32 	%f3");
}

#[jitseam::kernel(abi = custom)]
fn rodinia_nn_euclid(
    #[len(2 * num_records)] d_locations: In<f32>,
    #[len(num_records)] d_distances: Out<f32>,
    num_records: i32,
    lat: f32,
    lng: f32,
);

#[test]
fn distances_match_and_a_launch_of_2_pow_31_threads_is_declined() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<RodiniaNnEuclid, _>::describe_typed(RodiniaNnEuclid::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap()
        .bind(&device)
        .unwrap();
    // 50 records over a 2 × 2 grid of 16 threads: the last 14 threads fail the guard.
    let records = 50usize;
    let locations: Vec<f32> = (0..2 * records)
        .map(|i| (i * 37 % 101) as f32 * 0.75)
        .collect();
    let dl = device.upload(&locations).unwrap();
    let mut dd = device.upload(&vec![f32::NAN; records]).unwrap();
    let (lat, lng) = (30.5f32, 90.25f32);
    let mut distances = |config: LaunchConfig| {
        kernel
            .launch_with(
                &stream,
                config,
                RodiniaNnEuclid::args(&dl, &mut dd, records as i32, lat, lng),
            )
            .unwrap();
        let want: Vec<f32> = locations
            .chunks(2)
            .map(|r| {
                let (a, b) = (lat - r[0], lng - r[1]);
                a.mul_add(a, b * b).sqrt()
            })
            .collect();
        assert_eq!(stream.read(&dd).unwrap(), want);
    };
    distances(LaunchConfig::new([2, 2, 1], [16, 1, 1]));

    // 2^31 threads with no records: in every device's limits, yet a thread's linear index
    // would wrap as an `int`. Declined before the device sees it.
    let empty_l = device.upload::<f32>(&[]).unwrap();
    let mut empty_d = device.upload::<f32>(&[]).unwrap();
    let wide = LaunchConfig::new([1 << 16, 1 << 6, 1], [512, 1, 1]);
    let err = kernel
        .launch_with(
            &stream,
            wide,
            RodiniaNnEuclid::args(&empty_l, &mut empty_d, 0, lat, lng),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::LaunchCondition { condition, .. } if *condition == THREADS),
        "{err}"
    );
    // The kernel and the device stay usable, here on a grid of a different shape.
    distances(LaunchConfig::new([1, 4, 1], [13, 1, 1]));
}
