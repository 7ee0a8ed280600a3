//! `CUresult`: the driver's status codes, with the names and descriptions `cuGetErrorName` and
//! `cuGetErrorString` return.
//!
//! The C type is an enum, passed as a 32-bit unsigned integer; codes arrive from callers as
//! plain integers, so they are kept as integers here (an unknown code must not become an
//! invalid Rust enum value).

use std::ffi::c_char;

/// A driver status code.
pub type CUresult = u32;

macro_rules! statuses {
    ($($name:ident = $code:literal, $text:literal;)*) => {
        $(
            #[doc = $text]
            pub const $name: CUresult = $code;
        )*

        /// `(name, description)` of a known code, both NUL-terminated.
        fn lookup(code: CUresult) -> Option<(&'static str, &'static str)> {
            match code {
                $($code => Some((concat!(stringify!($name), "\0"), concat!($text, "\0"))),)*
                _ => None,
            }
        }

        /// Every code the model knows, for the crate's own tests.
        #[cfg(test)]
        pub(crate) const ALL: &[(CUresult, &str)] = &[$(($code, stringify!($name)),)*];
    };
}

statuses! {
    CUDA_SUCCESS = 0, "no error";
    CUDA_ERROR_INVALID_VALUE = 1, "invalid argument";
    CUDA_ERROR_OUT_OF_MEMORY = 2, "out of memory";
    CUDA_ERROR_NOT_INITIALIZED = 3, "initialization error";
    CUDA_ERROR_DEINITIALIZED = 4, "driver shutting down";
    CUDA_ERROR_NO_DEVICE = 100, "no CUDA-capable device is detected";
    CUDA_ERROR_INVALID_DEVICE = 101, "invalid device ordinal";
    CUDA_ERROR_INVALID_IMAGE = 200, "device kernel image is invalid";
    CUDA_ERROR_INVALID_CONTEXT = 201, "invalid device context";
    CUDA_ERROR_INVALID_PTX = 218, "a PTX JIT compilation failed";
    CUDA_ERROR_INVALID_HANDLE = 400, "invalid resource handle";
    CUDA_ERROR_NOT_FOUND = 500, "named symbol not found";
    CUDA_ERROR_NOT_READY = 600, "device not ready";
    CUDA_ERROR_ILLEGAL_ADDRESS = 700, "an illegal memory access was encountered";
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701, "too many resources requested for launch";
    CUDA_ERROR_MISALIGNED_ADDRESS = 716, "misaligned address";
    CUDA_ERROR_LAUNCH_FAILED = 719, "unspecified launch failure";
    CUDA_ERROR_NOT_PERMITTED = 800, "operation not permitted";
    CUDA_ERROR_NOT_SUPPORTED = 801, "operation not supported";
    CUDA_ERROR_UNKNOWN = 999, "unknown error";
}

/// `cuGetErrorName`'s answer for `code`, or `None` for a code the model does not know.
pub(crate) fn name(code: CUresult) -> Option<*const c_char> {
    lookup(code).map(|(name, _)| name.as_ptr().cast())
}

/// `cuGetErrorString`'s answer for `code`, or `None` for a code the model does not know.
pub(crate) fn description(code: CUresult) -> Option<*const c_char> {
    lookup(code).map(|(_, text)| text.as_ptr().cast())
}

/// Collapses a result into the status the C caller sees.
pub(crate) fn status(result: Result<(), CUresult>) -> CUresult {
    match result {
        Ok(()) => CUDA_SUCCESS,
        Err(code) => code,
    }
}
