//! Devices: a cheap-clone [`Device`] with a never-reused [`DeviceId`] and a liveness
//! token, the object-safe [`Backend`] it drives, [`Stream`]s, and typed [`DeviceBuffer`]s with
//! views.
//!
//! Only `cuda/` touches the CUDA driver; only `emulated.rs` touches the PTX interpreter. `Device`
//! itself knows neither: each backend's module adds the constructor that opens it.

mod backend;
mod buffer;
mod cuda;
mod desc;
mod emulated;
mod handle;
mod select;
mod stream;
mod view;

pub use crate::liveness::{DeviceId, is_live};
pub use backend::{
    Backend, BackendFunction, BackendKind, BackendStream, DeviceProperties, Geometry,
};
pub use buffer::DeviceBuffer;
pub use desc::ViewDesc;
pub use emulated::EmulatorBackend;
pub use handle::{Device, WeakDevice};
pub use select::Selection;
pub use stream::Stream;
pub use view::{Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut};
