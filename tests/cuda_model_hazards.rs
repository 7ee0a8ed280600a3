//! The cross-stream hazard tests (tests/common/hazards.rs) through jitseam's real CUDA backend
//! on the CUDA driver model, each in a child process that loads the model as its driver. A
//! stream is held by queueing slow launches on it; the model runs every stream asynchronously,
//! so a missing wait shows as a wrong result whenever the held stream is still busy.
#![cfg(target_os = "linux")]
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::cuda_model::in_model;
use common::hazards::Busy;
use jitseam::Device;

fn cuda() -> (Device, Busy) {
    let device =
        Device::cuda(0).unwrap_or_else(|e| panic!("the cuda driver model did not open: {e}"));
    let busy = Busy::new(&device, 1 << 16, 4);
    (device, busy)
}

hazard_tests!(cuda, via in_model);
