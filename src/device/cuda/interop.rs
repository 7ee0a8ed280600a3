//! cudarc in and out of jitseam: a cudarc context as a [`Device`] ([`Device::from_cudarc`]),
//! cudarc streams as [`Stream`]s and back, and cudarc slices as launch operands.
//!
//! A cudarc slice orders its own uses across streams with a read and a write event (when its
//! context manages stream synchronization, which a second stream turns on). A launch honours
//! and updates them through cudarc's own guards: `DevicePtr::device_ptr` for an input (the
//! launch's stream waits for the slice's last write; the read event is recorded once the launch
//! is queued) and `DevicePtrMut::device_ptr_mut` for an output (it waits for the last read and
//! write; the write event is recorded once queued). So a cudarc user's next copy on another
//! stream waits for jitseam's launch, and jitseam's launch for the cudarc user's earlier work.
//!
//! The way out, [`DeviceBuffer::as_cudarc`] and [`DeviceBuffer::as_cudarc_mut`], hands a
//! jitseam buffer to cudarc as a view of a cudarc slice made over its memory (`shadow.rs`),
//! whose events the buffer's access log keeps in step with its own. Such a view is an operand
//! too, with two differences from a slice of cudarc's own, both for the one read event cudarc
//! keeps per slice: a launch that reads through it records its read through the slice's
//! private stream, so the event covers every such reader, and a launch that writes through it
//! first waits on the host for the context, since cudarc's own reads of it may have run on
//! streams that event no longer names.
//!
//! Any slice or view of an [`Element`] type is an operand, `half::f16` and `half::bf16`
//! included: an operand is only ever passed by its device address, so cudarc's `DeviceRepr`
//! (which `f16`/`bf16` implement only under cudarc's `f16` feature) is not asked for.
//!
//! A slice is checked like any operand: its context names the device (the live [`Device`]
//! opened on that context, see `registry.rs`), which must be the kernel's; on a stream of
//! another device — the emulator's, say — it is refused with [`Error::DeviceMismatch`] before
//! anything is queued.

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice,
};

use super::backend::CudaBackend;
use super::probe::{check_symbols, guarded};
use super::registry;
use super::shadow::{self, CudaShadow, JoinedRead, disarm};
use super::stream::{CudaStreamHandle, cudarc_of};
use crate::device::operand::{Acquired, Foreign, ForeignMut, ForeignRef, Source, SourceMut};
use crate::device::{
    Arg, ArgMut, BackendStream, Device, DeviceBuffer, DeviceId, ExternalUses, Stream, ViewDesc,
};
use crate::dtype::Element;
use crate::error::Error;

impl Device {
    /// The device of a cudarc context the caller already uses: jitseam allocates, loads and
    /// launches in `ctx` itself. Two calls with the same context (and [`Device::cuda`], for the
    /// context it opened) answer the same device, with one [`DeviceId`], while any handle to it
    /// lives.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use cudarc::driver::CudaContext;
    /// use jitseam::device::{Arg, ArgMut};
    /// use jitseam::{Device, Kernel, Stream};
    ///
    /// fn interop(ptx: jitseam::Artifact) -> Result<(), Box<dyn std::error::Error>> {
    ///     // The runtime's own context, stream and slices.
    ///     let ctx = CudaContext::new(0)?;
    ///     let cu_stream = ctx.new_stream()?;
    ///     let a = cu_stream.clone_htod(&[1.0f32; 1024])?;
    ///     let mut out = cu_stream.alloc_zeros::<f32>(1024)?;
    ///
    ///     // The same context as a jitseam device (one id however often it is handed in), the same
    ///     // stream as a jitseam stream.
    ///     let device = Device::from_cudarc(Arc::clone(&ctx))?;
    ///     let stream = Stream::from_cudarc(&device, Arc::clone(&cu_stream))?;
    ///     let kernel = Kernel::describe(ptx)?.load()?.bind(&device)?;
    ///
    ///     // The way in: cudarc slices are operands, every check applies, and cudarc's per-slice
    ///     // events order the launch after cudarc's writes and cudarc's later reads after it.
    ///     kernel.launch(&stream, &[Arg::from(&a)], &mut [ArgMut::from(&mut out)], &[1024], &[])?;
    ///     let result: Vec<f32> = ctx.new_stream()?.clone_dtoh(&out)?;
    ///     assert!(stream.as_cudarc().is_some() && result.len() == 1024);
    ///
    ///     // The way out: a jitseam buffer as a cudarc view. cudarc's uses of it, on any stream,
    ///     // wait for jitseam's writes so far; jitseam's later writes wait for cudarc's reads.
    ///     let mut mine = device.alloc::<f32>(1024)?;
    ///     kernel.launch(&stream, &[Arg::from(&a)], &mut [ArgMut::from(&mut mine)], &[1024], &[])?;
    ///     let back: Vec<f32> = ctx.new_stream()?.clone_dtoh(&mine.as_cudarc()?)?;
    ///     assert_eq!(back.len(), 1024);
    ///     Ok(())
    /// }
    /// ```
    pub fn from_cudarc(ctx: Arc<CudaContext>) -> Result<Self, Error> {
        // The context exists, so libcuda is loaded; every symbol jitseam calls is still checked,
        // because cudarc panics on a missing one.
        guarded("adopt a cudarc context", || {
            check_symbols()?;
            registry::device_for(&ctx, || {
                let backend = CudaBackend::new(Arc::clone(&ctx))?;
                Ok(Self::with_backend(Arc::new(backend)))
            })
        })
    }
}

impl Stream {
    /// A cudarc stream of `device`'s context as a jitseam stream. Refused for a device that is
    /// not a CUDA device or a stream of another context.
    pub fn from_cudarc(device: &Device, stream: Arc<CudaStream>) -> Result<Self, Error> {
        let ctx = registry::ctx_of(device.id()).ok_or_else(|| Error::Interop {
            reason: format!("{} is not a cuda device", device.id()),
        })?;
        if !Arc::ptr_eq(stream.context(), &ctx) {
            return Err(Error::Interop {
                reason: format!(
                    "the stream belongs to another cuda context than {}",
                    device.id()
                ),
            });
        }
        Ok(Self::new(
            device.clone(),
            Arc::new(CudaStreamHandle { stream }),
        ))
    }

    /// The cudarc stream behind this stream; `None` on a device that is not a CUDA device.
    pub fn as_cudarc(&self) -> Option<&Arc<CudaStream>> {
        cudarc_of(self.raw())
    }
}

impl<T: Element> DeviceBuffer<T> {
    /// The buffer as a cudarc view, for cudarc code to read; an [`Error::Interop`] on a device
    /// that is not a CUDA device (the emulator's, say).
    ///
    /// The view is over a cudarc slice made for this buffer on its first hand-out, whose read
    /// and write events the buffer's stream ordering keeps in step with its own:
    ///
    /// - cudarc's uses of the view on any stream (a copy, a launch, a jitseam launch with the
    ///   view as an operand) wait, on the device, for every write jitseam queued on the buffer
    ///   before this call;
    /// - every later write of the buffer — by jitseam, through the buffer or a view, or by
    ///   cudarc through a later [`DeviceBuffer::as_cudarc_mut`] — and its free wait for every
    ///   read through the view, on however many streams. cudarc keeps one read event per slice,
    ///   which names only the last stream that read it, so these block the calling thread until
    ///   the device's context has finished the work queued so far (`cuCtxSynchronize`) rather
    ///   than wait on the device: the price of handing a buffer out, paid once per jitseam write
    ///   (or free) after a hand-out, not per read.
    ///
    /// Jitseam keeps reading the buffer meanwhile without waiting. Holding the view borrows the
    /// buffer, so nothing can write it through jitseam until the view is gone.
    ///
    /// The guarantee rests on cudarc's own discipline: it holds while the context manages
    /// stream synchronization, which this call checks (event tracking must be on; the private
    /// stream made for the slice keeps the context in multi-stream mode; turning event tracking
    /// off is `unsafe` in cudarc). Use the view in calls that take it through cudarc's guards
    /// (`DevicePtr`), on streams of this device's context; a raw pointer taken out of it is not
    /// ordered.
    pub fn as_cudarc(&self) -> Result<CudaView<'_, T>, Error> {
        let ctx = cuda_context(self.device())?;
        let backend = self.device().backend();
        let (address, len) = (self.address(), self.len());
        let external = self
            .log()
            .hand_out(backend, || shadow::<T>(&ctx, address, len))?;
        Ok(shadow_of::<T>(external.as_any())?.view())
    }

    /// The buffer as an exclusive cudarc view, for cudarc code to write (or read); an
    /// [`Error::Interop`] on a device that is not a CUDA device.
    ///
    /// As [`DeviceBuffer::as_cudarc`], for writing: cudarc's uses of the view on any stream wait
    /// for every use (read or write) of the buffer before this call — when it was handed out
    /// before, this call first waits on the host for the context, since cudarc's reads of it
    /// may be on any number of streams — and every later jitseam use of the buffer, on any
    /// stream, waits for cudarc's writes (on the device: each cudarc write waits for the one
    /// before, so the slice's write event covers them all), a later jitseam write for every
    /// use (on the host, as above). A jitseam launch that writes through the view waits on the
    /// host likewise; one that reads through it is recorded so that cudarc's next write
    /// through the view waits for it too. Between cudarc's own uses of the view, cudarc's own
    /// rules apply (its write waits for its last read only, as for any slice of its own). The
    /// same conditions apply.
    pub fn as_cudarc_mut(&mut self) -> Result<CudaViewMut<'_, T>, Error> {
        let ctx = cuda_context(self.device())?;
        let device = self.device().clone();
        let (address, len) = (self.address(), self.len());
        let external = self
            .log_mut()
            .hand_out_mut(device.backend(), || shadow::<T>(&ctx, address, len))?;
        let shadow = external
            .as_any_mut()
            .downcast_mut::<CudaShadow<T>>()
            .ok_or_else(mistyped)?;
        Ok(shadow.view_mut())
    }
}

/// The cudarc context of `device`, refused for a device that is not a CUDA device.
fn cuda_context(device: &Device) -> Result<Arc<CudaContext>, Error> {
    let ctx = registry::ctx_of(device.id()).ok_or_else(|| Error::Interop {
        reason: format!(
            "{} is not a cuda device: only a cuda device's buffers can be handed to cudarc",
            device.id()
        ),
    })?;
    if !ctx.is_event_tracking() {
        return Err(Error::Interop {
            reason: "event tracking is disabled in this cuda context, so cudarc would not order                      its uses of the buffer after jitseam's"
                .to_owned(),
        });
    }
    Ok(ctx)
}

fn shadow<T: Element>(
    ctx: &Arc<CudaContext>,
    address: u64,
    len: usize,
) -> Result<Box<dyn ExternalUses>, Error> {
    Ok(Box::new(CudaShadow::<T>::new(ctx, address, len)?))
}

fn shadow_of<T: Element>(external: &dyn std::any::Any) -> Result<&CudaShadow<T>, Error> {
    external
        .downcast_ref::<CudaShadow<T>>()
        .ok_or_else(mistyped)
}

/// The buffer's external user is not its cudarc slice: only a buffer of one element type and
/// one context ever gets one, so this is not reached.
fn mistyped() -> Error {
    Error::Interop {
        reason: "the buffer was handed to another runtime than cudarc".to_owned(),
    }
}

/// A slice of `len` elements in `ctx` at `base` (0 until it is acquired on a stream).
fn describe<T: Element>(ctx: &Arc<CudaContext>, len: usize, base: u64) -> ViewDesc {
    let device = registry::id_of(ctx).unwrap_or(DeviceId::NONE);
    ViewDesc::contiguous(device, T::KIND, base, len, 0, len)
}

/// The cudarc stream of `stream` if it runs in `ctx`. Otherwise the launch check refuses the
/// slice (its device is not the stream's) and nothing is acquired.
fn same_context<'s>(
    stream: &'s dyn BackendStream,
    ctx: &Arc<CudaContext>,
) -> Option<&'s Arc<CudaStream>> {
    cudarc_of(stream).filter(|s| Arc::ptr_eq(s.context(), ctx))
}

fn acquire<'s, T: Element, S: DevicePtr<T>>(
    slice: &'s S,
    stream: &'s dyn BackendStream,
) -> Result<Acquired<'s>, Error> {
    let ctx = slice.stream().context();
    match same_context(stream, ctx) {
        Some(cu) => {
            let (base, guard) = slice.device_ptr(cu);
            let desc = describe::<T>(ctx, slice.len(), base);
            // A view of a jitseam buffer: its read goes through the join stream, so that the
            // read event covers every reader (see `shadow.rs`). Only such a view's stream is a
            // join stream; any other slice records its own read event.
            if !shadow::is_shadow_stream(slice.stream()) {
                return Ok((desc, Box::new(guard)));
            }
            Ok(match disarm(guard) {
                Some(read) => {
                    let read = JoinedRead {
                        read,
                        join: slice.stream(),
                        stream: cu,
                    };
                    (desc, Box::new(read))
                }
                // No events: cudarc orders nothing for this slice, and neither does the guard.
                None => (desc, Box::new(())),
            })
        }
        None => Ok((describe::<T>(ctx, slice.len(), 0), Box::new(()))),
    }
}

fn acquire_mut<'s, T: Element, S: DevicePtrMut<T>>(
    slice: &'s mut S,
    stream: &'s dyn BackendStream,
) -> Result<Acquired<'s>, Error> {
    let ctx = Arc::clone(slice.stream().context());
    let len = slice.len();
    match same_context(stream, &ctx) {
        Some(cu) => {
            // A view of a jitseam buffer: cudarc may have read it on streams its one read event
            // no longer names, so the write waits for every use of the context first.
            if shadow::is_shadow_stream(slice.stream()) {
                shadow::wait_for_every_use(&ctx, "write a buffer through its cudarc view")?;
            }
            let (base, guard) = slice.device_ptr_mut(cu);
            Ok((describe::<T>(&ctx, len, base), Box::new(guard)))
        }
        None => Ok((describe::<T>(&ctx, len, 0), Box::new(()))),
    }
}

impl<T: Element> Foreign for CudaSlice<T> {
    fn acquire<'s>(&'s self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error> {
        acquire::<T, _>(self, stream)
    }
}

impl<T: Element> Foreign for CudaView<'_, T> {
    fn acquire<'s>(&'s self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error> {
        acquire::<T, _>(self, stream)
    }
}

impl<T: Element> ForeignMut for CudaSlice<T> {
    fn acquire_mut<'s>(&'s mut self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error> {
        acquire_mut::<T, _>(self, stream)
    }
}

impl<T: Element> ForeignMut for CudaViewMut<'_, T> {
    fn acquire_mut<'s>(&'s mut self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error> {
        acquire_mut::<T, _>(self, stream)
    }
}

impl<'a, T: Element> From<&'a CudaSlice<T>> for Arg<'a> {
    fn from(slice: &'a CudaSlice<T>) -> Self {
        Self {
            desc: describe::<T>(slice.context(), slice.len(), 0),
            source: Source::Foreign(slice),
        }
    }
}

impl<'a, T: Element> From<&'a CudaView<'_, T>> for Arg<'a> {
    fn from(view: &'a CudaView<'_, T>) -> Self {
        Self {
            desc: describe::<T>(DeviceSlice::stream(view).context(), view.len(), 0),
            source: Source::Foreign(view),
        }
    }
}

impl<'a, T: Element> From<&'a mut CudaSlice<T>> for ArgMut<'a> {
    fn from(slice: &'a mut CudaSlice<T>) -> Self {
        Self {
            desc: describe::<T>(slice.context(), slice.len(), 0),
            source: SourceMut::Foreign(ForeignRef::new(slice)),
        }
    }
}

impl<'a, T: Element> From<&'a mut CudaViewMut<'_, T>> for ArgMut<'a> {
    fn from(view: &'a mut CudaViewMut<'_, T>) -> Self {
        Self {
            desc: describe::<T>(DeviceSlice::stream(view).context(), view.len(), 0),
            source: SourceMut::Foreign(ForeignRef::new(view)),
        }
    }
}
