//! Cross-stream hazards on the emulator, whose streams run asynchronously: each test holds one
//! stream's worker, queues conflicting work on others, lets them run as far as they can, and
//! only then releases the first — so each fails, deterministically, if the wait it exercises is
//! missing (read-after-write, write-after-read, write-after-write across two and three streams,
//! a free under a launch, a read of an in-flight output).

// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use common::hazards::Paused;

hazard_tests!(Paused::emulator);
