//! Block-scoped launches: the threads of one block run together, so that they can meet at
//! barriers and share memory.
//!
//! The block's threads, in linear order (`x` fastest), fill lockstep groups of
//! [`LANES`] from the block's first thread, so a group never spans two blocks and its lanes
//! 0–31 and 32–63 are two whole warps. Every group runs in turn, in order, until all its lanes
//! have exited or wait at a barrier; then each group whose waiting lanes' barrier has completed
//! goes on, again in order, and so on until every thread has exited. The order depends only on
//! the program and the geometry, so a block computes the same thing on any worker.
//!
//! When no group can go on while some threads still wait, the block would hang on the GPU: the
//! launch ends with [`ExecError::BarrierDeadlock`] naming a waiting thread. A thread that spins
//! on memory for another thread instead of waiting at a barrier may spin until the budget ends
//! the launch, as its group runs until it waits or exits.

use super::barrier::BlockSync;
use super::exec::{BlockScope, Machine, Start};
use super::fault::{ExecError, LaunchDims};
use super::group::Group;
use super::lanes::LANES;
use super::memory::Memory;
use super::meter::{Halt, Meter, block_steps, thread_site};
use super::shared::SharedMemory;

/// A worker's state for block-scoped launches, reused block after block.
#[derive(Default)]
pub(crate) struct BlockRunner {
    groups: Vec<Group>,
    shared: SharedMemory,
    sync: BlockSync,
}

impl BlockRunner {
    /// Runs block `block` of a launch of `dims` whose blocks have `shared_len` bytes of shared
    /// memory.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_block<M: Memory>(
        &mut self,
        machine: &mut Machine<'_>,
        dims: &LaunchDims,
        shared_len: u64,
        block: [u32; 3],
        params: &[u8],
        memory: &M,
        meter: &Meter<'_>,
    ) -> Result<(), Halt> {
        let program = machine.program;
        let [bx, by, bz] = dims.block;
        let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
        // Its shared memory and barriers are reset below: work to charge before it is done.
        machine
            .charge(block_steps(shared_len), meter)
            .map_err(|stop| stop.halt(program, program.entry_pc as usize, (block, [0; 3])))?;
        let count = threads.div_ceil(LANES as u64) as usize;
        while self.groups.len() < count {
            self.groups.push(Group::new(program, dims));
        }
        let Self {
            groups,
            shared,
            sync,
        } = self;
        shared.reset(usize::try_from(shared_len).unwrap_or(0));
        sync.reset(u32::try_from(threads).unwrap_or(u32::MAX));
        let groups = groups.get_mut(..count).unwrap_or_default();

        for (index, group) in groups.iter_mut().enumerate() {
            let first = (index * LANES) as u64;
            let lanes = (threads - first).min(LANES as u64);
            for lane in 0..lanes {
                let linear = first + lane;
                let tx = linear % u64::from(bx);
                let ty = (linear / u64::from(bx)) % u64::from(by);
                let tz = linear / (u64::from(bx) * u64::from(by));
                group.set_lane(lane as usize, block, [tx as u32, ty as u32, tz as u32]);
            }
            group.set_first_warp(index * 2);
            let live = if lanes >= 64 {
                u64::MAX
            } else {
                (1u64 << lanes) - 1
            };
            let scope = BlockScope {
                sync: &mut *sync,
                shared: &*shared,
            };
            machine.run(
                Some(group),
                Start::Fresh(live),
                params,
                memory,
                meter,
                Some(scope),
            )?;
        }

        loop {
            let mut running = false;
            let mut progressed = false;
            for group in groups.iter_mut() {
                if group.live() == 0 {
                    continue;
                }
                // Looking at a group is work even when none of its lanes can go on.
                if let Err(stop) = machine.charge(1, meter) {
                    let (pc, lane) = group.waiting().unwrap_or((0, (block, [0; 3])));
                    return Err(stop.halt(program, pc, lane));
                }
                running = true;
                group.release(program, sync)?;
                if group.runnable() == 0 {
                    continue;
                }
                progressed = true;
                let scope = BlockScope {
                    sync: &mut *sync,
                    shared: &*shared,
                };
                machine.run(
                    Some(group),
                    Start::Resume,
                    params,
                    memory,
                    meter,
                    Some(scope),
                )?;
            }
            if !running {
                return Ok(());
            }
            if !progressed {
                let waiting = groups.iter().find_map(Group::waiting);
                let Some((pc, lane)) = waiting else {
                    return Ok(());
                };
                return Err(Halt::Fail(ExecError::BarrierDeadlock {
                    at: Box::new(thread_site(program, pc, lane)),
                }));
            }
        }
    }
}
