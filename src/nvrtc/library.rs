//! Probing libnvrtc before cudarc can panic on it: is the library loadable, does it export every
//! symbol [`super::program`] calls, and which version is it.
//!
//! cudarc loads NVRTC lazily and panics when the library or a symbol is missing, so every entry
//! point of this module runs [`available`] first. The answer is decided once per process.

use std::ffi::c_void;
use std::sync::OnceLock;

use cudarc::nvrtc::sys;

use crate::error::Error;

/// Every NVRTC function [`super::program`] calls, by the name cudarc's loader resolves.
const REQUIRED_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcGetErrorString",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcDestroyProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
];

/// Ok with NVRTC's `(major, minor)` version when libnvrtc is loadable and complete, else
/// [`Error::NvrtcUnavailable`] saying why.
pub(super) fn available() -> Result<(u32, u32), Error> {
    static PROBE: OnceLock<Result<(u32, u32), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            // A second line of defence, as for the driver: a cudarc panic we did not foresee
            // (the library gone between the two loads below, say) is an unavailable NVRTC.
            std::panic::catch_unwind(probe)
                .unwrap_or_else(|_| Err("loading libnvrtc panicked inside cudarc".to_owned()))
        })
        .clone()
        .map_err(|reason| Error::NvrtcUnavailable { reason })
}

fn probe() -> Result<(u32, u32), String> {
    // SAFETY: `is_culib_present` only tries to `dlopen` libnvrtc under its well-known names and
    // closes it again; NVIDIA's library initializers are made to be loaded into any process. No
    // symbol is called.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "libnvrtc could not be loaded; install NVRTC (e.g. `scripts/install-nvrtc`) \
                    and add its directory to LD_LIBRARY_PATH"
                .to_owned(),
        );
    }
    // SAFETY: loading runs libnvrtc's initializers, as `is_culib_present` just did under the
    // same names in the same order (so a candidate loads; were it removed meanwhile, `culib`
    // panics, which `available` catches — never undefined behaviour), and the cached library
    // stays loaded for the life of the process, so every symbol cudarc takes from it stays
    // valid.
    let library = unsafe { sys::culib() };
    for name in REQUIRED_SYMBOLS {
        // SAFETY: the symbol is only looked up, never called or read through, so the pointer
        // type handed to `get` cannot be wrong; the result is dropped at once.
        if unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_err() {
            return Err(format!(
                "libnvrtc lacks `{name}`; it is older than jitseam supports"
            ));
        }
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the symbol exists (checked above); both out-pointers are live locals that the
    // call only writes.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {status:?}"));
    }
    Ok((
        u32::try_from(major).unwrap_or(0),
        u32::try_from(minor).unwrap_or(0),
    ))
}
