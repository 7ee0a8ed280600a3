//! Streams: cudarc's [`CudaStream`] behind [`BackendStream`], resolving a handle back to it,
//! and creating and synchronizing streams.
//!
//! As in CUDA, work on different streams is not ordered; streams made here are non-blocking
//! (they do not wait for the default stream either).

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::{CudaContext, CudaStream};

use super::error::driver_error;
use super::shared::Shared;
use crate::device::BackendStream;
use crate::error::Error;

/// A stream of a CUDA backend: cudarc's stream, which owns (or, for the default stream,
/// borrows) the driver handle and keeps the context alive.
#[derive(Debug)]
pub(super) struct CudaStreamHandle {
    pub(super) stream: Arc<CudaStream>,
}

impl BackendStream for CudaStreamHandle {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The default stream of `ctx`.
pub(super) fn default_stream(ctx: &Arc<CudaContext>) -> Arc<dyn BackendStream> {
    Arc::new(CudaStreamHandle {
        stream: ctx.default_stream(),
    })
}

pub(super) fn new_stream(shared: &Shared) -> Result<Arc<dyn BackendStream>, Error> {
    shared.bind("create a stream")?;
    let stream = shared
        .ctx()
        .new_stream()
        .map_err(|e| driver_error("create a stream", e))?;
    Ok(Arc::new(CudaStreamHandle { stream }))
}

/// The cudarc stream behind `stream`, if it is a CUDA stream (of any context).
pub(super) fn cudarc_of(stream: &dyn BackendStream) -> Option<&Arc<CudaStream>> {
    stream
        .as_any()
        .downcast_ref::<CudaStreamHandle>()
        .map(|handle| &handle.stream)
}

/// The cudarc stream behind `stream`, refused unless it is a stream of `shared`'s context.
pub(super) fn resolve<'s>(
    shared: &Shared,
    stream: &'s dyn BackendStream,
    stage: &str,
) -> Result<&'s Arc<CudaStream>, Error> {
    let handle = stream
        .as_any()
        .downcast_ref::<CudaStreamHandle>()
        .ok_or_else(|| Error::Device {
            stage: stage.to_owned(),
            message: format!("{stream:?} is not a cuda stream"),
        })?;
    if !Arc::ptr_eq(handle.stream.context(), shared.ctx()) {
        return Err(Error::Device {
            stage: stage.to_owned(),
            message: "the stream belongs to another cuda device handle".to_owned(),
        });
    }
    Ok(&handle.stream)
}

/// Waits for `stream`, then sweeps the pending unloads and reports the errors recorded since
/// the last synchronize.
pub(super) fn synchronize(shared: &Shared, stream: &dyn BackendStream) -> Result<(), Error> {
    const STAGE: &str = "synchronize a stream";
    let stream = resolve(shared, stream, STAGE)?;
    shared.bind(STAGE)?;
    // SAFETY: `stream` is a live stream of this (current) context.
    unsafe { result::stream::synchronize(stream.cu_stream()) }
        .map_err(|e| driver_error(STAGE, e))?;
    shared.drain(0);
    shared.take_deferred()
}
