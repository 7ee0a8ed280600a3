//! [`Kernel`]: one artifact moving through `Described → Loaded → DeviceBound`.
//!
//! One `impl` block per state; every transition consumes `self`, so no state can be used after it
//! was left.

use std::marker::PhantomData;
use std::sync::Arc;

mod bind;
mod launch;
mod load;
mod params;
pub mod proof_cache;

pub use load::prove_entry;

pub(crate) use launch::launch_facts;
use load::Trust;

use crate::artifact::Artifact;
use crate::device::{BackendFunction, ConfigLimits, Device};
use crate::error::{Error, TransitionError};
use crate::launch::{LaunchPlan, dispatch_handle};
use crate::signature::{Erased, Signature};
use crate::state::{BoundData, Described, DeviceBound, Loaded, LoadedData, State};
use crate::telemetry::DispatchHandle;
use crate::trace;

/// A kernel artifact in state `S`, launched through signature `Sig` ([`Erased`] or a
/// macro-generated type).
pub struct Kernel<Sig, S: State> {
    artifact: Artifact,
    data: S::Data,
    /// The declared names of the signature it was described or promoted with
    /// ([`Signature::NAMES`]), which its errors print; empty for a kernel described erased.
    names: &'static [&'static str],
    sig: PhantomData<fn() -> Sig>,
}

impl<Sig, S: State> std::fmt::Debug for Kernel<Sig, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("entry", &self.artifact.link.entry_point)
            .field("abi", &self.artifact.abi)
            .field("state", &self.data)
            .finish()
    }
}

impl<Sig, S: State> Kernel<Sig, S> {
    /// The artifact this kernel came from.
    pub fn artifact(&self) -> &Artifact {
        &self.artifact
    }

    /// The entry point, as errors name it.
    pub fn entry(&self) -> &str {
        &self.artifact.link.entry_point
    }

    fn with<T: State>(
        artifact: Artifact,
        data: T::Data,
        names: &'static [&'static str],
    ) -> Kernel<Sig, T> {
        Kernel {
            artifact,
            data,
            names,
            sig: PhantomData,
        }
    }
}

impl Kernel<Erased, Described> {
    /// Describes an artifact for the runtime face. Checks only that its spec can describe a
    /// kernel; nothing touches the bytes yet.
    pub fn describe(artifact: Artifact) -> Result<Self, Error> {
        let described = validate_spec(&artifact);
        trace::outcome("describe", &artifact.link.entry_point, &described);
        described?;
        Ok(Self::with::<Described>(artifact, (), &[]))
    }
}

impl<K: Signature> Kernel<K, Described> {
    /// Describes an artifact for the typed face: its spec must equal `K::SPEC`.
    pub fn describe_typed(artifact: Artifact) -> Result<Self, Error> {
        let described = check_spec::<K>(&artifact).and_then(|()| validate_spec(&artifact));
        trace::outcome("describe", &artifact.link.entry_point, &described);
        described?;
        Ok(Self::with::<Described>(artifact, (), K::NAMES))
    }
}

impl<S: State> Kernel<Erased, S> {
    /// Promotes an erased kernel to the typed face after checking that the artifact's spec is
    /// exactly `K::SPEC`; on a mismatch the erased kernel comes back inside the error.
    pub fn typed<K: Signature>(self) -> Result<Kernel<K, S>, TransitionError<Self>> {
        let checked = check_spec::<K>(&self.artifact);
        trace::outcome("typed", self.entry(), &checked);
        match checked {
            Ok(()) => Ok(Kernel::<K, S>::with::<S>(
                self.artifact,
                self.data,
                K::NAMES,
            )),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl<K: Signature, S: State> Kernel<K, S> {
    /// The same kernel on the runtime face ([`Erased`]), in the same state, with nothing checked
    /// or done again: its artifact's spec already is `K::SPEC` (the typed face was reached only
    /// through that check), so what `load()` proved and what `bind()` resolved hold for the
    /// erased face as they are. What a slot table takes ([`crate::SlotTable::claim`]), and what
    /// [`Kernel::typed`] turns back.
    pub fn erase(self) -> Kernel<Erased, S> {
        Kernel::<Erased, S>::with::<S>(self.artifact, self.data, self.names)
    }
}

impl<Sig> Kernel<Sig, Described> {
    /// Parses the PTX on the host, finds the entry named by the link's symbol, verifies its
    /// `.param` list against the spec by class, size and alignment, and proves its body safe:
    /// every global access through exactly one operand pointer, within the bounds the ABI gives
    /// it, stores only through outputs (see [`Loaded`] for exactly what is proven). No driver
    /// is involved.
    ///
    /// Proven or guarded: an access whose operand (one pointer parameter, or one shared
    /// variable) and role are proven but whose bounds or alignment only the launch decides (an
    /// index loaded from memory: a gather, a scatter, a lookup) gets a run-time guard instead
    /// of a decline. The kernel then launches a rewrite of its PTX, itself re-proven, in which
    /// each such access checks its offset against what the launch lets the operand reach; a
    /// failing guard skips the access (a load reads 0) and is reported by the next
    /// synchronizing call on the stream as [`Error::GuardFault`]
    /// ([`LoadedData::guarded`](crate::state::LoadedData::guarded) lists the guards;
    /// [`Kernel::load_proven`] refuses them). What no guard mends — an address of no single
    /// operand, a store through an input, an access inside a `.func` — is declined with
    /// [`Error::BodyRejected`], naming the PTX line.
    ///
    /// On a decline the described kernel comes back inside the error.
    ///
    /// A cubin's body cannot be read: it loads here only when its provenance links the sealed
    /// PTX of the same NVRTC compile (see [`crate::nvrtc`]), which is verified in its place; its
    /// own recorded parameters are checked by count, offset and size (a cubin does not record
    /// types). A fatbin's PTX images are verified the same way, and `bind()` picks one for the
    /// device; since that may be any of them, every launch checks what each of them needs (every
    /// proof's launch conditions, the strictest `.ptr .align` any declares); a fatbin's images
    /// are proven without guards. A cubin whose linked PTX needs guards launches its guarded
    /// PTX instead of the cubin. Anything else compiled needs [`Kernel::load_unverified`].
    ///
    /// No device is involved, so no telemetry either: [`Kernel::load_for`] is the same check,
    /// with a refusal counted in the telemetry of the device the kernel is meant for.
    pub fn load(self) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        self.load_with(Trust::Verify)
    }

    /// [`Kernel::load`] with every access proven: a body that [`Kernel::load`] would launch
    /// with run-time guards (see [`LoadedData::guarded`](crate::state::LoadedData::guarded))
    /// is declined with [`Error::BodyRejected`] naming the first access it cannot prove, as it
    /// was before guards existed. For callers that want no run-time check at all.
    pub fn load_proven(self) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        self.load_with(Trust::Proven)
    }

    /// [`Kernel::load`], with a refusal counted as a decline of this kernel (under the error's
    /// [`kind_name`](Error::kind_name), e.g. `body_rejected`) in the telemetry sink attached to
    /// `device`: in the cell its launches there would count in. Nothing touches the device; it
    /// only says whose telemetry the kernel belongs to.
    pub fn load_for(self, device: &Device) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        self.load().inspect_err(|refused| {
            crate::launch::refused(&refused.kernel.artifact, device, &refused.error)
        })
    }

    /// [`Kernel::load`] without the body proof, for a kernel whose body jitseam cannot verify
    /// (a cubin with no PTX from the same compile, a fatbin's cubins) or declines to. Every other
    /// check still runs: the entry exists, its parameter list matches the ABI (class, size and
    /// alignment for PTX; count, offset and size for a cubin), `bind()` checks the architecture,
    /// and every launch is checked as usual.
    ///
    /// # Safety
    /// The caller promises, for every launch that jitseam's launch checks accept for this ABI,
    /// that the kernel's body:
    /// - reads global memory only through its input and output pointer parameters, and only the
    ///   elements the ABI gives each one (`n` elements, `n / W` vectors, or the elements the
    ///   strided view reaches);
    /// - writes only through its output pointers, within the same bounds, never through an
    ///   input;
    /// - touches no other memory that may alias an operand (no addresses smuggled through
    ///   scalar params, no device globals pointing at operands), and performs only aligned
    ///   accesses of the element (or W-vector) width;
    /// - for a cubin or fatbin: is the code the artifact's ABI describes — the same program
    ///   whose parameter offsets and sizes jitseam checks — in a well-formed image: the driver
    ///   reads a cubin in place, with no length, so every header and section it names must lie
    ///   within the artifact's bytes (jitseam checks the headers it reads itself, not all);
    /// - for the custom ABI: touches, through each pointer, only the first `extent` elements
    ///   its declared extent evaluates to for the launch's params and configuration (the launch
    ///   checks each buffer holds that many), stores only through `out` pointers, and uses no
    ///   more shared memory than it declares statically plus the launch's dynamic shared bytes.
    ///
    /// A body that breaks these may corrupt device memory or read out of bounds, which safe
    /// Rust cannot contain.
    pub unsafe fn load_unverified(self) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        self.load_with(Trust::Vouched)
    }

    fn load_with(self, trust: Trust) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        let _span = tracing::debug_span!(target: "jitseam", "load", entry = self.entry()).entered();
        let loaded = load::verify(&self.artifact, trust, self.names)
            .map_err(|error| error.with_declared_names(&self.artifact.abi, self.names));
        trace::outcome("load", self.entry(), &loaded);
        match loaded {
            Ok(data) => Ok(Self::with::<Loaded>(self.artifact, data, self.names)),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl<Sig> Kernel<Sig, Loaded> {
    /// What `load()` verified: the module header, the entry and the packet layout.
    pub fn loaded(&self) -> &LoadedData {
        &self.data
    }

    /// Loads the module on `device`, resolves the entry, checks that the device's architecture
    /// can run the PTX's `.target` (or the cubin's architecture: CUDA runs an `sm_XY` cubin on
    /// the same major version at minor ≥ Y; a backend with no SM architecture runs the linked
    /// PTX instead), and cross-checks the parameter layout with the driver where
    /// it reports one. On a refusal the loaded kernel comes back inside the error, and the
    /// refusal counts as a decline of the kernel in the device's telemetry, if it has a sink.
    pub fn bind(self, device: &Device) -> Result<Kernel<Sig, DeviceBound>, TransitionError<Self>> {
        let _span = tracing::debug_span!(
            target: "jitseam",
            "bind",
            entry = self.entry(),
            device = device.id().get()
        )
        .entered();
        let resolved = bind::resolve(&self.artifact, &self.data, device);
        trace::outcome("bind", self.entry(), &resolved);
        match resolved {
            Ok((function, limits)) => {
                let telemetry = dispatch_handle(&self.artifact, device);
                let plan = LaunchPlan::of(
                    &self.artifact.abi,
                    self.data.layout(),
                    self.data.proof(),
                    &limits,
                );
                let data = BoundData {
                    // The backend holds what it made of the parsed module; the kernel need not.
                    loaded: LoadedData {
                        parsed: None,
                        ..self.data
                    },
                    device: device.clone(),
                    function,
                    telemetry,
                    max_grid_x: device.properties().max_grid_x,
                    limits,
                    plan,
                };
                Ok(Self::with::<DeviceBound>(self.artifact, data, self.names))
            }
            Err(error) => {
                crate::launch::refused(&self.artifact, device, &error);
                Err(TransitionError::new(error, self))
            }
        }
    }
}

impl<Sig> Kernel<Sig, DeviceBound> {
    /// What `load()` verified.
    pub fn loaded(&self) -> &LoadedData {
        self.data.loaded()
    }

    /// The device binding: the device, and the resolved function.
    pub fn bound(&self) -> &BoundData {
        &self.data
    }

    /// The device the kernel is bound to.
    pub fn device(&self) -> &Device {
        &self.data.device
    }

    /// Takes the kernel apart, for a holder that must not keep the device live (a slot table
    /// keeps a weak handle instead). [`launch_facts`] and [`crate::launch::Launch`] launch from the
    /// parts through the same check and marshal as [`Kernel::launch`].
    pub(crate) fn into_bound_parts(self) -> BoundParts {
        BoundParts {
            artifact: self.artifact,
            loaded: self.data.loaded,
            device: self.data.device,
            function: self.data.function,
            telemetry: self.data.telemetry,
            limits: self.data.limits,
            plan: self.data.plan,
        }
    }
}

/// A bound kernel taken apart by [`Kernel::into_bound_parts`].
pub(crate) struct BoundParts {
    pub(crate) artifact: Artifact,
    pub(crate) loaded: LoadedData,
    pub(crate) device: Device,
    pub(crate) function: Arc<dyn BackendFunction>,
    pub(crate) telemetry: Option<DispatchHandle>,
    pub(crate) limits: ConfigLimits,
    pub(crate) plan: LaunchPlan,
}

fn validate_spec(artifact: &Artifact) -> Result<(), Error> {
    artifact
        .abi
        .validate()
        .map_err(|problem| Error::InvalidSpec {
            entry: artifact.link.entry_point.clone(),
            problem,
        })
}

fn check_spec<K: Signature>(artifact: &Artifact) -> Result<(), Error> {
    if artifact.abi == K::SPEC {
        Ok(())
    } else {
        Err(Error::SpecMismatch {
            entry: artifact.link.entry_point.clone(),
            expected: Box::new(K::SPEC),
            found: Box::new(artifact.abi.clone()),
            declared: K::NAMES,
        })
    }
}
