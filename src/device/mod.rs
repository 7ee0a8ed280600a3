//! Devices: a cheap-clone [`Device`] with a never-reused [`DeviceId`] and a liveness
//! token, the object-safe [`Backend`] it drives, [`Stream`]s, and typed [`DeviceBuffer`]s with
//! views.
//!
//! Only `cuda/` touches the CUDA driver; only `emulated.rs` touches the PTX interpreter. `Device`
//! itself knows neither: each backend's module adds the constructor that opens it.

mod access;
mod backend;
mod buffer;
mod config;
mod cuda;
mod desc;
mod emulated;
mod event;
mod guard;
mod handle;
mod memory;
pub(crate) mod operand;
mod select;
mod stream;
mod view;

pub use crate::liveness::{DeviceId, is_live};
pub(crate) use access::{AccessKind, ExternalUses, StreamKey, Ticket};
pub use backend::{
    Backend, BackendEvent, BackendFunction, BackendKind, BackendStream, CompletedEvent,
    DeviceProperties, Geometry,
};
pub use buffer::DeviceBuffer;
pub(crate) use config::dims3;
pub use config::{ConfigLimits, LaunchConfig, LaunchLimits};
pub use desc::{AsViewDesc, ViewDesc};
pub use emulated::{EmulatorBackend, EmulatorConfig};
pub use event::Event;
pub(crate) use guard::RecordCache;
pub use guard::{GuardSite, GuardTable};
#[cfg(feature = "telemetry")]
pub(crate) use handle::LaunchHook;
pub use handle::{Device, WeakDevice};
pub use memory::{DeviceSlice, DeviceSliceMut};
pub(crate) use operand::{Source, SourceMut};
pub use select::Selection;
pub use stream::Stream;
pub use view::{Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut};
