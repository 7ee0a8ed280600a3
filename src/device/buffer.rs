//! [`DeviceBuffer`]: a typed allocation on one device.

use std::marker::PhantomData;
use std::ops::Range;

use super::access::AccessLog;
use super::desc::{ViewDesc, range_desc, strided_desc};
use super::operand::{Source, SourceMut};
use super::view::{Arg, ArgMut, BufferView, BufferViewMut, StridedView, StridedViewMut};
use super::{BackendStream, Device};
use crate::dtype::Element;
use crate::error::Error;

/// `len` elements of `T` on one device. Holds a clone of its device, so the device stays live.
///
/// Every use of the buffer on a stream — a launch that reads or writes it, a copy — is ordered
/// after the conflicting uses on other streams by a device-side wait (see [`Stream`]); dropping
/// it frees the memory only once the work queued on it so far has finished, without blocking
/// (unless it was handed to cudarc since its last jitseam write: see
/// [`DeviceBuffer::as_cudarc`]).
///
/// [`Stream`]: crate::device::Stream
pub struct DeviceBuffer<T: Element> {
    device: Device,
    address: u64,
    bytes: usize,
    len: usize,
    log: AccessLog,
    _elem: PhantomData<T>,
}

impl<T: Element> DeviceBuffer<T> {
    pub(super) fn alloc(device: &Device, len: usize) -> Result<Self, Error> {
        let bytes = len
            .checked_mul(T::KIND.size())
            .ok_or_else(|| Error::InvalidView {
                reason: format!("{len} elements of {} overflow the address space", T::KIND),
            })?;
        // Zero-byte allocations are refused by some drivers; one byte keeps every buffer a real
        // allocation with its own address.
        let address = device.backend().alloc(bytes.max(1))?;
        Ok(Self {
            device: device.clone(),
            address,
            bytes: bytes.max(1),
            len,
            log: AccessLog::new(),
            _elem: PhantomData,
        })
    }

    /// The streams that may still use the buffer, and orders each use after them.
    pub(super) fn log(&self) -> &AccessLog {
        &self.log
    }

    /// The log, exclusively: to hand the buffer to another runtime for writing.
    pub(super) fn log_mut(&mut self) -> &mut AccessLog {
        &mut self.log
    }

    /// Elements in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device holding it.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Device address of the first element.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// The whole buffer as an erased, contiguous description.
    pub fn desc(&self) -> ViewDesc {
        ViewDesc::contiguous(
            self.device.id(),
            T::KIND,
            self.address,
            self.len,
            0,
            self.len,
        )
    }

    /// A shared view of `range`.
    pub fn slice(&self, range: Range<usize>) -> Result<BufferView<'_, T>, Error> {
        Ok(BufferView {
            desc: range_desc(self.desc(), range)?,
            log: &self.log,
            _borrow: PhantomData,
        })
    }

    /// An exclusive view of `range`.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Result<BufferViewMut<'_, T>, Error> {
        Ok(BufferViewMut {
            desc: range_desc(self.desc(), range)?,
            log: &self.log,
            _borrow: PhantomData,
        })
    }

    /// Two exclusive views, `..mid` and `mid..`.
    pub fn split_at_mut(
        &mut self,
        mid: usize,
    ) -> Result<(BufferViewMut<'_, T>, BufferViewMut<'_, T>), Error> {
        let whole = self.desc();
        let left = range_desc(whole, 0..mid)?;
        let right = range_desc(whole, mid..self.len)?;
        Ok((
            BufferViewMut {
                desc: left,
                log: &self.log,
                _borrow: PhantomData,
            },
            BufferViewMut {
                desc: right,
                log: &self.log,
                _borrow: PhantomData,
            },
        ))
    }

    /// A shared strided window: origin element `offset`, `shape`, signed element `strides`.
    /// Whether every reachable element lies in the buffer is checked at launch.
    pub fn strided(
        &self,
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<StridedView<'_, T>, Error> {
        Ok(StridedView {
            desc: strided_desc(self.desc(), offset, shape, strides)?,
            log: &self.log,
            _borrow: PhantomData,
        })
    }

    /// An exclusive strided window; see [`DeviceBuffer::strided`].
    pub fn strided_mut(
        &mut self,
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<StridedViewMut<'_, T>, Error> {
        Ok(StridedViewMut {
            desc: strided_desc(self.desc(), offset, shape, strides)?,
            log: &self.log,
            _borrow: PhantomData,
        })
    }

    /// The whole buffer as a row-major strided window of `shape`.
    pub fn shaped(&self, shape: &[usize]) -> Result<StridedView<'_, T>, Error> {
        self.strided(0, shape, &row_major_strides(shape))
    }

    /// The whole buffer as an exclusive row-major strided window of `shape`.
    pub fn shaped_mut(&mut self, shape: &[usize]) -> Result<StridedViewMut<'_, T>, Error> {
        let strides = row_major_strides(shape);
        self.strided_mut(0, shape, &strides)
    }
}

fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step: isize = 1;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = step;
        step = step.saturating_mul(isize::try_from(extent).unwrap_or(isize::MAX));
    }
    strides
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device", &self.device.id())
            .field("dtype", &T::KIND)
            .field("len", &self.len)
            .field("address", &format_args!("{:#x}", self.address))
            .finish()
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // The backend frees once the work queued so far on these streams is done, without
        // blocking; no jitseam lock is held here. Memory whose external user's uses could not
        // be ordered is leaked: a leak is safe, a use-after-free on the device is not.
        let Some(pending) = self.log.take_pending() else {
            return;
        };
        let pending: Vec<&dyn BackendStream> = pending.iter().map(|s| &**s).collect();
        self.device
            .backend()
            .free(self.address, self.bytes, &pending);
    }
}

impl<'a, T: Element> From<&'a DeviceBuffer<T>> for Arg<'a> {
    fn from(buffer: &'a DeviceBuffer<T>) -> Self {
        Self {
            desc: buffer.desc(),
            source: Source::Log(&buffer.log),
        }
    }
}

impl<'a, T: Element> From<&'a mut DeviceBuffer<T>> for ArgMut<'a> {
    fn from(buffer: &'a mut DeviceBuffer<T>) -> Self {
        Self {
            desc: buffer.desc(),
            source: SourceMut::Log(&buffer.log),
        }
    }
}

impl Device {
    /// A buffer of `len` elements with unspecified contents ([`Device::alloc_zeros`] for one
    /// that holds zeros).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc(self, len)
    }
}
