//! The custom-ABI launch suites (tests/common/custom_suite.rs, custom_shared_suite.rs and
//! launch_shape_suite.rs) on a real GPU through the CUDA backend.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip.
#![cfg(feature = "gpu-tests")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/custom_suite.rs"]
mod custom_suite;

#[path = "common/custom_shared_suite.rs"]
mod custom_shared_suite;

#[path = "common/launch_shape_suite.rs"]
mod launch_shape_suite;

use jitseam::Device;

fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"))
}

custom_suite_tests!(cuda);
custom_shared_suite_tests!(cuda);
launch_shape_suite_tests!(cuda);
