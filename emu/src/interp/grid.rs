//! The launch's blocks on worker threads.
//!
//! The grid is cut into chunks of consecutive blocks (in launch order, `x` fastest), a chunk
//! being as many whole blocks as make about [`CHUNK_THREADS`] threads, and never less than one
//! block. The cut depends only on the geometry, never on the number of workers. Workers take
//! chunks in increasing order from a shared counter; within a chunk, threads fill lockstep
//! groups of [`LANES`](super::LANES) in launch order, exactly as a one-worker run would (in a
//! block-scoped launch, the blocks of a chunk run one after the other, each with its own groups:
//! see `block`).
//!
//! Faults: a worker whose chunk faults records the fault with the chunk's index; no worker takes
//! a chunk after the lowest faulting one, and every chunk before it still runs to its end, so
//! the fault reported is the one a one-worker run reports, whatever the number of workers.
//! Exceeding the budget or a cancellation stops every worker at its next charge.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::block::BlockRunner;
use super::exec::Machine;
use super::fault::{ExecError, LaunchDims};
use super::lanes::LANES;
use super::memory::Memory;
use super::meter::{Halt, Meter, Stop};
use crate::decode::Program;

/// Threads per chunk the cut aims at.
pub(crate) const CHUNK_THREADS: u64 = 256;

/// How a launch ended on the workers.
#[derive(Default)]
struct Outcome {
    /// The fault of the lowest faulting chunk.
    fault: Option<(u64, ExecError)>,
    /// A failure that stops every worker (budget, cancellation).
    stop: Option<ExecError>,
}

/// Runs every block of `dims` on `workers` threads (at least one).
pub(crate) fn run_grid<M: Memory>(
    program: &Program,
    params: &[u8],
    dims: LaunchDims,
    memory: &M,
    meter: &Meter<'_>,
    workers: usize,
) -> Result<(), ExecError> {
    let [gx, gy, gz] = dims.grid.map(u64::from);
    let threads_per_block = dims.block.iter().map(|&d| u64::from(d)).product::<u64>();
    let blocks = gx * gy * gz;
    let per_chunk = (CHUNK_THREADS / threads_per_block.max(1)).max(1);
    let chunks = blocks.div_ceil(per_chunk);
    let workers = (workers.max(1) as u64).min(chunks).max(1) as usize;
    let next = AtomicU64::new(0);
    let fault_chunk = AtomicU64::new(u64::MAX);
    let outcome = Mutex::new(Outcome::default());
    let cut = Cut {
        dims,
        per_chunk,
        blocks,
        shared_len: program.shared_bytes(u64::from(dims.dynamic_shared_bytes)),
    };

    let work = || {
        let mut machine = Machine::new(program, &dims);
        let mut runner = BlockRunner::default();
        loop {
            if let Err(stop) = meter.check() {
                let error = match stop {
                    Stop::Cancelled => Some(ExecError::Cancelled {
                        entry: program.entry.clone(),
                    }),
                    Stop::Deadline(_) => match stop.halt(program, 0, ([0; 3], [0; 3])) {
                        Halt::Fail(error) => Some(error),
                        Halt::Stopped => None,
                    },
                    Stop::Budget(_) | Stop::Stopped => None,
                };
                if let Some(error) = error {
                    let mut o = outcome.lock().unwrap_or_else(|e| e.into_inner());
                    o.stop.get_or_insert(error);
                    meter.stop_all();
                }
                return;
            }
            let chunk = next.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks || chunk > fault_chunk.load(Ordering::Relaxed) {
                return;
            }
            let ran = if program.block_scoped {
                run_block_chunk(
                    &mut machine,
                    &mut runner,
                    &cut,
                    chunk,
                    params,
                    memory,
                    meter,
                )
            } else {
                run_chunk(&mut machine, &cut, chunk, params, memory, meter)
            };
            match ran {
                Ok(()) => {}
                Err(Halt::Stopped) => return,
                Err(Halt::Fail(error)) => {
                    let stops_all = matches!(
                        error,
                        ExecError::BudgetExceeded { .. }
                            | ExecError::DeadlineExceeded { .. }
                            | ExecError::Cancelled { .. }
                    );
                    let mut o = outcome.lock().unwrap_or_else(|e| e.into_inner());
                    if stops_all {
                        o.stop.get_or_insert(error);
                        meter.stop_all();
                        return;
                    }
                    fault_chunk.fetch_min(chunk, Ordering::Relaxed);
                    if o.fault.as_ref().is_none_or(|(c, _)| chunk < *c) {
                        o.fault = Some((chunk, error));
                    }
                    return;
                }
            }
        }
    };

    if workers == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 1..workers {
                scope.spawn(work);
            }
            work();
        });
    }

    let outcome = outcome.into_inner().unwrap_or_else(|e| e.into_inner());
    match (outcome.stop, outcome.fault) {
        (Some(error), _) | (None, Some((_, error))) => Err(error),
        (None, None) => Ok(()),
    }
}

/// How the grid is cut into chunks.
struct Cut {
    dims: LaunchDims,
    per_chunk: u64,
    blocks: u64,
    /// Bytes of shared memory per block.
    shared_len: u64,
}

/// The linear block `linear` of the grid as `%ctaid`.
fn block_of(cut: &Cut, linear: u64) -> [u32; 3] {
    let [gx, gy, _] = cut.dims.grid.map(u64::from);
    [
        (linear % gx) as u32,
        ((linear / gx) % gy) as u32,
        (linear / (gx * gy)) as u32,
    ]
}

/// Runs the blocks of chunk `chunk` of a block-scoped launch one after the other.
fn run_block_chunk<M: Memory>(
    machine: &mut Machine<'_>,
    runner: &mut BlockRunner,
    cut: &Cut,
    chunk: u64,
    params: &[u8],
    memory: &M,
    meter: &Meter<'_>,
) -> Result<(), Halt> {
    let first = chunk * cut.per_chunk;
    let last = (first + cut.per_chunk).min(cut.blocks);
    for linear in first..last {
        runner.run_block(
            machine,
            &cut.dims,
            cut.shared_len,
            block_of(cut, linear),
            params,
            memory,
            meter,
        )?;
    }
    Ok(())
}

/// Runs the blocks of chunk `chunk` in lockstep groups, in launch order.
fn run_chunk<M: Memory>(
    machine: &mut Machine<'_>,
    cut: &Cut,
    chunk: u64,
    params: &[u8],
    memory: &M,
    meter: &Meter<'_>,
) -> Result<(), Halt> {
    let first = chunk * cut.per_chunk;
    let last = (first + cut.per_chunk).min(cut.blocks);
    let mut fill = 0usize;
    for linear in first..last {
        let block = block_of(cut, linear);
        for tz in 0..cut.dims.block[2] {
            for ty in 0..cut.dims.block[1] {
                for tx in 0..cut.dims.block[0] {
                    machine.set_lane(fill, block, [tx, ty, tz]);
                    fill += 1;
                    if fill == LANES {
                        machine.run_group(u64::MAX, params, memory, meter)?;
                        fill = 0;
                    }
                }
            }
        }
    }
    if fill > 0 {
        machine.run_group((1u64 << fill) - 1, params, memory, meter)?;
    }
    Ok(())
}
