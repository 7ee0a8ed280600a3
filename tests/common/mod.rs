//! Support shared by the integration tests. Each test binary uses part of it.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

pub mod fixtures;
pub mod launch_suite;
pub mod recording;
pub mod synth_matrix;
pub mod verify_corpus;
