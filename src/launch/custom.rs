//! [`check_custom`]: the checks of a custom-ABI launch — operand counts, devices, dtypes and
//! param types as for every ABI; the launch configuration against the block the kernel
//! declares, the device's limits and the kernel's `.maxntid`/`.reqntid`; every pointer's
//! declared extent, evaluated with checked arithmetic for this launch's params and geometry,
//! against its buffer; outputs overlapping nothing. Refused with a typed error before a device
//! sees anything.

use super::CheckedLaunch;
use super::check::{
    BLOCK, LaunchFacts, check_aliasing, check_counts_and_stream, check_operand, check_param_types,
    directed_block,
};
use super::reach::dense_byte_range;
use crate::abi::{
    AbiKind, CustomAbi, CustomKind, ExtentEnv, ExtentOp, ExtentProblem, ParamValue, eval_next,
};
use crate::device::{AsViewDesc, ConfigLimits, LaunchConfig, ViewDesc};
use crate::error::{ConfigProblem, Error, InvalidExtent, Operand, ShortExtent};
use crate::liveness::DeviceId;
use jitseam_verify::Proof;

/// Checks one launch of a custom-ABI kernel. `config` is the launch's configuration; `None`
/// asks for one thread per element of the kernel's covered count, in blocks of [`BLOCK`] or of
/// the block the kernel declares (refused for a kernel that covers no count). A kernel that
/// declares a block (`block = (x, y, z)`) launches only with exactly that block.
///
/// `inputs`, `outputs` and `params` are the kernel's `In` pointers, `Out` pointers and by-value
/// params, each in declaration order. Each operand must be dense (a buffer or a contiguous
/// range) and hold at least its extent's elements; a longer one is fine, the kernel touches
/// only its extent.
pub fn check_custom<'a, I: AsViewDesc, O: AsViewDesc>(
    facts: LaunchFacts<'a>,
    stream: DeviceId,
    config: Option<LaunchConfig>,
    inputs: &'a [I],
    outputs: &'a [O],
    params: &'a [ParamValue],
) -> Result<CheckedLaunch<'a, I, O>, Error> {
    let entry = facts.entry;
    let spec = facts.spec;
    let AbiKind::Custom(custom) = &spec.abi else {
        return Err(config_error(
            entry,
            ConfigProblem::NotCustom {
                abi: Box::new(spec.abi.clone()),
            },
        ));
    };
    check_counts_and_stream(&facts, stream, inputs.len(), outputs.len(), params.len())?;
    check_param_types(entry, spec, params)?;
    let config = match config {
        Some(config) => config,
        None => covering(entry, custom, params, facts.limits)?,
    };
    check_config(entry, &config, facts.limits, custom.block)?;
    let env = ExtentEnv {
        params,
        grid: config.grid,
        block: config.block,
    };
    // One pass over the parameters in the kernel's order: each pointer's operand, its checks,
    // and its extent program (the programs are in the same order).
    let (mut k, mut m, mut cursor) = (0usize, 0usize, 0usize);
    // Each operand's byte range, for the aliasing test: inputs first, then outputs (the order
    // `check_aliasing` names them in); kernels with more operands take the general test.
    let mut ranges = [(0u128, 0u128); CACHED];
    // The largest extent, for the body proof's conditions.
    let mut largest = 0u64;
    for (index, param) in custom.params.iter().enumerate() {
        let (operand, view) = match param.kind {
            CustomKind::In(_) => {
                let view = inputs.get(k).map(AsViewDesc::view_desc);
                k += 1;
                (Operand::Input(k - 1), view)
            }
            CustomKind::Out(_) => {
                let view = outputs.get(m).map(AsViewDesc::view_desc);
                m += 1;
                (Operand::Output(m - 1), view)
            }
            CustomKind::Value(_) => continue,
        };
        // Counts matched, so every pointer has its operand.
        let Some(view) = view else { continue };
        let pointer = k + m - 1;
        check_operand(&facts, operand, index, view, param.kind.dtype())?;
        let len = dense_len(entry, &spec.abi, operand, view)?;
        let slot = match operand {
            Operand::Output(m) => inputs.len() + m,
            Operand::Input(k) => k,
            Operand::Stream => continue,
        };
        if let (Some(range), Some(bytes)) = (ranges.get_mut(slot), dense_byte_range(view, len)) {
            *range = bytes;
        }
        let needed = eval_next(&custom.code, &mut cursor, &env).map_err(|problem| {
            invalid(entry, custom, pointer, format!("`{}`", param.name), problem)
        })?;
        largest = largest.max(needed);
        // The extent counts vectors of a pointer to vectors; the operand, its elements.
        let needed = needed.saturating_mul(u64::from(param.lanes));
        if needed > len as u64 {
            return Err(Error::ExtentShort(Box::new(ShortExtent {
                entry: entry.to_owned(),
                operand,
                name: param.name.clone().into_owned(),
                extent: custom.extent_text(pointer),
                needed,
                found: len,
            })));
        }
    }
    if custom.shared {
        check_declared_shared(entry, custom, cursor, &env, &config)?;
    }
    if let Some(proof) = facts.proof {
        check_proof(entry, proof, &config, largest)?;
    }
    let operands = inputs.len() + outputs.len();
    let disjoint = operands <= CACHED && {
        let ranges = &ranges[..operands];
        ranges
            .iter()
            .enumerate()
            .skip(inputs.len())
            .all(|(m, &(start, end))| {
                ranges
                    .iter()
                    .enumerate()
                    .all(|(j, &(other_start, other_end))| {
                        j == m || start == end || other_start >= end || start >= other_end
                    })
            })
    };
    if !disjoint {
        // The general test decides, and names the operands that overlap.
        check_aliasing(entry, inputs, outputs, |_, view| {
            dense_byte_range(view, view.len())
        })?;
    }
    Ok(CheckedLaunch {
        layout: facts.layout,
        spec: facts.spec,
        grid_stride: facts.grid_stride,
        inputs,
        outputs,
        shape: &[],
        params,
        count: 0,
        geometry: config,
    })
}

/// What the body's proof assumes of a custom launch: the geometry it models (along every axis
/// `1 ≤ block ≤ 1024` and `1 ≤ grid ≤ 2^31 − 1`; the device's own limits are usually tighter,
/// but the proof must not rest on them) and every launch condition it needs, over the
/// geometry, the dynamic shared memory and the declared extents (`largest` is the largest
/// extent's value).
fn check_proof(
    entry: &str,
    proof: &Proof,
    config: &LaunchConfig,
    largest: u64,
) -> Result<(), Error> {
    const BLOCK_AXES: [&str; 3] = ["block.x", "block.y", "block.z"];
    const GRID_AXES: [&str; 3] = ["grid.x", "grid.y", "grid.z"];
    for axis in 0..3 {
        let (block, grid) = (config.block[axis], config.grid[axis]);
        if block > PROVEN_BLOCK {
            return Err(config_error(
                entry,
                over(
                    BLOCK_AXES[axis],
                    block.into(),
                    PROVEN_BLOCK.into(),
                    "the body proof",
                ),
            ));
        }
        if grid > PROVEN_GRID {
            return Err(config_error(
                entry,
                over(
                    GRID_AXES[axis],
                    grid.into(),
                    PROVEN_GRID.into(),
                    "the body proof",
                ),
            ));
        }
    }
    for condition in &proof.conditions {
        if !condition.holds_custom(
            config.grid,
            config.block,
            config.dynamic_shared_bytes,
            largest,
        ) {
            return Err(Error::LaunchCondition {
                entry: entry.to_owned(),
                condition: *condition,
                count: largest,
                threads: config
                    .threads_per_block()
                    .saturating_mul(config.grid.iter().map(|&g| u64::from(g)).product::<u64>()),
            });
        }
    }
    Ok(())
}

/// The launch's dynamic shared bytes against the least the kernel declares (`shared = EXPR`,
/// its last program; `cursor` is at the first program after the pointers').
fn check_declared_shared(
    entry: &str,
    custom: &CustomAbi,
    mut cursor: usize,
    env: &ExtentEnv<'_>,
    config: &LaunchConfig,
) -> Result<(), Error> {
    let program =
        custom.params.iter().filter(|p| p.kind.is_pointer()).count() + usize::from(custom.covers);
    let refuse = |problem| {
        let of = "the declared shared size".to_owned();
        invalid(entry, custom, program, of, problem)
    };
    if custom.covers {
        eval_next(&custom.code, &mut cursor, env).map_err(refuse)?;
    }
    let needed = eval_next(&custom.code, &mut cursor, env).map_err(refuse)?;
    let declared = custom.shared_text().unwrap_or_default();
    if needed > u64::from(config.dynamic_shared_bytes) {
        return Err(config_error(
            entry,
            ConfigProblem::DeclaredShared {
                declared,
                needed,
                bytes: config.dynamic_shared_bytes,
            },
        ));
    }
    Ok(())
}

/// The largest block and grid extent, along any axis, the body verifier's geometry models.
const PROVEN_BLOCK: u32 = 1024;
const PROVEN_GRID: u32 = (1 << 31) - 1;

/// Operands whose byte ranges the one pass records for the aliasing test.
const CACHED: usize = 8;

/// One thread per element of the covered count, in blocks of [`BLOCK`] threads — or of the
/// block the kernel declares, or its `.reqntid` or `.maxntid` allows: `div_ceil(count, block)`
/// blocks (at least one), which must fit the device's grid — the body handles one element per
/// thread, so the grid is never capped.
fn covering(
    entry: &str,
    custom: &CustomAbi,
    params: &[ParamValue],
    limits: &ConfigLimits,
) -> Result<LaunchConfig, Error> {
    if !custom.covers {
        return Err(config_error(entry, ConfigProblem::NeedsConfig));
    }
    let pointers = custom.params.iter().filter(|p| p.kind.is_pointer()).count();
    // The covered count is the last program: skip the pointers' programs to its start.
    let mut cursor = 0usize;
    let mut ends = 0usize;
    while ends < pointers && cursor < custom.code.len() {
        if custom.code[cursor] == ExtentOp::End {
            ends += 1;
        }
        cursor += 1;
    }
    let env = ExtentEnv {
        params,
        grid: [1; 3],
        block: [1; 3],
    };
    let count = eval_next(&custom.code, &mut cursor, &env).map_err(|problem| {
        invalid(
            entry,
            custom,
            pointers,
            "the covered count".to_owned(),
            problem,
        )
    })?;
    let block = match custom.block {
        // One-dimensional by the signature's rules (`check_config` refuses any other).
        Some([x, ..]) => x.max(1),
        None if limits.reqntid.is_none() && limits.maxntid.is_none() => BLOCK,
        None => directed_block(entry, limits)?,
    };
    let blocks = count.div_ceil(u64::from(block)).max(1);
    let limit = limits.device.max_grid[0];
    let grid = u32::try_from(blocks)
        .ok()
        .filter(|&g| g <= limit)
        .ok_or_else(|| {
            config_error(
                entry,
                ConfigProblem::OverLimit {
                    what: "grid.x",
                    value: blocks,
                    limit: u64::from(limit),
                    by: "the device",
                },
            )
        })?;
    Ok(LaunchConfig::linear(grid, block))
}

/// A configuration against the block the kernel declares, the device's limits and the
/// kernel's block directives.
fn check_config(
    entry: &str,
    config: &LaunchConfig,
    limits: &ConfigLimits,
    declared: Option<[u32; 3]>,
) -> Result<(), Error> {
    let refuse = |problem| Err(config_error(entry, problem));
    if let Some(declared) = declared
        && declared != config.block
    {
        return refuse(ConfigProblem::DeclaredBlock {
            declared,
            block: config.block,
        });
    }
    for (what, dims) in [("grid", config.grid), ("block", config.block)] {
        if let Some(axis) = dims.iter().position(|&d| d == 0) {
            return refuse(ConfigProblem::Empty {
                what,
                axis: axis as u8,
            });
        }
    }
    let device = &limits.device;
    const BLOCK_AXES: [&str; 3] = ["block.x", "block.y", "block.z"];
    const GRID_AXES: [&str; 3] = ["grid.x", "grid.y", "grid.z"];
    // The proofs assume every CUDA device's limits; a device that reports more is held to them.
    let within = |device: u32, proven: u32| {
        if device <= proven {
            (device, "the device")
        } else {
            (proven, "every CUDA device")
        }
    };
    for (axis, &value) in config.block.iter().enumerate() {
        let (limit, by) = within(device.max_block[axis], jitseam_verify::MAX_BLOCK[axis]);
        if value > limit {
            return refuse(over(BLOCK_AXES[axis], value.into(), limit.into(), by));
        }
    }
    let threads = config.threads_per_block();
    if threads > u64::from(device.max_threads_per_block) {
        return refuse(over(
            "threads per block",
            threads,
            device.max_threads_per_block.into(),
            "the device",
        ));
    }
    for (axis, &value) in config.grid.iter().enumerate() {
        let (limit, by) = within(device.max_grid[axis], jitseam_verify::MAX_GRID[axis]);
        if value > limit {
            return refuse(over(GRID_AXES[axis], value.into(), limit.into(), by));
        }
    }
    // The device's per-block shared memory holds the kernel's static shared memory too.
    let dynamic_limit = device
        .max_shared_bytes_per_block
        .saturating_sub(limits.static_shared_bytes);
    if config.dynamic_shared_bytes > dynamic_limit {
        return refuse(over(
            "dynamic shared memory bytes",
            config.dynamic_shared_bytes.into(),
            dynamic_limit.into(),
            if limits.static_shared_bytes == 0 {
                "the device"
            } else {
                "the device, less the kernel's static shared memory"
            },
        ));
    }
    if let Some(max) = limits.maxntid {
        let limit: u64 = max.iter().map(|&d| u64::from(d)).product();
        if threads > limit {
            return refuse(over(
                "threads per block",
                threads,
                limit,
                "the kernel's `.maxntid`",
            ));
        }
    }
    if let Some(required) = limits.reqntid
        && required != config.block
    {
        return refuse(ConfigProblem::RequiredBlock {
            required,
            block: config.block,
        });
    }
    Ok(())
}

fn over(what: &'static str, value: u64, limit: u64, by: &'static str) -> ConfigProblem {
    ConfigProblem::OverLimit {
        what,
        value,
        limit,
        by,
    }
}

/// A custom operand's element count (inlined: it runs for every pointer): it must be dense (the kernel indexes it from its start)
/// and lie inside its allocation.
#[inline(always)]
fn dense_len(
    entry: &str,
    abi: &AbiKind,
    operand: Operand,
    view: &ViewDesc,
) -> Result<usize, Error> {
    let plain = view.rank == 1 && view.strides[0] == 1;
    if !plain && !view.is_contiguous() {
        return Err(Error::NotContiguous {
            entry: entry.to_owned(),
            operand,
            abi: Box::new(abi.clone()),
        });
    }
    let len = if plain { view.shape[0] } else { view.len() };
    if view
        .offset
        .checked_add(len)
        .is_none_or(|end| end > view.alloc_len)
    {
        return Err(Error::ViewOutOfBounds {
            entry: entry.to_owned(),
            operand,
            lowest: view.offset as i128,
            highest: view.offset as i128 + len as i128 - 1,
            len: view.alloc_len,
        });
    }
    Ok(len)
}

#[cold]
fn config_error(entry: &str, problem: ConfigProblem) -> Error {
    Error::LaunchConfig {
        entry: entry.to_owned(),
        problem,
    }
}

/// Program `program` (a pointer's extent, the covered count or the declared shared size, `of`
/// in the error's words) has no value: the error names it, its text, and the problem with
/// param names.
#[cold]
fn invalid(
    entry: &str,
    custom: &CustomAbi,
    program: usize,
    of: String,
    problem: ExtentProblem,
) -> Error {
    let reason = match problem {
        ExtentProblem::Negative { param, value } => {
            format!("param `{}` is negative ({value})", custom.value_name(param))
        }
        ExtentProblem::NotInteger { param } => {
            format!("param `{}` is not an integer", custom.value_name(param))
        }
        other => other.to_string(),
    };
    Error::ExtentInvalid(Box::new(InvalidExtent {
        entry: entry.to_owned(),
        of,
        extent: custom.extent_text(program),
        problem,
        reason,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::LaunchLimits;

    /// A device that reports grids and blocks past every CUDA device's limits.
    fn generous() -> ConfigLimits {
        ConfigLimits {
            device: LaunchLimits {
                max_block: [1024, 1024, 1024],
                max_grid: [i32::MAX as u32; 3],
                ..LaunchLimits::TYPICAL
            },
            maxntid: None,
            reqntid: None,
            static_shared_bytes: 0,
        }
    }

    fn config(grid: [u32; 3], block: [u32; 3]) -> LaunchConfig {
        LaunchConfig {
            grid,
            block,
            dynamic_shared_bytes: 0,
        }
    }

    /// The proofs assume `grid.y, grid.z ≤ 65535` and `block.z ≤ 64`: a device reporting more
    /// is held to them, and the refusal says whose limit it is.
    #[test]
    fn a_device_reporting_more_is_held_to_the_proofs_limits() {
        let limits = generous();
        for (grid, block, what) in [
            ([1, 65_536, 1], [1, 1, 1], "grid.y"),
            ([1, 1, 65_536], [1, 1, 1], "grid.z"),
            ([1, 1, 1], [1, 1, 65], "block.z"),
        ] {
            match check_config("k", &config(grid, block), &limits, None) {
                Err(Error::LaunchConfig {
                    problem: ConfigProblem::OverLimit { what: w, by, .. },
                    ..
                }) => assert_eq!((w, by), (what, "every CUDA device")),
                other => panic!("{what}: expected a refusal, got {other:?}"),
            }
        }
        assert!(
            check_config(
                "k",
                &config([3, 65_535, 65_535], [16, 1, 64]),
                &limits,
                None
            )
            .is_ok()
        );
        // A device's own smaller limit is the device's.
        let mut small = generous();
        small.device.max_grid[1] = 100;
        match check_config("k", &config([1, 101, 1], [1, 1, 1]), &small, None) {
            Err(Error::LaunchConfig {
                problem: ConfigProblem::OverLimit { by, limit, .. },
                ..
            }) => assert_eq!((by, limit), ("the device", 100)),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}
