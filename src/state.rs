//! The typestates of a kernel, and what a kernel holds in each.
//!
//! Each state is a sealed zero-sized marker; what a kernel holds in that state is the marker's
//! [`State::Data`]. Transitions consume the kernel, so a kernel is in exactly one state and a
//! launch on anything but [`DeviceBound`] does not type-check.
//!
//! Invariants carried by each state:
//! - [`Described`]: the spec is valid (`AbiSpec::validate`) — nothing else is known.
//! - [`Loaded`]: the PTX parsed, the entry exists, and its `.param` list equals the spec's
//!   expected list by class, size and alignment; the packet layout is fixed. For a cubin, its
//!   recorded parameter offsets and sizes equal the layout too, and its body was proven through
//!   the sealed PTX of the same compile — unless the caller vouched for it with
//!   `Kernel::load_unverified` ([`LoadedData::body_verified`] tells which).
//! - [`DeviceBound`]: additionally the module is loaded on one device whose architecture can run
//!   it, the function is resolved, and the kernel holds a clone of that device so it stays live.

use std::sync::Arc;

use jitseam_verify::{Coverage, Proof};

use crate::abi::ParamLayout;
use crate::device::{BackendFunction, ConfigLimits, Device};
use crate::telemetry::DispatchHandle;

mod sealed {
    pub trait Sealed {}
}

/// A kernel state. Sealed: only jitseam's transitions can produce a state's data.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel state",
    note = "kernel states are jitseam::Described, jitseam::Loaded and jitseam::DeviceBound"
)]
pub trait State: sealed::Sealed + 'static {
    /// What a kernel holds in this state.
    type Data: std::fmt::Debug + Send + Sync;
}

/// Metadata only: described, not yet checked against its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Described;

/// Parsed and verified on the host; not on any device.
///
#[doc = include_str!("../docs/verification.md")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loaded;

/// Loaded on a device and launchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceBound;

impl sealed::Sealed for Described {}
impl sealed::Sealed for Loaded {}
impl sealed::Sealed for DeviceBound {}

impl State for Described {
    type Data = ();
}

impl State for Loaded {
    type Data = LoadedData;
}

impl State for DeviceBound {
    type Data = BoundData;
}

/// What a `Loaded` kernel knows: the module header, the verified entry, its packet layout, and
/// which image `bind()` loads.
#[derive(Debug, Clone)]
pub struct LoadedData {
    pub(crate) version: Option<jitseam_ptx::Version>,
    pub(crate) target: jitseam_ptx::Target,
    pub(crate) address_size: Option<u32>,
    pub(crate) entry: Option<jitseam_ptx::Entry>,
    pub(crate) layout: ParamLayout,
    pub(crate) image: LoadedImage,
    pub(crate) body_verified: bool,
    /// What the body verifier proved, and what every launch must still satisfy; `None` when
    /// the caller vouched for the body (`Kernel::load_unverified`).
    pub(crate) proof: Option<Proof>,
    /// The PTX `load()` parsed, resolved and proved, for `bind()` to hand to a backend that
    /// reads PTX itself; `None` for a fatbin (`bind()` picks its image later), a kernel loaded
    /// unverified (only its header was scanned), and once bound.
    pub(crate) parsed: Option<Arc<ParsedPtx>>,
    /// For a body proven with run-time guards: what its launches pass and report.
    pub(crate) guarded: Option<Arc<GuardedEntry>>,
}

/// One PTX module, parsed and resolved, and the entry a kernel runs.
#[derive(Debug)]
pub(crate) struct ParsedPtx {
    pub(crate) module: jitseam_ptx::resolve::ResolvedModule,
    pub(crate) entry: jitseam_ptx::resolve::ResolvedEntry,
}

/// What a kernel proven with run-time guards ([`Proof::guards`]) launches with: the rewritten
/// PTX (the proof's [`Proof::guarded`]) takes hidden parameters after the declared ones — its
/// fault record, two tags, a limit per guarded operand — which every launch appends.
#[derive(Debug)]
pub struct GuardedEntry {
    /// The rewritten module.
    pub(crate) ptx: String,
    /// The packet: the declared parameters, then the hidden ones.
    pub(crate) layout: ParamLayout,
    /// What a guard failure names.
    pub(crate) table: Arc<crate::device::GuardTable>,
    /// Where each launch writes the hidden parameters.
    pub(crate) words: crate::abi::HiddenWords,
    /// The stream, fault record and tag of the last guarded launch, for the next one.
    pub(crate) cache: crate::device::RecordCache,
}

impl GuardedEntry {
    /// The PTX the backends load in place of the artifact's.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The guards, in the order a fault record names them.
    pub fn table(&self) -> &crate::device::GuardTable {
        &self.table
    }
}

impl LoadedData {
    /// The PTX module's `.version`; `None` for a cubin loaded without PTX.
    pub fn version(&self) -> Option<jitseam_ptx::Version> {
        self.version
    }

    /// The PTX module's `.target`, or a cubin's architecture (`sm_90`).
    pub fn target(&self) -> &jitseam_ptx::Target {
        &self.target
    }

    /// The module's `.address_size`, if declared.
    pub fn address_size(&self) -> Option<u32> {
        self.address_size
    }

    /// What the body verifier proved: how the body covers `[0, n)`, the conditions every launch
    /// checks, and the accesses through each pointer. `None` for a kernel loaded with
    /// `Kernel::load_unverified`.
    pub fn proof(&self) -> Option<&Proof> {
        self.proof.as_ref()
    }

    /// For a body proven only with run-time guards on some accesses (see [`Proof::guards`]):
    /// the rewritten PTX it launches, and what its guards name. `None` for a body proven as
    /// written, or loaded unverified.
    pub fn guarded(&self) -> Option<&GuardedEntry> {
        self.guarded.as_deref()
    }

    /// The verified PTX entry: name, parameters, performance directives; `None` for a cubin
    /// loaded without PTX.
    pub fn entry(&self) -> Option<&jitseam_ptx::Entry> {
        self.entry.as_ref()
    }

    /// The image `bind()` loads.
    pub fn image(&self) -> &LoadedImage {
        &self.image
    }

    /// Whether the body was verified (`load()`), or the caller vouched for it
    /// (`Kernel::load_unverified`).
    pub fn body_verified(&self) -> bool {
        self.body_verified
    }

    /// Where each parameter sits in the argument packet.
    pub fn layout(&self) -> &ParamLayout {
        &self.layout
    }

    /// Whether the body covers every element whatever the grid (a grid-stride loop, as the body
    /// verifier proved), so that a backend may launch it on fewer blocks than one thread per
    /// element (the emulator caps the grid near its core count). False for a kernel loaded
    /// without the proof: every launch then runs the full grid, which is correct for every body.
    pub fn grid_stride(&self) -> bool {
        self.proof
            .as_ref()
            .is_some_and(|proof| proof.coverage == Coverage::GridStride)
    }
}

/// The image a loaded kernel binds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadedImage {
    /// The artifact's PTX text.
    Ptx,
    /// The artifact's cubin. A backend that runs only PTX (the emulator) runs the linked PTX of
    /// the same compile instead, when there is one.
    Cubin {
        /// The cubin's architecture: `bind()` refuses a device that cannot run it.
        arch: jitseam_ptx::SmArch,
        /// What the cubin records about the entry (registers, shared memory, …).
        entry: jitseam_ptx::CubinEntry,
        /// Whether the sealed PTX of the same compile is linked (and was verified).
        linked_ptx: bool,
    },
    /// The images of a fatbin that `load()` checked; `bind()` picks one for the device.
    Fatbin {
        /// Every usable image, in file order.
        images: Vec<FatbinChoice>,
    },
}

/// One fatbin image `load()` checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinChoice {
    /// PTX or cubin.
    pub kind: jitseam_ptx::ImageKind,
    /// Its architecture number.
    pub sm: u32,
    /// The payload's byte range in the artifact.
    pub(crate) payload: std::ops::Range<usize>,
}

/// What a `DeviceBound` kernel holds: what `load()` verified, the device (a clone, which keeps
/// it live) and the resolved function.
#[derive(Debug)]
pub struct BoundData {
    pub(crate) loaded: LoadedData,
    pub(crate) device: Device,
    pub(crate) function: Arc<dyn BackendFunction>,
    pub(crate) telemetry: Option<DispatchHandle>,
    /// The device's largest `gridDim.x`, read once at bind: every launch needs it, and asking
    /// the backend would be a dynamic call per launch.
    pub(crate) max_grid_x: u32,
    /// What a launch configuration must fit, read once at bind: the device's limits and the
    /// kernel's `.maxntid`/`.reqntid`.
    pub(crate) limits: ConfigLimits,
    /// What every launch decides the same way, worked out at bind from the fields above.
    pub(crate) plan: LaunchPlan,
}

/// What every launch of a bound kernel decides the same way, worked out once at bind (by
/// `LaunchPlan::of`, next to the checks that read it) from what no launch can change: the spec,
/// the verified layout and proof, the device's and the kernel's own limits. A bound kernel's
/// parts are private and never written after bind, so the plan cannot disagree with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The vector width the dense one-pass check takes (1 for the scalar ABI); 0 where the full
    /// check decides every launch (a strided or custom ABI, declared pointee alignments).
    pub(crate) dense_width: u8,
    /// The block of a launch whose grid jitseam chooses; 0 where the kernel's block directives
    /// allow none (the launch's check then names why).
    pub(crate) block: u32,
    /// Whether a backend may run fewer blocks than one thread per element (`LaunchFacts`'s
    /// `grid_stride`).
    pub(crate) grid_stride: bool,
    /// Whether the proof's body handles one element per thread.
    pub(crate) one_thread_per_element: bool,
    /// The proof's launch conditions on a one-dimensional launch.
    pub(crate) bounds: LinearBounds,
}

/// A proof's launch conditions on a one-dimensional launch (one count, `threads` = grid ×
/// block), folded into the tightest bound of each kind they state: every condition holds
/// when `count + threads ≤ count_plus_threads`, `threads ≤ threads` and no condition is one
/// such a launch never meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinearBounds {
    pub(crate) count_plus_threads: u128,
    pub(crate) threads: u64,
    /// A condition no one-dimensional launch meets (one over declared extents or shared
    /// memory).
    pub(crate) never: bool,
}

impl BoundData {
    /// What `load()` verified.
    pub fn loaded(&self) -> &LoadedData {
        &self.loaded
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The backend's function handle.
    pub fn function(&self) -> &dyn BackendFunction {
        &*self.function
    }

    /// What a launch configuration must fit: the device's limits and the kernel's own block
    /// directives.
    pub fn limits(&self) -> &ConfigLimits {
        &self.limits
    }

    /// The telemetry cell each launch counts into, when the device had a sink at bind time.
    #[cfg(feature = "telemetry")]
    pub fn telemetry(&self) -> Option<&DispatchHandle> {
        self.telemetry.as_ref()
    }
}
