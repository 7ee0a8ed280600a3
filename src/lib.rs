//! jitseam: launch JIT-synthesized GPU kernels safely.
// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod abi;
pub mod artifact;
pub mod carrier;
pub mod device;
pub mod dtype;
pub mod error;
pub mod kernel;
pub mod launch;
pub mod signature;
pub mod slot;
pub mod state;
pub mod synth;
pub mod telemetry;

pub use abi::{AbiKind, AbiSpec};
pub use artifact::{Artifact, ArtifactKind, LinkEntry, ParamSource};
pub use device::{Device, DeviceBuffer, DeviceId, Stream};
pub use dtype::{Element, ElementKind};
pub use error::{Error, TransitionError};
pub use kernel::Kernel;
pub use launch::ParamValue;
pub use signature::{
    Erased, In, InStrided, IntoIn, IntoInStrided, IntoOut, IntoOutStrided, Out, OutStrided,
    Signature,
};

/// Declares a typed kernel signature; see the `jitseam-macros` crate.
pub use jitseam_macros::kernel;
pub use slot::{SlotCall, SlotRef, SlotTable};
pub use state::{Described, DeviceBound, Loaded, State};

/// Generates a [`SlotTable`] `static` of `N` slots with `N` distinct dispatchers, `1 ≤ N ≤ 4096`:
/// `jitseam::slot_table!(pub static JIT_KERNELS: 64);` See [`slot`].
pub use jitseam_macros::slot_table;

/// Paths the `#[jitseam::kernel]` and `slot_table!` expansions use. Not public API: no
/// compatibility promise, and naming it by hand opts out of every guarantee.
#[doc(hidden)]
pub mod __private {
    pub use crate::abi::{AbiKind, AbiSpec};
    pub use crate::device::{Stream, ViewDesc};
    pub use crate::dtype::{Element, ElementKind};
    pub use crate::error::Error;
    pub use crate::kernel::Kernel;
    pub use crate::launch::ParamValue;
    pub use crate::signature::{
        In, InStrided, IntoIn, IntoInStrided, IntoOut, IntoOutStrided, Out, OutStrided, Signature,
    };
    pub use crate::slot::{Slot, SlotFn, SlotTable, SlotTableMarker, dispatch_slot, empty_slots};
    pub use crate::state::DeviceBound;
    pub use half;

    /// The one launch path, for generated launchers. `inputs`/`outputs` must come from the
    /// typed operand handles of the generated `Args`, which borrow their buffers for the call.
    pub fn launch_checked<K: crate::Signature>(
        kernel: &Kernel<K, DeviceBound>,
        stream: &Stream,
        inputs: &[ViewDesc],
        outputs: &[ViewDesc],
        shape: &[usize],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        crate::launch::launch_checked(kernel, stream, inputs, outputs, shape, params)
    }

    /// Proof that a call to `Signature::__jitseam_launch` came from jitseam's generic launch.
    #[derive(Debug)]
    pub struct SignatureToken(());

    impl SignatureToken {
        pub(crate) fn new() -> Self {
            Self(())
        }
    }
}
