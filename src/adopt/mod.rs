//! [`adopt`]: request → synthesize → describe → load → bind, one typed reason if any step says
//! no; [`adopt_into_slot`] adds the last, optional step: parking the kernel in a slot table.
//!
//! Nothing is held across a refusal: every state a failed step hands back (a described or
//! loaded kernel) owns no device resource and is dropped there, and binding is the last step,
//! so a kernel bound to the device exists only in the `Ok` result. The slot claim comes after
//! binding; a claim that finds no slot gives the bound kernel back, and it is dropped (its
//! module unloaded) before the decline is returned, with the table untouched.

use std::fmt;

use crate::abi::ParamValue;
use crate::artifact::Artifact;
use crate::carrier::{self, GraphView, KernelRegistry, NotRequested};
use crate::device::Device;
use crate::dtype::ElementKind;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::signature::Erased;
use crate::slot::{SlotRef, SlotTable};
use crate::state::DeviceBound;

use crate::synth::{Arch, JitBudget, JitRequest, SynthDecline, Synthesizer};

/// A synthesized kernel bound to a device, with the values of its runtime params.
#[derive(Debug)]
pub struct Adopted {
    /// The kernel, ready to launch through the erased face.
    pub kernel: Kernel<Erased, DeviceBound>,
    /// The region's scalars in param order, resolved through the artifact's param map and
    /// typed as the kernel declares them.
    pub params: Vec<ParamValue>,
}

/// A synthesized kernel parked in a slot table, with the values of its runtime params: what
/// [`adopt_into_slot`] answers. The slot owns the kernel now; a call goes through
/// [`SlotRef::dispatch`] with `params`, and [`SlotTable::release`] frees it.
#[derive(Debug, Clone)]
pub struct AdoptedSlot {
    /// The binding: the slot's dispatcher, index and generation.
    pub slot: SlotRef,
    /// The region's scalars in param order, as in [`Adopted::params`].
    pub params: Vec<ParamValue>,
}

/// Why [`adopt`] produced no kernel, by the step that said no.
#[derive(Debug)]
pub enum AdoptDecline<D> {
    /// The carrier did not ask (the ordinary case).
    NotRequested(NotRequested<D>),
    /// The synthesizer declined the request.
    Synth(SynthDecline),
    /// jitseam refused the artifact at describe, load or bind.
    Kernel(Error),
    /// The kernel was bound but the slot table had no free slot ([`Error::SlotTableFull`]);
    /// the kernel has been dropped again and the table is unchanged.
    Slot(Error),
    /// The artifact's param map does not fit the request's region or the artifact's own spec
    /// (a synthesizer bug: launching it would feed params the wrong values).
    ParamMap {
        /// The artifact's entry point.
        entry: String,
        /// What does not fit.
        reason: String,
    },
}

impl<D: fmt::Debug> fmt::Display for AdoptDecline<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRequested(reason) => write!(f, "not requested: {reason}"),
            Self::Synth(reason) => write!(f, "synthesizer declined: {reason}"),
            Self::Kernel(error) => write!(f, "kernel refused: {error}"),
            Self::Slot(error) => write!(f, "no slot for the kernel: {error}"),
            Self::ParamMap { entry, reason } => {
                write!(f, "kernel `{entry}`: unusable param map: {reason}")
            }
        }
    }
}

impl<D: fmt::Debug> std::error::Error for AdoptDecline<D> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotRequested(_) | Self::ParamMap { .. } => None,
            Self::Synth(reason) => Some(reason),
            Self::Kernel(error) | Self::Slot(error) => Some(error),
        }
    }
}

/// Asks the carrier for a request for `node`, synthesizes it and binds the kernel on `device`.
///
/// The first six arguments are exactly [`carrier::request_for`]'s, so moving from asking to
/// adopting only adds the synthesizer and the device.
#[allow(clippy::too_many_arguments)]
pub fn adopt<G, R, S>(
    graph: &G,
    node: G::NodeId,
    backend: &R::Backend,
    registry: &R,
    arch: Arch,
    budget: JitBudget,
    synthesizer: &S,
    device: &Device,
) -> Result<Adopted, AdoptDecline<G::DType>>
where
    G: GraphView + ?Sized,
    R: KernelRegistry<Op = G::Op, DType = G::DType> + ?Sized,
    S: Synthesizer + ?Sized,
{
    let request = carrier::request_for(graph, node, backend, registry, arch, budget)
        .map_err(AdoptDecline::NotRequested)?;
    adopt_request(&request, synthesizer, device)
}

/// Synthesizes an existing request and binds the kernel on `device`. `D` is free because this
/// step never reports a carrier reason.
pub fn adopt_request<D, S>(
    request: &JitRequest,
    synthesizer: &S,
    device: &Device,
) -> Result<Adopted, AdoptDecline<D>>
where
    S: Synthesizer + ?Sized,
{
    let artifact = synthesizer
        .synthesize(request)
        .map_err(AdoptDecline::Synth)?;
    // Resolved before binding, so a bad map is refused while nothing is on the device yet.
    let params = param_values(request, &artifact)?;
    let kernel = Kernel::describe(artifact)
        .and_then(|k| Ok(k.load_for(device)?))
        .and_then(|k| Ok(k.bind(device)?))
        .map_err(AdoptDecline::Kernel)?;
    Ok(Adopted { kernel, params })
}

/// [`adopt_request`], then parks the bound kernel in a free slot of `table`: request →
/// synthesize → describe → load → bind → slot claim.
///
/// A table with no free slot (after reclaiming the slots of dead devices, as
/// [`SlotTable::claim`] does) declines with [`AdoptDecline::Slot`]; the kernel the claim gives
/// back is dropped, unloading its module, before this returns, so a decline at any step leaves
/// neither a slot nor a device resource behind.
pub fn adopt_into_slot<D, S>(
    request: &JitRequest,
    synthesizer: &S,
    device: &Device,
    table: &SlotTable,
) -> Result<AdoptedSlot, AdoptDecline<D>>
where
    S: Synthesizer + ?Sized,
{
    let Adopted { kernel, params } = adopt_request(request, synthesizer, device)?;
    match table.claim(kernel) {
        Ok(slot) => Ok(AdoptedSlot { slot, params }),
        Err(refused) => {
            let (error, kernel) = refused.into_parts();
            // Explicitly here, so the module is unloaded before the caller sees the decline.
            drop(kernel);
            Err(AdoptDecline::Slot(error))
        }
    }
}

/// The runtime param values for `artifact`, from the region's scalars via the param map,
/// converted to each param's declared type (a region scalar is carried as f64; an f32 kernel
/// computes with it as f32, exactly as its op would).
fn param_values<D>(
    request: &JitRequest,
    artifact: &Artifact,
) -> Result<Vec<ParamValue>, AdoptDecline<D>> {
    let refuse = |reason: String| AdoptDecline::ParamMap {
        entry: artifact.link.entry_point.clone(),
        reason,
    };
    if artifact.param_map.len() != artifact.abi.params.len() {
        return Err(refuse(format!(
            "the param map has {} entries for {} params",
            artifact.param_map.len(),
            artifact.abi.params.len()
        )));
    }
    let values = request
        .region
        .param_values(&artifact.param_map)
        .ok_or_else(|| refuse("the param map names a scalar the region does not have".into()))?;
    values
        .into_iter()
        .zip(artifact.abi.params.iter())
        .enumerate()
        .map(|(index, (value, kind))| match kind {
            ElementKind::F32 => Ok(ParamValue::F32(value as f32)),
            ElementKind::F64 => Ok(ParamValue::F64(value)),
            ElementKind::F16 => Ok(ParamValue::F16(half::f16::from_f64(value))),
            ElementKind::BF16 => Ok(ParamValue::BF16(half::bf16::from_f64(value))),
            other => Err(refuse(format!(
                "param {index} is {other}, which a region scalar cannot fill without conversion"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests;
