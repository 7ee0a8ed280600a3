//! Driver errors as jitseam errors, the log of errors raised where they cannot be returned, and
//! the poison-tolerant locking every mutex in this folder uses.
//!
//! Cleanup (free, module unload) runs from `Drop`, so its errors are recorded in a
//! [`DeferredErrors`] log, never raised or panicked on; the next synchronize reports them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use cudarc::driver::result::DriverError;

use crate::error::Error;

/// Recorded cleanup errors kept for the next `synchronize`; more are counted, not kept.
const MAX_DEFERRED: usize = 16;

/// The driver's name and description of an error (`CUDA_ERROR_INVALID_PTX: …`).
pub(super) fn describe(error: DriverError) -> String {
    let name = error
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", error.0));
    match error.error_string() {
        Ok(text) => format!("{name}: {}", text.to_string_lossy()),
        Err(_) => name,
    }
}

pub(super) fn driver_error(stage: impl Into<String>, error: DriverError) -> Error {
    Error::Device {
        stage: stage.into(),
        message: describe(error),
    }
}

/// A poisoned lock is still consistent here: no critical section in this folder can panic
/// half-way through an update.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Errors recorded on paths that cannot return them, kept until the next synchronize takes
/// them.
#[derive(Default)]
pub(super) struct DeferredErrors(Mutex<Deferred>);

#[derive(Default)]
struct Deferred {
    messages: Vec<String>,
    dropped: usize,
}

impl DeferredErrors {
    pub(super) fn record(&self, message: String) {
        let mut deferred = lock(&self.0);
        if deferred.messages.len() < MAX_DEFERRED {
            deferred.messages.push(message);
        } else {
            deferred.dropped += 1;
        }
    }

    /// Errors recorded since the last call, as one error.
    pub(super) fn take(&self) -> Result<(), Error> {
        let deferred = std::mem::take(&mut *lock(&self.0));
        if deferred.messages.is_empty() {
            return Ok(());
        }
        let mut message = deferred.messages.join("; ");
        if deferred.dropped > 0 {
            message.push_str(&format!("; and {} more", deferred.dropped));
        }
        Err(Error::Device {
            stage: "deferred cleanup (free, module unload) since the last synchronize".to_owned(),
            message,
        })
    }
}
