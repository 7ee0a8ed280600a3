//! The typestates of a kernel (DESIGN §3).
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

use crate::kernel::{BoundData, LoadedData};

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
