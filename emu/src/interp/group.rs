//! One lockstep group of lanes: its register file, control state and local frames, which a
//! block-scoped launch keeps while the group waits at a barrier, and the release of lanes whose barrier has
//! completed.

use super::barrier::BlockSync;
use super::fault::{ExecError, LaunchDims};
use super::lanes::{LANES, Registers, Row, bits};
use super::local::LocalFrames;
use super::meter::{Halt, LaneId, thread_site};
use crate::decode::{BAR_RED_AND, BAR_RED_OR, BAR_RED_POPC, Op, Program};

/// Where a thread waits at a barrier: the barrier, the use it arrived at, and the barrier
/// instruction.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wait {
    pub(super) id: u8,
    pub(super) generation: u64,
    pub(super) pc: usize,
}

/// One lockstep group of lanes: its registers and control state, kept while it waits at a
/// barrier.
pub(crate) struct Group {
    pub(super) regs: Registers,
    /// Return addresses: `stack[depth][lane]`.
    pub(super) stack: Vec<Row>,
    pub(super) depth: [usize; LANES],
    /// The pc of each lane that waits while another group of lanes runs.
    pub(super) pcs: [usize; LANES],
    /// Block and thread of each lane of the current group.
    pub(super) ids: [LaneId; LANES],
    /// Whether a lane has called a function since the group started.
    pub(super) called: bool,
    /// Lanes that have not exited.
    pub(super) live: u64,
    /// Lanes waiting at a barrier, and where.
    pub(super) blocked: u64,
    pub(super) waits: [Wait; LANES],
    /// The block's warp number of lanes 0–31 (block-scoped launches).
    pub(super) warp0: usize,
    /// The lanes' `.local` frames, kept with the rest of their state while they wait.
    pub(super) local: LocalFrames,
}

impl Group {
    pub(crate) fn new(program: &Program, dims: &LaunchDims) -> Self {
        let mut regs = Registers::new(program.num_regs);
        for &(slot, value) in &program.consts {
            regs[slot] = [value; LANES];
        }
        for axis in 0..3 {
            regs[3 + axis as u32] = [u64::from(dims.block[axis]); LANES];
            regs[9 + axis as u32] = [u64::from(dims.grid[axis]); LANES];
        }
        Self {
            regs,
            stack: vec![[0; LANES]; program.max_depth + 1],
            depth: [0; LANES],
            pcs: [0; LANES],
            ids: [([0; 3], [0; 3]); LANES],
            called: false,
            live: 0,
            blocked: 0,
            waits: [Wait::default(); LANES],
            warp0: 0,
            local: LocalFrames::new(program.local_bytes, LANES),
        }
    }

    /// Makes `lane` of the next run the thread `thread` of block `block`.
    #[inline]
    pub(crate) fn set_lane(&mut self, lane: usize, block: [u32; 3], thread: [u32; 3]) {
        let lane = lane % LANES;
        for axis in 0..3 {
            self.regs[axis as u32][lane] = u64::from(thread[axis]);
            self.regs[6 + axis as u32][lane] = u64::from(block[axis]);
        }
        self.ids[lane] = (block, thread);
    }

    /// Sets the block's warp number of lanes 0–31.
    pub(crate) fn set_first_warp(&mut self, warp: usize) {
        self.warp0 = warp;
    }

    /// Lanes that have not exited.
    pub(crate) fn live(&self) -> u64 {
        self.live
    }

    /// Lanes that may run: not exited, not waiting at a barrier.
    pub(crate) fn runnable(&self) -> u64 {
        self.live & !self.blocked
    }

    /// Lets the lanes whose barrier has completed go on, with the result of a `bar.red`.
    pub(crate) fn release(&mut self, program: &Program, sync: &BlockSync) -> Result<(), Halt> {
        for lane in bits(self.blocked) {
            let wait = self.waits[lane];
            if !sync.passed(wait.id, wait.generation) {
                continue;
            }
            if let Some(inst) = program.insts.get(wait.pc)
                && inst.op == Op::Barrier
                && matches!(inst.k, BAR_RED_POPC | BAR_RED_AND | BAR_RED_OR)
            {
                match sync.reduction(wait.id, wait.generation, inst.k) {
                    Ok(v) => self.regs[inst.d][lane] = v,
                    Err(reason) => {
                        return Err(collective(program, wait.pc, self.ids[lane], reason));
                    }
                }
            }
            self.blocked &= !(1u64 << lane);
        }
        Ok(())
    }

    /// A lane waiting at a barrier, and that barrier instruction, if any lane waits.
    pub(crate) fn waiting(&self) -> Option<(usize, LaneId)> {
        let lane = bits(self.blocked).next()?;
        Some((self.waits[lane].pc, self.ids[lane]))
    }
}

/// The error of a barrier or warp-level instruction that cannot run exactly.
#[cold]
pub(crate) fn collective(program: &Program, pc: usize, lane: LaneId, reason: &'static str) -> Halt {
    Halt::Fail(ExecError::Collective {
        at: Box::new(thread_site(program, pc, lane)),
        reason,
    })
}
