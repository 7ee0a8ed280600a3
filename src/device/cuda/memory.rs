//! Device memory: allocation, deferred free, and host↔device copies checked against the live
//! allocations.
//!
//! A buffer whose memory queued work may still use is freed later: the free records an event
//! on each stream that may use it and parks the allocation until every event has completed —
//! checked on later allocations, launches, loads and synchronizations — so dropping a buffer
//! never blocks. If an event cannot be recorded or queried, the allocation waits for the next
//! context-wide synchronization (the backend's last one, when the device goes); a leak is
//! safe, a use-after-free on the device is not.

use cudarc::driver::{CudaStream, result, sys};

use super::error::{driver_error, lock};
use super::frees::free_now;
use super::shared::Shared;
use super::stream;
use crate::device::BackendStream;
use crate::error::Error;

pub(super) fn alloc(shared: &Shared, bytes: usize) -> Result<u64, Error> {
    let stage = format!("allocate {bytes} bytes");
    shared.bind(&stage)?;
    shared.drain(0);
    // SAFETY: the context is current; the memory is returned uninitialized, which is fine:
    // jitseam only ever treats device memory as bytes.
    let address = unsafe { result::malloc_sync(bytes) }.map_err(|e| driver_error(stage, e))?;
    lock(&shared.allocations).insert(address, bytes);
    Ok(address)
}

pub(super) fn free(shared: &Shared, address: u64, bytes: usize, pending: &[&dyn BackendStream]) {
    let known = lock(&shared.allocations).remove(&address);
    if known != Some(bytes) {
        shared.record(format!(
            "free of {bytes} bytes at {address:#x} refused: not a live allocation of this device"
        ));
        if let Some(size) = known {
            lock(&shared.allocations).insert(address, size);
        }
        return;
    }
    if pending.is_empty() {
        free_now(shared.context(), address, bytes);
        return;
    }
    let events = pending
        .iter()
        .map(|&s| {
            let s = stream::resolve(shared, s, "free device memory")?;
            s.record_event(None)
                .map_err(|e| driver_error("free device memory: record an event", e))
        })
        .collect::<Result<Vec<_>, Error>>();
    let events = match events {
        Ok(events) => Some(events),
        Err(e) => {
            shared.record(format!(
                "{e}; {bytes} bytes at {address:#x} wait for the next context synchronization"
            ));
            None
        }
    };
    shared.frees.park(address, bytes, events);
}

pub(super) fn write(
    shared: &Shared,
    stream: &dyn BackendStream,
    address: u64,
    src: &[u8],
) -> Result<(), Error> {
    const STAGE: &str = "copy to device";
    let stream = stream::resolve(shared, stream, STAGE)?;
    check_range(shared, address, src.len(), STAGE)?;
    if src.is_empty() {
        return Ok(());
    }
    shared.bind(STAGE)?;
    let page_locked = known_to_the_driver(src);
    // SAFETY: `address..address + src.len()` lies inside a live allocation of this context
    // (checked above; it stays live because the caller borrows its buffer for this call, and a
    // dropped buffer's free waits for this stream). `src` is borrowed for this call, so it is
    // valid while the driver reads it here: pageable memory is copied to a staging buffer
    // before `cuMemcpyHtoDAsync` returns (the documented behaviour for pageable sources), and
    // page-locked memory, which the copy reads only when it runs, is waited for below, before
    // the borrow ends.
    unsafe { result::memcpy_htod_async(address, src, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))?;
    if page_locked {
        // The caller may change or free `src` as soon as this returns (the backend contract):
        // the copy must have read it by then.
        // SAFETY: `stream` is a live stream of this (current) context.
        unsafe { result::stream::synchronize(stream.cu_stream()) }
            .map_err(|e| driver_error(STAGE, e))?;
    }
    Ok(())
}

/// Whether the driver knows `host` (its first or last byte): page-locked host memory (from
/// `cuMemHostAlloc`, a cudarc `PinnedHostSlice`, or `cuMemHostRegister`), or memory it maps,
/// which a copy may read or write when it runs rather than when it is queued. Pageable memory
/// is unknown to the driver (`CUDA_ERROR_INVALID_VALUE`); any other answer counts as known, so
/// that the copy is handled as one of page-locked memory.
fn known_to_the_driver(host: &[u8]) -> bool {
    let ends = [host.first(), host.last()];
    ends.into_iter().flatten().any(|byte| {
        let mut kind = 0u32;
        // SAFETY: `kind` is a live `unsigned int`, what `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`
        // writes; the queried address is only looked up by the driver, never dereferenced.
        let status = unsafe {
            sys::cuPointerGetAttribute(
                (&raw mut kind).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                std::ptr::from_ref(byte) as sys::CUdeviceptr,
            )
        };
        status != sys::CUresult::CUDA_ERROR_INVALID_VALUE
    })
}

pub(super) fn read(
    shared: &Shared,
    stream: &dyn BackendStream,
    address: u64,
    dst: &mut [u8],
) -> Result<(), Error> {
    const STAGE: &str = "copy to host";
    let stream = stream::resolve(shared, stream, STAGE)?;
    check_range(shared, address, dst.len(), STAGE)?;
    if dst.is_empty() {
        return Ok(());
    }
    shared.bind(STAGE)?;
    if known_to_the_driver(dst) {
        // The device would write page-locked memory directly, and may still be writing it if
        // the wait below fails: stage through pageable memory of our own instead.
        let mut staged = vec![0u8; dst.len()];
        read_pageable(stream, address, &mut staged)?;
        dst.copy_from_slice(&staged);
        return Ok(());
    }
    read_pageable(stream, address, dst)
}

/// [`read`] into pageable memory, which the driver writes only before `cuMemcpyDtoHAsync`
/// returns.
fn read_pageable(stream: &CudaStream, address: u64, dst: &mut [u8]) -> Result<(), Error> {
    const STAGE: &str = "copy to host";
    // SAFETY: `address..address + dst.len()` lies inside a live allocation of this context
    // (checked by the caller); any byte pattern is a valid `u8`. `dst` is pageable, and for a
    // copy to pageable memory the call returns only once the copy has completed (the
    // documented behaviour): nothing writes `dst` after it returns, whatever the stream
    // synchronization below answers.
    unsafe { result::memcpy_dtoh_async(dst, address, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))?;
    // Reports a failure of the work queued before the copy.
    // SAFETY: `stream` is a live stream of this (current) context.
    unsafe { result::stream::synchronize(stream.cu_stream()) }.map_err(|e| driver_error(STAGE, e))
}

/// Refuses a copy that is not inside one live allocation of this backend.
pub(super) fn check_range(
    shared: &Shared,
    address: u64,
    len: usize,
    stage: &str,
) -> Result<(), Error> {
    let allocations = lock(&shared.allocations);
    let inside = allocations
        .range(..=address)
        .next_back()
        .is_some_and(|(&base, &bytes)| {
            let end = base.checked_add(bytes as u64);
            let want = address.checked_add(len as u64);
            matches!((end, want), (Some(end), Some(want)) if want <= end)
        });
    if inside {
        Ok(())
    } else {
        Err(Error::Device {
            stage: stage.to_owned(),
            message: format!(
                "{len} bytes at {address:#x} are not inside a live allocation of this device"
            ),
        })
    }
}
