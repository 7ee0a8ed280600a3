//! Events: cudarc's [`CudaEvent`] behind [`BackendEvent`], recorded on a stream, waited for by
//! another stream on the device (`cuStreamWaitEvent`), or by the host.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::CudaEvent;

use super::error::driver_error;
use super::shared::Shared;
use super::stream;
use crate::device::{BackendEvent, BackendStream};
use crate::error::Error;

/// An event of a CUDA backend; cudarc's type owns the driver handle and keeps the context alive.
#[derive(Debug)]
pub(super) struct CudaEventHandle {
    pub(super) event: CudaEvent,
}

impl BackendEvent for CudaEventHandle {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn resolve<'e>(
    shared: &Shared,
    event: &'e dyn BackendEvent,
    stage: &str,
) -> Result<&'e CudaEvent, Error> {
    let handle = event
        .as_any()
        .downcast_ref::<CudaEventHandle>()
        .ok_or_else(|| Error::Device {
            stage: stage.to_owned(),
            message: format!("{event:?} is not a cuda event"),
        })?;
    if !Arc::ptr_eq(handle.event.context(), shared.ctx()) {
        return Err(Error::Device {
            stage: stage.to_owned(),
            message: "the event belongs to another cuda device handle".to_owned(),
        });
    }
    Ok(&handle.event)
}

pub(super) fn record(
    shared: &Shared,
    stream: &dyn BackendStream,
) -> Result<Arc<dyn BackendEvent>, Error> {
    const STAGE: &str = "record an event";
    let stream = stream::resolve(shared, stream, STAGE)?;
    let event = stream
        .record_event(None)
        .map_err(|e| driver_error(STAGE, e))?;
    Ok(Arc::new(CudaEventHandle { event }))
}

pub(super) fn wait(
    shared: &Shared,
    stream: &dyn BackendStream,
    event: &dyn BackendEvent,
) -> Result<(), Error> {
    const STAGE: &str = "wait for an event";
    let stream = stream::resolve(shared, stream, STAGE)?;
    let event = resolve(shared, event, STAGE)?;
    stream.wait(event).map_err(|e| driver_error(STAGE, e))
}

pub(super) fn synchronize(shared: &Shared, event: &dyn BackendEvent) -> Result<(), Error> {
    const STAGE: &str = "synchronize an event";
    let event = resolve(shared, event, STAGE)?;
    event.synchronize().map_err(|e| driver_error(STAGE, e))
}

pub(super) fn is_complete(shared: &Shared, event: &dyn BackendEvent) -> Result<bool, Error> {
    const STAGE: &str = "query an event";
    let event = resolve(shared, event, STAGE)?;
    event.try_is_complete().map_err(|e| driver_error(STAGE, e))
}
