//! Device identity and liveness.
//!
//! Ids come from a process-wide counter and are never reused, so a stale id can never name a
//! newer device on the same ordinal. The registry of live ids is a leaf lock: code holding it
//! takes no other lock, which is what lets the slot table take it after its own (slot bank →
//! liveness registry, never the reverse).

use std::collections::HashSet;
use std::fmt;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Mutex, MutexGuard};

/// A device's process-unique identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(u64);

impl DeviceId {
    /// Names no device: the counter starts at 1.
    pub(crate) const NONE: Self = Self(0);

    /// The raw counter value (stable for the process, useful in logs).
    pub fn get(self) -> u64 {
        self.0
    }

    /// The id with this counter value; `0` is never minted, so it names no device.
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device #{}", self.0)
    }
}

/// Whether any handle to the device with this id still exists.
pub fn is_live(id: DeviceId) -> bool {
    registry().contains(&id.0)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

#[cfg(not(loom))]
static LIVE: std::sync::LazyLock<Mutex<HashSet<u64>>> = std::sync::LazyLock::new(Default::default);

// The loom model makes the registry afresh for every execution it explores.
#[cfg(loom)]
loom::lazy_static! {
    static ref LIVE: Mutex<HashSet<u64>> = Mutex::new(HashSet::new());
}

fn registry() -> MutexGuard<'static, HashSet<u64>> {
    // A panic elsewhere while holding this lock cannot leave the set half-updated (each critical
    // section is a single insert, remove or lookup), so a poisoned lock is still consistent.
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks an id live from its minting until it is dropped.
pub(crate) struct LivenessToken(DeviceId);

impl LivenessToken {
    pub(crate) fn mint() -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        registry().insert(id);
        Self(DeviceId(id))
    }

    pub(crate) fn id(&self) -> DeviceId {
        self.0
    }
}

impl Drop for LivenessToken {
    fn drop(&mut self) {
        registry().remove(&self.0.0);
    }
}
