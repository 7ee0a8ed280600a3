//! Launching a bound kernel: the typed face (arguments checked by rustc) and the erased face
//! (operands described at run time), both through one [`Launch`].

use crate::abi::ParamValue;
use crate::artifact::Artifact;
use crate::device::{Arg, ArgMut, ConfigLimits, LaunchConfig, Stream};
use crate::error::Error;
use crate::launch::{Launch, LaunchFacts, LaunchPlan};
use crate::liveness::DeviceId;
use crate::signature::{ChoosesGrid, Erased, Signature, TakesConfig};
use crate::state::{DeviceBound, LoadedData};

use super::Kernel;

impl<Sig> Kernel<Sig, DeviceBound> {
    /// What a launch check needs to know about this kernel.
    #[inline]
    pub fn facts(&self) -> LaunchFacts<'_> {
        launch_facts(
            &self.artifact,
            &self.data.loaded,
            self.data.device.id(),
            self.data.max_grid_x,
            &self.data.limits,
            &self.data.plan,
        )
    }

    /// A launch of this kernel on `stream`, counting into its telemetry cell.
    #[inline]
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
    ///
    /// Inlined: it only gathers the kernel's facts for [`Launch::run`], which a frame of its own
    /// would cost a launch more than gathering them does.
    #[inline]
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

    /// Launches a custom-ABI kernel with operands described at run time: `inputs`, `outputs`
    /// and `params` are its `in` pointers, `out` pointers and by-value params, each in the
    /// order the signature declares them. `config` is the launch configuration; `None` launches
    /// one thread per element of the kernel's covered count (`covers`), in blocks of 256.
    ///
    /// Checked like [`Kernel::launch_with`], through the same check and marshal as every
    /// launch. A kernel of another ABI is declined with [`Error::LaunchConfig`].
    pub fn launch_custom(
        &self,
        stream: &Stream,
        config: Option<LaunchConfig>,
        inputs: &[Arg<'_>],
        outputs: &mut [ArgMut<'_>],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        let launch = self.launcher(stream);
        let launch = match config {
            Some(config) => launch.with_config(config),
            None => launch,
        };
        launch.run_custom(inputs, outputs, params)
    }
}

impl<K: Signature> Kernel<K, DeviceBound> {
    /// Launches with typed arguments: counts, element types, mutability and param types were
    /// checked by rustc; devices, lengths, alignment and bounds are checked here, through the
    /// same `check` and `marshal` as every other launch.
    ///
    /// A custom-ABI kernel launched this way runs one thread per element of its covered count
    /// (`covers = EXPR`) in blocks of 256; one declared without `covers` has no grid jitseam
    /// can choose ([`ChoosesGrid`]), so calling this on it does not compile: launch it with
    /// [`Kernel::launch_with`].
    pub fn launch(&self, stream: &Stream, args: K::Args<'_>) -> Result<(), Error>
    where
        K: ChoosesGrid,
    {
        K::__jitseam_launch(self.launcher(stream), args)
    }

    /// Launches a custom-ABI kernel (`abi = custom`) with an explicit launch configuration:
    /// grid and block along x, y and z, and dynamic shared memory.
    ///
    /// Before the device sees anything, the configuration is checked against the device (threads
    /// per block, block and grid extents, dynamic shared memory) and the kernel's own
    /// `.maxntid`/`.reqntid`; every pointer's declared extent is evaluated for this launch's
    /// params and geometry with checked arithmetic, and its buffer must hold at least that many
    /// elements; devices, element types and aliasing are checked as for every launch. Only a
    /// custom-ABI kernel takes a configuration ([`TakesConfig`]): on a kernel of another ABI,
    /// whose grid jitseam chooses, this does not compile.
    pub fn launch_with(
        &self,
        stream: &Stream,
        config: LaunchConfig,
        args: K::Args<'_>,
    ) -> Result<(), Error>
    where
        K: TakesConfig,
    {
        K::__jitseam_launch(self.launcher(stream).with_config(config), args)
    }
}

/// The launch facts of a kernel bound to `device`, from its parts.
#[inline]
pub(crate) fn launch_facts<'a>(
    artifact: &'a Artifact,
    loaded: &'a LoadedData,
    device: DeviceId,
    max_grid_x: u32,
    limits: &'a ConfigLimits,
    plan: &'a LaunchPlan,
) -> LaunchFacts<'a> {
    LaunchFacts {
        entry: &artifact.link.entry_point,
        spec: &artifact.abi,
        layout: loaded.layout(),
        device,
        max_grid_x,
        limits,
        proof: loaded.proof(),
        grid_stride: plan.grid_stride,
        guarded: loaded.guarded(),
        plan,
    }
}
