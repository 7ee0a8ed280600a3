//! Launching a bound kernel: the typed face (arguments checked by rustc) and the erased face
//! (operands described at run time), both through one [`Launch`].

use crate::abi::ParamValue;
use crate::artifact::Artifact;
use crate::device::{Arg, ArgMut, Stream};
use crate::error::Error;
use crate::launch::{Launch, LaunchFacts};
use crate::liveness::DeviceId;
use crate::signature::{Erased, Signature};
use crate::state::{DeviceBound, LoadedData};

use super::Kernel;

impl<Sig> Kernel<Sig, DeviceBound> {
    /// What a launch check needs to know about this kernel.
    pub fn facts(&self) -> LaunchFacts<'_> {
        launch_facts(
            &self.artifact,
            &self.data.loaded,
            self.data.device.id(),
            self.data.max_grid_x,
        )
    }

    /// A launch of this kernel on `stream`, counting into its telemetry cell.
    fn launcher<'k>(&'k self, stream: &'k Stream) -> Launch<'k> {
        Launch::new(
            self.facts(),
            &*self.data.function,
            stream,
            self.data.telemetry.as_ref(),
        )
    }
}

impl Kernel<Erased, DeviceBound> {
    /// Launches with operands described at run time; everything the typed face checks at
    /// compile time is checked here instead, before the device sees anything.
    ///
    /// `shape` is `[n]` for the scalar and vectorized ABIs (elements, not vectors) and the `R`
    /// extents for `Strided<R>`.
    pub fn launch(
        &self,
        stream: &Stream,
        inputs: &[Arg<'_>],
        outputs: &mut [ArgMut<'_>],
        shape: &[usize],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        self.launcher(stream).run(inputs, outputs, shape, params)
    }
}

impl<K: Signature> Kernel<K, DeviceBound> {
    /// Launches with typed arguments: counts, element types, mutability and param types were
    /// checked by rustc; devices, lengths, alignment and bounds are checked here, through the
    /// same `check` and `marshal` as every other launch.
    pub fn launch(&self, stream: &Stream, args: K::Args<'_>) -> Result<(), Error> {
        K::__jitseam_launch(self.launcher(stream), args)
    }
}

/// The launch facts of a kernel bound to `device`, from its parts.
pub(crate) fn launch_facts<'a>(
    artifact: &'a Artifact,
    loaded: &'a LoadedData,
    device: DeviceId,
    max_grid_x: u32,
) -> LaunchFacts<'a> {
    LaunchFacts {
        entry: &artifact.link.entry_point,
        spec: &artifact.abi,
        layout: loaded.layout(),
        device,
        max_grid_x,
        proof: loaded.proof(),
        grid_stride: loaded.grid_stride(),
    }
}
