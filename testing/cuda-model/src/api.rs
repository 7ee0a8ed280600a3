//! The exported driver entry points, with the driver's C signatures.
//!
//! Each one unpacks its C arguments, calls into the model and returns the status; a panic
//! inside the model is caught and answered with `CUDA_ERROR_UNKNOWN` (unwinding out of an
//! `extern "C"` function would abort the caller's process).
//!
//! # Safety (every function here)
//! The caller upholds the CUDA driver API's contract for the entry point: every pointer
//! argument is null or valid for the reads or writes the driver documents (out-parameters
//! writable, `image` and `name` NUL-terminated, `srcHost`/`dstHost` valid for `ByteCount`
//! bytes, `kernelParams` holding one valid pointer per kernel parameter, each to that
//! parameter's bytes). Null out-parameters are refused with `CUDA_ERROR_INVALID_VALUE`.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{CStr, c_char, c_int, c_uchar, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use jitseam_emu::interp::LaunchDims;

use crate::context::Context;
use crate::device;
use crate::driver;
use crate::exec::{HostDst, HostSrc, Op};
use crate::handle::{from_ptr, to_ptr};
use crate::host;
use crate::status::{
    self, CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_READY,
    CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_UNKNOWN, CUresult,
};
use crate::stream::Stream;

/// `CUdevice`: a device ordinal.
pub type CUdevice = c_int;
/// `CUdeviceptr`: a device address.
pub type CUdeviceptr = u64;
/// Opaque handles (`CUcontext`, `CUstream`, `CUevent`, `CUmodule`, `CUfunction`).
pub type Handle = *mut c_void;

/// Every entry point this module implements, for the crate's tests.
pub const IMPLEMENTED: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetUuid",
    "cuDeviceGetUuid_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxSynchronize",
    "cuCtxGetDevice",
    "cuCtxGetStreamPriorityRange",
    "cuStreamCreate",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuStreamWaitEvent",
    "cuStreamIsCapturing",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuEventDestroy_v2",
    "cuEventElapsedTime",
    "cuEventElapsedTime_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemGetInfo_v2",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuPointerGetAttribute",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8_v2",
    "cuMemsetD8Async",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuFuncGetParamInfo",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuGetExportTable",
];

/// Runs `f`, turning a panic into `CUDA_ERROR_UNKNOWN`.
fn guard(f: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    let result = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        eprintln!("jitseam-cuda-model: a driver call panicked inside the model");
        Err(CUDA_ERROR_UNKNOWN)
    });
    status::status(result)
}

/// Writes an out-parameter.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), CUresult> {
    if out.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: non-null, and valid for a write of `T` by this function's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// The current context, usable and not in an error state.
fn context() -> Result<Arc<Context>, CUresult> {
    let context = driver::current()?;
    context.check()?;
    Ok(context)
}

// ---- initialization, version, devices ------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn cuInit(Flags: c_uint) -> CUresult {
    guard(|| driver::init(Flags))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDriverGetVersion(driverVersion: *mut c_int) -> CUresult {
    // SAFETY: the caller's contract (module docs) covers the out-parameter.
    guard(|| unsafe { put(driverVersion, device::DRIVER_VERSION) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    guard(|| {
        let devices = driver::device_count()?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(count, devices) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    guard(|| {
        let found = driver::device(ordinal)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(device, found) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    guard(|| {
        driver::device(dev)?;
        let len = usize::try_from(len).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        if name.is_null() || len == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let text = device::NAME.as_bytes();
        let n = text.len().min(len - 1);
        // SAFETY: `name` is valid for `len` bytes (the caller's contract); `n + 1 <= len`, and
        // the source is a distinct static string.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), name.cast::<u8>(), n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    pi: *mut c_int,
    attrib: c_uint,
    dev: CUdevice,
) -> CUresult {
    guard(|| {
        driver::device(dev)?;
        let value = device::attribute(attrib)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pi, value) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CUresult {
    guard(|| {
        driver::device(dev)?;
        let total = usize::try_from(device::TOTAL_MEMORY).map_err(|_| CUDA_ERROR_UNKNOWN)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(bytes, total) }
    })
}

/// A fixed UUID: "jitseam-cudamodl" (`CUuuid` is 16 bytes).
const UUID: [u8; 16] = *b"jitseam-cudamodl";

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: CUdevice) -> CUresult {
    guard(|| {
        driver::device(dev)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(uuid, UUID) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], dev: CUdevice) -> CUresult {
    // SAFETY: same contract as `cuDeviceGetUuid`.
    unsafe { cuDeviceGetUuid(uuid, dev) }
}

// ---- contexts ----------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut Handle, dev: CUdevice) -> CUresult {
    guard(|| {
        if pctx.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = driver::retain_primary(dev)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pctx, to_ptr(id)) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult {
    guard(|| driver::release_primary(dev))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxRelease(dev: CUdevice) -> CUresult {
    cuDevicePrimaryCtxRelease_v2(dev)
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: Handle) -> CUresult {
    guard(|| driver::set_current(from_ptr(ctx)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut Handle) -> CUresult {
    guard(|| {
        let id = driver::current_handle()?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pctx, to_ptr(id)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    guard(|| {
        driver::current()?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(device, 0) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    guard(|| {
        let context = context()?;
        context.drain_all();
        context.check()
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(
    leastPriority: *mut c_int,
    greatestPriority: *mut c_int,
) -> CUresult {
    guard(|| {
        driver::current()?;
        // Priorities are not modelled: the range is the single priority 0. Either pointer may
        // be null, as the driver allows.
        for out in [leastPriority, greatestPriority] {
            if !out.is_null() {
                // SAFETY: non-null, and writable by the caller's contract (module docs).
                unsafe { put(out, 0)? };
            }
        }
        Ok(())
    })
}

// ---- streams -----------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreate(phStream: *mut Handle, Flags: c_uint) -> CUresult {
    guard(|| {
        if phStream.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = context()?.create_stream(Flags)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(phStream, to_ptr(id)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    phStream: *mut Handle,
    flags: c_uint,
    _priority: c_int,
) -> CUresult {
    // SAFETY: same contract as `cuStreamCreate`; priorities are not modelled.
    unsafe { cuStreamCreate(phStream, flags) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamDestroy_v2(hStream: Handle) -> CUresult {
    guard(|| context()?.destroy_stream(from_ptr(hStream)))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamSynchronize(hStream: Handle) -> CUresult {
    guard(|| {
        let context = context()?;
        let stream = context.stream(from_ptr(hStream))?;
        context.synchronize_stream(&stream);
        context.check()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamQuery(hStream: Handle) -> CUresult {
    guard(|| {
        let context = context()?;
        let stream = context.stream(from_ptr(hStream))?;
        if context.stream_busy(&stream) {
            return Err(CUDA_ERROR_NOT_READY);
        }
        context.check()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuStreamWaitEvent(hStream: Handle, hEvent: Handle, Flags: c_uint) -> CUresult {
    guard(|| {
        if Flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let context = context()?;
        let stream = context.stream(from_ptr(hStream))?;
        let event = context.event(from_ptr(hEvent))?;
        context.wait_event(&stream, &event);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuStreamIsCapturing(
    hStream: Handle,
    captureStatus: *mut c_uint,
) -> CUresult {
    guard(|| {
        context()?.stream(from_ptr(hStream))?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter. Capture is not
        // modelled: the answer is always CU_STREAM_CAPTURE_STATUS_NONE.
        unsafe { put(captureStatus, 0) }
    })
}

// ---- events ------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(phEvent: *mut Handle, Flags: c_uint) -> CUresult {
    guard(|| {
        if phEvent.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let id = context()?.create_event(Flags)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(phEvent, to_ptr(id)) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventRecord(hEvent: Handle, hStream: Handle) -> CUresult {
    guard(|| {
        let context = context()?;
        let event = context.event(from_ptr(hEvent))?;
        let stream = context.stream(from_ptr(hStream))?;
        context.record(&event, &stream);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventQuery(hEvent: Handle) -> CUresult {
    guard(|| {
        let context = context()?;
        let event = context.event(from_ptr(hEvent))?;
        if !event.is_complete() {
            return Err(CUDA_ERROR_NOT_READY);
        }
        context.check()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventSynchronize(hEvent: Handle) -> CUresult {
    guard(|| {
        let context = context()?;
        context.event(from_ptr(hEvent))?.wait();
        context.check()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventDestroy_v2(hEvent: Handle) -> CUresult {
    guard(|| context()?.destroy_event(from_ptr(hEvent)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime(
    pMilliseconds: *mut f32,
    hStart: Handle,
    hEnd: Handle,
) -> CUresult {
    guard(|| {
        let context = context()?;
        let start = context.event(from_ptr(hStart))?.time()?;
        let end = context.event(from_ptr(hEnd))?.time()?;
        let ms = if end >= start {
            end.duration_since(start).as_secs_f32() * 1000.0
        } else {
            -(start.duration_since(end).as_secs_f32() * 1000.0)
        };
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pMilliseconds, ms) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventElapsedTime_v2(
    pMilliseconds: *mut f32,
    hStart: Handle,
    hEnd: Handle,
) -> CUresult {
    // SAFETY: same contract as `cuEventElapsedTime`.
    unsafe { cuEventElapsedTime(pMilliseconds, hStart, hEnd) }
}

// ---- memory ------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult {
    guard(|| {
        if dptr.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let context = context()?;
        let address = crate::lock::lock(&context.core.heap).alloc(bytesize)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(dptr, address) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    guard(|| context()?.free(dptr))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    guard(|| {
        let context = context()?;
        let used = crate::lock::lock(&context.core.heap).used();
        let as_usize = |v: u64| usize::try_from(v).map_err(|_| CUDA_ERROR_UNKNOWN);
        // SAFETY: the caller's contract (module docs) covers both out-parameters.
        unsafe {
            put(free, as_usize(device::TOTAL_MEMORY - used)?)?;
            put(total, as_usize(device::TOTAL_MEMORY)?)
        }
    })
}

/// Checks that `[address, address + len)` is device memory of `context`.
fn mapped(context: &Context, address: u64, len: usize) -> Result<(), CUresult> {
    if context.is_mapped(address, len) {
        Ok(())
    } else {
        Err(CUDA_ERROR_INVALID_VALUE)
    }
}

/// Queues `op` and, when `wait`, blocks until it ran; then reports the context's state.
fn queue(context: &Context, stream: &Arc<Stream>, op: Op, wait: bool) -> Result<(), CUresult> {
    let ticket = context.submit(stream, op);
    if wait {
        stream.progress.wait_for(ticket);
        context.check()?;
    }
    Ok(())
}

/// Host-to-device copy. From pageable memory the source is copied before the call returns (it
/// is staged) and the device write happens in stream order; as the driver documents for
/// pageable memory, the synchronous form first waits for the legacy stream, but returns before
/// the write itself has landed. From page-locked memory the copy reads the source when it runs:
/// the asynchronous form returns at once, the synchronous one once the copy has run.
///
/// # Safety
/// `src` is valid for reads of `len` bytes.
unsafe fn copy_to_device(
    hStream: Option<Handle>,
    dst: CUdeviceptr,
    src: *const c_void,
    len: usize,
) -> Result<(), CUresult> {
    let context = context()?;
    let stream = context.stream(hStream.map_or(0, from_ptr))?;
    if len == 0 {
        return Ok(());
    }
    if src.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    mapped(&context, dst, len)?;
    if host::contains(src.cast(), len) {
        let op = Op::HostToDeviceFromPinned {
            dst,
            src: HostSrc(src.cast()),
            len,
        };
        return queue(&context, &stream, op, hStream.is_none());
    }
    // SAFETY: non-null and valid for `len` bytes of reads by this function's contract.
    let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), len) }.to_vec();
    if hStream.is_none() {
        context.synchronize_stream(&stream);
        context.check()?;
    }
    queue(&context, &stream, Op::HostToDevice { dst, data }, false)
}

/// Device-to-host copy: returns once the copy ran, as for pageable host memory (all host
/// memory is pageable to the model).
///
/// # Safety
/// `dst` is valid for writes of `len` bytes.
unsafe fn copy_to_host(
    hStream: Option<Handle>,
    dst: *mut c_void,
    src: CUdeviceptr,
    len: usize,
) -> Result<(), CUresult> {
    let context = context()?;
    let stream = context.stream(hStream.map_or(0, from_ptr))?;
    if len == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    mapped(&context, src, len)?;
    let op = Op::DeviceToHost {
        src,
        dst: HostDst(dst.cast()),
        len,
    };
    // Waiting is what keeps `dst` valid while the worker writes it.
    queue(&context, &stream, op, true)
}

fn copy_on_device(
    hStream: Option<Handle>,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    len: usize,
) -> Result<(), CUresult> {
    let context = context()?;
    let stream = context.stream(hStream.map_or(0, from_ptr))?;
    if len == 0 {
        return Ok(());
    }
    mapped(&context, src, len)?;
    mapped(&context, dst, len)?;
    queue(
        &context,
        &stream,
        Op::DeviceToDevice { dst, src, len },
        false,
    )
}

fn memset(
    hStream: Option<Handle>,
    dst: CUdeviceptr,
    value: u8,
    len: usize,
) -> Result<(), CUresult> {
    let context = context()?;
    let stream = context.stream(hStream.map_or(0, from_ptr))?;
    if len == 0 {
        return Ok(());
    }
    mapped(&context, dst, len)?;
    queue(&context, &stream, Op::Memset { dst, value, len }, false)
}

/// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`.
const POINTER_ATTRIBUTE_MEMORY_TYPE: c_uint = 2;
/// `CU_MEMORYTYPE_HOST` and `CU_MEMORYTYPE_DEVICE`.
const MEMORYTYPE_HOST: c_uint = 1;
const MEMORYTYPE_DEVICE: c_uint = 2;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytesize: usize,
    Flags: c_uint,
) -> CUresult {
    guard(|| {
        driver::initialized()?;
        // PORTABLE, DEVICEMAP and WRITECOMBINED change nothing the model can show.
        if Flags & !0x7 != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let base = host::alloc(bytesize)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pp, base.cast::<c_void>()) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    guard(|| {
        let base = p.cast::<u8>();
        let len = host::len_at(base).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        if let Some(context) = driver::primary() {
            if context.core.in_use(base as u64, len) {
                eprintln!(
                    "jitseam-cuda-model: cuMemFreeHost of {len} bytes at {base:p} that queued \
                     work may still read"
                );
            }
            context.drain_all();
        }
        host::free(base)
    })
}

/// `cuPointerGetAttribute`, for `CU_POINTER_ATTRIBUTE_MEMORY_TYPE` only: host for page-locked
/// memory, device for the current context's allocations, `CUDA_ERROR_INVALID_VALUE` for memory
/// the driver does not know (pageable host memory).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: c_uint,
    ptr: CUdeviceptr,
) -> CUresult {
    guard(|| {
        if attribute != POINTER_ATTRIBUTE_MEMORY_TYPE {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let kind = if host::contains(ptr as *const u8, 1) {
            MEMORYTYPE_HOST
        } else if context()?.is_mapped(ptr, 1) {
            MEMORYTYPE_DEVICE
        } else {
            return Err(CUDA_ERROR_INVALID_VALUE);
        };
        // SAFETY: the caller's contract (module docs) covers the out-parameter, an `unsigned
        // int` for this attribute.
        unsafe { put(data.cast::<c_uint>(), kind) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dstDevice: CUdeviceptr,
    srcHost: *const c_void,
    ByteCount: usize,
) -> CUresult {
    // SAFETY: the caller's contract (module docs) covers `srcHost`.
    guard(|| unsafe { copy_to_device(None, dstDevice, srcHost, ByteCount) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dstDevice: CUdeviceptr,
    srcHost: *const c_void,
    ByteCount: usize,
    hStream: Handle,
) -> CUresult {
    // SAFETY: the caller's contract (module docs) covers `srcHost`.
    guard(|| unsafe { copy_to_device(Some(hStream), dstDevice, srcHost, ByteCount) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dstHost: *mut c_void,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
) -> CUresult {
    // SAFETY: the caller's contract (module docs) covers `dstHost`.
    guard(|| unsafe { copy_to_host(None, dstHost, srcDevice, ByteCount) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dstHost: *mut c_void,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
    hStream: Handle,
) -> CUresult {
    // SAFETY: the caller's contract (module docs) covers `dstHost`.
    guard(|| unsafe { copy_to_host(Some(hStream), dstHost, srcDevice, ByteCount) })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoD_v2(
    dstDevice: CUdeviceptr,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
) -> CUresult {
    guard(|| copy_on_device(None, dstDevice, srcDevice, ByteCount))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoDAsync_v2(
    dstDevice: CUdeviceptr,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
    hStream: Handle,
) -> CUresult {
    guard(|| copy_on_device(Some(hStream), dstDevice, srcDevice, ByteCount))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD8_v2(dstDevice: CUdeviceptr, uc: c_uchar, N: usize) -> CUresult {
    guard(|| memset(None, dstDevice, uc, N))
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD8Async(
    dstDevice: CUdeviceptr,
    uc: c_uchar,
    N: usize,
    hStream: Handle,
) -> CUresult {
    guard(|| memset(Some(hStream), dstDevice, uc, N))
}

// ---- modules and functions ---------------------------------------------------------------

/// Magic numbers of the binary images the model cannot run: ELF (cubin) and fatbin.
const BINARY_MAGICS: [&[u8]; 3] = [
    b"\x7fELF",
    &[0x50, 0xed, 0x55, 0xba],
    &[0xb1, 0x43, 0x62, 0x46],
];

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut Handle, image: *const c_void) -> CUresult {
    guard(|| {
        if module.is_null() || image.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let context = context()?;
        // SAFETY: a PTX image is NUL-terminated text (the caller's contract); a binary image
        // is refused below by its magic, which lies before its first NUL byte.
        let bytes = unsafe { CStr::from_ptr(image.cast::<c_char>()) }.to_bytes();
        if BINARY_MAGICS.iter().any(|magic| bytes.starts_with(magic)) {
            eprintln!("jitseam-cuda-model: cuModuleLoadData: only PTX text can be loaded");
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let ptx = std::str::from_utf8(bytes).map_err(|_| CUDA_ERROR_INVALID_IMAGE)?;
        let id = context.load_module(ptx.to_owned())?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(module, to_ptr(id)) }
    })
}

/// JIT options are accepted and ignored: the model has no compiler to tune or log.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    _numOptions: c_uint,
    _options: *mut c_uint,
    _optionValues: *mut *mut c_void,
) -> CUresult {
    // SAFETY: same contract as `cuModuleLoadData`.
    unsafe { cuModuleLoadData(module, image) }
}

#[unsafe(no_mangle)]
pub extern "C" fn cuModuleUnload(hmod: Handle) -> CUresult {
    guard(|| context()?.unload_module(from_ptr(hmod)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    hfunc: *mut Handle,
    hmod: Handle,
    name: *const c_char,
) -> CUresult {
    guard(|| {
        if hfunc.is_null() || name.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let context = context()?;
        // SAFETY: `name` is a NUL-terminated string (the caller's contract).
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        let id = context.get_function(from_ptr(hmod), name)?;
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(hfunc, to_ptr(id)) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetParamInfo(
    func: Handle,
    paramIndex: usize,
    paramOffset: *mut usize,
    paramSize: *mut usize,
) -> CUresult {
    guard(|| {
        let function = context()?.function(from_ptr(func))?;
        let &(offset, size) = function
            .program
            .param_layout()
            .get(paramIndex)
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: the caller's contract (module docs) covers both out-parameters.
        unsafe {
            put(paramOffset, offset)?;
            put(paramSize, size)
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuFuncGetAttribute(
    pi: *mut c_int,
    attrib: c_uint,
    hfunc: Handle,
) -> CUresult {
    guard(|| {
        let function = context()?.function(from_ptr(hfunc))?;
        let value = match attrib {
            0 => i32::try_from(device::MAX_THREADS_PER_BLOCK).unwrap_or(i32::MAX),
            1 => i32::try_from(function.program.static_shared_bytes()).unwrap_or(i32::MAX),
            2 | 3 | 7 => 0, // constant, local bytes; cache mode
            4 => i32::try_from(function.program.register_slots().min(255)).unwrap_or(255),
            5 => function.module.ptx_version(),
            6 => 90, // binary version: sm_90
            // The dynamic shared memory a launch may still ask for, besides the static.
            8 => i32::try_from(
                u64::from(device::MAX_SHARED_PER_BLOCK)
                    .saturating_sub(function.program.static_shared_bytes()),
            )
            .unwrap_or(i32::MAX),
            9 => -1, // preferred shared memory carveout: none
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        };
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pi, value) }
    })
}

/// Checks launch geometry against the device limits; a block's shared memory is the function's
/// static shared memory and the launch's dynamic shared memory together.
fn geometry(
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    static_shared: u64,
) -> Result<LaunchDims, CUresult> {
    let within =
        |dims: [u32; 3], max: [u32; 3]| dims.iter().zip(max).all(|(&d, m)| d >= 1 && d <= m);
    let threads = block.iter().map(|&b| u64::from(b)).product::<u64>();
    if !within(grid, device::MAX_GRID)
        || !within(block, device::MAX_BLOCK)
        || threads > u64::from(device::MAX_THREADS_PER_BLOCK)
        || u64::from(shared) + static_shared > u64::from(device::MAX_SHARED_PER_BLOCK)
    {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(LaunchDims {
        grid,
        block,
        dynamic_shared_bytes: shared,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: Handle,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    hStream: Handle,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    guard(|| {
        let context = context()?;
        let function = context.function(from_ptr(f))?;
        let stream = context.stream(from_ptr(hStream))?;
        if !extra.is_null() {
            eprintln!("jitseam-cuda-model: cuLaunchKernel: `extra` is not supported");
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        let dims = geometry(
            [gridDimX, gridDimY, gridDimZ],
            [blockDimX, blockDimY, blockDimZ],
            sharedMemBytes,
            function.program.static_shared_bytes(),
        )?;
        let layout = function.program.param_layout();
        if !layout.is_empty() && kernelParams.is_null() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // The packet is laid out as the PTX `.param` list says; each parameter's bytes are
        // read through its pointer, exactly as many as the PTX declares.
        let mut packet = vec![0u8; function.program.param_bytes()];
        for (index, &(offset, size)) in layout.iter().enumerate() {
            // SAFETY: `kernelParams` holds one pointer per kernel parameter (the caller's
            // contract), and `index` is below the parameter count.
            let param = unsafe { kernelParams.add(index).read() };
            if param.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let slot = packet
                .get_mut(offset..offset.saturating_add(size))
                .ok_or(CUDA_ERROR_UNKNOWN)?;
            // SAFETY: `param` points to the parameter's `size` bytes (the caller's contract);
            // `slot` is a distinct, freshly allocated buffer of exactly `size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(param.cast::<u8>(), slot.as_mut_ptr(), size) };
        }
        context.launch(function, &stream, dims, packet);
        Ok(())
    })
}

// ---- errors ------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(error: c_uint, pStr: *mut *const c_char) -> CUresult {
    guard(|| {
        let text = status::description(error);
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pStr, text.unwrap_or(std::ptr::null())) }?;
        text.map(drop).ok_or(CUDA_ERROR_INVALID_VALUE)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(error: c_uint, pStr: *mut *const c_char) -> CUresult {
    guard(|| {
        let name = status::name(error);
        // SAFETY: the caller's contract (module docs) covers the out-parameter.
        unsafe { put(pStr, name.unwrap_or(std::ptr::null())) }?;
        name.map(drop).ok_or(CUDA_ERROR_INVALID_VALUE)
    })
}

// ---- what NVIDIA's own libraries ask of the driver ------------------------------------------

/// `cuGetExportTable`: the driver's private interface tables, which NVIDIA's own libraries look
/// up by UUID. NVRTC opens `libcuda.so.1` while it compiles and asks for one; it copes with a
/// driver that has none, but not with a `libcuda` that lacks the entry point altogether (it
/// then dereferences a table it never got). The model has no table to give: it answers
/// `CUDA_ERROR_NOT_SUPPORTED`, with the table pointer null, and NVRTC compiles as it does on a
/// machine without a driver.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetExportTable(
    ppExportTable: *mut *const c_void,
    _pExportTableId: *const c_void,
) -> CUresult {
    guard(|| {
        if !ppExportTable.is_null() {
            // SAFETY: non-null, and writable by the caller's contract (module docs).
            unsafe { put(ppExportTable, std::ptr::null())? };
        }
        Err(CUDA_ERROR_NOT_SUPPORTED)
    })
}
