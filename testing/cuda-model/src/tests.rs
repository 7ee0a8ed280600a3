//! The model's own semantics, through its exported entry points.
//!
//! The driver state is process-wide, so every test takes [`SERIAL`] and runs in a fresh primary
//! context (released at the end, which destroys it and clears any sticky error).

use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr::null_mut;
use std::sync::{Mutex, PoisonError};

use cudarc::driver::sys as cu;

use crate::api::*;
use crate::status::*;

const ADD_F32_PTX: &str = include_str!("../../../tests/fixtures/add_f32_scalar.ptx");
const ADD_F32: &str = "baracuda_gen_add_f32_scalar";

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` with a fresh primary context current on this thread.
fn with_context(body: impl FnOnce()) {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    assert_eq!(cuInit(0), CUDA_SUCCESS);
    let mut ctx = null_mut();
    // SAFETY: `ctx` is a live out-parameter.
    let status = unsafe { cuDevicePrimaryCtxRetain(&mut ctx, 0) };
    assert_eq!(status, CUDA_SUCCESS);
    assert_eq!(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    body();
    assert_eq!(cuCtxSetCurrent(null_mut()), CUDA_SUCCESS);
    assert_eq!(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
}

fn alloc(bytes: usize) -> u64 {
    let mut ptr = 0;
    // SAFETY: `ptr` is a live out-parameter.
    assert_eq!(unsafe { cuMemAlloc_v2(&mut ptr, bytes) }, CUDA_SUCCESS);
    ptr
}

fn upload_f32(data: &[f32]) -> u64 {
    let bytes = std::mem::size_of_val(data);
    let ptr = alloc(bytes);
    // SAFETY: `data` is valid for `bytes` bytes of reads.
    let status = unsafe { cuMemcpyHtoD_v2(ptr, data.as_ptr().cast(), bytes) };
    assert_eq!(status, CUDA_SUCCESS);
    // The synchronous copy returns before it lands; non-blocking streams must not race it.
    assert_eq!(cuStreamSynchronize(null_mut()), CUDA_SUCCESS);
    ptr
}

fn download_f32(ptr: u64, len: usize) -> Result<Vec<f32>, CUresult> {
    let mut out = vec![0f32; len];
    // SAFETY: `out` is valid for `len` floats of writes.
    let status = unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), ptr, len * 4) };
    if status == CUDA_SUCCESS {
        Ok(out)
    } else {
        Err(status)
    }
}

fn load(ptx: &str) -> Handle {
    let image = CString::new(ptx).unwrap();
    let mut module = null_mut();
    // SAFETY: `image` is NUL-terminated; `module` is a live out-parameter.
    let status = unsafe { cuModuleLoadData(&mut module, image.as_ptr().cast()) };
    assert_eq!(status, CUDA_SUCCESS);
    module
}

fn function(module: Handle, name: &str) -> Result<Handle, CUresult> {
    let name = CString::new(name).unwrap();
    let mut function = null_mut();
    // SAFETY: `name` is NUL-terminated; `function` is a live out-parameter.
    match unsafe { cuModuleGetFunction(&mut function, module, name.as_ptr()) } {
        CUDA_SUCCESS => Ok(function),
        status => Err(status),
    }
}

fn add_kernel() -> (Handle, Handle) {
    let module = load(ADD_F32_PTX);
    (module, function(module, ADD_F32).unwrap())
}

/// Launches `add(a, b, out, n)` with a 1-D geometry.
fn launch_add(f: Handle, stream: Handle, [a, b, out]: [u64; 3], n: i64, grid: u32) -> CUresult {
    let (mut a, mut b, mut out, mut n) = (a, b, out, n);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut b).cast(),
        (&raw mut out).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: one pointer per parameter of the add kernel, each to a live local of its type.
    unsafe {
        cuLaunchKernel(
            f,
            grid,
            1,
            1,
            128,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            null_mut(),
        )
    }
}

fn new_stream(flags: u32) -> Handle {
    let mut stream = null_mut();
    // SAFETY: `stream` is a live out-parameter.
    assert_eq!(unsafe { cuStreamCreate(&mut stream, flags) }, CUDA_SUCCESS);
    stream
}

fn new_event(flags: u32) -> Handle {
    let mut event = null_mut();
    // SAFETY: `event` is a live out-parameter.
    assert_eq!(unsafe { cuEventCreate(&mut event, flags) }, CUDA_SUCCESS);
    event
}

fn f32s(n: usize, f: impl Fn(usize) -> f32) -> Vec<f32> {
    (0..n).map(f).collect()
}

/// Three buffers of `n` floats: `a[i] = i`, `b[i] = 2`, `out` uninitialized.
fn add_buffers(n: usize) -> [u64; 3] {
    [
        upload_f32(&f32s(n, |i| i as f32)),
        upload_f32(&vec![2.0; n]),
        alloc(n * 4),
    ]
}

fn added(n: usize) -> Vec<f32> {
    f32s(n, |i| i as f32 + 2.0)
}

// ---- the ABI -----------------------------------------------------------------------------

#[test]
fn status_codes_match_the_driver_headers() {
    use cu::CUresult as R;
    let pairs = [
        (CUDA_SUCCESS, R::CUDA_SUCCESS),
        (CUDA_ERROR_INVALID_VALUE, R::CUDA_ERROR_INVALID_VALUE),
        (CUDA_ERROR_OUT_OF_MEMORY, R::CUDA_ERROR_OUT_OF_MEMORY),
        (CUDA_ERROR_NOT_INITIALIZED, R::CUDA_ERROR_NOT_INITIALIZED),
        (CUDA_ERROR_DEINITIALIZED, R::CUDA_ERROR_DEINITIALIZED),
        (CUDA_ERROR_NO_DEVICE, R::CUDA_ERROR_NO_DEVICE),
        (CUDA_ERROR_INVALID_DEVICE, R::CUDA_ERROR_INVALID_DEVICE),
        (CUDA_ERROR_INVALID_IMAGE, R::CUDA_ERROR_INVALID_IMAGE),
        (CUDA_ERROR_INVALID_CONTEXT, R::CUDA_ERROR_INVALID_CONTEXT),
        (CUDA_ERROR_INVALID_PTX, R::CUDA_ERROR_INVALID_PTX),
        (CUDA_ERROR_INVALID_HANDLE, R::CUDA_ERROR_INVALID_HANDLE),
        (CUDA_ERROR_NOT_FOUND, R::CUDA_ERROR_NOT_FOUND),
        (CUDA_ERROR_NOT_READY, R::CUDA_ERROR_NOT_READY),
        (CUDA_ERROR_ILLEGAL_ADDRESS, R::CUDA_ERROR_ILLEGAL_ADDRESS),
        (
            CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        ),
        (
            CUDA_ERROR_MISALIGNED_ADDRESS,
            R::CUDA_ERROR_MISALIGNED_ADDRESS,
        ),
        (CUDA_ERROR_LAUNCH_FAILED, R::CUDA_ERROR_LAUNCH_FAILED),
        (CUDA_ERROR_NOT_PERMITTED, R::CUDA_ERROR_NOT_PERMITTED),
        (CUDA_ERROR_NOT_SUPPORTED, R::CUDA_ERROR_NOT_SUPPORTED),
        (CUDA_ERROR_UNKNOWN, R::CUDA_ERROR_UNKNOWN),
    ];
    assert_eq!(pairs.len(), ALL.len(), "every modelled code is checked");
    for (ours, theirs) in pairs {
        assert_eq!(ours, theirs as u32, "{theirs:?}");
        let (_, name) = ALL.iter().find(|(code, _)| *code == ours).unwrap();
        assert_eq!(*name, format!("{theirs:?}"));
    }
}

#[test]
fn attribute_numbers_match_the_driver_headers() {
    use cu::CUdevice_attribute as A;
    let expect = [
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9),
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0),
        (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, i32::MAX),
        (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024),
        (A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024),
        (A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32),
        (A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 4),
        (A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0),
        (A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1),
    ];
    for (attribute, value) in expect {
        assert_eq!(
            crate::device::attribute(attribute as u32),
            Ok(value),
            "{attribute:?}"
        );
    }
    assert_eq!(
        crate::device::attribute(A::CU_DEVICE_ATTRIBUTE_MAX as u32),
        Err(CUDA_ERROR_INVALID_VALUE)
    );
    assert_eq!(
        cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
        crate::stream::NON_BLOCKING
    );
    assert_eq!(
        cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
        crate::event::DISABLE_TIMING
    );
}

#[test]
fn every_symbol_cudarc_calls_is_exported_once() {
    let exported = |name: &str| IMPLEMENTED.contains(&name) || crate::stubs::STUBS.contains(&name);
    let missing: Vec<_> = crate::cudarc_symbols::CUDARC_SYMBOLS
        .iter()
        .filter(|n| !exported(n))
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    let both: Vec<_> = IMPLEMENTED
        .iter()
        .filter(|n| crate::stubs::STUBS.contains(n))
        .collect();
    assert!(both.is_empty(), "implemented and stubbed: {both:?}");
}

#[test]
fn stubs_answer_not_supported() {
    assert_eq!(crate::stubs::cuMemAllocAsync(), CUDA_ERROR_NOT_SUPPORTED);
    assert_eq!(crate::stubs::cuGraphLaunch(), CUDA_ERROR_NOT_SUPPORTED);
    assert_eq!(crate::stubs::cuCtxCreate_v4(), CUDA_ERROR_NOT_SUPPORTED);
}

#[test]
fn error_names_and_strings() {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: `text` is a live out-parameter.
    assert_eq!(unsafe { cuGetErrorName(700, &mut text) }, CUDA_SUCCESS);
    // SAFETY: the model returns a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(text) };
    assert_eq!(name.to_str().unwrap(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    // SAFETY: `text` is a live out-parameter.
    assert_eq!(unsafe { cuGetErrorString(1, &mut text) }, CUDA_SUCCESS);
    // SAFETY: as above.
    let description = unsafe { CStr::from_ptr(text) };
    assert_eq!(description.to_str().unwrap(), "invalid argument");
    // SAFETY: `text` is a live out-parameter.
    let status = unsafe { cuGetErrorName(12_345, &mut text) };
    assert_eq!(status, CUDA_ERROR_INVALID_VALUE);
    assert!(text.is_null());
}

#[test]
fn version_and_device_queries() {
    with_context(|| {
        let mut version = 0;
        // SAFETY: live out-parameter.
        assert_eq!(unsafe { cuDriverGetVersion(&mut version) }, CUDA_SUCCESS);
        assert!(version >= 12_080);
        let mut count = 0;
        // SAFETY: live out-parameter.
        assert_eq!(unsafe { cuDeviceGetCount(&mut count) }, CUDA_SUCCESS);
        assert_eq!(count, 1);
        let mut device = -1;
        // SAFETY: live out-parameter.
        let status = unsafe { cuDeviceGet(&mut device, 1) };
        assert_eq!(status, CUDA_ERROR_INVALID_DEVICE);
        let mut name = [0 as c_char; 8];
        // SAFETY: `name` is valid for 8 bytes.
        let status = unsafe { cuDeviceGetName(name.as_mut_ptr(), 8, 0) };
        assert_eq!(status, CUDA_SUCCESS);
        // SAFETY: the model NUL-terminates within the given length.
        let short = unsafe { CStr::from_ptr(name.as_ptr()) };
        assert_eq!(short.to_bytes(), b"jitseam");
        let (mut free, mut total) = (0, 0);
        let before = {
            // SAFETY: live out-parameters.
            let status = unsafe { cuMemGetInfo_v2(&mut free, &mut total) };
            assert_eq!(status, CUDA_SUCCESS);
            free
        };
        let ptr = alloc(1 << 20);
        // SAFETY: live out-parameters.
        let status = unsafe { cuMemGetInfo_v2(&mut free, &mut total) };
        assert_eq!(status, CUDA_SUCCESS);
        assert_eq!(before - free, 1 << 20);
        assert_eq!(cuMemFree_v2(ptr), CUDA_SUCCESS);
    });
}

// ---- handles -----------------------------------------------------------------------------

#[test]
fn invalid_handles_are_refused() {
    with_context(|| {
        let bogus = crate::handle::to_ptr(0xdead_0000);
        assert_eq!(cuStreamSynchronize(bogus), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuStreamDestroy_v2(bogus), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuEventQuery(bogus), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuModuleUnload(bogus), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(
            launch_add(bogus, null_mut(), [0; 3], 0, 1),
            CUDA_ERROR_INVALID_HANDLE
        );
        // An event is not a stream, and a destroyed stream is gone.
        let event = new_event(0);
        assert_eq!(cuStreamSynchronize(event), CUDA_ERROR_INVALID_HANDLE);
        let stream = new_stream(0);
        assert_eq!(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
        assert_eq!(cuStreamQuery(stream), CUDA_ERROR_INVALID_HANDLE);
        // The legacy stream has two names; the per-thread stream is not modelled.
        assert_eq!(cuStreamSynchronize(null_mut()), CUDA_SUCCESS);
        assert_eq!(cuStreamSynchronize(crate::handle::to_ptr(1)), CUDA_SUCCESS);
        assert_eq!(
            cuStreamSynchronize(crate::handle::to_ptr(2)),
            CUDA_ERROR_NOT_SUPPORTED
        );
        assert_eq!(cuEventDestroy_v2(event), CUDA_SUCCESS);
        assert_eq!(cuEventDestroy_v2(event), CUDA_ERROR_INVALID_HANDLE);
    });
}

#[test]
fn freeing_an_unknown_pointer_is_invalid_value() {
    with_context(|| {
        let ptr = alloc(64);
        assert_eq!(cuMemFree_v2(ptr + 8), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemFree_v2(0x1234), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemFree_v2(ptr), CUDA_SUCCESS);
        assert_eq!(cuMemFree_v2(ptr), CUDA_ERROR_INVALID_VALUE);
        // Copies outside every allocation are refused before they queue.
        assert_eq!(download_f32(ptr, 4), Err(CUDA_ERROR_INVALID_VALUE));
    });
}

#[test]
fn functions_of_an_unloaded_module_are_invalid_handles() {
    with_context(|| {
        let (module, f) = add_kernel();
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
        assert_eq!(
            launch_add(f, null_mut(), add_buffers(4), 4, 1),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(cuModuleUnload(module), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxSynchronize(), CUDA_SUCCESS);
    });
}

#[test]
fn modules_refuse_bad_images_and_names() {
    with_context(|| {
        let module = load(ADD_F32_PTX);
        assert_eq!(function(module, "nope"), Err(CUDA_ERROR_NOT_FOUND));
        // The same name resolves to the same handle.
        assert_eq!(function(module, ADD_F32), function(module, ADD_F32));
        let garbage = CString::new(".version 8.8\n.target sm_80\n.entry (").unwrap();
        let mut out = null_mut();
        // SAFETY: NUL-terminated image, live out-parameter.
        let status = unsafe { cuModuleLoadData(&mut out, garbage.as_ptr().cast()) };
        assert_eq!(status, CUDA_ERROR_INVALID_PTX);
        let elf = b"\x7fELF\x02\x01\x01\0";
        // SAFETY: the image holds a NUL byte after its magic.
        let status = unsafe { cuModuleLoadData(&mut out, elf.as_ptr().cast()) };
        assert_eq!(status, CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

#[test]
fn param_info_follows_the_ptx_param_list() {
    with_context(|| {
        let (module, f) = add_kernel();
        let mut got = Vec::new();
        for index in 0.. {
            let (mut offset, mut size) = (0, 0);
            // SAFETY: live out-parameters.
            match unsafe { cuFuncGetParamInfo(f, index, &mut offset, &mut size) } {
                CUDA_SUCCESS => got.push((offset, size)),
                status => {
                    assert_eq!(status, CUDA_ERROR_INVALID_VALUE);
                    break;
                }
            }
        }
        assert_eq!(got, [(0, 8), (8, 8), (16, 8), (24, 8)]);
        let mut ptx_version = 0;
        // SAFETY: live out-parameter.
        let status = unsafe { cuFuncGetAttribute(&mut ptx_version, 5, f) };
        assert_eq!((status, ptx_version), (CUDA_SUCCESS, 88));
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

// ---- launches ----------------------------------------------------------------------------

#[test]
fn a_launch_computes_what_rust_computes() {
    with_context(|| {
        let n = 1000;
        let (module, f) = add_kernel();
        let buffers = add_buffers(n);
        assert_eq!(
            launch_add(f, null_mut(), buffers, n as i64, 4),
            CUDA_SUCCESS
        );
        assert_eq!(download_f32(buffers[2], n).unwrap(), added(n));
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

#[test]
fn bad_launches_are_refused_before_they_queue() {
    with_context(|| {
        let (module, f) = add_kernel();
        let buffers = add_buffers(4);
        let mut params = [null_mut::<c_void>(); 4];
        let mut extra = [null_mut::<c_void>(); 1];
        let launch = |block: u32, params: *mut *mut c_void, extra: *mut *mut c_void| {
            // SAFETY: only refused launches: nothing reads through the null parameters.
            unsafe { cuLaunchKernel(f, 1, 1, 1, block, 1, 1, 0, null_mut(), params, extra) }
        };
        assert_eq!(
            launch(2048, params.as_mut_ptr(), null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            launch(0, params.as_mut_ptr(), null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(launch(32, null_mut(), null_mut()), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            launch(32, params.as_mut_ptr(), null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            launch(32, params.as_mut_ptr(), extra.as_mut_ptr()),
            CUDA_ERROR_NOT_SUPPORTED
        );
        assert_eq!(launch_add(f, null_mut(), buffers, 4, 1), CUDA_SUCCESS);
        assert_eq!(cuCtxSynchronize(), CUDA_SUCCESS);
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

#[test]
fn a_fault_is_sticky_until_the_context_goes() {
    with_context(|| {
        let (_module, f) = add_kernel();
        let buffers = add_buffers(16);
        // n runs past every buffer.
        assert_eq!(launch_add(f, null_mut(), buffers, 4096, 1), CUDA_SUCCESS);
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(cuStreamSynchronize(null_mut()), CUDA_ERROR_ILLEGAL_ADDRESS);
        let mut ptr = 0;
        // SAFETY: live out-parameter.
        let status = unsafe { cuMemAlloc_v2(&mut ptr, 64) };
        assert_eq!(status, CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(
            launch_add(f, null_mut(), buffers, 16, 1),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
    });
    // A fresh context works again.
    with_context(|| {
        assert_eq!(cuCtxSynchronize(), CUDA_SUCCESS);
        alloc(64);
    });
}

#[test]
fn unloading_under_queued_launches_fails_the_context() {
    with_context(|| {
        let n = 1 << 16;
        let (module, f) = add_kernel();
        let buffers = add_buffers(n);
        let stream = new_stream(crate::stream::NON_BLOCKING);
        for _ in 0..8 {
            assert_eq!(launch_add(f, stream, buffers, n as i64, 64), CUDA_SUCCESS);
        }
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
        assert_eq!(cuStreamSynchronize(stream), CUDA_ERROR_LAUNCH_FAILED);
    });
}

// ---- ordering ----------------------------------------------------------------------------

#[test]
fn a_stream_waiting_on_an_event_sees_the_recorded_work() {
    with_context(|| {
        let n = 1 << 16;
        let (module, f) = add_kernel();
        let buffers = add_buffers(n);
        let copy = alloc(n * 4);
        let producer = new_stream(crate::stream::NON_BLOCKING);
        let consumer = new_stream(crate::stream::NON_BLOCKING);
        let done = new_event(0);
        let never = new_event(0);
        assert_eq!(
            cuEventQuery(never),
            CUDA_SUCCESS,
            "never recorded = complete"
        );
        for _ in 0..4 {
            assert_eq!(launch_add(f, producer, buffers, n as i64, 64), CUDA_SUCCESS);
        }
        assert_eq!(cuEventRecord(done, producer), CUDA_SUCCESS);
        assert_eq!(cuStreamWaitEvent(consumer, done, 0), CUDA_SUCCESS);
        assert_eq!(
            cuMemcpyDtoDAsync_v2(copy, buffers[2], n * 4, consumer),
            CUDA_SUCCESS
        );
        assert_eq!(cuStreamSynchronize(consumer), CUDA_SUCCESS);
        // The consumer finished, so the work it waited for did too.
        assert_eq!(cuEventQuery(done), CUDA_SUCCESS);
        assert_eq!(download_f32(copy, n).unwrap(), added(n));
        assert_eq!(cuStreamSynchronize(producer), CUDA_SUCCESS);
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

#[test]
fn context_synchronization_waits_for_destroyed_streams() {
    with_context(|| {
        let n = 1 << 16;
        let (module, f) = add_kernel();
        let buffers = add_buffers(n);
        let stream = new_stream(crate::stream::NON_BLOCKING);
        for _ in 0..4 {
            assert_eq!(launch_add(f, stream, buffers, n as i64, 64), CUDA_SUCCESS);
        }
        // Destroying a busy stream lets its work finish; synchronizing the context waits for it.
        assert_eq!(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
        assert_eq!(cuCtxSynchronize(), CUDA_SUCCESS);
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
        assert_eq!(
            cuCtxSynchronize(),
            CUDA_SUCCESS,
            "no launch was still queued"
        );
        let mut out = vec![0f32; n];
        // SAFETY: `out` is valid for `n` floats of writes.
        let status = unsafe { cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), buffers[2], n * 4) };
        assert_eq!(status, CUDA_SUCCESS);
        assert_eq!(out, added(n));
    });
}

#[test]
fn the_legacy_stream_waits_for_blocking_streams() {
    with_context(|| {
        let n = 1 << 16;
        let (module, f) = add_kernel();
        let buffers = add_buffers(n);
        let blocking = new_stream(0);
        for _ in 0..4 {
            assert_eq!(launch_add(f, blocking, buffers, n as i64, 64), CUDA_SUCCESS);
        }
        // A synchronous copy runs on the legacy stream, after the blocking stream's work.
        assert_eq!(download_f32(buffers[2], n).unwrap(), added(n));
        assert_eq!(cuStreamQuery(blocking), CUDA_SUCCESS);
        assert_eq!(cuModuleUnload(module), CUDA_SUCCESS);
    });
}

#[test]
fn elapsed_time_needs_timed_recorded_finished_events() {
    with_context(|| {
        let start = new_event(0);
        let end = new_event(0);
        let untimed = new_event(crate::event::DISABLE_TIMING);
        let mut ms = 0f32;
        // SAFETY: live out-parameter.
        let elapsed = |ms: &mut f32, a, b| unsafe { cuEventElapsedTime(ms, a, b) };
        assert_eq!(elapsed(&mut ms, start, end), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuEventRecord(start, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuEventRecord(end, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuEventRecord(untimed, null_mut()), CUDA_SUCCESS);
        assert_eq!(cuEventSynchronize(end), CUDA_SUCCESS);
        assert_eq!(elapsed(&mut ms, start, end), CUDA_SUCCESS);
        assert!(ms >= 0.0);
        assert_eq!(elapsed(&mut ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
    });
}
