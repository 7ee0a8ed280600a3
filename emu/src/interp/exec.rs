//! The run loop and its scheduling: the threads of the grid in lockstep groups of [`LANES`],
//! each decoded instruction applied to every active lane of the group, on a lane-major
//! register file (`regs[slot][lane]`). What an instruction computes is the other units': `alu`
//! (registers from registers), `access` (loads and stores), `atomic`; this file decides which
//! lanes run which instruction next, and does what changes that — branches, calls and returns,
//! barriers, warp-level instructions, `trap` — and charges every step to the launch's meter.
//!
//! Divergence: every lane has its own pc. The running group is the set of lanes at the lowest
//! pc; the others are parked. When a branch splits the running lanes, or the running pc passes
//! a parked lane's pc, the lanes at the lowest pc run next; "lowest pc first" makes the lanes
//! of an `if` meet again after it, which warp-level instructions rely on. A lane that reaches a
//! block barrier waits (its group keeps its state in a [`Group`]) and the group runs its other
//! lanes; when none is left to run, the run ends and the block's scheduler (`block`) resumes
//! the group once the barrier has completed.

use super::access::{self, LaneFault, Spaces};
use super::alu;
use super::atomic;
use super::barrier::{BlockSync, whole_warps};
use super::fault::{Allocation, ExecError, Fault, LaunchDims};
use super::group::{Group, Wait, collective};
use super::lanes::{LANES, bits, true_lanes};
use super::memory::Memory;
use super::meter::{Halt, LaneId, Meter, SLICE, Stop, group_steps, thread_site};
use super::shared::{SharedMemory, shared_fault};
use super::spaces;
use super::trace;
use super::warp::warp_op;
use crate::decode::{BAR_ARRIVE, F_GUARD_NEG, F_NEG_C, Inst, NONE, Op, Program};

/// What the lanes of the running group do after an instruction.
enum Flow {
    /// All go to the next instruction.
    Next,
    /// The lanes of `taken` go to `target`, the others to `fall`.
    Split {
        taken: u64,
        target: usize,
        fall: usize,
    },
    /// Each lane's next pc is in `pcs`; the lanes of `exited` have finished.
    Scatter { exited: u64 },
    /// The lanes of `lanes` wait at a barrier; the others go to the next instruction.
    Wait { lanes: u64 },
}

/// The group to run next among `lanes` (non-empty), by their pcs: the lanes at the lowest pc.
/// Returns that pc, those lanes, the other lanes and the lowest pc among them.
#[inline]
fn schedule(pcs: &[usize; LANES], lanes: u64) -> (usize, u64, u64, usize) {
    let min = bits(lanes).map(|l| pcs[l]).min().unwrap_or(usize::MAX);
    let mut act = 0u64;
    let mut rest_min = usize::MAX;
    for lane in bits(lanes) {
        if pcs[lane] == min {
            act |= 1 << lane;
        } else {
            rest_min = rest_min.min(pcs[lane]);
        }
    }
    (min, act, lanes & !act, rest_min)
}

/// How a run of a group begins.
pub(crate) enum Start {
    /// The lanes of the mask begin the program.
    Fresh(u64),
    /// The runnable lanes go on where they are.
    Resume,
}

/// How a run of a group ended.
pub(crate) enum End {
    /// Every lane has exited.
    Done,
    /// Every lane left waits at a barrier (or has exited).
    Waiting,
}

/// What a block-scoped launch gives a group besides its lanes.
pub(crate) struct BlockScope<'b> {
    pub(crate) sync: &'b mut BlockSync,
    /// The block's shared memory.
    pub(crate) shared: &'b SharedMemory,
}

/// The shared memory of a launch that is not block-scoped: none, so that an access faults.
static NO_SHARED: SharedMemory = SharedMemory::EMPTY;

/// Per-worker state reused by every group: no allocation inside the loop.
pub(crate) struct Machine<'p> {
    pub(crate) program: &'p Program,
    hints: Vec<u32>,
    /// Steps left before the next charge to the launch's [`Meter`] (never zero).
    fuel: u64,
    /// What starting a group costs, in steps.
    group_steps: u64,
    /// The group of a launch that is not block-scoped.
    group: Group,
}

/// Spends `steps` of `fuel`, charging the meter a slice for every slice used up, as the run
/// loop does one step at a time.
#[inline]
fn spend(fuel: &mut u64, steps: u64, meter: &Meter<'_>) -> Result<(), Stop> {
    if steps < *fuel {
        *fuel -= steps;
        return Ok(());
    }
    let rest = steps - *fuel;
    *fuel = SLICE - rest % SLICE;
    meter.charge((1 + rest / SLICE).saturating_mul(SLICE))
}

impl<'p> Machine<'p> {
    pub(crate) fn new(program: &'p Program, dims: &LaunchDims) -> Self {
        Self {
            program,
            hints: vec![0; program.insts.len()],
            fuel: SLICE,
            group_steps: group_steps(program),
            group: Group::new(program, dims),
        }
    }

    /// Charges `steps` of work that is not an instruction (starting a block, a scheduler's
    /// look at a group) to `meter`.
    #[inline]
    pub(crate) fn charge(&mut self, steps: u64, meter: &Meter<'_>) -> Result<(), Stop> {
        spend(&mut self.fuel, steps, meter)
    }

    /// Makes `lane` of the next group the thread `thread` of block `block`.
    #[inline]
    pub(crate) fn set_lane(&mut self, lane: usize, block: [u32; 3], thread: [u32; 3]) {
        self.group.set_lane(lane, block, thread);
    }

    /// Runs the lanes of `live` (set with [`Self::set_lane`]) in lockstep until every one has
    /// returned, or until the first fault, charging every step to `meter`.
    pub(crate) fn run_group<M: Memory>(
        &mut self,
        live: u64,
        params: &[u8],
        memory: &M,
        meter: &Meter<'_>,
    ) -> Result<(), Halt> {
        self.run(None, Start::Fresh(live), params, memory, meter, None)
            .map(|_| ())
    }

    /// Runs `group` (the machine's own when `None`) from `start` until every lane has exited
    /// or waits at a barrier, or until the first fault, charging every step to `meter`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run<M: Memory>(
        &mut self,
        group: Option<&mut Group>,
        start: Start,
        params: &[u8],
        memory: &M,
        meter: &Meter<'_>,
        mut block: Option<BlockScope<'_>>,
    ) -> Result<End, Halt> {
        let program = self.program;
        let group = match group {
            Some(g) => g,
            None => &mut self.group,
        };
        let Group {
            regs,
            stack,
            depth,
            pcs,
            ids,
            called,
            live,
            blocked,
            waits,
            warp0,
            local,
        } = group;
        let ids = &*ids;
        let warp0 = *warp0;
        let insts = &program.insts[..];
        let lanes = &program.lanes[..];
        let hints = &mut self.hints[..];
        // The hint of an instruction past the end (never used: no instruction is there).
        let mut spare = 0u32;
        let fuel = &mut self.fuel;
        let shared: &SharedMemory = block.as_ref().map_or(&NO_SHARED, |b| b.shared);

        // The running group: its pc and lanes; the parked lanes and their lowest pc.
        let (mut pc, mut act, mut parked, mut parked_min);
        match start {
            Start::Fresh(mask) => {
                // Starting a group is work too: charged before it is done.
                if let Err(stop) = spend(fuel, self.group_steps, meter) {
                    let lane = mask.trailing_zeros() as usize % LANES;
                    return Err(stop.halt(program, program.entry_pc as usize, ids[lane]));
                }
                // A register a thread reads before writing it reads zero: only the registers
                // that some path may read before writing are cleared, once per group.
                for &slot in &program.zero_slots {
                    regs[slot] = [0; LANES];
                }
                *depth = [0; LANES];
                local.reset();
                *called = false;
                *live = mask;
                *blocked = 0;
                pc = program.entry_pc as usize;
                act = mask;
                parked = 0u64;
                parked_min = usize::MAX;
            }
            Start::Resume => {
                let runnable = *live & !*blocked;
                if runnable == 0 {
                    return Ok(if *live == 0 { End::Done } else { End::Waiting });
                }
                (pc, act, parked, parked_min) = schedule(pcs, runnable);
            }
        }
        if act == 0 {
            return Ok(End::Done);
        }

        macro_rules! fault {
            ($f:expr) => {{
                let f: LaneFault = $f;
                return Err(Halt::Fail(lane_fault(
                    program,
                    spaces::nearest(memory, local, shared, memory_space(insts.get(pc)), f.addr),
                    pc,
                    ids[f.lane % LANES],
                    f,
                )));
            }};
        }

        loop {
            *fuel -= 1;
            if *fuel == 0 {
                *fuel = SLICE;
                if let Err(stop) = meter.charge(SLICE) {
                    let lane = act.trailing_zeros() as usize % LANES;
                    return Err(stop.halt(program, pc, ids[lane]));
                }
            }
            let flow = match insts.get(pc) {
                None => Flow::Scatter { exited: act },
                Some(inst) => {
                    let eff = if inst.guard == NONE {
                        act
                    } else {
                        let t = true_lanes(&regs[inst.guard]);
                        act & if inst.f & F_GUARD_NEG != 0 { !t } else { t }
                    };
                    if eff == 0 {
                        Flow::Next
                    } else {
                        match inst.op {
                            Op::SetpI | Op::SetpF32 | Op::SetpF64 => {
                                match alu::setp(regs, eff, act, inst, pc) {
                                    Some((taken, target, fall)) => Flow::Split {
                                        taken,
                                        target,
                                        fall,
                                    },
                                    None => Flow::Next,
                                }
                            }
                            Op::Bra => Flow::Split {
                                taken: eff,
                                target: inst.imm as usize,
                                fall: pc + 1,
                            },
                            Op::Call => {
                                *called = true;
                                for lane in bits(act) {
                                    pcs[lane] = if (eff >> lane) & 1 != 0 {
                                        let level = depth[lane];
                                        if stack.len() <= level {
                                            stack.resize(level + 1, [0; LANES]);
                                        }
                                        if let Some(row) = stack.get_mut(level) {
                                            row[lane] = (pc + 1) as u64;
                                        }
                                        depth[lane] = level + 1;
                                        inst.imm as usize
                                    } else {
                                        pc + 1
                                    };
                                }
                                Flow::Scatter { exited: 0 }
                            }
                            // No lane has called a function: every running lane finishes.
                            Op::Ret if !*called && eff == act => Flow::Scatter { exited: act },
                            Op::Ret => {
                                let mut exited = 0u64;
                                for lane in bits(act) {
                                    if (eff >> lane) & 1 == 0 {
                                        pcs[lane] = pc + 1;
                                    } else if depth[lane] == 0 || inst.imm == 1 {
                                        exited |= 1 << lane;
                                    } else {
                                        depth[lane] -= 1;
                                        pcs[lane] = stack
                                            .get(depth[lane])
                                            .map_or(usize::MAX, |row| row[lane] as usize);
                                    }
                                }
                                Flow::Scatter { exited }
                            }
                            Op::LdGlobal | Op::LdGlobalV | Op::StGlobal | Op::StGlobalV => {
                                let to = &mut Spaces {
                                    memory,
                                    local: &mut *local,
                                    shared,
                                };
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                let traced = meter
                                    .trace()
                                    .map(|t| (t, trace::addresses(regs, eff, inst)));
                                match access::access(regs, eff, inst, lanes, hint, to) {
                                    Ok(()) => {
                                        if let Some((t, addrs)) = traced {
                                            trace::report(t, program, pc, inst, &addrs, ids);
                                        }
                                        Flow::Next
                                    }
                                    Err(f) => fault!(f),
                                }
                            }
                            Op::LdKParam => {
                                if access::load_param(regs, eff, inst, params).is_none() {
                                    return Err(Halt::Fail(ExecError::ShortPacket {
                                        entry: program.entry.clone(),
                                        needed: program.param_bytes,
                                        found: params.len(),
                                    }));
                                }
                                Flow::Next
                            }
                            Op::Bits => {
                                alu::bit_manipulation(regs, eff, inst);
                                Flow::Next
                            }
                            Op::Special => {
                                alu::special_register(regs, eff, inst, ids);
                                Flow::Next
                            }
                            Op::Trap => {
                                let lane = eff.trailing_zeros() as usize % LANES;
                                return Err(Halt::Fail(ExecError::Trap {
                                    at: Box::new(thread_site(program, pc, ids[lane])),
                                }));
                            }
                            Op::Nop => Flow::Next,
                            Op::ToShared => {
                                if let Err((lane, s, len, kind)) =
                                    access::to_shared(regs, eff, inst, shared)
                                {
                                    return Err(Halt::Fail(shared_fault(
                                        program, pc, ids[lane], s, inst, len, kind,
                                    )));
                                }
                                Flow::Next
                            }
                            Op::Barrier => {
                                let first = eff.trailing_zeros() as usize % LANES;
                                let Some(scope) = block.as_mut() else {
                                    return Err(collective(
                                        program,
                                        pc,
                                        ids[first],
                                        "a barrier in a launch that is not block-scoped",
                                    ));
                                };
                                if inst.w != 0
                                    && let Err(lane) = whole_warps(eff, *live)
                                {
                                    return Err(collective(
                                        program,
                                        pc,
                                        ids[lane % LANES],
                                        "an aligned barrier (`bar`, `.aligned`) reached by only part of a warp",
                                    ));
                                }
                                let mut waiting = 0u64;
                                for lane in bits(eff) {
                                    let id = regs[inst.a][lane];
                                    let count = (inst.b != NONE).then(|| regs[inst.b][lane]);
                                    let pred = (regs[inst.c][lane] != 0) != (inst.f & F_NEG_C != 0);
                                    let arrived = scope.sync.arrive(
                                        warp0 + lane / 32,
                                        (lane % 32) as u32,
                                        id,
                                        count,
                                        inst.k,
                                        pred,
                                    );
                                    match arrived {
                                        Ok(_) if inst.k == BAR_ARRIVE => {}
                                        Ok(generation) => {
                                            waits[lane] = Wait {
                                                id: id as u8,
                                                generation,
                                                pc,
                                            };
                                            waiting |= 1 << lane;
                                        }
                                        Err(reason) => {
                                            return Err(collective(program, pc, ids[lane], reason));
                                        }
                                    }
                                }
                                if waiting == 0 {
                                    Flow::Next
                                } else {
                                    Flow::Wait { lanes: waiting }
                                }
                            }
                            Op::Warp => {
                                if let Err((lane, reason)) = warp_op(inst, regs, eff, *live) {
                                    return Err(collective(program, pc, ids[lane % LANES], reason));
                                }
                                Flow::Next
                            }
                            Op::Atom => {
                                let traced = meter
                                    .trace()
                                    .map(|t| (t, trace::addresses(regs, eff, inst)));
                                match atomic::atom(
                                    regs,
                                    eff,
                                    inst,
                                    hints.get_mut(pc).unwrap_or(&mut spare),
                                    memory,
                                    shared,
                                ) {
                                    Ok(()) => {
                                        if let Some((t, addrs)) = traced {
                                            trace::report(t, program, pc, inst, &addrs, ids);
                                        }
                                        Flow::Next
                                    }
                                    Err(f) => fault!(f),
                                }
                            }
                            Op::Pack => {
                                alu::pack(regs, eff, inst, lanes);
                                Flow::Next
                            }
                            Op::Unpack => {
                                alu::unpack(regs, eff, inst, lanes);
                                Flow::Next
                            }
                            _ => {
                                alu::alu(regs, eff, inst);
                                Flow::Next
                            }
                        }
                    }
                }
            };
            match flow {
                Flow::Next => pc += 1,
                Flow::Split {
                    taken,
                    target,
                    fall,
                } => {
                    let taken = taken & act;
                    if taken == act {
                        pc = target;
                    } else if taken == 0 {
                        pc = fall;
                    } else {
                        for lane in bits(taken) {
                            pcs[lane] = target;
                        }
                        for lane in bits(act & !taken) {
                            pcs[lane] = fall;
                        }
                        (pc, act, parked, parked_min) = schedule(pcs, act | parked);
                        continue;
                    }
                }
                Flow::Scatter { exited } => {
                    if exited != 0 {
                        *live &= !exited;
                        if let Some(scope) = block.as_mut() {
                            for half in 0..LANES / 32 {
                                let lanes = (exited >> (32 * half)) as u32;
                                if lanes != 0 {
                                    scope.sync.exit(warp0 + half, lanes);
                                }
                            }
                        }
                    }
                    let lanes_left = (act & !exited) | parked;
                    if lanes_left == 0 {
                        return Ok(if *live == 0 { End::Done } else { End::Waiting });
                    }
                    (pc, act, parked, parked_min) = schedule(pcs, lanes_left);
                    continue;
                }
                Flow::Wait { lanes: waiting } => {
                    for lane in bits(act) {
                        pcs[lane] = pc + 1;
                    }
                    *blocked |= waiting;
                    let lanes_left = (act & !waiting) | parked;
                    if lanes_left == 0 {
                        return Ok(End::Waiting);
                    }
                    (pc, act, parked, parked_min) = schedule(pcs, lanes_left);
                    continue;
                }
            }
            if parked != 0 && pc >= parked_min {
                for lane in bits(act) {
                    pcs[lane] = pc;
                }
                (pc, act, parked, parked_min) = schedule(pcs, act | parked);
            }
        }
    }
}

/// The state space code of a memory instruction (generic for anything else).
fn memory_space(inst: Option<&Inst>) -> u8 {
    match inst {
        Some(inst)
            if matches!(
                inst.op,
                Op::LdGlobal | Op::LdGlobalV | Op::StGlobal | Op::StGlobalV
            ) =>
        {
            inst.k
        }
        _ => 0,
    }
}

#[cold]
fn lane_fault(
    program: &Program,
    nearest: Option<Allocation>,
    pc: usize,
    (block, thread): LaneId,
    fault: LaneFault,
) -> ExecError {
    let LaneFault {
        addr: address,
        size,
        access,
        kind,
        ..
    } = fault;
    let site = program.sites.get(pc);
    ExecError::Fault(Box::new(Fault {
        entry: program.entry.clone(),
        block,
        thread,
        instruction: site.map(|s| s.text.clone()).unwrap_or_default(),
        line: site.map_or(0, |s| s.line),
        address,
        size: size as u32,
        access,
        kind,
        nearest,
    }))
}
