//! The guarded-launch suite (tests/common/guard_suite.rs) on a real GPU through the CUDA
//! backend: the guarded rewrite assembled by the driver's JIT, its hidden params and the fault
//! record's copies.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip.
#![cfg(feature = "gpu-tests")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/guard_suite.rs"]
mod guard_suite;

use jitseam::Device;

fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"))
}

guard_suite_tests!(cuda);
