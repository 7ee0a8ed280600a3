//! Which live [`Device`] uses which cudarc context, so that a context handed in twice
//! ([`Device::from_cudarc`]) is one device with one id, and a cudarc slice's context names the
//! device a launch checks it against.
//!
//! Weak on both sides: an entry keeps neither the context nor the device alive, and entries
//! whose device is gone are swept whenever one is added.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use cudarc::driver::CudaContext;

use super::error::lock;
use crate::device::{Device, DeviceId, WeakDevice};

struct Entry {
    ctx: Weak<CudaContext>,
    device: WeakDevice,
}

fn entries() -> MutexGuard<'static, Vec<Entry>> {
    static ENTRIES: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
    lock(ENTRIES.get_or_init(Default::default))
}

/// Records that `device` runs on `ctx`.
pub(super) fn register(ctx: &Arc<CudaContext>, device: &Device) {
    let mut entries = entries();
    entries.retain(|e| !e.device.is_dead() && e.ctx.strong_count() > 0);
    entries.push(Entry {
        ctx: Arc::downgrade(ctx),
        device: device.downgrade(),
    });
}

/// The live device that runs on `ctx`, if any; `make` opens one (and it is registered) if none
/// does. The registry stays locked meanwhile, so two callers never open two devices.
pub(super) fn device_for<E>(
    ctx: &Arc<CudaContext>,
    make: impl FnOnce() -> Result<Device, E>,
) -> Result<Device, E> {
    let mut entries = entries();
    if let Some(device) = find(&entries, ctx) {
        return Ok(device);
    }
    let device = make()?;
    entries.retain(|e| !e.device.is_dead() && e.ctx.strong_count() > 0);
    entries.push(Entry {
        ctx: Arc::downgrade(ctx),
        device: device.downgrade(),
    });
    Ok(device)
}

fn find(entries: &[Entry], ctx: &Arc<CudaContext>) -> Option<Device> {
    entries
        .iter()
        .filter(|e| std::ptr::eq(e.ctx.as_ptr(), Arc::as_ptr(ctx)))
        .find_map(|e| e.device.upgrade())
}

/// The id of the live device that runs on `ctx`, if any.
pub(super) fn id_of(ctx: &Arc<CudaContext>) -> Option<DeviceId> {
    entries()
        .iter()
        .filter(|e| std::ptr::eq(e.ctx.as_ptr(), Arc::as_ptr(ctx)) && !e.device.is_dead())
        .map(|e| e.device.id())
        .next()
}

/// The context of the live device `id`, if it is a CUDA device.
pub(super) fn ctx_of(id: DeviceId) -> Option<Arc<CudaContext>> {
    entries()
        .iter()
        .filter(|e| e.device.id() == id && !e.device.is_dead())
        .find_map(|e| e.ctx.upgrade())
}
