//! The CPU interpreter behind jitseam's emulator device.
//!
//! [`run`] executes a pre-decoded [`Program`] over a grid on the exact argument packet a GPU
//! would receive. Every global access is checked against the [`Memory`]: an access outside every
//! allocation, or one not aligned to its full width, stops the launch at that instruction with a
//! [`Fault`] naming the entry, the block and thread, the instruction and its line, the address
//! and the nearest allocation.
//!
//! Execution is SIMT-style. The threads of the launch, in launch order (blocks in order, `x`
//! fastest, then threads in order within a block, `x` fastest), are cut into groups of
//! [`LANES`] consecutive threads; a group may end one block and start the next. Groups run one
//! after another. Within a group, each decoded instruction is applied to every active lane, in
//! lane order, before the next instruction runs, so its dispatch is paid once per group rather
//! than once per thread. Each lane has its own pc: when a branch splits the lanes, the lanes at
//! the lowest pc run first, and lanes meet again when the running pc reaches a waiting lane's.
//! The interpreter refuses barriers and shared memory at decode time, so threads never wait for
//! one another and every thread runs exactly its own instruction sequence under any schedule:
//! for a kernel whose threads do not read what other threads of the launch write, the result is
//! the same as running the threads one at a time.
//!
//! A fault stops the launch in that order, precisely:
//! - every thread of an earlier group has run to completion;
//! - in the faulting group, the lanes before the faulting lane (in lane order) have performed
//!   the faulting instruction, and neither the faulting lane nor any lane after it has; every
//!   instruction the group ran before that one stays done for all its lanes (so a lane after
//!   the faulting one may already have stored at an earlier instruction), and nothing later
//!   runs;
//! - threads of later groups have not started.
//!
//! So nothing is written after the fault, and the reported thread is the first lane, in lane
//! order, to fault at the first faulting instruction of the group's schedule.
//!
//! Numerics: integer and IEEE operations are exact (correctly rounded in the requested mode,
//! `fma` fused, f16/bf16 rounded once to nearest-even). The `.approx` instructions (`ex2`, `lg2`,
//! `sin`, `cos`, `tanh`, `rsqrt`, `div.approx`/`div.full`, `rcp.approx`, `sqrt.approx`) are
//! computed with Rust's `f32` functions, which are within 1 ulp of exact; the GPU guarantees
//! only its documented bound (2 ulp for `ex2.approx.f32`), so the two may differ by a few ulp.

mod exec;
mod fault;
mod float;
mod memory;

pub use fault::{Access, ExecError, Fault, FaultKind, LaunchDims};
pub use memory::{Allocation, Memory, Regions};

use crate::decode::Program;

pub use exec::LANES;

/// Runs `program` over the grid with argument packet `params` (laid out as
/// [`Program::param_layout`] says) on `memory`, in lockstep groups of [`LANES`] threads taken in
/// launch order; the first fault stops the launch (see the module docs for exactly where).
pub fn run<M: Memory>(
    program: &Program,
    params: &[u8],
    dims: LaunchDims,
    memory: &mut M,
) -> Result<(), ExecError> {
    if dims.grid.contains(&0) || dims.block.contains(&0) {
        return Err(ExecError::EmptyGeometry {
            entry: program.entry.clone(),
            dims,
        });
    }
    if params.len() < program.param_bytes {
        return Err(ExecError::ShortPacket {
            entry: program.entry.clone(),
            needed: program.param_bytes,
            found: params.len(),
        });
    }
    let mut machine = exec::Machine::new(program, &dims);
    // Threads fill the lanes of a group in launch order (blocks in order, threads in order
    // within a block); a group may hold the end of one block and the start of the next.
    let mut fill = 0usize;
    for bz in 0..dims.grid[2] {
        for by in 0..dims.grid[1] {
            for bx in 0..dims.grid[0] {
                let block = [bx, by, bz];
                for tz in 0..dims.block[2] {
                    for ty in 0..dims.block[1] {
                        for tx in 0..dims.block[0] {
                            machine.set_lane(fill, block, [tx, ty, tz]);
                            fill += 1;
                            if fill == LANES {
                                machine.run_group(u64::MAX, params, memory)?;
                                fill = 0;
                            }
                        }
                    }
                }
            }
        }
    }
    if fill > 0 {
        machine.run_group((1u64 << fill) - 1, params, memory)?;
    }
    Ok(())
}
