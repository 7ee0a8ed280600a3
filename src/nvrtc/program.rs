//! One NVRTC program: create, compile, read the log, the PTX and the cubin, destroy. The only
//! file that calls NVRTC; [`super::library::available`] must have succeeded first.

use std::ffi::{CStr, CString, c_char, c_int};

use cudarc::nvrtc::sys;

use crate::error::Error;

/// What one program produced.
pub(super) struct Output {
    pub(super) ptx: String,
    pub(super) cubin: Option<Vec<u8>>,
    pub(super) log: String,
}

/// Destroys the program however the compile ends.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `self.0` was created by `nvrtcCreateProgram` and is destroyed only here, once.
        // A failure cannot be acted on in `Drop`; the program is gone either way.
        let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

fn status_name(status: sys::nvrtcResult) -> String {
    // SAFETY: `nvrtcGetErrorString` returns a pointer to a static NUL-terminated string for
    // any status (or null, handled below); it is only read.
    let text = unsafe { sys::nvrtcGetErrorString(status) };
    if text.is_null() {
        return format!("{status:?}");
    }
    // SAFETY: non-null, NUL-terminated and static, as documented by NVRTC.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

fn check(stage: &str, status: sys::nvrtcResult) -> Result<(), Error> {
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(Error::Nvrtc {
            stage: stage.to_owned(),
            message: status_name(status),
        })
    }
}

fn cstring(what: &str, text: &str) -> Result<CString, Error> {
    CString::new(text).map_err(|e| Error::CompileOptions {
        problem: format!("the {what} holds a nul byte at offset {}", e.nul_position()),
    })
}

/// Reads a buffer whose size NVRTC reports first.
fn read_buffer(
    stage: &str,
    size_of: impl FnOnce(*mut usize) -> sys::nvrtcResult,
    fill: impl FnOnce(*mut c_char) -> sys::nvrtcResult,
) -> Result<Vec<u8>, Error> {
    let mut size = 0usize;
    check(stage, size_of(&mut size))?;
    let mut buffer = vec![0u8; size];
    if size > 0 {
        check(stage, fill(buffer.as_mut_ptr().cast::<c_char>()))?;
    }
    Ok(buffer)
}

/// Text NVRTC wrote NUL-terminated.
fn text(mut bytes: Vec<u8>) -> String {
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Compiles `source` as program `name` with `args`; `want_cubin` when the target is `sm_XY`.
pub(super) fn compile(
    source: &str,
    name: &str,
    args: &[String],
    want_cubin: bool,
) -> Result<Output, Error> {
    let source_c = cstring("source", source)?;
    let name_c = cstring("program name", name)?;
    let args_c = args
        .iter()
        .map(|a| cstring("option list", a))
        .collect::<Result<Vec<_>, _>>()?;
    let arg_ptrs: Vec<*const c_char> = args_c.iter().map(|a| a.as_ptr()).collect();
    let count = c_int::try_from(arg_ptrs.len()).map_err(|_| Error::CompileOptions {
        problem: "too many options".to_owned(),
    })?;

    let mut raw = std::ptr::null_mut();
    // SAFETY: `raw` is a live out-pointer; `source_c` and `name_c` are NUL-terminated and
    // outlive the call (NVRTC copies them); no headers are passed, so both header arrays may
    // be null with a count of 0.
    let status = unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            source_c.as_ptr(),
            name_c.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    check("nvrtcCreateProgram", status)?;
    let program = Program(raw);

    // SAFETY: `program.0` is a live program; `arg_ptrs` holds `count` pointers to
    // NUL-terminated strings in `args_c`, which outlives the call.
    let compiled = unsafe { sys::nvrtcCompileProgram(program.0, count, arg_ptrs.as_ptr()) };
    let log = text(read_buffer(
        "nvrtcGetProgramLog",
        // SAFETY: live program; the out-pointer is a live local.
        |size| unsafe { sys::nvrtcGetProgramLogSize(program.0, size) },
        // SAFETY: live program; the buffer holds the size NVRTC just reported.
        |buffer| unsafe { sys::nvrtcGetProgramLog(program.0, buffer) },
    )?);
    if compiled != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Compile {
            name: name.to_owned(),
            status: status_name(compiled),
            log,
        });
    }
    let ptx = text(read_buffer(
        "nvrtcGetPTX",
        // SAFETY: live, compiled program; the out-pointer is a live local.
        |size| unsafe { sys::nvrtcGetPTXSize(program.0, size) },
        // SAFETY: live, compiled program; the buffer holds the size NVRTC just reported.
        |buffer| unsafe { sys::nvrtcGetPTX(program.0, buffer) },
    )?);
    let cubin = if want_cubin {
        Some(read_buffer(
            "nvrtcGetCUBIN",
            // SAFETY: live, compiled program; the out-pointer is a live local.
            |size| unsafe { sys::nvrtcGetCUBINSize(program.0, size) },
            // SAFETY: live, compiled program; the buffer holds the size NVRTC just reported.
            |buffer| unsafe { sys::nvrtcGetCUBIN(program.0, buffer) },
        )?)
        .filter(|cubin| !cubin.is_empty())
    } else {
        None
    };
    Ok(Output { ptx, cubin, log })
}
