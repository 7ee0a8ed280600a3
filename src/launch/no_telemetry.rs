//! Without the `telemetry` feature: no kernel has a cell, and nothing is recorded.

use crate::artifact::Artifact;
use crate::device::{Device, Stream};
use crate::error::Error;
use crate::telemetry::DispatchHandle;

pub(crate) fn dispatch_handle(_artifact: &Artifact, _device: &Device) -> Option<DispatchHandle> {
    None
}

pub(crate) fn launched(_stream: &Stream, cell: &DispatchHandle) {
    match *cell {}
}

pub(crate) fn refused(_artifact: &Artifact, _device: &Device, _error: &Error) {}
