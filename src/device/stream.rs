//! [`Stream`]: an ordered queue of work on one device, and how work on several streams is
//! ordered.
//!
//! # Streams that cannot race
//!
//! Work on one stream runs in order; work on different streams does not, and launches and
//! copies to the device return before they have run. So every jitseam buffer keeps a log of
//! the streams that may still be using it (the stream of its last write, and of the reads since),
//! and every use on stream `S` — a launch (inputs and outputs), [`Stream::write_from`],
//! [`Stream::read_into`], the free when the buffer drops — first makes `S` wait, on the device,
//! for the conflicting uses on other streams: a read waits for the last write
//! (read-after-write), a write for the reads and the write before it (write-after-read,
//! write-after-write). Nothing waits on the host except a copy to the host, which returns
//! complete data. Uses on the same stream need no wait, and on the fast path record nothing.
//! Dropping a buffer frees it once the work queued on it has finished, without blocking (a
//! buffer handed to cudarc since its last jitseam write aside: see
//! [`DeviceBuffer::as_cudarc`]).
//!
//! [`Stream::record_event`] and [`Stream::wait`] order other work by hand, and an [`Event`]
//! can be waited for or polled on the host, or timed against another.
//!
//! Device memory alone is zeroed with [`Stream::fill_zeros`] (or allocated zeroed with
//! [`Device::alloc_zeros`]) and copied with [`Stream::copy`], ordered the same way.

use std::sync::Arc;

use super::access::AccessKind;
use super::{BackendStream, Device, DeviceBuffer, DeviceId, Event};
use crate::dtype::Element;
use crate::error::Error;

/// A stream on one device. Holds a clone of its device.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    raw: Arc<dyn BackendStream>,
}

impl Stream {
    pub(crate) fn new(device: Device, raw: Arc<dyn BackendStream>) -> Self {
        Self { device, raw }
    }

    /// The device it runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The id of the device it runs on.
    pub fn device_id(&self) -> DeviceId {
        self.device.id()
    }

    pub(crate) fn raw(&self) -> &dyn BackendStream {
        &*self.raw
    }

    /// The backend's handle, which access logs keep while the stream may still use a buffer.
    pub(crate) fn raw_arc(&self) -> &Arc<dyn BackendStream> {
        &self.raw
    }

    /// Copies `data` into `buffer`, ordered after earlier work on this stream and after the
    /// buffer's earlier uses on other streams. May return before the copy has run; `data` may
    /// be reused at once. (From page-locked host memory, such as a cudarc `PinnedHostSlice`, a
    /// CUDA device's copy reads `data` only when it runs, so it returns once the copy has run.)
    pub fn write_from<T: Element>(
        &self,
        buffer: &mut DeviceBuffer<T>,
        data: &[T],
    ) -> Result<(), Error> {
        self.check_device(buffer.device().id(), "copy to device")?;
        if data.len() != buffer.len() {
            return Err(Error::LengthMismatch {
                stage: "copy to device",
                expected: buffer.len(),
                found: data.len(),
            });
        }
        let backend = self.device.backend();
        let log = buffer.log();
        let ticket = log.before(backend, &self.raw, AccessKind::Write)?;
        write_bytes(backend, self.raw(), buffer.address(), data)?;
        log.after(&self.raw, AccessKind::Write, ticket);
        Ok(())
    }

    /// Copies `data` into `buffer`; see [`Stream::write_from`].
    pub fn write<T: Element>(&self, buffer: &mut DeviceBuffer<T>, data: &[T]) -> Result<(), Error> {
        self.write_from(buffer, data)
    }

    /// Copies `buffer` into `out` once earlier work on this stream, and the buffer's last write
    /// on any stream, have finished. Returns with `out` complete; allocates nothing.
    pub fn read_into<T: Element>(
        &self,
        buffer: &DeviceBuffer<T>,
        out: &mut [T],
    ) -> Result<(), Error> {
        self.check_device(buffer.device().id(), "copy to host")?;
        if out.len() != buffer.len() {
            return Err(Error::LengthMismatch {
                stage: "copy to host",
                expected: buffer.len(),
                found: out.len(),
            });
        }
        let backend = self.device.backend();
        // The copy has finished when `read_bytes` returns, so no later use needs to wait for
        // it: it is not logged.
        let _ticket = buffer.log().before(backend, &self.raw, AccessKind::Read)?;
        let read = read_bytes(backend, self.raw(), buffer.address(), out);
        self.device.reported(&self.raw, read)
    }

    /// Copies `buffer` to the host; see [`Stream::read_into`].
    pub fn read<T: Element>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>, Error> {
        let zero = T::read_le(&[0u8; 16][..T::KIND.size()]).ok_or_else(|| Error::Device {
            stage: "copy to host".to_owned(),
            message: format!("no zero value of {}", T::KIND),
        })?;
        let mut out = vec![zero; buffer.len()];
        self.read_into(buffer, &mut out)?;
        Ok(out)
    }

    /// Waits until all work queued on this stream has finished; reports a failure of queued
    /// work (a kernel fault on the emulator) since the last report.
    pub fn synchronize(&self) -> Result<(), Error> {
        let synchronized = self.device.backend().synchronize(self.raw());
        self.device.reported(&self.raw, synchronized)
    }

    /// An event that completes once all work queued on this stream so far has finished. It
    /// records when it completed where the backend keeps time (CUDA, the emulator), for
    /// [`Event::elapsed_since`].
    pub fn record_event(&self) -> Result<Event, Error> {
        let raw = self.device.backend().record_timed_event(self.raw())?;
        Ok(Event::new(self.device.clone(), raw, Arc::clone(&self.raw)))
    }

    /// Makes work queued on this stream from now on wait, on the device, for `event`. The
    /// calling thread does not wait. Refused for an event of another device.
    pub fn wait(&self, event: &Event) -> Result<(), Error> {
        if event.device_id() != self.device_id() {
            return Err(Error::EventDeviceMismatch {
                event: event.device_id(),
                stream: self.device_id(),
            });
        }
        self.device.backend().wait_event(self.raw(), event.raw())
    }

    fn check_device(&self, buffer: DeviceId, stage: &'static str) -> Result<(), Error> {
        if buffer == self.device.id() {
            Ok(())
        } else {
            Err(Error::CopyDeviceMismatch {
                stage,
                buffer,
                stream: self.device.id(),
            })
        }
    }
}

#[cfg(target_endian = "little")]
fn write_bytes<T: Element>(
    backend: &dyn super::Backend,
    stream: &dyn BackendStream,
    address: u64,
    data: &[T],
) -> Result<(), Error> {
    backend.write(stream, address, crate::dtype::le_bytes(data))
}

#[cfg(target_endian = "little")]
fn read_bytes<T: Element>(
    backend: &dyn super::Backend,
    stream: &dyn BackendStream,
    address: u64,
    out: &mut [T],
) -> Result<(), Error> {
    backend.read(stream, address, crate::dtype::le_bytes_mut(out))
}

// A big-endian host converts through a staging buffer.
#[cfg(not(target_endian = "little"))]
fn write_bytes<T: Element>(
    backend: &dyn super::Backend,
    stream: &dyn BackendStream,
    address: u64,
    data: &[T],
) -> Result<(), Error> {
    let mut bytes = Vec::with_capacity(data.len() * T::KIND.size());
    for &value in data {
        value.write_le(&mut bytes);
    }
    backend.write(stream, address, &bytes)
}

#[cfg(not(target_endian = "little"))]
fn read_bytes<T: Element>(
    backend: &dyn super::Backend,
    stream: &dyn BackendStream,
    address: u64,
    out: &mut [T],
) -> Result<(), Error> {
    let size = T::KIND.size();
    let mut bytes = vec![0u8; out.len() * size];
    backend.read(stream, address, &mut bytes)?;
    for (value, chunk) in out.iter_mut().zip(bytes.chunks_exact(size)) {
        *value = T::read_le(chunk).ok_or_else(|| Error::Device {
            stage: "copy to host".to_owned(),
            message: "short read".to_owned(),
        })?;
    }
    Ok(())
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.device.id())
            .field("raw", &self.raw)
            .finish()
    }
}

impl Device {
    /// The stream work goes to when no other is named.
    pub fn default_stream(&self) -> Stream {
        Stream::new(self.clone(), Arc::clone(self.raw_default_stream()))
    }

    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Stream, Error> {
        Ok(Stream::new(self.clone(), self.backend().new_stream()?))
    }

    /// A buffer holding a copy of `data`, written on the default stream.
    pub fn upload<T: crate::Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let mut buffer = DeviceBuffer::alloc(self, data.len())?;
        self.default_stream().write(&mut buffer, data)?;
        Ok(buffer)
    }

    /// Waits until all work queued on the default stream has finished.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.default_stream().synchronize()
    }
}
