//! jitseam: launch JIT-compiled and JIT-synthesized GPU kernels safely.
//!
//! # Your own CUDA kernel, start to finish
//!
//! The common path: CUDA C you wrote, compiled at run time with [NVRTC](nvrtc), declared in its
//! own parameter order with the custom ABI (each pointer with the extent it may touch), proven
//! at [`load()`](Kernel::load), launched through a typed launcher rustc checks. This is
//! `examples/own_kernel.rs`; it runs on a CUDA GPU when one opens, else on the
//! [emulator](Device::emulator), and without NVRTC it says so and stops:
//!
#![doc = concat!("```\n", include_str!("../examples/own_kernel.rs"), "```")]
//!
//! The ABIs (custom, and the scalar, vectorized and strided ones a synthesizer uses) and their
//! CUDA-side parameter lists are on [`AbiKind`]; what `load()` proves, and what every launch
//! still checks, on [`Loaded`].
//!
//! # The states
//!
//! A kernel artifact (PTX text, a cubin or fatbin with the PTX of its compile) moves through
//! typed states, and only the last one can launch:
//!
//! 1. [`Kernel::describe`] (or [`Kernel::describe_typed`]) — metadata only: the artifact's
//!    [`AbiSpec`] must describe a kernel;
//! 2. [`Kernel::load`] — on the host, no driver: the PTX is parsed, the entry found, its own
//!    `.param` list verified against the ABI by class, size and alignment, and its body proven
//!    to touch only its operands, within their bounds, storing only through outputs;
//! 3. [`Kernel::bind`] — on a [`Device`]: the module is loaded, the symbol resolved, the
//!    architecture checked, the driver's parameter layout cross-checked where it reports one;
//! 4. `launch` — [`launch::check`] refuses every mismatch (devices, dtypes, counts, alignment,
//!    bounds, overlap, aliasing, grid) before [`launch::marshal`] builds the one argument packet
//!    the backend receives.
//!
//! Every refusal is a typed [`Error`] naming the kernel and the argument; a failed transition
//! gives the kernel back ([`TransitionError`]); a CUDA failure carries the driver's
//! [`DriverCode`] and says whether the context is poisoned
//! ([`Error::is_context_poisoned`]). Typed launchers come from [`macro@kernel`]; bare `fn`
//! dispatch tables from [`slot_table!`] (a typed kernel enters one through
//! [`Kernel::erase`]); buffers, views, streams and events from [`device`] (zeroed allocation,
//! fills, device-to-device copies and event timing included, every use ordered across
//! streams); what ran, was declined or faulted, per kernel, from [`telemetry`].
//!
//! # Kernels a synthesizer writes
//!
//! A runtime that fuses graph nodes asks for kernels no library has: the [`carrier`] turns a
//! node into a [`synth::JitRequest`] (or a typed reason not to ask), a [`synth::Synthesizer`]
//! writes the PTX, and [`adopt`] takes it through describe → load → bind. The reference
//! elementwise synthesizer needs neither NVRTC nor a GPU:
//!
//! ```
//! use jitseam::synth::{Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, Synthesizer};
//! use jitseam::{Device, ElementKind::F32, Kernel};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A PTX artifact for `out = a + b` over 1000 f32, with the ABI it claims.
//! let f32s = OperandDesc::contiguous(F32, &[1000], 256);
//! let request = JitRequest {
//!     region: Region::op("add", vec![Region::bind(0), Region::bind(1)]),
//!     operands: vec![f32s.clone(), f32s.clone(), f32s],
//!     arch: Arch::sm(80),
//!     budget: JitBudget::millis(10),
//! };
//! let artifact = ElementwiseSynthesizer::new().synthesize(&request)?;
//!
//! let device = Device::best_available().device;
//! let kernel = Kernel::describe(artifact)?.load()?.bind(&device)?;
//!
//! let a = device.upload(&vec![1.5f32; 1000])?;
//! let b = device.upload(&vec![2.0f32; 1000])?;
//! let mut out = device.alloc::<f32>(1000)?;
//! let stream = device.default_stream();
//! kernel.launch(&stream, &[(&a).into(), (&b).into()], &mut [(&mut out).into()], &[1000], &[])?;
//! assert!(stream.read(&out)?.iter().all(|&x| x == 3.5));
//!
//! // A short output is declined before the device sees anything.
//! let mut short = device.alloc::<f32>(999)?;
//! let err = kernel
//!     .launch(&stream, &[(&a).into(), (&b).into()], &mut [(&mut short).into()], &[1000], &[])
//!     .unwrap_err();
//! assert!(err.is_decline());
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! `cuda-12080` (default) or another of cudarc's CUDA-version features under its own name
//! (`cuda-13000`, …: the bindings your runtime's cudarc uses; choose exactly one), `nvrtc`,
//! `telemetry` and `demangle` (all default), `testing` (`jitseam::testing`: a fake backend for
//! tests).
//! The README lists them with what each brings.
//!
//! # Debug builds
//!
//! [`Kernel::load`] proves every body and the emulator interprets PTX: unoptimized, both are
//! 8–10× slower. A profile setting does not travel with a dependency, so a crate that depends
//! on jitseam should optimize the three crates that do that work in its own dev profile:
//!
//! ```toml
//! [profile.dev.package.jitseam-ptx]
//! opt-level = 2
//! [profile.dev.package.jitseam-verify]
//! opt-level = 2
//! [profile.dev.package.jitseam-emu]
//! opt-level = 2
//! ```
#![doc = include_str!("../docs/architecture.md")]
// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod abi;
pub mod adopt;
pub mod artifact;
mod atomic_write;
pub mod carrier;
pub mod device;
mod disk_cache;
pub mod dtype;
pub mod error;
pub mod kernel;
pub mod launch;
mod liveness;
#[cfg(feature = "nvrtc")]
pub mod nvrtc;
mod seal;
pub mod signature;
pub mod slot;
pub mod state;
mod sync;
pub mod synth;
#[cfg(feature = "telemetry")]
pub mod telemetry;
/// Without the `telemetry` feature no handle to count a kernel's launches in can exist: the
/// launch paths that would record through one find none.
#[cfg(not(feature = "telemetry"))]
mod telemetry {
    /// Uninhabited: a kernel's `Option<DispatchHandle>` is always `None`.
    #[derive(Debug, Clone)]
    pub(crate) enum DispatchHandle {}

    impl DispatchHandle {
        pub(crate) fn record(&self) {
            match *self {}
        }

        pub(crate) fn record_decline(&self, _reason: &'static str) {
            match *self {}
        }
    }
}
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod trace;

pub use abi::ParamValue;
pub use abi::{AbiKind, AbiSpec};
pub use artifact::{Artifact, ArtifactKind, LinkEntry, LinkedPtx, ParamSource, Provenance};
pub use device::{Device, DeviceBuffer, DeviceId, LaunchConfig, Stream};
pub use dtype::{Element, ElementKind};
pub use error::{DriverCode, Error, Rejection, TransitionError};
pub use kernel::Kernel;
pub use signature::{
    ChoosesGrid, Erased, In, InStrided, IntoIn, IntoInStrided, IntoOut, IntoOutStrided, Out,
    OutStrided, Signature, TakesConfig,
};

/// The README's tour, compiled and run as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeTour;

/// What a launcher needs, in one import: `use jitseam::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Described, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Error, In, InStrided,
        Kernel, LaunchConfig, Loaded, Out, OutStrided, ParamValue, Signature, Stream,
    };
}

/// Declares a typed kernel signature; see the `jitseam-macros` crate. The CUDA-side parameter
/// list of each ABI, with templates, is in [`abi`].
pub use jitseam_macros::kernel;
pub use slot::{SlotCall, SlotRef, SlotTable};
pub use state::{Described, DeviceBound, Loaded, LoadedImage, State};

/// Generates a [`SlotTable`] `static` of `N` slots with `N` distinct dispatchers, `1 ≤ N ≤ 4096`:
/// `jitseam::slot_table!(pub static JIT_KERNELS: 64);` See [`slot`].
pub use jitseam_macros::slot_table;

/// Paths the `#[jitseam::kernel]` and `slot_table!` expansions use. Not public API: no
/// compatibility promise, and naming it by hand opts out of every guarantee.
#[doc(hidden)]
pub mod __private {
    pub use crate::abi::{
        AbiKind, AbiSpec, CustomAbi, CustomKind, CustomParam, ExtentOp, ParamValue,
    };
    pub use crate::device::{Arg, ArgMut};
    pub use crate::dtype::{Element, ElementKind};
    pub use crate::error::Error;
    pub use crate::launch::Launch;
    pub use crate::signature::{
        ChoosesGrid, Declared, In, InStrided, IntoIn, IntoInStrided, IntoOut, IntoOutStrided, Out,
        OutStrided, Signature, TakesConfig,
    };
    pub use crate::slot::{
        Slot, SlotFn, SlotTable, SlotTableMarker, Slots, dispatch_slot, empty_slots,
    };
    pub use half;
}
