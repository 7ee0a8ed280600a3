//! Work on device memory alone, ordered like every other use of it: zeroed allocation
//! ([`Device::alloc_zeros`]), fills ([`Stream::fill_zeros`]), device-to-device copies
//! ([`Stream::copy`]), and the time between two events ([`Event::elapsed_since`]).
//!
//! A fill is a write of its destination and a copy a read of its source and a write of its
//! destination, each ordered through the buffer's access log exactly as a launch's operands
//! are: the stream first waits, on the device, for the conflicting uses on other streams, and
//! the use is logged once it is queued, so later uses wait for it.

use std::time::Duration;

use super::access::{AccessKind, AccessLog};
use super::view::{BufferView, BufferViewMut};
use super::{Device, DeviceBuffer, DeviceId, Event, Stream};
use crate::dtype::Element;
use crate::error::Error;

/// Contiguous device memory a copy can read: a [`DeviceBuffer`], or a contiguous view of one
/// ([`BufferView`], [`BufferViewMut`]).
pub trait DeviceSlice<T: Element>: sealed::Contiguous<T> {}

/// Contiguous device memory a fill or a copy can write: a [`DeviceBuffer`], or an exclusive
/// contiguous view of one ([`BufferViewMut`]), borrowed exclusively for the call.
pub trait DeviceSliceMut<T: Element>: sealed::Contiguous<T> {}

mod sealed {
    use super::Span;

    /// Where the elements are and whose log orders their uses; only jitseam's buffers and
    /// views have one.
    pub trait Contiguous<T> {
        fn span(&self) -> Span<'_>;
    }
}

/// A contiguous run of elements of one allocation, and the log of that allocation. Unnameable
/// outside jitseam: only its own buffers and views make one.
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    device: DeviceId,
    /// Device address of the first element.
    address: u64,
    len: usize,
    log: &'a AccessLog,
}

impl Span<'_> {
    /// The run's size in bytes for elements of `T` (it fits: its allocation does).
    fn bytes<T: Element>(&self) -> usize {
        self.len.saturating_mul(T::KIND.size())
    }
}

impl<T: Element> sealed::Contiguous<T> for DeviceBuffer<T> {
    fn span(&self) -> Span<'_> {
        Span {
            device: self.device().id(),
            address: self.address(),
            len: self.len(),
            log: self.log(),
        }
    }
}

/// The span of a contiguous view: its description holds the allocation's base and the view's
/// first element.
fn view_span<'a, T: Element>(desc: &super::ViewDesc, log: &'a AccessLog) -> Span<'a> {
    let offset = (desc.offset as u64).saturating_mul(T::KIND.size() as u64);
    Span {
        device: desc.device,
        address: desc.base.saturating_add(offset),
        len: desc.len(),
        log,
    }
}

impl<T: Element> sealed::Contiguous<T> for BufferView<'_, T> {
    fn span(&self) -> Span<'_> {
        view_span::<T>(&self.desc, self.log)
    }
}

impl<T: Element> sealed::Contiguous<T> for BufferViewMut<'_, T> {
    fn span(&self) -> Span<'_> {
        view_span::<T>(&self.desc, self.log)
    }
}

impl<T: Element> DeviceSlice<T> for DeviceBuffer<T> {}
impl<T: Element> DeviceSlice<T> for BufferView<'_, T> {}
impl<T: Element> DeviceSlice<T> for BufferViewMut<'_, T> {}
impl<T: Element> DeviceSliceMut<T> for DeviceBuffer<T> {}
impl<T: Element> DeviceSliceMut<T> for BufferViewMut<'_, T> {}

impl Stream {
    /// Sets every element of `dst` (a buffer or an exclusive contiguous view) to zero, ordered
    /// after earlier work on this stream and after the memory's earlier uses on other streams
    /// (a write). May return before the fill has run.
    pub fn fill_zeros<T: Element>(&self, dst: &mut impl DeviceSliceMut<T>) -> Result<(), Error> {
        const STAGE: &str = "fill on the device";
        let span = sealed::Contiguous::<T>::span(dst);
        self.check_memory(span.device, STAGE)?;
        let bytes = span.bytes::<T>();
        if bytes == 0 {
            return Ok(());
        }
        let backend = self.device().backend();
        let ticket = span
            .log
            .before(backend, self.raw_arc(), AccessKind::Write)?;
        backend.fill_bytes(self.raw(), span.address, bytes, 0)?;
        span.log.after(self.raw_arc(), AccessKind::Write, ticket);
        Ok(())
    }

    /// Copies `src` into `dst` on the device (buffers or contiguous views, of one device, with
    /// the same number of elements), ordered after earlier work on this stream and after the
    /// conflicting uses of both on other streams: a read of `src`, a write of `dst`. May return
    /// before the copy has run.
    pub fn copy<T: Element>(
        &self,
        src: &impl DeviceSlice<T>,
        dst: &mut impl DeviceSliceMut<T>,
    ) -> Result<(), Error> {
        const STAGE: &str = "copy on the device";
        let from = sealed::Contiguous::<T>::span(src);
        let to = sealed::Contiguous::<T>::span(dst);
        self.check_memory(from.device, STAGE)?;
        self.check_memory(to.device, STAGE)?;
        if from.len != to.len {
            return Err(Error::CopyLengthMismatch {
                src: from.len,
                dst: to.len,
            });
        }
        let bytes = to.bytes::<T>();
        if bytes == 0 {
            return Ok(());
        }
        let backend = self.device().backend();
        let raw = self.raw_arc();
        let read = from.log.before(backend, raw, AccessKind::Read)?;
        let write = to.log.before(backend, raw, AccessKind::Write)?;
        // The ranges never overlap: `dst` is borrowed exclusively while `src` is borrowed, so
        // they are different buffers or disjoint views (`split_at_mut`) of one.
        backend.copy(self.raw(), from.address, to.address, bytes)?;
        from.log.after(raw, AccessKind::Read, read);
        to.log.after(raw, AccessKind::Write, write);
        Ok(())
    }

    /// Refuses memory of another device.
    fn check_memory(&self, memory: DeviceId, stage: &'static str) -> Result<(), Error> {
        if memory == self.device_id() {
            Ok(())
        } else {
            Err(Error::CopyDeviceMismatch {
                stage,
                buffer: memory,
                stream: self.device_id(),
            })
        }
    }
}

impl Device {
    /// A buffer of `len` elements, all zero: allocated, then zeroed on the default stream (so
    /// a use on another stream waits for the fill).
    pub fn alloc_zeros<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let mut buffer = DeviceBuffer::alloc(self, len)?;
        self.default_stream().fill_zeros(&mut buffer)?;
        Ok(buffer)
    }
}

impl Event {
    /// The time from `earlier`'s completion to this event's, both recorded with
    /// [`Stream::record_event`] on one device. Waits until both have completed. The CUDA
    /// backend measures on the device (`cuEventElapsedTime`, about half a microsecond of
    /// resolution); the emulator measures wall time when its stream reached each event.
    ///
    /// Refused with [`Error::EventTiming`] for events of two devices, when this event completed
    /// before `earlier`, and on a backend that keeps no event times.
    pub fn elapsed_since(&self, earlier: &Event) -> Result<Duration, Error> {
        if earlier.device_id() != self.device_id() {
            return Err(Error::EventTiming {
                reason: format!(
                    "the events were recorded on {} and {}",
                    earlier.device_id(),
                    self.device_id()
                ),
            });
        }
        self.device()
            .backend()
            .event_elapsed(earlier.raw(), self.raw())
    }
}
