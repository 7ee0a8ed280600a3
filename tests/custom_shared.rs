//! The custom ABI with shared memory on the emulator: NVRTC kernels from
//! tests/fixtures/custom_shared/ (a block reduction over dynamic shared memory, a tiled matmul
//! over static shared memory, a warp-shuffle reduction, and two kernels in the shape of the CUDA
//! samples' transpose and reduction) bound with `#[jitseam::kernel(abi = custom)]` and launched
//! with `launch_with`; the suite is tests/common/custom_shared_suite.rs.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/custom_shared_suite.rs"]
mod custom_shared_suite;

use jitseam::Device;

custom_shared_suite_tests!(Device::emulator);
