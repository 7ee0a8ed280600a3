//! Process-wide driver state: initialization, the device's primary context and each thread's
//! current context.
//!
//! `JITSEAM_CUDA_MODEL_DEVICES=0` in the environment (read by `cuInit`) makes the model report
//! no device, so callers' "driver present, no GPU" path can be tested too; any other value, or
//! none, gives the one modelled device.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use crate::context::Context;
use crate::lock::lock;
use crate::status::{
    CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NOT_INITIALIZED, CUresult,
};

static INITIALIZED: AtomicBool = AtomicBool::new(false);
static DEVICES: AtomicI32 = AtomicI32::new(1);
static PRIMARY: Mutex<Option<Primary>> = Mutex::new(None);

thread_local! {
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

/// The primary context and how many retains it has.
#[derive(Debug)]
struct Primary {
    context: Arc<Context>,
    retains: u32,
}

/// `cuInit`.
pub(crate) fn init(flags: u32) -> Result<(), CUresult> {
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let devices = match std::env::var("JITSEAM_CUDA_MODEL_DEVICES").as_deref() {
        Ok("0") => 0,
        _ => 1,
    };
    DEVICES.store(devices, Ordering::Release);
    if devices == 0 {
        return Err(CUDA_ERROR_NO_DEVICE);
    }
    INITIALIZED.store(true, Ordering::Release);
    Ok(())
}

/// `CUDA_ERROR_NOT_INITIALIZED` before a successful `cuInit`.
pub(crate) fn initialized() -> Result<(), CUresult> {
    if INITIALIZED.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(CUDA_ERROR_NOT_INITIALIZED)
    }
}

/// How many devices `cuDeviceGetCount` reports.
pub(crate) fn device_count() -> Result<i32, CUresult> {
    initialized()?;
    Ok(DEVICES.load(Ordering::Acquire))
}

/// Checks a `CUdevice` (an ordinal).
pub(crate) fn device(ordinal: i32) -> Result<i32, CUresult> {
    if (0..device_count()?).contains(&ordinal) {
        Ok(ordinal)
    } else {
        Err(CUDA_ERROR_INVALID_DEVICE)
    }
}

/// `cuDevicePrimaryCtxRetain`: the primary context, created on the first retain.
pub(crate) fn retain_primary(ordinal: i32) -> Result<u64, CUresult> {
    device(ordinal)?;
    let mut primary = lock(&PRIMARY);
    match primary.as_mut() {
        Some(p) => {
            p.retains += 1;
            Ok(p.context.id)
        }
        None => {
            let context = Arc::new(Context::create()?);
            let id = context.id;
            *primary = Some(Primary {
                context,
                retains: 1,
            });
            Ok(id)
        }
    }
}

/// `cuDevicePrimaryCtxRelease`: the last release destroys the context and everything in it.
pub(crate) fn release_primary(ordinal: i32) -> Result<(), CUresult> {
    device(ordinal)?;
    let mut primary = lock(&PRIMARY);
    let p = primary.as_mut().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    p.retains -= 1;
    if p.retains == 0
        && let Some(p) = primary.take()
    {
        drop(primary);
        p.context.destroy();
    }
    Ok(())
}

/// `cuCtxSetCurrent`: `0` unbinds.
pub(crate) fn set_current(handle: u64) -> Result<(), CUresult> {
    initialized()?;
    let context = if handle == 0 {
        None
    } else {
        let primary = lock(&PRIMARY);
        let context = primary
            .as_ref()
            .filter(|p| p.context.id == handle)
            .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        Some(Arc::clone(&context.context))
    };
    CURRENT.with(|current| *current.borrow_mut() = context);
    Ok(())
}

/// `cuCtxGetCurrent`: `0` when the thread has none.
pub(crate) fn current_handle() -> Result<u64, CUresult> {
    initialized()?;
    Ok(CURRENT.with(|current| current.borrow().as_ref().map_or(0, |c| c.id)))
}

/// The calling thread's context, usable (not destroyed). Sticky errors are the caller's to
/// check: some calls still answer in an error state.
pub(crate) fn current() -> Result<Arc<Context>, CUresult> {
    initialized()?;
    let context = CURRENT
        .with(|current| current.borrow().clone())
        .ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
    match context.check() {
        Err(CUDA_ERROR_INVALID_CONTEXT) => Err(CUDA_ERROR_INVALID_CONTEXT),
        _ => Ok(context),
    }
}

/// The primary context, if it exists: where page-locked memory's queued copies run.
pub(crate) fn primary() -> Option<Arc<Context>> {
    lock(&PRIMARY).as_ref().map(|p| Arc::clone(&p.context))
}
