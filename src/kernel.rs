//! [`Kernel`]: one artifact moving through `Described → Loaded → DeviceBound`.
//!
//! One `impl` block per state; every transition consumes `self`, so no state can be used after it
//! was left.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::abi::{ParamLayout, verify_entry_params};
use crate::artifact::{Artifact, ArtifactKind};
use crate::device::{BackendFunction, BackendKind, Device};
use crate::dtype::ElementKind;
use crate::error::{Error, TransitionError};
use crate::launch::LaunchFacts;
use crate::signature::{Erased, Signature};
use crate::state::{Described, DeviceBound, Loaded, State};
use crate::telemetry::{DispatchHandle, HwStamp, ImplId, StructureKey};

/// A kernel artifact in state `S`, launched through signature `Sig` ([`Erased`] or a
/// macro-generated type).
pub struct Kernel<Sig, S: State> {
    artifact: Artifact,
    data: S::Data,
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

    fn with<T: State>(artifact: Artifact, data: T::Data) -> Kernel<Sig, T> {
        Kernel {
            artifact,
            data,
            sig: PhantomData,
        }
    }
}

impl Kernel<Erased, Described> {
    /// Describes an artifact for the runtime face. Checks only that its spec can describe a
    /// kernel; nothing touches the bytes yet.
    pub fn describe(artifact: Artifact) -> Result<Self, Error> {
        validate_spec(&artifact)?;
        Ok(Self::with::<Described>(artifact, ()))
    }
}

impl<K: Signature> Kernel<K, Described> {
    /// Describes an artifact for the typed face: its spec must equal `K::SPEC`.
    pub fn describe_typed(artifact: Artifact) -> Result<Self, Error> {
        check_spec::<K>(&artifact)?;
        validate_spec(&artifact)?;
        Ok(Self::with::<Described>(artifact, ()))
    }
}

impl<S: State> Kernel<Erased, S> {
    /// Promotes an erased kernel to the typed face after checking that the artifact's spec is
    /// exactly `K::SPEC`; on a mismatch the erased kernel comes back inside the error.
    pub fn typed<K: Signature>(self) -> Result<Kernel<K, S>, TransitionError<Self>> {
        match check_spec::<K>(&self.artifact) {
            Ok(()) => Ok(Kernel::<K, S>::with::<S>(self.artifact, self.data)),
            Err(error) => Err(TransitionError::new(error, self)),
        }
    }
}

impl<Sig> Kernel<Sig, Described> {
    /// Parses the PTX on the host, finds the entry named by the link's symbol and verifies its
    /// `.param` list against the spec by class, size and alignment. No driver is involved.
    ///
    /// On a decline the described kernel comes back inside the error.
    pub fn load(self) -> Result<Kernel<Sig, Loaded>, TransitionError<Self>> {
        match LoadedData::verify(&self.artifact) {
            Ok(data) => Ok(Self::with::<Loaded>(self.artifact, data)),
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
    /// can run the PTX's `.target`, and cross-checks the parameter layout with the driver where
    /// it reports one. On a refusal the loaded kernel comes back inside the error.
    pub fn bind(self, device: &Device) -> Result<Kernel<Sig, DeviceBound>, TransitionError<Self>> {
        match BoundData::bind(&self.artifact, &self.data, device) {
            Ok(function) => {
                let telemetry = dispatch_handle(&self.artifact, device);
                let data = BoundData {
                    loaded: self.data,
                    device: device.clone(),
                    function,
                    telemetry,
                };
                Ok(Self::with::<DeviceBound>(self.artifact, data))
            }
            Err(error) => Err(TransitionError::new(error, self)),
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

    /// What a launch check needs to know about this kernel.
    pub fn facts(&self) -> LaunchFacts<'_> {
        launch_facts(
            &self.artifact,
            &self.data.loaded,
            self.data.device.id(),
            self.data.device.properties().max_grid_x,
        )
    }

    /// Takes the kernel apart, for a holder that must not keep the device live (a slot table
    /// keeps a weak handle instead). [`launch_facts`] and [`crate::launch::launch_function`]
    /// launch from the parts through the same check and marshal as [`Kernel::launch`].
    pub(crate) fn into_bound_parts(self) -> BoundParts {
        BoundParts {
            artifact: self.artifact,
            loaded: self.data.loaded,
            device: self.data.device,
            function: self.data.function,
            telemetry: self.data.telemetry,
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
}

/// The launch facts of a kernel bound to `device`, from its parts.
pub(crate) fn launch_facts<'a>(
    artifact: &'a Artifact,
    loaded: &'a LoadedData,
    device: crate::device::DeviceId,
    max_grid_x: u32,
) -> LaunchFacts<'a> {
    LaunchFacts {
        entry: &artifact.link.entry_point,
        spec: &artifact.abi,
        layout: loaded.layout(),
        device,
        max_grid_x,
    }
}

/// Interns the kernel's dispatch cell in the device's sink (once, here, so a launch costs one
/// atomic add): keyed by the artifact's structure key, the kernel's implementation id and the
/// device's hardware stamp.
fn dispatch_handle(artifact: &Artifact, device: &Device) -> Option<DispatchHandle> {
    let sink = device.telemetry()?;
    let props = device.properties();
    let backend = match props.backend {
        BackendKind::Cuda => "cuda",
        BackendKind::Emulator => "emulator",
        BackendKind::Other => "other",
    };
    let link = &artifact.link;
    let chosen = ImplId::new(
        backend,
        link.structure_key.as_deref().unwrap_or(&link.entry_point),
        artifact.abi.operands().map(ElementKind::name),
        link.entry_point.clone(),
        artifact.revision(),
    );
    let driver = props.driver_version.clone().unwrap_or_default();
    let hw = match props.compute_capability {
        Some(cc) => HwStamp::gpu(cc, props.name.clone(), driver),
        None => HwStamp::cpu(props.name.clone(), driver),
    };
    let key = link.structure_key.clone().map(StructureKey::new);
    Some(sink.dispatch_handle(key.as_ref(), &chosen, &hw))
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
        })
    }
}

/// What a `Loaded` kernel knows: the module header, the verified entry and its packet layout.
#[derive(Debug, Clone)]
pub struct LoadedData {
    version: jitseam_ptx::Version,
    target: jitseam_ptx::Target,
    address_size: Option<u32>,
    entry: jitseam_ptx::Entry,
    layout: ParamLayout,
}

impl LoadedData {
    fn verify(artifact: &Artifact) -> Result<Self, Error> {
        let entry_name = &artifact.link.entry_point;
        if artifact.kind == ArtifactKind::Cubin {
            return Err(Error::CubinUnsupported {
                entry: entry_name.clone(),
            });
        }
        let text = std::str::from_utf8(&artifact.bytes).map_err(|e| Error::InvalidUtf8 {
            entry: entry_name.clone(),
            valid_up_to: e.valid_up_to(),
        })?;
        // The borrowed scan validates the whole module like `parse_module`, but only the one
        // entry this kernel needs is converted into owned data.
        let index = jitseam_ptx::scan_module(text).map_err(|source| Error::Ptx {
            entry: entry_name.clone(),
            source,
        })?;
        let symbol = artifact.symbol();
        let Some(entry) = index.entry(symbol).map(|entry| entry.to_owned()) else {
            return Err(Error::EntryNotFound {
                entry: symbol.to_owned(),
                available: index.entry_names().map(str::to_owned).collect(),
            });
        };
        let expected = artifact.abi.expected_params();
        verify_entry_params(&entry, &expected)?;
        Ok(Self {
            layout: ParamLayout::new(&expected),
            entry,
            version: index.version,
            target: index.target,
            address_size: index.address_size,
        })
    }

    /// The module's `.version`.
    pub fn version(&self) -> jitseam_ptx::Version {
        self.version
    }

    /// The module's `.target`.
    pub fn target(&self) -> &jitseam_ptx::Target {
        &self.target
    }

    /// The module's `.address_size`, if declared.
    pub fn address_size(&self) -> Option<u32> {
        self.address_size
    }

    /// The verified entry: name, parameters, performance directives.
    pub fn entry(&self) -> &jitseam_ptx::Entry {
        &self.entry
    }

    /// Where each parameter sits in the argument packet.
    pub fn layout(&self) -> &ParamLayout {
        &self.layout
    }
}

/// What a `DeviceBound` kernel holds: what `load()` verified, the device (a clone, which keeps
/// it live) and the resolved function.
#[derive(Debug)]
pub struct BoundData {
    loaded: LoadedData,
    device: Device,
    function: Arc<dyn BackendFunction>,
    telemetry: Option<DispatchHandle>,
}

impl BoundData {
    fn bind(
        artifact: &Artifact,
        loaded: &LoadedData,
        device: &Device,
    ) -> Result<Arc<dyn BackendFunction>, Error> {
        let entry = &artifact.link.entry_point;
        check_arch(entry, loaded.target(), device)?;
        // `load()` proved the bytes are UTF-8; re-validating costs one pass and keeps this path
        // free of unchecked conversions.
        let text = std::str::from_utf8(&artifact.bytes).map_err(|e| Error::InvalidUtf8 {
            entry: entry.clone(),
            valid_up_to: e.valid_up_to(),
        })?;
        let function = device.backend().load_function(text, artifact.symbol())?;
        if let Some(reported) = function.param_info()? {
            let layout = loaded.layout().params();
            if reported.len() != layout.len() {
                return Err(Error::DriverParamCount {
                    entry: entry.clone(),
                    expected: layout.len(),
                    found: reported.len(),
                });
            }
            for (index, (placed, &(offset, size))) in layout.iter().zip(&reported).enumerate() {
                if placed.offset != offset || placed.class.size() != size {
                    return Err(Error::DriverParamMismatch {
                        entry: entry.clone(),
                        index,
                        expected_offset: placed.offset,
                        expected_size: placed.class.size(),
                        found_offset: offset,
                        found_size: size,
                    });
                }
            }
        }
        Ok(function)
    }

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

    /// The telemetry cell each launch counts into, when the device had a sink at bind time.
    pub fn telemetry(&self) -> Option<&DispatchHandle> {
        self.telemetry.as_ref()
    }
}

/// Refuses PTX the device cannot run, before the driver's JIT fails with a vaguer message:
/// `sm_XY` needs compute capability ≥ X.Y; `sm_XYa` runs only on exactly X.Y; `sm_XYf` on the
/// same major version at X.Y or later. Devices without a compute capability (the emulator) and
/// targets without an SM number are left to the backend.
fn check_arch(entry: &str, target: &jitseam_ptx::Target, device: &Device) -> Result<(), Error> {
    let props = device.properties();
    let (Some((major, minor)), Some(required)) = (props.compute_capability, target.sm()) else {
        return Ok(());
    };
    let have = major * 10 + minor;
    let fits = match target.arch_suffix() {
        Some('a') => have == required,
        Some('f') => major == required / 10 && have >= required,
        _ => have >= required,
    };
    if fits {
        Ok(())
    } else {
        Err(Error::ArchTooNew {
            entry: entry.to_owned(),
            target: target.arch.clone(),
            device: have,
            device_name: props.name.clone(),
        })
    }
}
