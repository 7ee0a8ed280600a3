//! Events: cudarc's [`CudaEvent`] behind [`BackendEvent`], recorded on a stream, waited for by
//! another stream on the device (`cuStreamWaitEvent`), or by the host.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{CudaEvent, sys};

use super::error::{driver_code_error, driver_error};
use super::probe::elapsed_fn;
use super::shared::Shared;
use super::stream;
use crate::device::{BackendEvent, BackendStream};
use crate::error::{DriverCode, Error};

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

/// An event without timing (cudarc's default): what the access logs record to order streams,
/// the cheapest to record and to wait for.
pub(super) fn record(
    shared: &Shared,
    stream: &dyn BackendStream,
) -> Result<Arc<dyn BackendEvent>, Error> {
    record_with(shared, stream, None)
}

/// An event that also records its completion time on the device.
pub(super) fn record_timed(
    shared: &Shared,
    stream: &dyn BackendStream,
) -> Result<Arc<dyn BackendEvent>, Error> {
    record_with(shared, stream, Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
}

/// An event made with `flags` (cudarc's default, no timing, for `None`), recorded on `stream`.
fn record_with(
    shared: &Shared,
    stream: &dyn BackendStream,
    flags: Option<sys::CUevent_flags>,
) -> Result<Arc<dyn BackendEvent>, Error> {
    const STAGE: &str = "record an event";
    let stream = stream::resolve(shared, stream, STAGE)?;
    let event = stream
        .record_event(flags)
        .map_err(|e| driver_error(STAGE, e))?;
    Ok(Arc::new(CudaEventHandle { event }))
}

/// `cuEventElapsedTime` from `start` to `end`, once both completed.
pub(super) fn elapsed(
    shared: &Shared,
    start: &dyn BackendEvent,
    end: &dyn BackendEvent,
) -> Result<Duration, Error> {
    const STAGE: &str = "time two events";
    let start = resolve(shared, start, STAGE)?;
    let end = resolve(shared, end, STAGE)?;
    let elapsed = elapsed_fn().ok_or_else(|| Error::EventTiming {
        reason: "the cuda driver has no cuEventElapsedTime".to_owned(),
    })?;
    for event in [start, end] {
        event.synchronize().map_err(|e| driver_error(STAGE, e))?;
    }
    shared.bind(STAGE)?;
    let mut ms = 0.0f32;
    // SAFETY: `elapsed` is the driver's `cuEventElapsedTime` (see `elapsed_fn`); both events are
    // live handles of this (current) context, owned by their `CudaEvent`s for the call, and
    // `ms` is a live, writable `float`.
    let status = unsafe { elapsed(&mut ms, start.cu_event(), end.cu_event()) };
    match DriverCode(status) {
        DriverCode(0) => {}
        DriverCode::INVALID_HANDLE => {
            return Err(Error::EventTiming {
                reason: "an event was recorded without timing".to_owned(),
            });
        }
        _ => return Err(driver_code_error(STAGE, status)),
    }
    if ms < 0.0 {
        return Err(Error::EventTiming {
            reason: format!(
                "the later event completed {} ms before the earlier one",
                -ms
            ),
        });
    }
    Duration::try_from_secs_f64(f64::from(ms) / 1000.0).map_err(|e| Error::EventTiming {
        reason: format!("the driver reported {ms} ms: {e}"),
    })
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
