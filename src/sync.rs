//! The synchronization primitives of the slot table and the liveness registry, swappable for
//! loom's models: a plain build uses `std`'s, a `--cfg loom` build uses loom's, so the loom
//! model in `tests/loom_slot.rs` explores the real code rather than a copy of its protocol.
//!
//! Only the primitives whose interleavings the model has to explore come from here. Counters
//! that merely hand out unique numbers (generations, device ids) stay `std` atomics: they need
//! a `const` constructor for their `static`s, and no protocol step depends on their ordering.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering, fence};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering, fence};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// One turn of a wait for another thread's progress: a spin hint, then the thread gives up its
/// time slice (under loom, a yield the model can schedule another thread at).
#[inline]
pub(crate) fn wait_a_moment(turn: u32) {
    #[cfg(loom)]
    {
        let _ = turn;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        if turn < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
