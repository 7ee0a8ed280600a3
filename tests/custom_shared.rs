//! The custom ABI with shared memory on the emulator: NVRTC kernels from
//! tests/fixtures/custom_shared/ (a block reduction over dynamic shared memory, a tiled matmul
//! over static shared memory, a warp-shuffle reduction, and two kernels in the shape of the CUDA
//! samples' transpose and reduction) bound with `#[jitseam::kernel(abi = custom)]` and launched
//! with `launch_with`; the suite is tests/common/custom_shared_suite.rs. Below it, what only the
//! emulator can show: a body that breaks its promise about shared memory or shuffle lanes.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/custom_shared_suite.rs"]
mod custom_shared_suite;

use custom_shared_suite::{BlockSum, PTX, WarpSum, bind};
use jitseam::{Device, Error, Kernel, LaunchConfig, Signature};
use jitseam_emu::interp::{Access, FaultKind};
use jitseam_verify::LaunchCondition;

custom_shared_suite_tests!(Device::emulator);

/// A launch with less dynamic shared memory than the body indexes: the verified kernel declines
/// it before the device sees anything (its proof needs `dynamic shared bytes >= 4 * block.x`).
/// Loaded through `load_unverified`, the same launch breaks that function's promise; a GPU
/// would read and write whatever lies past the block's shared memory, the emulator stops at
/// the first access past it and names the thread and the instruction.
#[test]
fn too_little_dynamic_shared_memory_faults_on_the_emulator() {
    let device = Device::emulator();
    let stream = device.default_stream();
    let dx = device.upload(&[1.0f32; 256]).unwrap();
    let mut partial = device.upload(&[f32::NAN]).unwrap();
    // 128 floats for a block of 256 threads.
    let config = LaunchConfig::linear(1, 256).dynamic_shared_bytes(512);
    let verified = bind::<BlockSum>(&device);
    let err = verified
        .launch_with(&stream, config, BlockSum::args(&dx, &mut partial, 256))
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
    assert!(stream.read(&partial).unwrap()[0].is_nan());
    let described = Kernel::<BlockSum, _>::describe_typed(BlockSum::ptx_artifact(PTX)).unwrap();
    // SAFETY: the launch below breaks the promise on purpose, on the emulator only, whose
    // shared memory is bounds-checked: the access past it is a typed fault, not a corruption.
    let kernel = unsafe { described.load_unverified() }
        .unwrap()
        .bind(&device)
        .unwrap();
    kernel
        .launch_with(&stream, config, BlockSum::args(&dx, &mut partial, 256))
        .unwrap();
    match stream.read(&partial).unwrap_err() {
        Error::MemoryFault(fault) => {
            assert_eq!(fault.entry, "block_sum");
            assert_eq!(fault.kind, FaultKind::OutsideShared);
            assert_eq!(fault.access, Access::Store);
            assert_eq!((fault.thread, fault.address, fault.size), (128, 512, 4));
            assert!(fault.instruction.starts_with("st.shared.f32"), "{fault:?}");
        }
        other => panic!("expected a shared-memory fault, got {other}"),
    }
    assert!(stream.read(&partial).unwrap()[0].is_nan());
}

/// `__shfl_down_sync(0xffffffff, …)` in a block of 48 threads: the second warp's full mask names
/// lanes that do not exist, which CUDA leaves undefined; the emulator refuses the shuffle.
#[test]
fn a_shuffle_from_a_missing_lane_is_refused_on_the_emulator() {
    let device = Device::emulator();
    let kernel = bind::<WarpSum>(&device);
    let stream = device.default_stream();
    let dx = device.upload(&[1.0f32; 48]).unwrap();
    let mut partial = device.upload(&[f32::NAN; 2]).unwrap();
    kernel
        .launch_with(
            &stream,
            LaunchConfig::linear(1, 48),
            WarpSum::args(&dx, &mut partial, 48),
        )
        .unwrap();
    let err = stream.read(&partial).unwrap_err();
    assert!(
        matches!(&err, Error::Device { message, .. }
            if message.contains("shfl.sync.down.b32") && message.contains("does not take part")),
        "{err}"
    );
}
