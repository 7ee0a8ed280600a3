//! Streams on a real GPU: the cross-stream hazard tests (tests/common/hazards.rs) and the
//! memory suite (tests/common/memory_suite.rs), a stream held by queueing slow launches on it,
//! and the cudarc interop path end to end (a cudarc
//! slice written by cudarc, launched on by jitseam, read back by cudarc on another stream).
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip.
#![cfg(feature = "gpu-tests")]
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::hazards::Busy;
use cudarc::driver::CudaContext;
use jitseam::Device;

fn cuda() -> (Device, Busy) {
    let device = Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"));
    // Enough work that the held stream is still busy when the other streams' work is queued.
    let busy = Busy::new(&device, 1 << 24, 8);
    (device, busy)
}

hazard_tests!(cuda);

// Zeroed allocations, fills, device copies and event timing, ordered like every other use.
memory_suite_tests!(cuda);

#[test]
fn cudarc_round_trip() {
    common::interop::cudarc_round_trip(CudaContext::new(0).unwrap(), 1 << 20);
}

#[test]
fn cudarc_round_trip_on_a_device_opened_by_jitseam_first() {
    let _first = Device::cuda(0).unwrap();
    common::interop::cudarc_round_trip(CudaContext::new(0).unwrap(), 4096);
}

#[test]
fn jitseam_buffers_handed_to_cudarc() {
    common::interop::as_cudarc_round_trip(CudaContext::new(0).unwrap(), 1 << 20, (1 << 24, 8));
}

// Readers of a jitseam buffer through cudarc views on two or three streams, then a write or a
// drop: each waits for every reader.
readers_through_views_tests!(1 << 20, (1 << 24, 8));

#[test]
fn a_write_from_page_locked_memory_has_read_it_when_it_returns() {
    common::interop::write_from_page_locked_memory(
        CudaContext::new(0).unwrap(),
        1 << 20,
        (1 << 24, 8),
    );
}

#[test]
fn half_precision_cudarc_views() {
    common::interop::half_views(CudaContext::new(0).unwrap(), 1 << 20);
}
