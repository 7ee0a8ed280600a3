//! The telemetry hook of the launch path: a device's sink, attached once, and the dispatch cell a
//! bound kernel counts each successful launch into.

#[cfg(feature = "telemetry")]
use std::any::Any;
#[cfg(feature = "telemetry")]
use std::sync::Arc;

use crate::artifact::Artifact;
#[cfg(feature = "telemetry")]
use crate::device::BackendKind;
use crate::device::Device;
#[cfg(feature = "telemetry")]
use crate::dtype::ElementKind;
use crate::telemetry::DispatchHandle;
#[cfg(feature = "telemetry")]
use crate::telemetry::{HwStamp, ImplId, StructureKey, TelemetrySink};

/// Without telemetry no kernel has a cell.
#[cfg(not(feature = "telemetry"))]
pub(crate) fn dispatch_handle(_artifact: &Artifact, _device: &Device) -> Option<DispatchHandle> {
    None
}

#[cfg(feature = "telemetry")]
impl Device {
    /// Attaches a telemetry sink: every kernel bound to this device from now on records one
    /// dispatch per successful launch (an atomic add on a cell interned at bind time). A device
    /// takes one sink for its lifetime; a second is handed back.
    pub fn attach_telemetry(&self, sink: Arc<TelemetrySink>) -> Result<(), Arc<TelemetrySink>> {
        self.launch_hook()
            .set(Box::new(Arc::clone(&sink)))
            .map_err(|_| sink)
    }

    /// The attached telemetry sink, if any.
    pub fn telemetry(&self) -> Option<&Arc<TelemetrySink>> {
        let hook: &(dyn Any + Send + Sync) = &**self.launch_hook().get()?;
        hook.downcast_ref()
    }
}

/// Interns the kernel's dispatch cell in the device's sink (once, at bind, so a launch costs one
/// atomic add): keyed by the artifact's structure key, the kernel's implementation id and the
/// device's hardware stamp.
#[cfg(feature = "telemetry")]
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
