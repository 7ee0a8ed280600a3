//! Driver errors as jitseam errors, the log of errors raised where they cannot be returned, and
//! the poison-tolerant locking every mutex in this folder uses.
//!
//! Cleanup (free, module unload) runs from `Drop`, so its errors are recorded in a
//! [`DeferredErrors`] log, never raised or panicked on; the next synchronize reports them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use cudarc::driver::result::DriverError;

use crate::error::{DriverCode, Error};

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

/// `error` as [`Error::Driver`]: its code, and the driver's description of it.
pub(super) fn driver_error(stage: impl Into<String>, error: DriverError) -> Error {
    // The bindings' `CUresult` is a `#[repr(u32)]` enum of the C codes.
    let code = DriverCode(error.0 as u32);
    let message = error
        .error_string()
        .map(|text| text.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error::Driver {
        stage: stage.into(),
        code,
        message,
    }
}

/// A status the driver returned as a plain integer (through a symbol jitseam resolved itself,
/// so never turned into the bindings' enum, which must not hold a value it does not declare),
/// as [`Error::Driver`] without a description.
pub(super) fn driver_code_error(stage: impl Into<String>, code: u32) -> Error {
    Error::Driver {
        stage: stage.into(),
        code: DriverCode(code),
        message: String::new(),
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
