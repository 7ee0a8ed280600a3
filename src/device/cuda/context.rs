//! A device's context: checking the ordinal and opening its primary context, reading its
//! properties, and making it current on the calling thread.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::CudaContext;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{CUdevice_attribute, CUresult};

use super::error::{DeferredErrors, describe, driver_error};
use super::probe::{driver_version, format_version};
use crate::device::{BackendKind, DeviceProperties, LaunchLimits};
use crate::error::Error;

/// A device's primary context, and the errors recorded against it on paths that cannot return
/// them.
pub(super) struct Context {
    ctx: Arc<CudaContext>,
    deferred: DeferredErrors,
}

impl Context {
    pub(super) fn new(ctx: Arc<CudaContext>) -> Self {
        Self {
            ctx,
            deferred: DeferredErrors::default(),
        }
    }

    pub(super) fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Makes the context current on this thread. cudarc parks errors from its own `Drop`s in the
    /// context and returns them from the next bind; such a stale error is recorded and the bind
    /// retried once, so it neither fails an unrelated call nor is lost.
    ///
    /// `stage` names the operation for an error; it is formatted only when the bind fails, so a
    /// launch formats nothing.
    pub(super) fn bind(&self, stage: impl fmt::Display) -> Result<(), Error> {
        if let Err(stale) = self.ctx.bind_to_thread() {
            self.record(format!(
                "earlier cleanup inside cudarc: {}",
                describe(stale)
            ));
            self.ctx
                .bind_to_thread()
                .map_err(|e| driver_error(format!("{stage}: make the context current"), e))?;
        }
        Ok(())
    }

    pub(super) fn record(&self, message: String) {
        self.deferred.record(message);
    }

    /// Errors recorded since the last call, as one error.
    pub(super) fn take_deferred(&self) -> Result<(), Error> {
        self.deferred.take()
    }
}

/// The primary context of device `ordinal`, once the driver confirms the device exists.
pub(super) fn open_context(ordinal: usize) -> Result<Arc<CudaContext>, Error> {
    let available = count_devices()?;
    if ordinal >= available {
        return Err(Error::NoDevice { ordinal, available });
    }
    CudaContext::new(ordinal).map_err(|e| driver_error(format!("open cuda device {ordinal}"), e))
}

/// Device count, treating "no device" as zero. Runs `cuInit` first, as the driver requires.
pub(super) fn count_devices() -> Result<usize, Error> {
    match result::init() {
        Ok(()) => {}
        Err(DriverError(CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
        // A stub libcuda (from the toolkit, not the driver), a driver older than the kernel
        // module, or a broken installation: there is no usable driver.
        Err(e) => {
            return Err(Error::DriverUnavailable {
                reason: format!("cuInit failed: {}", describe(e)),
            });
        }
    }
    let count = result::device::get_count().map_err(|e| driver_error("count cuda devices", e))?;
    Ok(usize::try_from(count).unwrap_or(0))
}

pub(super) fn properties_of(ctx: &CudaContext) -> Result<DeviceProperties, Error> {
    let stage = |what: &str| format!("query {what} of cuda device {}", ctx.ordinal());
    let name = ctx.name().map_err(|e| driver_error(stage("the name"), e))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| driver_error(stage("the compute capability"), e))?;
    let attribute = |attribute, what: &str| -> Result<u32, Error> {
        let value = ctx
            .attribute(attribute)
            .map_err(|e| driver_error(stage(what), e))?;
        // A negative limit would be a driver bug; 0 makes every launch refuse cleanly.
        Ok(u32::try_from(value).unwrap_or(0))
    };
    let max_grid_x = attribute(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        "gridDim.x",
    )?;
    let max_block_x = attribute(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        "blockDim.x",
    )?;
    let limits = LaunchLimits {
        max_threads_per_block: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "threads per block",
        )?,
        max_block: [
            max_block_x,
            attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                "blockDim.y",
            )?,
            attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
                "blockDim.z",
            )?,
        ],
        max_grid: [
            max_grid_x,
            attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                "gridDim.y",
            )?,
            attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                "gridDim.z",
            )?,
        ],
        // The default a launch gets without opting in (`cudaFuncSetAttribute`), which jitseam
        // never does: 48 KiB on every architecture.
        max_dynamic_shared_bytes: attribute(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            "shared memory per block",
        )?,
    };
    Ok(DeviceProperties {
        name,
        backend: BackendKind::Cuda,
        compute_capability: Some((
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        )),
        max_grid_x,
        max_block_x,
        limits,
        driver_version: driver_version().ok().map(format_version),
    })
}
