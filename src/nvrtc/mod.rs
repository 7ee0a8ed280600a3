//! NVRTC from Rust: CUDA C source to PTX (and a cubin) in one call, with an on-disk cache.
//!
//! [`compile`] runs one NVRTC program through cudarc's `nvrtc` bindings, loaded at run time:
//! jitseam builds and runs without NVRTC, and a missing or incomplete libnvrtc is
//! [`Error::NvrtcUnavailable`] — probed before the first call, never cudarc's panic. A source
//! NVRTC refuses is [`Error::Compile`] with NVRTC's full log, line numbers included.
//!
//! A `compute_XY` target gives PTX; an `sm_XY` target gives PTX **and** a cubin from the same
//! program. [`Compiled::artifact`] turns either into an [`Artifact`](crate::Artifact) that
//! records its [`Provenance`](crate::artifact::Provenance); a cubin artifact carries the PTX of
//! its compile, sealed, so `load()` verifies the cubin by verifying that PTX (a cubin's body
//! cannot be read; see [`crate::Kernel::load`]).
//!
//! ```no_run
//! use jitseam::nvrtc::{self, CompileOptions, CompileTarget};
//! use jitseam::{AbiKind, AbiSpec, Device, ElementKind::F32};
//!
//! # fn main() -> Result<(), jitseam::Error> {
//! let source = r#"extern "C" __global__ void scale(const float* x, float* y, long long n, float a) {
//!     for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
//!          i += (long long)gridDim.x * blockDim.x) y[i] = a * x[i];
//! }"#;
//! let abi = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[F32]);
//! // CUDA C → verified kernel, one call; then bind and launch as any kernel.
//! let kernel = nvrtc::compile_and_load(source, &CompileOptions::new(CompileTarget::sm(90)), "scale", abi)?;
//! let kernel = kernel.bind(&Device::best_available().device)?;
//! # Ok(())
//! # }
//! ```
//!
//! [`CompileCache`] keeps compiles on disk, keyed by source, options, NVRTC version and target,
//! so a second process compiling the same kernel skips NVRTC.

mod cache;
mod compiled;
mod library;
mod options;
mod program;

pub use cache::{CacheStats, CompileCache};
pub use compiled::Compiled;
pub use options::{CompileOptions, CompileTarget};

use compiled::Origin;

use crate::abi::AbiSpec;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::seal::sha256_hex;
use crate::signature::Erased;
use crate::state::Loaded;

/// NVRTC's `(major, minor)` version, or [`Error::NvrtcUnavailable`].
pub fn version() -> Result<(u32, u32), Error> {
    library::available()
}

/// Whether a usable libnvrtc is present (see [`version`] for why not).
pub fn is_available() -> bool {
    library::available().is_ok()
}

/// Compiles CUDA C `source` with NVRTC. See the [module docs](self).
pub fn compile(source: &str, options: &CompileOptions) -> Result<Compiled, Error> {
    let args = options.to_args()?;
    let version = library::available()?;
    let output = program::compile(source, &options.name, &args, options.target.makes_cubin())?;
    Ok(Compiled {
        ptx: output.ptx,
        cubin: output.cubin,
        log: output.log,
        version,
        target: options.target.to_string(),
        options: args,
        source_sha256: sha256_hex(source.as_bytes()),
        origin: Origin::Nvrtc,
    })
}

/// Compiles `source` and loads kernel `entry` with ABI `abi`: the cubin (proven through the PTX
/// of the same compile) for an `sm_XY` target, else the PTX. One call from CUDA C to a
/// [`Loaded`] kernel; the compile error, or `load()`'s decline, comes back as the error.
pub fn compile_and_load(
    source: &str,
    options: &CompileOptions,
    entry: &str,
    abi: AbiSpec,
) -> Result<Kernel<Erased, Loaded>, Error> {
    let compiled = compile(source, options)?;
    Ok(Kernel::describe(compiled.artifact(entry, abi))?.load()?)
}
