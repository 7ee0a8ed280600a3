//! Cross-stream hazards on the emulator, whose streams run asynchronously: each test holds one
//! stream's worker, queues conflicting work on others, lets them run as far as they can, and
//! only then releases the first — so each fails, deterministically, if the wait it exercises is
//! missing (read-after-write, write-after-read, write-after-write across two and three streams,
//! a free under a launch, a read of an in-flight output).

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::hazards::{Hold, poll};
use jitseam::device::EmulatorBackend;
use jitseam::{Device, Stream};

/// Holds a stream by pausing its emulator worker.
struct Paused(Arc<EmulatorBackend>);

impl Hold for Paused {
    fn hold(&self, stream: &Stream) {
        self.0.pause(stream).unwrap();
    }
    fn release(&self, stream: &Stream) {
        self.0.resume(stream).unwrap();
    }
    fn settle(&self, stream: &Stream) {
        self.0.settle(stream).unwrap();
    }
    fn until_waiting(&self, stream: &Stream, timeout: Duration) {
        poll(timeout, || self.0.is_waiting(stream).unwrap());
    }
}

fn emulator() -> (Device, Paused) {
    let backend = Arc::new(EmulatorBackend::new());
    (Device::with_backend(backend.clone()), Paused(backend))
}

hazard_tests!(emulator);
