//! The typestates of a kernel, and what a kernel holds in each.
//!
//! Each state is a sealed zero-sized marker; what a kernel holds in that state is the marker's
//! [`State::Data`]. Transitions consume the kernel, so a kernel is in exactly one state and a
//! launch on anything but [`DeviceBound`] does not type-check.
//!
//! Invariants carried by each state:
//! - [`Described`]: the spec is valid (`AbiSpec::validate`) — nothing else is known.
//! - [`Loaded`]: the PTX parsed, the entry exists, and its `.param` list equals the spec's
//!   expected list by class, size and alignment; the packet layout is fixed.
//! - [`DeviceBound`]: additionally the module is loaded on one device whose architecture can run
//!   it, the function is resolved, and the kernel holds a clone of that device so it stays live.

use std::sync::Arc;

use crate::abi::ParamLayout;
use crate::device::{BackendFunction, Device};
use crate::telemetry::DispatchHandle;

mod sealed {
    pub trait Sealed {}
}

/// A kernel state. Sealed: only jitseam's transitions can produce a state's data.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel state",
    note = "kernel states are jitseam::Described, jitseam::Loaded and jitseam::DeviceBound"
)]
pub trait State: sealed::Sealed + 'static {
    /// What a kernel holds in this state.
    type Data: std::fmt::Debug + Send + Sync;
}

/// Metadata only: described, not yet checked against its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Described;

/// Parsed and verified on the host; not on any device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loaded;

/// Loaded on a device and launchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceBound;

impl sealed::Sealed for Described {}
impl sealed::Sealed for Loaded {}
impl sealed::Sealed for DeviceBound {}

impl State for Described {
    type Data = ();
}

impl State for Loaded {
    type Data = LoadedData;
}

impl State for DeviceBound {
    type Data = BoundData;
}

/// What a `Loaded` kernel knows: the module header, the verified entry and its packet layout.
#[derive(Debug, Clone)]
pub struct LoadedData {
    pub(crate) version: jitseam_ptx::Version,
    pub(crate) target: jitseam_ptx::Target,
    pub(crate) address_size: Option<u32>,
    pub(crate) entry: jitseam_ptx::Entry,
    pub(crate) layout: ParamLayout,
}

impl LoadedData {
    /// The module's `.version`.
    pub fn version(&self) -> jitseam_ptx::Version {
        self.version
    }

    /// The module's `.target`.
    pub fn target(&self) -> &jitseam_ptx::Target {
        &self.target
    }

    /// The module's `.address_size`, if declared.
    pub fn address_size(&self) -> Option<u32> {
        self.address_size
    }

    /// The verified entry: name, parameters, performance directives.
    pub fn entry(&self) -> &jitseam_ptx::Entry {
        &self.entry
    }

    /// Where each parameter sits in the argument packet.
    pub fn layout(&self) -> &ParamLayout {
        &self.layout
    }
}

/// What a `DeviceBound` kernel holds: what `load()` verified, the device (a clone, which keeps
/// it live) and the resolved function.
#[derive(Debug)]
pub struct BoundData {
    pub(crate) loaded: LoadedData,
    pub(crate) device: Device,
    pub(crate) function: Arc<dyn BackendFunction>,
    pub(crate) telemetry: Option<DispatchHandle>,
}

impl BoundData {
    /// What `load()` verified.
    pub fn loaded(&self) -> &LoadedData {
        &self.loaded
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The backend's function handle.
    pub fn function(&self) -> &dyn BackendFunction {
        &*self.function
    }

    /// The telemetry cell each launch counts into, when the device had a sink at bind time.
    pub fn telemetry(&self) -> Option<&DispatchHandle> {
        self.telemetry.as_ref()
    }
}
