//! Devices on jitseam's one fake backend ([`jitseam::testing::FakeBackend`]): one that keeps
//! every launch it is handed (which packet, which geometry), and one whose launches do nothing
//! at all (what is left of a launch is jitseam's own work: check, marshal, the hand-off).

use std::sync::Arc;

use jitseam::Device;
use jitseam::testing::FakeBackend;

/// A fresh device (a new id each call) that keeps every launch, and its backend.
pub fn recording() -> (Device, Arc<FakeBackend>) {
    let backend = FakeBackend::builder()
        .name("recording")
        .record_launches()
        .build();
    (backend.device(), backend)
}

/// A fresh device whose launches do nothing and are not kept.
pub fn noop() -> Device {
    FakeBackend::builder().name("no-op").build().device()
}
