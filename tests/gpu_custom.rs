//! The custom-ABI launch suite on a real GPU through the CUDA backend.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip.
#![cfg(feature = "gpu-tests")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/custom_suite.rs"]
mod custom_suite;

use jitseam::Device;

fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"))
}

custom_suite_tests!(cuda);
