//! Modules and their functions: loading PTX or a cubin and resolving an entry, the [`CudaFunction`]
//! handle, and the driver's own parameter info (`cuFuncGetParamInfo`).
//!
//! A function handle remembers each stream it was launched on, so that when it drops its
//! module can be handed over for unloading once the work queued there has finished.

use std::any::Any;
use std::ffi::{CString, c_void};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::CudaStream;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUresult};

use super::error::{describe, driver_code_error, driver_error, lock};
use super::probe::param_info_fn;
use super::shared::Shared;
use crate::device::BackendFunction;
use crate::error::{DriverCode, Error};

/// No stream handle is `usize::MAX` (the default stream is 0).
const NO_STREAM: usize = usize::MAX;

/// A resolved kernel and the module that holds it.
pub(super) struct CudaFunction {
    shared: Arc<Shared>,
    module: sys::CUmodule,
    pub(super) function: sys::CUfunction,
    pub(super) symbol: String,
    /// Every stream the function was launched on, kept alive so an event can be recorded on
    /// each when the handle drops. Holding them also keeps their handles from being reused, so
    /// a handle value names one stream for as long as it is in this list.
    launched_on: Mutex<Vec<Arc<CudaStream>>>,
    /// The handle (as `usize`) of the stream last added to `launched_on`, or [`NO_STREAM`]: a
    /// launch on the same stream as the previous one takes no lock.
    last_stream: AtomicUsize,
}

// SAFETY: `module` and `function` are driver handles valid in any thread once their context is
// current (every use binds it first); the driver serializes its own use of them. The only
// mutable state, `launched_on` and `last_stream`, is behind a `Mutex` and an atomic.
unsafe impl Send for CudaFunction {}
// SAFETY: as for `Send`: shared use only reads the handles or goes through the `Mutex`/atomic.
unsafe impl Sync for CudaFunction {}

impl fmt::Debug for CudaFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaFunction")
            .field("symbol", &self.symbol)
            .field("ordinal", &self.shared.ctx().ordinal())
            .finish()
    }
}

fn nul(symbol: &str, what: &'static str, e: std::ffi::NulError) -> Error {
    Error::InteriorNul {
        entry: symbol.to_owned(),
        what,
        offset: e.nul_position(),
    }
}

/// Loads `ptx` as a module and resolves `symbol` in it.
pub(super) fn load(
    shared: &Arc<Shared>,
    ptx: &str,
    symbol: &str,
) -> Result<Arc<dyn BackendFunction>, Error> {
    let image = CString::new(ptx).map_err(|e| nul(symbol, "ptx text", e))?;
    // SAFETY: `image` is NUL-terminated PTX text that outlives the call.
    unsafe { load_module(shared, image.as_ptr().cast::<c_void>(), symbol, "ptx") }
}

/// Loads a cubin image as a module and resolves `symbol` in it.
pub(super) fn load_image(
    shared: &Arc<Shared>,
    image: &[u8],
    symbol: &str,
) -> Result<Arc<dyn BackendFunction>, Error> {
    // The driver reads the ELF headers in place: copy into 8-byte aligned storage, which a
    // `Vec<u8>` does not promise.
    let mut aligned = vec![0u64; image.len().div_ceil(8)];
    for (word, chunk) in aligned.iter_mut().zip(image.chunks(8)) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_ne_bytes(bytes);
    }
    // SAFETY: `aligned` holds the whole image and outlives the call. The driver takes no length
    // and reads as far as the ELF headers say, so the image must be well formed: `bind` passes
    // only images `load()` accepted — a cubin parsed by `parse_cubin` (its ELF, section and
    // symbol tables lie inside the bytes) that is either NVRTC's own output, sealed to its PTX
    // in this process or read back from a compile-cache entry this user's processes wrote (its
    // MAC verified), or one the caller vouched for with `load_unverified`, whose contract
    // includes a well-formed image.
    unsafe { load_module(shared, aligned.as_ptr().cast::<c_void>(), symbol, "cubin") }
}

/// Loads the module at `image` and resolves `symbol`.
///
/// # Safety
/// `image` must point to NUL-terminated PTX text, or to a complete cubin/fatbin image, that
/// stays valid for the duration of the call.
unsafe fn load_module(
    shared: &Arc<Shared>,
    image: *const c_void,
    symbol: &str,
    kind: &str,
) -> Result<Arc<dyn BackendFunction>, Error> {
    shared.drain(0);
    let name = CString::new(symbol).map_err(|e| nul(symbol, "symbol", e))?;
    let stage = |what: &str| format!("{what} for kernel `{symbol}`");
    shared.bind(stage("load the module"))?;
    // SAFETY: the caller guarantees `image` is a valid PTX string or image for the call; the
    // driver JITs or copies it before returning and keeps no pointer into it.
    let module = unsafe { result::module::load_data(image) }
        .map_err(|e| driver_error(stage(&format!("load the {kind} module")), e))?;
    // SAFETY: `module` was just loaded in the current context and is not unloaded before
    // this returns; `name` is NUL-terminated.
    let function = match unsafe { result::module::get_function(module, name) } {
        Ok(function) => function,
        Err(e) => {
            // SAFETY: loaded above, never shared, no function resolved, unloaded once.
            if let Err(u) = unsafe { result::module::unload(module) } {
                shared.record(format!(
                    "unload the module of `{symbol}` after a failed lookup: {}",
                    describe(u)
                ));
            }
            return Err(driver_error(stage("resolve the entry"), e));
        }
    };
    Ok(Arc::new(CudaFunction {
        shared: Arc::clone(shared),
        module,
        function,
        symbol: symbol.to_owned(),
        launched_on: Mutex::new(Vec::new()),
        last_stream: AtomicUsize::new(NO_STREAM),
    }))
}

impl CudaFunction {
    /// `function` as a [`CudaFunction`], if it was loaded through `shared`'s device handle.
    pub(super) fn of<'f>(
        function: &'f dyn BackendFunction,
        shared: &Arc<Shared>,
    ) -> Option<&'f Self> {
        function
            .as_any()
            .downcast_ref::<Self>()
            .filter(|f| Arc::ptr_eq(&f.shared, shared))
    }

    /// Remembers that a launch goes to `stream`.
    pub(super) fn note_stream(&self, stream: &Arc<CudaStream>) {
        let key = stream.cu_stream() as usize;
        if self.last_stream.load(Ordering::Relaxed) == key {
            return;
        }
        let mut streams = lock(&self.launched_on);
        if !streams.iter().any(|s| s.cu_stream() as usize == key) {
            streams.push(Arc::clone(stream));
        }
        self.last_stream.store(key, Ordering::Relaxed);
    }
}

impl Drop for CudaFunction {
    fn drop(&mut self) {
        let streams = std::mem::take(
            self.launched_on
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.shared
            .defer_unload(self.module, std::mem::take(&mut self.symbol), &streams);
        // A function never launched (or whose work already finished) goes at once.
        self.shared.drain(0);
    }
}

impl BackendFunction for CudaFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn static_shared_bytes(&self) -> Result<u32, Error> {
        let stage = || format!("query the static shared memory of kernel `{}`", self.symbol);
        self.shared.bind(stage())?;
        let mut bytes: std::ffi::c_int = 0;
        // SAFETY: `function` is a live handle of this (current) context — the module is
        // unloaded only after this handle drops — and the out-pointer is a live local.
        let status = unsafe {
            sys::cuFuncGetAttribute(
                &mut bytes,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                self.function,
            )
        };
        match status {
            CUresult::CUDA_SUCCESS => Ok(u32::try_from(bytes).unwrap_or(0)),
            other => Err(driver_error(stage(), DriverError(other))),
        }
    }

    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        let Some(param_info) = param_info_fn() else {
            return Ok(None);
        };
        let stage = || format!("query the parameters of kernel `{}`", self.symbol);
        self.shared.bind(stage())?;
        let mut params = Vec::new();
        // The packet limit bounds the parameter count; the loop bound only guards against a
        // driver that never reports the end.
        for index in 0..=crate::abi::MAX_PARAM_BYTES {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `param_info` is the driver's `cuFuncGetParamInfo` (see `param_info_fn`);
            // `function` is a live handle of this (current) context — the module is unloaded
            // only after this handle drops — and both out-pointers are live locals.
            let status = unsafe { param_info(self.function, index, &mut offset, &mut size) };
            match DriverCode(status) {
                DriverCode(0) => params.push((offset, size)),
                // The documented answer for an index past the last parameter.
                DriverCode::INVALID_VALUE => return Ok(Some(params)),
                DriverCode::NOT_SUPPORTED => return Ok(None),
                _ => return Err(driver_code_error(stage(), status)),
            }
        }
        Err(Error::Device {
            stage: stage(),
            message: format!(
                "the driver reports more than {} parameters",
                crate::abi::MAX_PARAM_BYTES
            ),
        })
    }
}
