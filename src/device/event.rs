//! [`Event`]: a point in a stream's queue that other streams can wait for on the device, and
//! the host can wait for or poll.

use std::fmt;
use std::sync::Arc;

use super::{BackendEvent, BackendStream, Device, DeviceId};
use crate::error::Error;

/// A point in one stream's queue, made by [`Stream::record_event`]: it completes once all work
/// queued on that stream before it has finished, and [`Event::elapsed_since`] measures the
/// time between two. Holds a clone of its device.
///
/// [`Stream::record_event`]: crate::device::Stream::record_event
#[derive(Clone)]
pub struct Event {
    device: Device,
    raw: Arc<dyn BackendEvent>,
    /// The stream it was recorded on, whose guard failures its synchronization reports.
    stream: Arc<dyn BackendStream>,
}

impl Event {
    pub(super) fn new(
        device: Device,
        raw: Arc<dyn BackendEvent>,
        stream: Arc<dyn BackendStream>,
    ) -> Self {
        Self {
            device,
            raw,
            stream,
        }
    }

    /// The id of the device it was recorded on.
    pub fn device_id(&self) -> DeviceId {
        self.device.id()
    }

    pub(super) fn device(&self) -> &Device {
        &self.device
    }

    pub(super) fn raw(&self) -> &dyn BackendEvent {
        &*self.raw
    }

    /// Blocks the calling thread until the event completes. When its stream has run a
    /// guarded kernel, reports a guard that failed there as [`Error::GuardFault`] — reading the
    /// stream's fault record waits for the work queued on it after the event too.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.device.backend().synchronize_event(self.raw())?;
        self.device.guard_report(&self.stream)
    }

    /// Whether the event has completed, without waiting.
    pub fn is_complete(&self) -> Result<bool, Error> {
        self.device.backend().event_complete(self.raw())
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.device.id())
            .field("raw", &self.raw)
            .finish()
    }
}
