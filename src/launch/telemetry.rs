//! The telemetry hook of the launch path: a device's sink, attached once; the dispatch cell a
//! bound kernel counts each launch into; the launches each stream has queued since it last
//! finished cleanly, so that a fault its next synchronization reports is counted as a fault of
//! the kernel that caused it instead of a dispatch; and refusals at `load_for` and `bind`,
//! counted as declines of the kernel.
//!
//! # Which launch faulted
//!
//! A fault is reported after the fact, by the next `synchronize` or read on the stream. The
//! emulator's faults name their entry: the fault goes to the kernel of that name launched on
//! that stream since its last clean synchronization (the latest, if kernels of one name but
//! two cells ran). A sticky CUDA error names no kernel: it goes to the kernel launched there
//! last, which is the one that faulted when a stream is synchronized after each launch that
//! matters. Either way the launch moves from the kernel's dispatches to its faults.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::artifact::Artifact;
use crate::device::{BackendKind, BackendStream, Device, LaunchHook, Stream};
use crate::dtype::ElementKind;
use crate::error::Error;
use crate::telemetry::{DispatchHandle, HwStamp, ImplId, StructureKey, TelemetrySink};

/// What a device with a sink attached keeps for the launch path.
struct DeviceTelemetry {
    sink: Arc<TelemetrySink>,
    /// Per stream, the cells of the kernels launched there since it last reported, latest
    /// last. A stream that is gone is forgotten (its weak handle no longer upgrades).
    pending: Mutex<Vec<Pending>>,
}

struct Pending {
    stream: Weak<dyn BackendStream>,
    launches: Vec<DispatchHandle>,
}

impl DeviceTelemetry {
    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        // Recording never panics while holding the lock: a poisoned one is still consistent.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `cell`'s kernel was just launched on `stream`.
    fn launched(&self, stream: &Arc<dyn BackendStream>, cell: &DispatchHandle) {
        let mut pending = self.pending();
        let index = match pending
            .iter()
            .position(|p| std::ptr::addr_eq(p.stream.as_ptr(), Arc::as_ptr(stream)))
        {
            Some(index) => index,
            None => {
                pending.retain(|p| p.stream.strong_count() > 0);
                pending.push(Pending {
                    stream: Arc::downgrade(stream),
                    launches: Vec::new(),
                });
                pending.len() - 1
            }
        };
        let Some(Pending { launches, .. }) = pending.get_mut(index) else {
            return;
        };
        // Latest last: a repeat moves to the end (most launches repeat the last kernel).
        if launches.last().is_some_and(|last| last.same_cell(cell)) {
            return;
        }
        launches.retain(|held| !held.same_cell(cell));
        launches.push(cell.clone());
    }

    /// The launches pending on `stream`, which has just reported; empties its list.
    fn take(&self, stream: &Arc<dyn BackendStream>) -> Vec<DispatchHandle> {
        let mut pending = self.pending();
        pending
            .iter_mut()
            .find(|p| std::ptr::addr_eq(p.stream.as_ptr(), Arc::as_ptr(stream)))
            .map(|p| std::mem::take(&mut p.launches))
            .unwrap_or_default()
    }
}

impl LaunchHook for DeviceTelemetry {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn failed(&self, stream: &Arc<dyn BackendStream>, error: &Error) {
        let launches = self.take(stream);
        let Some(named) = error.kernel_fault() else {
            return;
        };
        let faulted = match named {
            Some(entry) => launches.iter().rev().find(|h| h.entry() == Some(entry)),
            None => launches.last(),
        };
        if let Some(cell) = faulted {
            cell.record_fault(error.kind_name());
        }
    }

    fn finished(&self, stream: &Arc<dyn BackendStream>) {
        drop(self.take(stream));
    }
}

fn of(device: &Device) -> Option<&DeviceTelemetry> {
    device.launch_hook().get()?.as_any().downcast_ref()
}

impl Device {
    /// Attaches a telemetry sink: every kernel bound to this device from now on records one
    /// dispatch per launch that ran (an atomic add on a cell interned at bind time); a launch
    /// that faulted on the device counts as a fault of its kernel instead, once a
    /// synchronization or read of its stream reports it; a declined launch, and a kernel
    /// refused at [`Kernel::load_for`](crate::Kernel::load_for) or
    /// [`Kernel::bind`](crate::Kernel::bind), counts as a decline under the error's kind.
    ///
    /// Cells are keyed by the artifact's structure key
    /// ([`LinkEntry::structure_key`](crate::LinkEntry::structure_key): your runtime's name for
    /// the shape of work the kernel serves), the kernel's implementation (backend, the
    /// structure key or else the entry point as the op, operand dtypes, entry point, revision)
    /// and the device's hardware stamp. A device takes one sink for its lifetime; a second is
    /// handed back.
    pub fn attach_telemetry(&self, sink: Arc<TelemetrySink>) -> Result<(), Arc<TelemetrySink>> {
        let hook = DeviceTelemetry {
            sink: Arc::clone(&sink),
            pending: Mutex::new(Vec::new()),
        };
        self.launch_hook().set(Box::new(hook)).map_err(|_| sink)
    }

    /// The attached telemetry sink, if any.
    pub fn telemetry(&self) -> Option<&Arc<TelemetrySink>> {
        of(self).map(|hook| &hook.sink)
    }
}

/// Interns the kernel's dispatch cell in the device's sink (once, at bind, so a launch costs one
/// atomic add): keyed by the artifact's structure key, the kernel's implementation id and the
/// device's hardware stamp.
pub(crate) fn dispatch_handle(artifact: &Artifact, device: &Device) -> Option<DispatchHandle> {
    let sink = device.telemetry()?;
    let props = device.properties();
    let backend = match props.backend {
        BackendKind::Cuda => "cuda",
        BackendKind::Emulator => "emulator",
        BackendKind::Other => "other",
    };
    let link = &artifact.link;
    let chosen = ImplId::new(
        backend,
        link.structure_key.as_deref().unwrap_or(&link.entry_point),
        artifact.abi.operands().map(ElementKind::name),
        link.entry_point.clone(),
        artifact.revision(),
    );
    let driver = props.driver_version.clone().unwrap_or_default();
    let hw = match props.compute_capability {
        Some(cc) => HwStamp::gpu(cc, props.name.clone(), driver),
        None => HwStamp::cpu(props.name.clone(), driver),
    };
    let key = link.structure_key.clone().map(StructureKey::new);
    Some(sink.dispatch_handle(key.as_ref(), &chosen, &hw))
}

/// A launch of `cell`'s kernel was queued on `stream` (and counted): remembered until the
/// stream reports, so that a fault it reports can be attributed.
#[inline]
pub(crate) fn launched(stream: &Stream, cell: &DispatchHandle) {
    if let Some(hook) = of(stream.device()) {
        hook.launched(stream.raw_arc(), cell);
    }
}

/// `artifact` was refused on its way to `device` (at `load_for` or `bind`): a decline of its
/// kernel in the device's sink, under the error's kind, when the error is a decline.
pub(crate) fn refused(artifact: &Artifact, device: &Device, error: &Error) {
    if error.is_decline()
        && let Some(cell) = dispatch_handle(artifact, device)
    {
        cell.record_decline(error.kind_name());
    }
}
