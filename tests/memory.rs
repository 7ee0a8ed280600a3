//! The memory API on the emulator (tests/common/memory_suite.rs): zeroed allocation, fills and
//! device-to-device copies of buffers and views, their order against other streams' uses (each
//! stream held by pausing its worker, so a missing wait always shows), and event timing; plus
//! what a backend that overrides none of these methods does.
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::hazards::Paused;
use jitseam::Error;
use jitseam::testing::FakeBackend;

memory_suite_tests!(Paused::emulator);

/// A backend of one's own keeps working without the memory methods: a fill is a write from
/// the host, a copy goes through the host, and an event keeps no time.
#[test]
fn a_backend_without_the_memory_methods_gets_their_defaults() {
    let device = FakeBackend::builder().build().device();
    let stream = device.default_stream();
    let mut zeros = device.alloc_zeros::<f32>(16).unwrap();
    let src = device.upload(&[1.0f32; 16]).unwrap();
    stream.copy(&src, &mut zeros).unwrap();
    stream.fill_zeros(&mut zeros).unwrap();
    let first = stream.record_event().unwrap();
    let second = stream.record_event().unwrap();
    let err = second.elapsed_since(&first).unwrap_err();
    assert!(
        matches!(&err, Error::EventTiming { reason } if reason.contains("fake")),
        "{err}"
    );
}
