//! The synthesizer seam: a [`JitRequest`] in, an [`Artifact`] or a typed [`SynthDecline`] out.
//!
//! The carrier ([`crate::carrier`]) produces requests from a runtime's graph; a [`Synthesizer`]
//! answers them; [`crate::adopt`] runs the whole way to a device-bound kernel. Requests,
//! artifacts and declines are serde data, so a synthesizer can live in another process.
//!
//! [`ElementwiseSynthesizer`] is the reference implementation: it writes PTX text directly, for
//! elementwise regions in all three ABIs.

mod decline;
pub mod elementwise;
mod request;

pub use decline::SynthDecline;
pub use elementwise::ElementwiseSynthesizer;
pub use request::{
    Arch, JitBudget, JitRequest, OperandDesc, OperandRole, Region, row_major_strides,
};

use crate::artifact::Artifact;

/// Turns a region into a kernel artifact, or says why not.
///
/// Declining is expected: a synthesizer covers some regions, and the caller falls back for the
/// rest. An artifact returned must describe itself honestly: its `AbiSpec` matches its PTX
/// parameter list (`load()` checks) and its param map names the region scalar behind every
/// runtime param.
pub trait Synthesizer {
    /// Synthesizes a kernel for `request`.
    fn synthesize(&self, request: &JitRequest) -> Result<Artifact, SynthDecline>;
}

impl<S: Synthesizer + ?Sized> Synthesizer for &S {
    fn synthesize(&self, request: &JitRequest) -> Result<Artifact, SynthDecline> {
        (**self).synthesize(request)
    }
}

impl<S: Synthesizer + ?Sized> Synthesizer for Box<S> {
    fn synthesize(&self, request: &JitRequest) -> Result<Artifact, SynthDecline> {
        (**self).synthesize(request)
    }
}
