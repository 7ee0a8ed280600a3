//! The real-kernel corpus (tests/common/real_corpus.rs) on a real GPU through the CUDA backend:
//! every kernel against its Rust reference, the ones the emulator refuses included.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip.
#![cfg(feature = "gpu-tests")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

use jitseam::Device;

#[test]
fn every_real_kernel_matches_its_reference_on_the_gpu() {
    let device = Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"));
    real_corpus::run_all(&device, false);
}
