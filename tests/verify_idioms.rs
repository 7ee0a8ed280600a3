//! Launch conditions the idioms of real kernels rest on, checked at every launch.
//!
//! NVRTC's grid-stride loop over an `int n` steps its index once past the last element it
//! handles: `i + gridDim.x * blockDim.x` must still read as an `int`, which no bound on the
//! extents or on the grid alone gives. Its proof asks for every declared extent plus the
//! threads along any axis to stay at most 2^31 − 1, and a launch past that is declined before
//! the device sees anything (the operands are described, not allocated: 2^31 floats would not
//! fit the emulator).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

use jitseam::device::ViewDesc;
use jitseam::{Device, ElementKind, Error, Kernel, LaunchConfig, ParamValue};
use jitseam_verify::LaunchCondition;

const LIMIT: u64 = (1 << 31) - 1;

/// A dense f32 operand of `n` elements at `base`, described without being allocated.
fn described(device: &Device, base: u64, n: usize) -> ViewDesc {
    ViewDesc::contiguous(device.id(), ElementKind::F32, base, n, 0, n)
}

#[test]
fn an_int_grid_stride_loop_is_launched_only_where_its_next_index_reads_as_an_int() {
    let entry = real_corpus::manifest()
        .into_iter()
        .find(|e| e.entry == "samples_fwt_modulate")
        .unwrap();
    let device = Device::emulator();
    let kernel = Kernel::describe(entry.artifact())
        .unwrap()
        .load()
        .map_err(|e| e.error)
        .unwrap()
        .bind(&device)
        .map_err(|e| e.error)
        .unwrap();
    let conditions = kernel.loaded().proof().map(|p| p.conditions.clone());
    assert!(
        conditions.as_ref().is_some_and(
            |c| c.contains(&LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit: LIMIT })
        ),
        "{conditions:?}"
    );
    // `d_A: out f32[N], d_B: in f32[N], N: i32`, two blocks of 64 threads.
    let check = |n: usize| {
        let outputs = [described(&device, 1 << 40, n)];
        let inputs = [described(&device, 1 << 44, n)];
        let params = [ParamValue::I32(i32::try_from(n).unwrap())];
        jitseam::launch::check_custom(
            kernel.facts(),
            device.id(),
            Some(LaunchConfig::linear(2, 64)),
            &inputs,
            &outputs,
            &params,
        )
        .map(|_| ())
    };
    check(1000).unwrap();
    check((LIMIT - 128) as usize).unwrap();
    // `N` alone is an `int`; `N + 128` is not.
    match check((LIMIT - 127) as usize) {
        Err(Error::LaunchCondition { condition, .. }) => assert_eq!(
            condition,
            LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit: LIMIT }
        ),
        other => panic!("expected a launch condition decline, got {other:?}"),
    }
}

#[test]
fn the_condition_counts_the_widest_axis() {
    let c = LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit: 100 };
    assert!(c.holds_custom([1, 1, 1], [10, 1, 1], 0, 90));
    assert!(!c.holds_custom([1, 1, 1], [10, 1, 1], 0, 91));
    // The y axis has 2 × 8 threads.
    assert!(!c.holds_custom([1, 2, 1], [10, 8, 1], 0, 85));
    assert!(c.holds_custom([1, 2, 1], [10, 8, 1], 0, 84));
    // No extents on a one-dimensional launch: never holds there.
    assert!(!c.holds(10, &[], 10));
}
