//! Device memory: allocation, free, and host↔device copies checked against the live
//! allocations.
//!
//! Free synchronizes the whole context (every stream) before `cuMemFree`, because queued work
//! may still use the memory; if the context cannot be synchronized the allocation is leaked and
//! the error recorded: a leak is safe, a use-after-free on the device is not.

use cudarc::driver::result;

use super::error::{describe, driver_error, lock};
use super::shared::Shared;
use super::stream;
use crate::device::BackendStream;
use crate::error::Error;

pub(super) fn alloc(shared: &Shared, bytes: usize) -> Result<u64, Error> {
    let stage = format!("allocate {bytes} bytes");
    shared.bind(&stage)?;
    // SAFETY: the context is current; the memory is returned uninitialized, which is fine:
    // jitseam only ever treats device memory as bytes.
    let address = unsafe { result::malloc_sync(bytes) }.map_err(|e| driver_error(stage, e))?;
    lock(&shared.allocations).insert(address, bytes);
    Ok(address)
}

pub(super) fn free(shared: &Shared, address: u64, bytes: usize) {
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
    // Queued work on any stream may still use the memory: wait for all of it.
    let synced = match shared.synchronize_context("free device memory") {
        Ok(synced) => synced,
        Err(e) => {
            shared.record(format!("{e}; {bytes} bytes at {address:#x} leaked"));
            return;
        }
    };
    // Modules waiting for that same work can go too.
    shared.drain(synced);
    // SAFETY: `address` came from `malloc_sync` in this context (it was in the allocation
    // map, removed above, so it is freed once); the context-wide synchronization above
    // finished every launch and copy that could use it, and no later one can name it (its
    // buffer is being dropped).
    if let Err(e) = unsafe { result::free_sync(address) } {
        shared.record(format!(
            "free {bytes} bytes at {address:#x}: {}",
            describe(e)
        ));
    }
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
    // SAFETY: `address..address + src.len()` lies inside a live allocation of this context
    // (checked above; it stays live because the caller borrows its buffer for this call);
    // `src` stays borrowed until the stream synchronization below, after which the copy
    // has finished reading it.
    unsafe { result::memcpy_htod_async(address, src, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))?;
    // SAFETY: `stream` is a live stream of this (current) context.
    unsafe { result::stream::synchronize(stream.cu_stream()) }.map_err(|e| driver_error(STAGE, e))
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
    // SAFETY: `address..address + dst.len()` lies inside a live allocation of this context
    // (checked above); `dst` is exclusively borrowed until the stream synchronization
    // below, after which the copy has finished writing it; any byte pattern is a valid
    // `u8`.
    unsafe { result::memcpy_dtoh_async(dst, address, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))?;
    // SAFETY: `stream` is a live stream of this (current) context.
    unsafe { result::stream::synchronize(stream.cu_stream()) }.map_err(|e| driver_error(STAGE, e))
}

/// Refuses a copy that is not inside one live allocation of this backend.
fn check_range(shared: &Shared, address: u64, len: usize, stage: &str) -> Result<(), Error> {
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
