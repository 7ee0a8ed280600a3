//! Probing the driver library before cudarc can panic on it: is libcuda loadable, does it export
//! every symbol this folder calls, which driver version is it, and does it offer
//! `cuFuncGetParamInfo`. Also the `catch_unwind` guard around the once-per-device paths.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;

use crate::error::Error;

/// Every driver entry point this folder reaches through cudarc, by the exact name cudarc's
/// loader resolves (it panics on a missing one). Checked once per [`super::open`], before the
/// first call.
const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuPointerGetAttribute",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuStreamWaitEvent",
    "cuEventDestroy_v2",
];

/// `cuFuncGetParamInfo` exists from CUDA 12.4 on.
const PARAM_INFO_SYMBOL: &str = "cuFuncGetParamInfo";
const PARAM_INFO_MIN_DRIVER: i32 = 12_040;

pub(super) fn probe_library() -> Result<(), Error> {
    // SAFETY: `is_culib_present` only tries to `dlopen` the CUDA driver under its well-known
    // names (`libcuda.so`, `libcuda.so.1`, …) and closes it again. Loading the driver library
    // runs its initializers, which NVIDIA designs to be loaded into arbitrary processes; no
    // symbol is called and nothing is dereferenced.
    let present = unsafe { sys::is_culib_present() };
    if present {
        Ok(())
    } else {
        Err(Error::DriverUnavailable {
            reason: "the cuda driver library (libcuda) could not be loaded; install the nvidia \
                     driver or add its directory to LD_LIBRARY_PATH"
                .to_owned(),
        })
    }
}

/// Runs `f`, turning a panic from inside cudarc into a typed error. Only for paths that run
/// once per device: the primary guard is the probing above.
pub(super) fn guarded<T>(stage: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(Error::DriverUnavailable {
            reason: format!("{stage}: the cuda driver library failed inside cudarc: {what}"),
        })
    })
}

/// Whether the loaded driver library exports `name`. Call only after [`probe_library`]
/// succeeded.
fn has_symbol(name: &str) -> bool {
    // SAFETY: `culib` panics only when no candidate library loads; every caller runs after
    // `probe_library` found one under the same candidate names, in the same order, and the
    // library it caches stays loaded for the life of the process.
    let library = unsafe { sys::culib() };
    // SAFETY: the symbol is only looked up, never called or read through, so the pointer type
    // handed to `get` cannot be wrong; the result is dropped at once.
    unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_ok()
}

pub(super) fn check_symbols() -> Result<(), Error> {
    match REQUIRED_SYMBOLS.iter().find(|name| !has_symbol(name)) {
        None => Ok(()),
        Some(missing) => Err(Error::DriverUnavailable {
            reason: format!(
                "the cuda driver library lacks `{missing}`; the driver is older than jitseam supports"
            ),
        }),
    }
}

/// `cuDriverGetVersion`: `1000 * major + 10 * minor`.
pub(super) fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0;
    // SAFETY: `version` is a live, writable `c_int` for the duration of the call, which only
    // writes through the pointer.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// `12080` → `"12.8"`.
pub(super) fn format_version(version: i32) -> String {
    format!("{}.{}", version / 1000, (version % 1000) / 10)
}

/// `cuFuncGetParamInfo`'s C signature. Statuses of the entry points resolved here are read as
/// the plain integers the C functions return: a code this build's bindings do not list must
/// not become an invalid enum value.
pub(super) type ParamInfoFn =
    unsafe extern "C" fn(sys::CUfunction, usize, *mut usize, *mut usize) -> u32;

/// `cuEventElapsedTime`'s (and `cuEventElapsedTime_v2`'s) C signature.
pub(super) type ElapsedFn = unsafe extern "C" fn(*mut f32, sys::CUevent, sys::CUevent) -> u32;

/// The driver's entry point `name`, as a function of type `F`; `None` when it lacks one.
///
/// Entry points resolved here rather than through cudarc's bindings work whatever CUDA version
/// jitseam was built for (a binding may be missing from older versions' bindings, or renamed
/// in newer ones), and are simply absent on a driver that lacks them, where cudarc would panic.
///
/// # Safety
/// `F` is the C declaration of `name` in `cuda.h`. Call only after [`probe_library`] succeeded.
unsafe fn entry_point<F: Copy>(name: &str) -> Option<F> {
    // SAFETY: as in `has_symbol`, `culib` runs only after `probe_library` found the library.
    let library = unsafe { sys::culib() };
    // SAFETY: `F` is the symbol's C type (this fn's contract). The library is cudarc's
    // process-wide handle, never unloaded, so the pointer stays valid for the life of the
    // process.
    let symbol = unsafe { library.get::<F>(name.as_bytes()) };
    symbol.ok().map(|f| *f)
}

/// `cuFuncGetParamInfo`, when this driver offers it: new enough, and the symbol exported.
/// Decided once per process.
pub(super) fn param_info_fn() -> Option<ParamInfoFn> {
    static RESOLVED: OnceLock<Option<ParamInfoFn>> = OnceLock::new();
    *RESOLVED.get_or_init(|| {
        if !driver_version().is_ok_and(|v| v >= PARAM_INFO_MIN_DRIVER) {
            return None;
        }
        // SAFETY: `ParamInfoFn` is `cuFuncGetParamInfo`'s declaration; only called once a
        // device opened, after the probe.
        unsafe { entry_point::<ParamInfoFn>(PARAM_INFO_SYMBOL) }
    })
}

/// `cuEventElapsedTime_v2` (CUDA 12.8 on), else `cuEventElapsedTime` (removed in 13.0): the
/// same function under the name this driver has. Decided once per process.
pub(super) fn elapsed_fn() -> Option<ElapsedFn> {
    static RESOLVED: OnceLock<Option<ElapsedFn>> = OnceLock::new();
    *RESOLVED.get_or_init(|| {
        ["cuEventElapsedTime_v2", "cuEventElapsedTime"]
            .into_iter()
            // SAFETY: `ElapsedFn` is the declaration of both names; only called once a device
            // opened, after the probe.
            .find_map(|name| unsafe { entry_point::<ElapsedFn>(name) })
    })
}

#[cfg(test)]
mod tests {
    use super::format_version;

    #[test]
    fn driver_versions_read_like_the_toolkit() {
        assert_eq!(format_version(12_080), "12.8");
        assert_eq!(format_version(12_040), "12.4");
        assert_eq!(format_version(11_020), "11.2");
        assert_eq!(format_version(13_000), "13.0");
    }
}
