//! Support shared by the integration tests. Each test binary uses part of it.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

#[cfg(target_os = "linux")]
pub mod cuda_model;
pub mod fake;
pub mod faulty;
pub mod fixtures;
pub mod fuzz;
pub mod hazards;
pub mod interop;
pub mod launch_suite;
pub mod memory_suite;
pub mod nvrtc_env;
pub mod ptxas;
pub mod synth_matrix;
pub mod telemetry;
pub mod verify_corpus;
