//! [`check`]: every precondition of the kernel's ABI, refused with a typed error before a device
//! sees anything — argument counts, devices, dtypes, param types, element counts or shapes,
//! divisibility and alignment for vectors, bounds and self-overlap for strided views, aliasing
//! between outputs and other operands, and the grid.

use jitseam_verify::{Coverage, LaunchCondition, Proof};

use super::reach::{ByteRange, byte_range, byte_range_of_reach, dense_byte_range, reach};

use crate::abi::{AbiKind, AbiSpec, MAX_RANK, ParamLayout, ParamValue};
use crate::device::{AsViewDesc, ConfigLimits, Geometry, ViewDesc};
use crate::dtype::ElementKind;
use crate::error::{ConfigProblem, Error, Operand};
use crate::liveness::DeviceId;
use crate::state::{GuardedEntry, LaunchPlan, LinearBounds};

/// Threads per block for every launch whose grid jitseam chooses (unless the kernel's
/// `.reqntid` or `.maxntid` asks for another): kernels are grid-stride loops, so any block size
/// is correct and 256 keeps occupancy high on every architecture jitseam targets.
pub const BLOCK: u32 = 256;

/// What the checks need to know about the kernel being launched.
#[derive(Debug, Clone, Copy)]
pub struct LaunchFacts<'k> {
    /// Entry point, for errors.
    pub entry: &'k str,
    /// The verified spec.
    pub spec: &'k AbiSpec,
    /// The verified packet layout.
    pub layout: &'k ParamLayout,
    /// The device the function is bound to.
    pub device: DeviceId,
    /// The device's largest `gridDim.x`.
    pub max_grid_x: u32,
    /// What a launch configuration must fit (custom ABI): the device's limits and the kernel's
    /// own block directives.
    pub limits: &'k ConfigLimits,
    /// What the body verifier proved about the kernel (its coverage form and the conditions
    /// every launch must meet); `None` for a kernel loaded with `Kernel::load_unverified`.
    pub proof: Option<&'k Proof>,
    /// Whether the body covers every element whatever the grid (a grid-stride loop) and is
    /// safe on every grid, so that a backend may run it on fewer blocks than one thread per
    /// element asks for (the emulator caps the grid near its core count). False — every block
    /// runs — unless the loaded kernel says so; always false for a custom kernel, whose
    /// extents are evaluated with the configuration's grid.
    pub grid_stride: bool,
    /// For a kernel proven with run-time guards: the hidden parameters its launches append and
    /// what its guards name; `None` for every other kernel.
    pub guarded: Option<&'k GuardedEntry>,
    /// What the checks decide the same way for every launch, worked out once from `spec`,
    /// `layout`, `proof` and `limits` ([`LaunchPlan::of`]): facts whose other fields are
    /// changed need the plan of the changed ones.
    pub plan: &'k LaunchPlan,
}

impl LaunchPlan {
    /// The plan of a kernel's launches: which check a launch takes first, the block of a grid
    /// jitseam chooses, and the proof's launch conditions folded for a one-dimensional launch.
    pub fn of(
        spec: &AbiSpec,
        layout: &ParamLayout,
        proof: Option<&Proof>,
        limits: &ConfigLimits,
    ) -> Self {
        // The dense one-pass check knows no pointee alignments: a kernel declaring them always
        // takes the full check.
        let dense_width = match spec.abi {
            _ if layout.declares_pointee_align() => 0,
            AbiKind::Scalar => 1,
            AbiKind::Vectorized { width } => width,
            AbiKind::Strided { .. } | AbiKind::Custom(_) => 0,
        };
        let block = if limits.reqntid.is_none() && limits.maxntid.is_none() {
            BLOCK
        } else {
            // 0 (which no directive yields) where the directives allow no block: each launch
            // then asks `directed_block` again, for the error that names the kernel.
            directed_block("", limits).unwrap_or(0)
        };
        Self {
            dense_width,
            block,
            // A custom kernel runs exactly the configuration its launch checked: its extents
            // may name the grid and the block, evaluated with the configuration's, and its body
            // reads the same geometry. The 1-D ABIs' proofs hold for every grid, and their
            // conditions bound the threads only from above, so a backend may run fewer blocks.
            grid_stride: proof.is_some_and(|p| p.coverage == Coverage::GridStride)
                && !spec.abi.is_custom(),
            one_thread_per_element: proof
                .is_some_and(|p| p.coverage == Coverage::OneThreadPerElement),
            bounds: LinearBounds::of(proof.map_or(&[], |p| &p.conditions[..])),
        }
    }
}

impl LinearBounds {
    /// The bounds every one of `conditions` states on a one-dimensional launch, as
    /// [`LaunchCondition::holds`] reads each: the match is exhaustive, so a new kind of
    /// condition is folded here before it compiles.
    fn of(conditions: &[LaunchCondition]) -> Self {
        let mut bounds = Self {
            // Above every sum of two `u64`s: no bound at all.
            count_plus_threads: u128::MAX,
            threads: u64::MAX,
            never: false,
        };
        for condition in conditions {
            match *condition {
                LaunchCondition::CountPlusThreadsAtMost { limit } => {
                    bounds.count_plus_threads = bounds.count_plus_threads.min(u128::from(limit));
                }
                LaunchCondition::ThreadsAtMost { limit }
                | LaunchCondition::AxisThreadsAtMost { limit } => {
                    bounds.threads = bounds.threads.min(limit);
                }
                LaunchCondition::ExtentsAtMost { .. }
                | LaunchCondition::ExtentsPlusAxisThreadsAtMost { .. }
                | LaunchCondition::BlocksAtMost { .. }
                | LaunchCondition::DynamicSharedAtLeast { .. }
                | LaunchCondition::BlockAtMost { .. } => bounds.never = true,
            }
        }
        bounds
    }

    /// Whether a launch of `count` on `threads` meets them all.
    #[inline(always)]
    fn hold(&self, count: u64, threads: u64) -> bool {
        // In `u128` the sum cannot wrap: a sum past `u64::MAX` fails every bound a condition
        // states, as `holds` has it, and passes where none is stated.
        !self.never
            & (threads <= self.threads)
            & (u128::from(count) + u128::from(threads) <= self.count_plus_threads)
    }
}

/// A launch that [`check`] (or, for the custom ABI, [`check_custom`](super::check_custom))
/// accepted. Only they build one, so a packet built from it (by [`marshal`](super::marshal))
/// rests on every precondition of the kernel's ABI.
///
/// It keeps the operands `check` read (descriptions, or launch operands holding them) by shared
/// borrow, so the packet is built from exactly what was checked.
#[derive(Debug)]
pub struct CheckedLaunch<'a, I = ViewDesc, O = ViewDesc> {
    /// Of the kernel's facts, what the packet is built from (the rest only the checks read:
    /// copying them into every accepted launch cost the launch path ~20 instructions).
    pub(super) layout: &'a ParamLayout,
    pub(super) spec: &'a AbiSpec,
    pub(super) grid_stride: bool,
    pub(super) inputs: &'a [I],
    pub(super) outputs: &'a [O],
    pub(super) shape: &'a [usize],
    pub(super) params: &'a [ParamValue],
    pub(super) count: u64,
    pub(super) geometry: Geometry,
}

// By hand: derived, they would ask `I` and `O` to be `Copy`, and only borrows are copied.
impl<I, O> Clone for CheckedLaunch<'_, I, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I, O> Copy for CheckedLaunch<'_, I, O> {}

impl<'a, I, O> CheckedLaunch<'a, I, O> {
    /// The launch of these operands that [`accept`] accepted.
    #[inline(always)]
    pub(super) fn accepted(
        facts: LaunchFacts<'a>,
        inputs: &'a [I],
        outputs: &'a [O],
        shape: &'a [usize],
        params: &'a [ParamValue],
        Accepted { count, geometry }: Accepted,
    ) -> Self {
        Self {
            layout: facts.layout,
            spec: facts.spec,
            grid_stride: facts.grid_stride,
            inputs,
            outputs,
            shape,
            params,
            count,
            geometry,
        }
    }

    /// The grid and block the launch will use.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The value of the kernel's `n` parameter (vectors for the vectorized ABI).
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// Checks one launch against the kernel's spec and the ABI's preconditions:
/// argument counts, the device of the stream and of every operand, dtypes, param types, element
/// counts or shapes, divisibility and alignment for vectors, bounds and self-overlap for strided
/// views, aliasing between outputs and other operands, and the grid.
///
/// `shape` is the launch's logical shape: `[n]` (or any shape with `n` elements) for the scalar
/// and vectorized ABIs, the `R` extents for `Strided<R>`.
///
/// The operands are [`ViewDesc`]s, or launch operands ([`Arg`](crate::device::Arg),
/// [`ArgMut`](crate::device::ArgMut)) whose descriptions are read in place.
///
/// Inlined, so that a caller builds the accepted launch in its own frame; the full check stays
/// out of line. (The launch path itself takes only what the checks decided, and builds the
/// accepted launch where it queues it.)
#[inline]
pub fn check<'a, I: AsViewDesc, O: AsViewDesc>(
    facts: LaunchFacts<'a>,
    stream: DeviceId,
    inputs: &'a [I],
    outputs: &'a [O],
    shape: &'a [usize],
    params: &'a [ParamValue],
) -> Result<CheckedLaunch<'a, I, O>, Error> {
    // Destructured here rather than handed to `CheckedLaunch::accepted`: rustc then builds the
    // accepted launch in the caller's frame (the other way cost ~30 instructions a call).
    let Accepted { count, geometry } = accept(&facts, stream, inputs, outputs, shape, params)?;
    Ok(CheckedLaunch {
        layout: facts.layout,
        spec: facts.spec,
        grid_stride: facts.grid_stride,
        inputs,
        outputs,
        shape,
        params,
        count,
        geometry,
    })
}

/// What [`check`] decides about a launch it accepts: the kernel's `n` and the grid. Only this
/// much travels out of the checks, so the accepted launch is built once, where it is used.
#[derive(Debug, Clone, Copy)]
pub(super) struct Accepted {
    pub(super) count: u64,
    pub(super) geometry: Geometry,
}

/// Every check of [`check`], returning what it decided. Always inlined: the launch path holds
/// the facts and the operands in its own frame, and the result is two words and a geometry.
#[inline(always)]
pub(super) fn accept<I: AsViewDesc, O: AsViewDesc>(
    facts: &LaunchFacts<'_>,
    stream: DeviceId,
    inputs: &[I],
    outputs: &[O],
    shape: &[usize],
    params: &[ParamValue],
) -> Result<Accepted, Error> {
    // Nearly every launch is a valid dense one: accepted in one pass, or decided (and its error
    // named) by the full check. The plan says which kernels the one pass serves.
    let width = facts.plan.dense_width;
    let count = if width == 0 || stream != facts.device {
        None
    } else {
        super::dense::accept(
            facts.device,
            usize::from(width),
            facts.spec,
            inputs,
            outputs,
            shape,
            params,
        )
    };
    let accepted = match count {
        Some(count) => Accepted {
            count,
            geometry: dense_geometry(facts, count)?,
        },
        None => check_full(facts, stream, inputs, outputs, shape, params)?,
    };
    check_proof(facts, shape, accepted)?;
    Ok(accepted)
}

/// What the body's proof needs of this launch: a grid with one thread per element for a body
/// that handles one element per thread, and every launch condition (e.g. an `int` index that
/// must not wrap: `n + threads ≤ 2^31 − 1`). Inlined: a launch the plan's bounds admit pays a
/// few compares; one they do not goes through each condition, which names the one it fails.
#[inline(always)]
fn check_proof(facts: &LaunchFacts<'_>, shape: &[usize], accepted: Accepted) -> Result<(), Error> {
    // `check` launches 1-D grids of 1-D blocks (`grid_for`): y and z are 1.
    let threads = u64::from(accepted.geometry.grid[0]) * u64::from(accepted.geometry.block[0]);
    let plan = facts.plan;
    if plan.one_thread_per_element && threads < accepted.count {
        return Err(too_few_threads(facts.entry, accepted.count));
    }
    if plan.bounds.hold(accepted.count, threads) {
        return Ok(());
    }
    let Some(proof) = facts.proof else {
        return Ok(());
    };
    check_conditions(facts.entry, proof, shape, accepted.count, threads)
}

#[cold]
fn too_few_threads(entry: &str, count: u64) -> Error {
    Error::LaunchGeometry {
        entry: entry.to_owned(),
        n: u128::from(count),
        reason: "the body handles one element per thread, and the largest grid has fewer threads",
    }
}

/// The proof's launch conditions, each against this launch's count, shape and threads. Out of
/// line and cold: a launch gets here only when one of them fails.
#[cold]
#[inline(never)]
fn check_conditions(
    entry: &str,
    proof: &Proof,
    shape: &[usize],
    count: u64,
    threads: u64,
) -> Result<(), Error> {
    let mut axes = [0u64; MAX_RANK];
    for (to, &from) in axes.iter_mut().zip(shape) {
        *to = from as u64;
    }
    let axes = &axes[..shape.len().min(MAX_RANK)];
    for condition in &proof.conditions {
        if !condition.holds(count, axes, threads) {
            return Err(Error::LaunchCondition {
                entry: entry.to_owned(),
                condition: *condition,
                count,
                threads,
            });
        }
    }
    Ok(())
}

/// [`check`] without the dense fast path: every check, in order, naming the first that fails.
/// Out of line: a launch that gets here is unusual (or refused), and keeping it apart keeps the
/// fast path's frame small.
#[inline(never)]
fn check_full<I: AsViewDesc, O: AsViewDesc>(
    facts: &LaunchFacts<'_>,
    stream: DeviceId,
    inputs: &[I],
    outputs: &[O],
    shape: &[usize],
    params: &[ParamValue],
) -> Result<Accepted, Error> {
    let entry = facts.entry;
    let spec = facts.spec;
    if spec.abi.is_custom() {
        return Err(Error::LaunchConfig {
            entry: entry.to_owned(),
            problem: crate::error::ConfigProblem::NeedsConfig,
        });
    }
    check_counts_and_stream(facts, stream, inputs.len(), outputs.len(), params.len())?;
    // Counts match, so the zips pair every operand with its declared dtype.
    for (k, (view, &expected)) in inputs.iter().zip(spec.inputs.iter()).enumerate() {
        check_operand(facts, Operand::Input(k), k, view.view_desc(), expected)?;
    }
    for (m, (view, &expected)) in outputs.iter().zip(spec.outputs.iter()).enumerate() {
        let param = inputs.len() + m;
        check_operand(facts, Operand::Output(m), param, view.view_desc(), expected)?;
    }
    check_param_types(entry, spec, params)?;
    let n = shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        // Lazily: building the error allocates, and this runs on every launch.
        .ok_or_else(|| Error::LaunchGeometry {
            entry: entry.to_owned(),
            // Saturating: a plain u128 product of eight extents can itself overflow (and panic).
            n: shape
                .iter()
                .fold(1u128, |n, &e| n.saturating_mul(e as u128)),
            reason: "the shape's element count overflows",
        })?;
    // Aliasing compares every output with every other operand, so it needs each operand's byte
    // range once per pair. A dense view's range is two multiplications; a strided view's needs
    // the walk over its axes that `check_strided` already did, so that one records them.
    let count = match spec.abi {
        AbiKind::Scalar | AbiKind::Vectorized { .. } => {
            let count = check_dense(entry, &spec.abi, inputs, outputs, n)?;
            check_aliasing(entry, inputs, outputs, |_, view| dense_byte_range(view, n))?;
            count
        }
        AbiKind::Strided { rank } => {
            let mut ranges = [None; CACHED_RANGES];
            check_strided(
                entry,
                usize::from(rank),
                inputs,
                outputs,
                shape,
                &mut ranges,
            )?;
            check_aliasing(entry, inputs, outputs, |index, view| {
                match ranges.get(index) {
                    Some(&range) => range,
                    None => byte_range(view),
                }
            })?;
            n
        }
        // Refused above: a custom kernel's launch is checked by `check_custom`.
        AbiKind::Custom(_) => 0,
    };
    let count = u64::try_from(count)
        .ok()
        .filter(|&c| i64::try_from(c).is_ok())
        .ok_or_else(|| Error::LaunchGeometry {
            entry: entry.to_owned(),
            n: n as u128,
            reason: "the count does not fit the kernel's signed 64-bit `n`",
        })?;
    Ok(Accepted {
        count,
        geometry: dense_geometry(facts, count)?,
    })
}

/// The grid for `units` work items: one thread each, in blocks of [`BLOCK`], capped at the
/// device's limit (kernels are grid-stride loops, so a capped grid still covers everything) and
/// at least one block. All arithmetic is in `u64`: nothing is truncated.
pub fn grid_for(units: u64, max_grid_x: u32) -> Geometry {
    grid_in_blocks(units, max_grid_x, BLOCK)
}

/// [`grid_for`] in one-dimensional blocks of `block` threads (at least 1).
fn grid_in_blocks(units: u64, max_grid_x: u32, block: u32) -> Geometry {
    let block = block.max(1);
    let blocks = units.div_ceil(u64::from(block)).max(1);
    let grid = u32::try_from(blocks.min(u64::from(max_grid_x.max(1)))).unwrap_or(u32::MAX);
    Geometry::linear(grid, block)
}

/// The geometry of a scalar, vectorized or strided launch: [`grid_for`], in blocks the kernel's
/// own block directives allow.
#[inline(always)]
fn dense_geometry(facts: &LaunchFacts<'_>, count: u64) -> Result<Geometry, Error> {
    match facts.plan.block {
        0 => directed_block(facts.entry, facts.limits)
            .map(|block| grid_in_blocks(count, facts.max_grid_x, block)),
        block => Ok(grid_in_blocks(count, facts.max_grid_x, block)),
    }
}

/// The one-dimensional block of a kernel whose grid jitseam chooses, under its `.reqntid` (the
/// block it names, which must be one-dimensional) or `.maxntid` (at most that many threads):
/// such kernels are correct for any block, so the directive picks it.
#[cold]
pub(super) fn directed_block(entry: &str, limits: &ConfigLimits) -> Result<u32, Error> {
    if let Some(required) = limits.reqntid {
        return match required {
            [x, 1, 1] if x > 0 => Ok(x),
            _ => Err(Error::LaunchConfig {
                entry: entry.to_owned(),
                problem: ConfigProblem::RequiredBlock {
                    required,
                    block: [BLOCK, 1, 1],
                },
            }),
        };
    }
    let most = limits.maxntid.map_or(u64::from(BLOCK), |max| {
        max.iter().map(|&d| u64::from(d)).product::<u64>()
    });
    Ok(u32::try_from(most.min(u64::from(BLOCK)))
        .unwrap_or(BLOCK)
        .max(1))
}

/// What every ABI checks first: the operand and param counts against the spec, and the
/// stream's device against the kernel's.
pub(super) fn check_counts_and_stream(
    facts: &LaunchFacts<'_>,
    stream: DeviceId,
    inputs: usize,
    outputs: usize,
    params: usize,
) -> Result<(), Error> {
    let (entry, spec) = (facts.entry, facts.spec);
    count_matches(entry, "inputs", spec.inputs.len(), inputs)?;
    count_matches(entry, "outputs", spec.outputs.len(), outputs)?;
    count_matches(entry, "params", spec.params.len(), params)?;
    if stream != facts.device {
        return Err(Error::DeviceMismatch {
            entry: entry.to_owned(),
            operand: Operand::Stream,
            expected: facts.device,
            found: stream,
        });
    }
    Ok(())
}

/// Each runtime param's type against the spec's (the counts already match).
pub(super) fn check_param_types(
    entry: &str,
    spec: &AbiSpec,
    params: &[ParamValue],
) -> Result<(), Error> {
    for (index, (value, &expected)) in params.iter().zip(spec.params.iter()).enumerate() {
        if value.kind() != expected {
            return Err(Error::ParamType {
                entry: entry.to_owned(),
                index,
                expected,
                found: value.kind(),
            });
        }
    }
    Ok(())
}

fn count_matches(
    entry: &str,
    what: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), Error> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::ArgumentCount {
            entry: entry.to_owned(),
            what,
            expected,
            found,
        })
    }
}

/// An operand's device, dtype and, where its parameter (number `param`) declares one, pointee
/// alignment (inlined for the same reason as [`check_dense_view`]).
#[inline(always)]
pub(super) fn check_operand(
    facts: &LaunchFacts<'_>,
    operand: Operand,
    param: usize,
    view: &ViewDesc,
    expected: ElementKind,
) -> Result<(), Error> {
    if view.device != facts.device {
        return Err(Error::DeviceMismatch {
            entry: facts.entry.to_owned(),
            operand,
            expected: facts.device,
            found: view.device,
        });
    }
    if view.dtype != expected {
        return Err(Error::DtypeMismatch {
            entry: facts.entry.to_owned(),
            operand,
            expected,
            found: view.dtype,
        });
    }
    let required = facts.layout.pointee_align(param);
    if required > 1 {
        let address = view
            .base
            .wrapping_add((view.offset as u64).wrapping_mul(view.dtype.size() as u64));
        if !address.is_multiple_of(u64::from(required)) {
            return Err(Error::PointerMisaligned {
                entry: facts.entry.to_owned(),
                operand,
                address,
                required,
            });
        }
    }
    Ok(())
}

fn all_views<'v, I: AsViewDesc, O: AsViewDesc>(
    inputs: &'v [I],
    outputs: &'v [O],
) -> impl Iterator<Item = (Operand, &'v ViewDesc)> {
    let ins = inputs
        .iter()
        .enumerate()
        .map(|(k, v)| (Operand::Input(k), v.view_desc()));
    let outs = outputs
        .iter()
        .enumerate()
        .map(|(m, v)| (Operand::Output(m), v.view_desc()));
    ins.chain(outs)
}

/// Scalar and vectorized: every operand dense, inside its allocation, with exactly `n` elements;
/// for vectors also `n % W == 0` and every start aligned to `W · size`. Returns the count.
fn check_dense<I: AsViewDesc, O: AsViewDesc>(
    entry: &str,
    abi: &AbiKind,
    inputs: &[I],
    outputs: &[O],
    n: usize,
) -> Result<usize, Error> {
    // Two plain loops rather than one over a chained iterator: the chain costs a branch per
    // step.
    for (k, view) in inputs.iter().enumerate() {
        check_dense_view(entry, abi, Operand::Input(k), view.view_desc(), n)?;
    }
    for (m, view) in outputs.iter().enumerate() {
        check_dense_view(entry, abi, Operand::Output(m), view.view_desc(), n)?;
    }
    let width = abi.width();
    if !n.is_multiple_of(width) {
        return Err(Error::NotDivisible {
            entry: entry.to_owned(),
            n,
            width,
        });
    }
    Ok(n / width)
}

/// One operand of [`check_dense`]. Always inlined: out of line, every operand of every launch
/// pays a call and a `Result` passed through memory.
#[inline(always)]
fn check_dense_view(
    entry: &str,
    abi: &AbiKind,
    operand: Operand,
    view: &ViewDesc,
    n: usize,
) -> Result<(), Error> {
    // Rank 1 with unit stride — whole buffers and 1-D windows, nearly every dense operand — is
    // contiguous with `shape[0]` elements; anything else takes the walk over its axes.
    let plain = view.rank == 1 && view.strides[0] == 1;
    if !plain && !view.is_contiguous() {
        return Err(Error::NotContiguous {
            entry: entry.to_owned(),
            operand,
            abi: Box::new(abi.clone()),
        });
    }
    let len = if plain { view.shape[0] } else { view.len() };
    if len != n {
        return Err(Error::ElementCount {
            entry: entry.to_owned(),
            operand,
            expected: n,
            found: len,
        });
    }
    if view
        .offset
        .checked_add(n)
        .is_none_or(|end| end > view.alloc_len)
    {
        return Err(Error::ViewOutOfBounds {
            entry: entry.to_owned(),
            operand,
            lowest: view.offset as i128,
            highest: view.offset as i128 + n as i128 - 1,
            len: view.alloc_len,
        });
    }
    let width = abi.width();
    if width > 1 {
        let size = view.dtype.size();
        let required = width * size;
        let address = u128::from(view.base) + view.offset as u128 * size as u128;
        if !address.is_multiple_of(required as u128) {
            return Err(Error::Misaligned {
                entry: entry.to_owned(),
                operand,
                offset: view.offset.saturating_mul(size),
                required,
            });
        }
    }
    Ok(())
}

/// Strided: every operand of the kernel's rank and the launch's shape, every reachable element
/// inside its allocation, and no output writing one element twice.
fn check_strided<I: AsViewDesc, O: AsViewDesc>(
    entry: &str,
    rank: usize,
    inputs: &[I],
    outputs: &[O],
    shape: &[usize],
    ranges: &mut [ByteRange; CACHED_RANGES],
) -> Result<(), Error> {
    if shape.len() != rank {
        return Err(Error::RankMismatch {
            entry: entry.to_owned(),
            operand: Operand::Output(0),
            expected: rank,
            found: shape.len(),
        });
    }
    for (index, (operand, view)) in all_views(inputs, outputs).enumerate() {
        if view.shape() != shape {
            if view.shape().len() != rank {
                return Err(Error::RankMismatch {
                    entry: entry.to_owned(),
                    operand,
                    expected: rank,
                    found: view.shape().len(),
                });
            }
            return Err(Error::ShapeMismatch {
                entry: entry.to_owned(),
                operand,
                expected: shape.to_vec(),
                found: view.shape().to_vec(),
            });
        }
        let reach = reach(view);
        if let Some((lowest, highest)) = reach
            && (lowest < 0 || highest >= view.alloc_len as i128)
        {
            return Err(Error::ViewOutOfBounds {
                entry: entry.to_owned(),
                operand,
                lowest,
                highest,
                len: view.alloc_len,
            });
        }
        if let Some(range) = ranges.get_mut(index) {
            *range = reach.and_then(|reach| byte_range_of_reach(view, reach));
        }
    }
    for (output, view) in outputs.iter().enumerate() {
        let view = view.view_desc();
        if let Some((axis, extent)) = self_overlap(view) {
            return Err(Error::OutputOverlaps {
                entry: entry.to_owned(),
                output,
                axis,
                extent,
                shape: view.shape().into(),
                strides: view.strides().into(),
            });
        }
    }
    Ok(())
}

/// A sufficient test that no two indices of the view address one element: with axes ordered by
/// `|stride|`, each stride must step past everything the smaller axes can reach. Returns the
/// first axis that fails, with its extent. Axes of extent 1 never repeat an element.
fn self_overlap(view: &ViewDesc) -> Option<(usize, usize)> {
    let mut axes = [(0usize, 0usize, 0u128); MAX_RANK];
    let mut used = 0;
    for (axis, (&extent, &stride)) in view.shape().iter().zip(view.strides()).enumerate() {
        if extent > 1 {
            axes[used] = (axis, extent, stride.unsigned_abs() as u128);
            used += 1;
        }
    }
    let axes = &mut axes[..used];
    axes.sort_unstable_by_key(|&(_, _, stride)| stride);
    let mut reach: u128 = 0;
    for &(axis, extent, stride) in axes.iter() {
        if stride <= reach {
            return Some((axis, extent));
        }
        reach += stride * (extent as u128 - 1);
    }
    None
}

/// Operands whose byte ranges [`check_strided`] records for [`check_aliasing`]: every kernel up
/// to eight operands. Larger kernels get the rest recomputed there — same answer, more work.
const CACHED_RANGES: usize = 8;

/// Kernels take `__restrict__` pointers: an output may share no byte with any other operand.
///
/// `range(i, view)` is the byte range of operand `i` (inputs, then outputs), `view`.
pub(super) fn check_aliasing<I: AsViewDesc, O: AsViewDesc>(
    entry: &str,
    inputs: &[I],
    outputs: &[O],
    range: impl Fn(usize, &ViewDesc) -> ByteRange,
) -> Result<(), Error> {
    let overlaps = |(start, end): (u128, u128), other: ByteRange| {
        other.is_some_and(|(other_start, other_end)| other_start < end && start < other_end)
    };
    for (m, out) in outputs.iter().enumerate() {
        let Some(out_range) = range(inputs.len() + m, out.view_desc()) else {
            continue;
        };
        let aliasing = |other| Error::Aliasing {
            entry: entry.to_owned(),
            output: m,
            other,
        };
        for (k, input) in inputs.iter().enumerate() {
            if overlaps(out_range, range(k, input.view_desc())) {
                return Err(aliasing(Operand::Input(k)));
            }
        }
        for (j, other) in outputs.iter().enumerate() {
            if j != m && overlaps(out_range, range(inputs.len() + j, other.view_desc())) {
                return Err(aliasing(Operand::Output(j)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceId;

    mod plan {
        use jitseam_verify::LaunchCondition;
        use proptest::prelude::*;

        use super::*;

        fn condition() -> impl Strategy<Value = LaunchCondition> {
            let limit = prop_oneof![0u64..4096, Just(u64::MAX), Just((1 << 31) - 1)];
            prop_oneof![
                6 => limit.clone().prop_map(|limit| LaunchCondition::CountPlusThreadsAtMost { limit }),
                3 => limit.clone().prop_map(|limit| LaunchCondition::ThreadsAtMost { limit }),
                2 => limit.clone().prop_map(|limit| LaunchCondition::AxisThreadsAtMost { limit }),
                1 => limit.clone().prop_map(|limit| LaunchCondition::ExtentsAtMost { limit }),
                1 => limit.clone().prop_map(|limit| LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit }),
                1 => limit.prop_map(|limit| LaunchCondition::BlocksAtMost { limit }),
                1 => (0u32..64).prop_map(|bytes_per_thread_x| LaunchCondition::DynamicSharedAtLeast { bytes_per_thread_x }),
                1 => (0u32..2048).prop_map(|x| LaunchCondition::BlockAtMost { x, y: 1, z: 1 }),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

            /// The folded bounds admit a launch exactly when every condition holds for it, as
            /// `LaunchCondition::holds` reads each: the plan's fast test is the conditions'.
            #[test]
            fn the_folded_bounds_hold_exactly_when_every_condition_does(
                conditions in prop::collection::vec(condition(), 0..4),
                count in prop_oneof![0u64..8192, Just(u64::MAX - 3), Just(1 << 31)],
                threads in prop_oneof![1u64..8192, Just(u64::MAX)],
                shape in prop::collection::vec(0u64..64, 0..3),
            ) {
                let every = conditions.iter().all(|c| c.holds(count, &shape, threads));
                prop_assert_eq!(LinearBounds::of(&conditions).hold(count, threads), every);
            }
        }
    }

    mod fast_path {
        use proptest::prelude::*;

        use super::*;
        use crate::abi::{AbiKind, AbiSpec, ParamLayout};

        /// A contiguous view near a valid operand of `n` elements: mostly on device 1, of f32,
        /// `n` long and inside its allocation, sometimes not.
        fn view(n: usize) -> impl Strategy<Value = ViewDesc> {
            (
                prop_oneof![4 => Just(1u64), 1 => Just(2u64)],
                prop_oneof![4 => Just(ElementKind::F32), 1 => Just(ElementKind::F64)],
                prop_oneof![
                    Just(0u64),
                    (0u64..64).prop_map(|b| b * 4),
                    Just(u64::MAX - 7)
                ],
                prop_oneof![3 => Just(n + 8), 1 => 0usize..48],
                0usize..10,
                prop_oneof![4 => Just(n), 1 => 0usize..40],
            )
                .prop_map(|(device, dtype, base, alloc_len, offset, len)| {
                    ViewDesc::contiguous(
                        DeviceId::from_raw(device),
                        dtype,
                        base,
                        alloc_len,
                        offset,
                        len,
                    )
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

            /// The dense fast path only ever says yes to a launch the full check accepts, with the
            /// same count: it can make a launch cheaper, never let one through.
            #[test]
            fn accepts_only_what_the_full_check_accepts(
                width in prop_oneof![Just(1u8), Just(2), Just(4)],
                (n, inputs, outputs) in (0usize..40).prop_flat_map(|n| (
                    Just(n),
                    prop::collection::vec(view(n), 0..3),
                    prop::collection::vec(view(n), 1..3),
                )),
                stream in prop_oneof![4 => Just(1u64), 1 => Just(2u64)],
            ) {
                let abi = if width == 1 { AbiKind::Scalar } else { AbiKind::Vectorized { width } };
                let spec = AbiSpec::owned(
                    abi,
                    vec![ElementKind::F32; inputs.len()],
                    vec![ElementKind::F32; outputs.len()],
                    Vec::new(),
                );
                let layout = ParamLayout::new(&spec.expected_params());
                let facts = LaunchFacts {
                    entry: "k",
                    spec: &spec,
                    layout: &layout,
                    device: DeviceId::from_raw(1),
                    max_grid_x: u32::MAX,
                    limits: &ConfigLimits::TYPICAL,
                    proof: None,
                    grid_stride: false,
                    guarded: None,
                    plan: &LaunchPlan::of(&spec, &layout, None, &ConfigLimits::TYPICAL),
                };
                let shape = [n];
                let stream = DeviceId::from_raw(stream);
                let accepted = (stream == facts.device)
                    .then(|| super::super::super::dense::accept(
                        facts.device, usize::from(width), &spec, &inputs, &outputs, &shape, &[],
                    ))
                    .flatten();
                if let Some(count) = accepted {
                    let full = check_full(&facts, stream, &inputs, &outputs, &shape, &[]);
                    prop_assert!(full.is_ok(), "fast path accepted what the full check refuses: {full:?}");
                    prop_assert_eq!(full.map(|c| c.count).ok(), Some(count));
                }
            }
        }
    }
}
