//! Work on device memory alone: fills (`cuMemsetD8Async`) and device-to-device copies
//! (`cuMemcpyDtoDAsync`), queued on a stream and checked, like every copy, against the live
//! allocations of this backend.

use cudarc::driver::result;

use super::error::driver_error;
use super::memory::check_range;
use super::shared::Shared;
use super::stream;
use crate::device::BackendStream;
use crate::error::Error;

pub(super) fn fill(
    shared: &Shared,
    stream: &dyn BackendStream,
    address: u64,
    bytes: usize,
    value: u8,
) -> Result<(), Error> {
    const STAGE: &str = "fill on the device";
    let stream = stream::resolve(shared, stream, STAGE)?;
    check_range(shared, address, bytes, STAGE)?;
    if bytes == 0 {
        return Ok(());
    }
    shared.bind(STAGE)?;
    // SAFETY: `address..address + bytes` lies inside a live allocation of this context
    // (checked above), which stays live while queued work may use it (a dropped buffer's free
    // waits for this stream); the driver writes only device memory.
    unsafe { result::memset_d8_async(address, value, bytes, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))
}

pub(super) fn copy(
    shared: &Shared,
    stream: &dyn BackendStream,
    src: u64,
    dst: u64,
    bytes: usize,
) -> Result<(), Error> {
    const STAGE: &str = "copy on the device";
    let stream = stream::resolve(shared, stream, STAGE)?;
    check_range(shared, src, bytes, STAGE)?;
    check_range(shared, dst, bytes, STAGE)?;
    if bytes == 0 {
        return Ok(());
    }
    shared.bind(STAGE)?;
    // SAFETY: both ranges lie inside live allocations of this context (checked above) and stay
    // live while queued work may use them, as for `fill`; they do not overlap (the caller's
    // contract: an exclusive and a shared borrow of jitseam memory); the driver touches only
    // device memory.
    unsafe { result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))
}
