//! Page-locked host memory (`cuMemHostAlloc`): host memory the device copies from directly, so
//! a copy from it reads it when the copy runs, not when it is queued — unlike pageable memory,
//! which the driver stages before the call returns. A caller that reuses page-locked memory
//! before its copy has run changes what the copy reads, as on a GPU.
//!
//! Allocations are page-aligned, zero-filled, and kept here (as raw pointers, the caller
//! writing through its own) until `cuMemFreeHost`, which first waits for every queued
//! operation, as the driver's frees do.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::lock::lock;
use crate::status::{CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUresult};

/// One page of an allocation: what gives it its alignment.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page([u8; 4096]);

/// A live allocation: its pages, leaked from a `Box` and reclaimed by [`free`].
struct Pinned {
    pages: *mut [Page],
    len: usize,
}

// SAFETY: the pointer is only ever turned back into its `Box` (by `free`, once) or compared;
// the memory behind it is the caller's to read and write, as the driver's is.
unsafe impl Send for Pinned {}

fn allocations() -> MutexGuard<'static, BTreeMap<usize, Pinned>> {
    static ALLOCATIONS: OnceLock<Mutex<BTreeMap<usize, Pinned>>> = OnceLock::new();
    lock(ALLOCATIONS.get_or_init(Default::default))
}

/// `cuMemHostAlloc`: `len` zeroed bytes of page-locked memory.
pub(crate) fn alloc(len: usize) -> Result<*mut u8, CUresult> {
    if len == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let count = len.div_ceil(std::mem::size_of::<Page>());
    let mut pages = Vec::new();
    pages
        .try_reserve_exact(count)
        .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    pages.resize(count, Page([0; 4096]));
    let pages = Box::into_raw(pages.into_boxed_slice());
    let base = pages.cast::<u8>();
    allocations().insert(base as usize, Pinned { pages, len });
    Ok(base)
}

/// `cuMemFreeHost`: only the base of a live allocation may be freed. The caller has waited for
/// every queued operation.
pub(crate) fn free(base: *mut u8) -> Result<(), CUresult> {
    let pinned = allocations()
        .remove(&(base as usize))
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    // SAFETY: the pointer came from `Box::into_raw` in `alloc` and left the table just now, so
    // it is reclaimed once; no queued copy reads it any more (the caller waited for them all).
    drop(unsafe { Box::from_raw(pinned.pages) });
    Ok(())
}

/// The length of the allocation that starts at `base`, if one does.
pub(crate) fn len_at(base: *const u8) -> Option<usize> {
    allocations().get(&(base as usize)).map(|p| p.len)
}

/// Whether `[address, address + len)` lies inside one page-locked allocation.
pub(crate) fn contains(address: *const u8, len: usize) -> bool {
    let address = address as usize;
    allocations()
        .range(..=address)
        .next_back()
        .is_some_and(|(&base, pinned)| {
            address
                .checked_add(len)
                .is_some_and(|end| end <= base + pinned.len)
        })
}
