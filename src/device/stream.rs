//! [`Stream`]: an ordered queue of work on one device.

use std::sync::Arc;

use super::{BackendStream, Device, DeviceBuffer, DeviceId};
use crate::dtype::Element;
use crate::error::Error;

/// A stream on one device. Holds a clone of its device.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    raw: Arc<dyn BackendStream>,
}

impl Stream {
    pub(super) fn new(device: Device, raw: Arc<dyn BackendStream>) -> Self {
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

    /// Copies `data` into `buffer`, ordered after earlier work on this stream.
    pub fn write<T: Element>(&self, buffer: &mut DeviceBuffer<T>, data: &[T]) -> Result<(), Error> {
        self.check_device(buffer.device().id(), "copy to device")?;
        if data.len() != buffer.len() {
            return Err(Error::LengthMismatch {
                stage: "copy to device",
                expected: buffer.len(),
                found: data.len(),
            });
        }
        let mut bytes = Vec::with_capacity(data.len() * T::KIND.size());
        for &value in data {
            value.write_le(&mut bytes);
        }
        self.device
            .backend()
            .write(self.raw(), buffer.address(), &bytes)
    }

    /// Copies `buffer` to the host once earlier work on this stream has finished.
    pub fn read<T: Element>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>, Error> {
        self.check_device(buffer.device().id(), "copy to host")?;
        let size = T::KIND.size();
        let mut bytes = vec![0u8; buffer.len() * size];
        self.device
            .backend()
            .read(self.raw(), buffer.address(), &mut bytes)?;
        bytes
            .chunks_exact(size)
            .map(|chunk| {
                T::read_le(chunk).ok_or_else(|| Error::Device {
                    stage: "copy to host".to_owned(),
                    message: "short read".to_owned(),
                })
            })
            .collect()
    }

    /// Waits until all work queued on this stream has finished.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.device.backend().synchronize(self.raw())
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
