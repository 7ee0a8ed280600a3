//! Mutex locking that survives poisoning.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`. A poisoned lock still guards consistent data: every critical section in the
/// model either completes its update or leaves it untouched (a panic inside the interpreter is
/// caught around the whole launch, with the heap's bytes merely partly written, as after a
/// device fault).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
