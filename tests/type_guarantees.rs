//! Type-level guarantees pinned at compile time: a refactor that silently changes whether a
//! handle may cross threads, or the size of a type every launch copies, fails to compile here.

use jitseam::abi::{ArgPacket, ParamValue};
use jitseam::device::{
    Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut, ViewDesc,
};
use jitseam::{
    Described, Device, DeviceBound, DeviceBuffer, DeviceId, Erased, Error, Kernel, Loaded,
    SlotCall, SlotRef, SlotTable, Stream,
};
use static_assertions::{assert_impl_all, assert_not_impl_any, const_assert, const_assert_eq};

#[jitseam::kernel(abi = scalar)]
fn typed_add(a: jitseam::In<f32>, b: jitseam::In<f32>, out: jitseam::Out<f32>);

// Handles a runtime shares between threads: devices, streams, buffers, kernels in every state
// (bound kernels launch from any thread), slot bindings and tables, errors.
assert_impl_all!(Device: Send, Sync, Clone);
assert_impl_all!(Stream: Send, Sync, Clone);
assert_impl_all!(DeviceId: Send, Sync, Copy);
assert_impl_all!(DeviceBuffer<f32>: Send, Sync);
assert_impl_all!(Kernel<Erased, Described>: Send, Sync);
assert_impl_all!(Kernel<Erased, Loaded>: Send, Sync);
assert_impl_all!(Kernel<Erased, DeviceBound>: Send, Sync);
assert_impl_all!(Kernel<TypedAdd, DeviceBound>: Send, Sync);
assert_impl_all!(SlotRef: Send, Sync, Copy);
assert_impl_all!(SlotTable: Send, Sync);
assert_impl_all!(Error: Send, Sync, std::error::Error);

// A slot call is built and dispatched on one thread: it is not `Sync`, so a reference to it
// cannot be handed to another thread mid-dispatch.
assert_not_impl_any!(SlotCall<'static>: Sync);

// Borrowed views are borrows: a shared view may be copied, an exclusive one (which stands for
// `&mut` access to its buffer) never.
assert_impl_all!(BufferView<'static, f32>: Copy, Send, Sync);
assert_impl_all!(StridedView<'static, f32>: Copy, Send, Sync);
assert_not_impl_any!(BufferViewMut<'static, f32>: Clone, Copy);
assert_not_impl_any!(StridedViewMut<'static, f32>: Clone, Copy);
assert_impl_all!(Arg<'static>: Copy);
assert_not_impl_any!(ArgMut<'static>: Clone, Copy);

// Sizes the launch path copies on every call.
const_assert_eq!(std::mem::size_of::<DeviceId>(), 8);
const_assert_eq!(std::mem::size_of::<Option<DeviceId>>(), 16);
const_assert_eq!(std::mem::size_of::<ParamValue>(), 16);
// A view description: device, dtype, base, allocation length, offset, rank, 8 extents and 8
// strides.
const_assert_eq!(std::mem::size_of::<ViewDesc>(), 168);
// Every fallible call returns it: kept small by boxing the rare large payloads.
const_assert!(std::mem::size_of::<Error>() <= 96);
// The packet lives inline (no allocation) up to 512 bytes, 16-byte aligned like the driver's.
const_assert!(std::mem::size_of::<ArgPacket<'static>>() >= 512);
const_assert_eq!(std::mem::align_of::<ArgPacket<'static>>(), 16);

#[test]
fn the_guarantees_above_compile() {
    // Everything is checked at compile time; this test makes the file show up in a test run.
    assert_eq!(std::mem::size_of::<DeviceId>(), 8);
}
