//! Handle values.
//!
//! Every context, stream, event, module and function handle is a process-wide unique integer
//! carried in the C pointer type, never a real pointer: a stale or forged handle is looked up,
//! not dereferenced, and answers `CUDA_ERROR_INVALID_HANDLE`. Values start high and step by 16
//! so none collides with the special stream handles (`NULL`, `CU_STREAM_LEGACY` = 1,
//! `CU_STREAM_PER_THREAD` = 2) and none is ever reused.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0x5a00_0000);

/// A fresh handle value.
pub(crate) fn next_id() -> u64 {
    NEXT.fetch_add(16, Ordering::Relaxed)
}

/// The handle value as the C caller sees it.
pub(crate) fn to_ptr(id: u64) -> *mut c_void {
    // Handles are integers in pointer clothing; no provenance is involved.
    std::ptr::without_provenance_mut(id as usize)
}

/// The handle value behind a C handle.
pub(crate) fn from_ptr(handle: *mut c_void) -> u64 {
    handle.addr() as u64
}
