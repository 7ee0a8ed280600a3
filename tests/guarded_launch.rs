//! Guarded launches on the emulator: the suite of tests/common/guard_suite.rs (NVRTC gathers,
//! scatters and lookups through loaded indices, proven except for their data-dependent
//! accesses, which run guarded).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/guard_suite.rs"]
mod guard_suite;

use jitseam::Device;

guard_suite_tests!(Device::emulator);
