//! The run loop: the threads of the grid in lockstep groups of [`LANES`], each decoded
//! instruction applied to every active lane of the group over a lane loop, on a lane-major
//! register file (`regs[slot][lane]`).
//!
//! Divergence: every lane has its own pc. The running group is the set of lanes at the lowest
//! pc; the others are parked. When a branch splits the running lanes, or the running pc passes
//! a parked lane's pc, the lanes at the lowest pc run next; "lowest pc first" makes the lanes
//! of an `if` meet again after it, which warp-level instructions rely on. A lane that reaches a
//! block barrier waits (its group keeps its state in a [`Group`]) and the group runs its other
//! lanes; when none is left to run, the run ends and the block's scheduler (`block`) resumes
//! the group once the barrier has completed.

use super::barrier::{BlockSync, whole_warps};
use super::bits::bits_op;
use super::fault::{Access, Allocation, ExecError, Fault, FaultKind, LaunchDims};
use super::float::{
    arith_f32, cmp_float, f64_to_f32, f64_to_half, from_half, ftz, int_to_float, max32, max64,
    min32, min64, round_integral, sat32, sat64, to_half,
};
use super::group::{Group, Wait, collective};
use super::half::{cvt_half, packed, set};
use super::lanes::{LANES, Registers, Row, bits};
use super::memory::Memory;
use super::meter::{Halt, LaneId, Meter, SLICE, thread_site};
use super::shared::{SharedMemory, shared_fault, to_generic};
use super::spaces;
use super::warp::warp_op;
use crate::decode::{
    ATOM_ADD, ATOM_ADD_F32, ATOM_ADD_F64, ATOM_AND, ATOM_CAS, ATOM_DEC, ATOM_EXCH, ATOM_INC,
    ATOM_MAX, ATOM_MIN, ATOM_OR, BAR_ARRIVE, CMP_EQ, CMP_GT, CMP_LE, CMP_LT, CMP_NE, F_BRANCH,
    F_BRANCH_NEG, F_FTZ, F_GUARD_NEG, F_NEG_C, F_SAT, F_SIGNED, FMT_F32, FMT_F64, Inst, NONE, Op,
    Program, SPECIAL_CLOCK, SPECIAL_CLOCK64, SPECIAL_GLOBALTIMER, SPECIAL_LANEID,
    SPECIAL_LANEMASK_EQ, SPECIAL_LANEMASK_GE, SPECIAL_LANEMASK_GT, SPECIAL_LANEMASK_LE,
    SPECIAL_LANEMASK_LT, SPECIAL_NWARPID, SPECIAL_ONE, SPECIAL_WARPID,
};

#[inline(always)]
fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline(always)]
fn sext(v: u64, bits: u8) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - u32::from(bits);
        ((v << shift) as i64) >> shift
    }
}

trait Unsigned {
    fn unsigned(self) -> u64;
}

impl Unsigned for i64 {
    #[inline(always)]
    fn unsigned(self) -> u64 {
        self as u64
    }
}

#[inline(always)]
fn f32v(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
fn f32b(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[inline(always)]
fn f64v(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Reads `len` little-endian bytes (1..=8) as an integer.
#[inline(always)]
fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => bytes
            .try_into()
            .map_or(0, |b: [u8; 4]| u64::from(u32::from_le_bytes(b))),
        8 => bytes.try_into().map_or(0, u64::from_le_bytes),
        2 => bytes
            .try_into()
            .map_or(0, |b: [u8; 2]| u64::from(u16::from_le_bytes(b))),
        _ => bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
    }
}

/// A `setp`'s second predicate source (`c`, possibly negated) folded into the comparison.
#[inline(always)]
fn combine(t: bool, inst: &Inst, c: u64) -> bool {
    if inst.c == NONE {
        return t;
    }
    let c = (c != 0) != (inst.f & F_NEG_C != 0);
    match inst.imm {
        1 => t && c,
        2 => t || c,
        _ => t != c,
    }
}

/// Value of a float register in format `fmt`, as f64 (exact).
fn float_in(bits: u64, fmt: u8, flush: bool) -> f64 {
    match fmt {
        FMT_F64 => f64v(bits),
        FMT_F32 => {
            let x = f32v(bits);
            f64::from(if flush { ftz(x) } else { x })
        }
        _ => f64::from(from_half(bits as u16, fmt)),
    }
}

/// Lane indices of the set bits of `mask`, lowest first, by a scan of every lane: cheaper than
/// [`bits`] when most lanes are set, and the indices are visibly below [`LANES`].
#[inline(always)]
fn lanes_in(mask: u64) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&lane| (mask >> lane) & 1 != 0)
}

/// Lanes whose predicate in `row` is true.
#[inline(always)]
fn true_lanes(row: &Row) -> u64 {
    row.iter()
        .enumerate()
        .fold(0u64, |m, (lane, &v)| m | (u64::from(v != 0) << lane))
}

/// Writes `out` into `row` for the lanes of `mask`.
#[inline(always)]
fn store_row(row: &mut Row, out: &Row, mask: u64) {
    if mask == u64::MAX {
        *row = *out;
    } else {
        for (lane, (r, &o)) in row.iter_mut().zip(out).enumerate() {
            if (mask >> lane) & 1 != 0 {
                *r = o;
            }
        }
    }
}

/// Whether every lane of `row` holds the same value.
#[inline(always)]
fn uniform(row: &Row) -> bool {
    let first = row[0];
    row.iter().fold(true, |same, &v| same & (v == first))
}

/// The first set lane of `mask` and the number of lanes from it to the last set one: partial
/// masks touch only that span, so a lone lane costs one iteration, not [`LANES`].
#[inline(always)]
fn span(mask: u64) -> (usize, usize) {
    let lo = mask.trailing_zeros() as usize;
    let hi = LANES - mask.leading_zeros() as usize;
    (lo, hi.saturating_sub(lo))
}

/// `*o = v` where lane `lane` is in `mask`: a select, so that the loop stays branch-free.
#[inline(always)]
fn put(o: &mut u64, v: u64, mask: u64, lane: usize) {
    *o = if (mask >> lane) & 1 != 0 { v } else { *o };
}

/// `d = f(a)` on the lanes of `mask`.
#[inline(always)]
fn map1(regs: &mut Registers, mask: u64, d: u32, a: u32, f: impl Fn(u64) -> u64) {
    let (d, a) = (regs.ix(d), regs.ix(a));
    if let Ok([rd, ra]) = regs.rows.get_disjoint_mut([d, a]) {
        if mask == u64::MAX {
            for (o, &x) in rd.iter_mut().zip(ra.iter()) {
                *o = f(x);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &x)) in rd.iter_mut().zip(ra.iter()).enumerate().skip(lo).take(n) {
                put(o, f(x), mask, lane);
            }
        }
    } else {
        // `d` is `a`.
        let rd = &mut regs.rows[d];
        if mask == u64::MAX {
            for o in rd.iter_mut() {
                *o = f(*o);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, o) in rd.iter_mut().enumerate().skip(lo).take(n) {
                put(o, f(*o), mask, lane);
            }
        }
    }
}

/// `d = f(a, b)` on the lanes of `mask`.
#[inline(always)]
fn map2(regs: &mut Registers, mask: u64, d: u32, a: u32, b: u32, f: impl Fn(u64, u64) -> u64) {
    let (d, a, b) = (regs.ix(d), regs.ix(a), regs.ix(b));
    if let Ok([rd, ra, rb]) = regs.rows.get_disjoint_mut([d, a, b]) {
        if mask == u64::MAX {
            for ((o, &x), &y) in rd.iter_mut().zip(ra.iter()).zip(rb.iter()) {
                *o = f(x, y);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, ((o, &x), &y)) in rd
                .iter_mut()
                .zip(ra.iter())
                .zip(rb.iter())
                .enumerate()
                .skip(lo)
                .take(n)
            {
                put(o, f(x, y), mask, lane);
            }
        }
    } else if let Ok([rd, rb]) = regs.rows.get_disjoint_mut([d, b])
        && d == a
    {
        if mask == u64::MAX {
            for (o, &y) in rd.iter_mut().zip(rb.iter()) {
                *o = f(*o, y);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &y)) in rd.iter_mut().zip(rb.iter()).enumerate().skip(lo).take(n) {
                put(o, f(*o, y), mask, lane);
            }
        }
    } else if let Ok([rd, ra]) = regs.rows.get_disjoint_mut([d, a])
        && d == b
    {
        if mask == u64::MAX {
            for (o, &x) in rd.iter_mut().zip(ra.iter()) {
                *o = f(x, *o);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &x)) in rd.iter_mut().zip(ra.iter()).enumerate().skip(lo).take(n) {
                put(o, f(x, *o), mask, lane);
            }
        }
    } else {
        let mut out = [0u64; LANES];
        for ((o, &x), &y) in out.iter_mut().zip(&regs.rows[a]).zip(&regs.rows[b]) {
            *o = f(x, y);
        }
        store_row(&mut regs.rows[d], &out, mask);
    }
}

/// `d = f(a, b, c)` on the lanes of `mask`.
#[inline(always)]
fn map3(regs: &mut Registers, mask: u64, [d, a, b, c]: [u32; 4], f: impl Fn(u64, u64, u64) -> u64) {
    let (d, a, b, c) = (regs.ix(d), regs.ix(a), regs.ix(b), regs.ix(c));
    if let Ok([rd, ra, rb, rc]) = regs.rows.get_disjoint_mut([d, a, b, c]) {
        let rows = rd.iter_mut().zip(ra.iter()).zip(rb.iter()).zip(rc.iter());
        if mask == u64::MAX {
            for (((o, &x), &y), &z) in rows {
                *o = f(x, y, z);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (((o, &x), &y), &z)) in rows.enumerate().skip(lo).take(n) {
                put(o, f(x, y, z), mask, lane);
            }
        }
    } else {
        let mut out = [0u64; LANES];
        let (ra, rb, rc) = (&regs.rows[a], &regs.rows[b], &regs.rows[c]);
        for (((o, &x), &y), &z) in out.iter_mut().zip(ra).zip(rb).zip(rc) {
            *o = f(x, y, z);
        }
        store_row(&mut regs.rows[d], &out, mask);
    }
}

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
    /// Steps left before the next charge to the launch's [`Meter`].
    fuel: u64,
    /// The group of a launch that is not block-scoped.
    group: Group,
}

impl<'p> Machine<'p> {
    pub(crate) fn new(program: &'p Program, dims: &LaunchDims) -> Self {
        Self {
            program,
            hints: vec![0; program.insts.len()],
            fuel: SLICE,
            group: Group::new(program, dims),
        }
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
        let fuel = &mut self.fuel;
        let shared: &SharedMemory = block.as_ref().map_or(&NO_SHARED, |b| b.shared);

        // The running group: its pc and lanes; the parked lanes and their lowest pc.
        let (mut pc, mut act, mut parked, mut parked_min);
        match start {
            Start::Fresh(mask) => {
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
            ($lane:expr, $addr:expr, $size:expr, $access:expr, $kind:expr) => {
                return Err(Halt::Fail(lane_fault(
                    program,
                    spaces::nearest(memory, local, shared, memory_space(insts.get(pc)), $addr),
                    pc,
                    ids[$lane % LANES],
                    $addr,
                    $size,
                    $access,
                    $kind,
                )))
            };
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
                            Op::SetpI | Op::SetpF32 | Op::SetpF64 => setp(regs, eff, act, inst, pc),
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
                            Op::LdGlobal => {
                                let size = usize::from(inst.w);
                                let mut spare = 0u32;
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                let (ai, di) = (regs.ix(inst.a), regs.ix(inst.d));
                                // The address row is copied only when the load overwrites it.
                                let copy;
                                let (addrs, out): (&Row, &mut Row) =
                                    match regs.rows.get_disjoint_mut([ai, di]) {
                                        Ok([ra, rd]) => (ra, rd),
                                        Err(_) => {
                                            copy = regs.rows[ai];
                                            (&copy, &mut regs.rows[di])
                                        }
                                    };
                                for lane in lanes_in(eff) {
                                    let addr = addrs[lane].wrapping_add(inst.imm as u64);
                                    if addr & (size as u64 - 1) != 0 {
                                        fault!(
                                            lane,
                                            addr,
                                            size,
                                            Access::Load,
                                            FaultKind::Misaligned
                                        );
                                    }
                                    match spaces::load(
                                        memory, local, shared, inst.k, lane, addr, size, hint,
                                    ) {
                                        Ok(v) => out[lane] = v,
                                        Err(kind) => fault!(lane, addr, size, Access::Load, kind),
                                    }
                                }
                                Flow::Next
                            }
                            Op::LdGlobalV => {
                                let size = usize::from(inst.w);
                                let count = (inst.c as usize).min(4);
                                let total = size * count;
                                let slots = lanes.get(inst.d as usize..).unwrap_or_default();
                                let mut spare = 0u32;
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                let addrs = regs[inst.a];
                                let mut rows = [usize::MAX; 4];
                                for (row, &slot) in rows.iter_mut().zip(slots).take(count) {
                                    *row = regs.ix(slot);
                                }
                                let rows = rows.get(..count).unwrap_or_default();
                                let mut values = [0u64; 4];
                                let values = values.get_mut(..count).unwrap_or_default();
                                for lane in lanes_in(eff) {
                                    let addr = addrs[lane].wrapping_add(inst.imm as u64);
                                    if addr & (total as u64 - 1) != 0 {
                                        fault!(
                                            lane,
                                            addr,
                                            total,
                                            Access::Load,
                                            FaultKind::Misaligned
                                        );
                                    }
                                    if let Err(kind) = spaces::load_many(
                                        memory, local, shared, inst.k, lane, addr, size, values,
                                        hint,
                                    ) {
                                        fault!(lane, addr, total, Access::Load, kind);
                                    }
                                    for (&row, &v) in rows.iter().zip(values.iter()) {
                                        if let Some(row) = regs.rows.get_mut(row) {
                                            row[lane] = v;
                                        }
                                    }
                                }
                                Flow::Next
                            }
                            Op::StGlobal => {
                                let size = usize::from(inst.w);
                                let mut spare = 0u32;
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                let (addrs, values) = (&regs[inst.a], &regs[inst.b]);
                                for lane in lanes_in(eff) {
                                    let addr = addrs[lane].wrapping_add(inst.imm as u64);
                                    if addr & (size as u64 - 1) != 0 {
                                        fault!(
                                            lane,
                                            addr,
                                            size,
                                            Access::Store,
                                            FaultKind::Misaligned
                                        );
                                    }
                                    if let Err(kind) = spaces::store(
                                        memory,
                                        local,
                                        shared,
                                        inst.k,
                                        lane,
                                        addr,
                                        size,
                                        values[lane],
                                        hint,
                                    ) {
                                        fault!(lane, addr, size, Access::Store, kind);
                                    }
                                }
                                Flow::Next
                            }
                            Op::StGlobalV => {
                                let size = usize::from(inst.w);
                                let count = (inst.c as usize).min(4);
                                let total = size * count;
                                let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                                let mut spare = 0u32;
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                let addrs = &regs[inst.a];
                                let mut rows = [usize::MAX; 4];
                                for (row, &slot) in rows.iter_mut().zip(slots).take(count) {
                                    *row = regs.ix(slot);
                                }
                                let rows = rows.get(..count).unwrap_or_default();
                                let mut values = [0u64; 4];
                                let values = values.get_mut(..count).unwrap_or_default();
                                for lane in lanes_in(eff) {
                                    let addr = addrs[lane].wrapping_add(inst.imm as u64);
                                    if addr & (total as u64 - 1) != 0 {
                                        fault!(
                                            lane,
                                            addr,
                                            total,
                                            Access::Store,
                                            FaultKind::Misaligned
                                        );
                                    }
                                    for (value, &row) in values.iter_mut().zip(rows) {
                                        *value = regs.rows.get(row).map_or(0, |row| row[lane]);
                                    }
                                    // A faulting vector store writes none of its elements.
                                    if let Err(kind) = spaces::store_many(
                                        memory, local, shared, inst.k, lane, addr, size, values,
                                        hint,
                                    ) {
                                        fault!(lane, addr, total, Access::Store, kind);
                                    }
                                }
                                Flow::Next
                            }
                            Op::LdKParam => {
                                let start = inst.imm as usize;
                                let Some(bytes) = params.get(start..start + usize::from(inst.w))
                                else {
                                    return Err(Halt::Fail(ExecError::ShortPacket {
                                        entry: program.entry.clone(),
                                        needed: program.param_bytes,
                                        found: params.len(),
                                    }));
                                };
                                store_row(&mut regs[inst.d], &[read_le(bytes); LANES], eff);
                                Flow::Next
                            }
                            Op::Bits => {
                                for lane in bits(eff) {
                                    let v = bits_op(
                                        inst,
                                        regs[inst.a][lane],
                                        regs[inst.b][lane],
                                        regs[inst.c][lane],
                                        regs[inst.e][lane],
                                    );
                                    regs[inst.d][lane] = v;
                                }
                                Flow::Next
                            }
                            Op::Special => {
                                let ntid = [regs[3u32][0], regs[4u32][0], regs[5u32][0]];
                                for lane in bits(eff) {
                                    let v = special(inst.k, ids[lane], ntid);
                                    regs[inst.d][lane] = v;
                                }
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
                                let len = shared.allocation(0).size;
                                for lane in bits(eff) {
                                    let s = regs[inst.a][lane].wrapping_add(inst.imm as u64);
                                    match to_generic(s, inst.w, len) {
                                        Ok(generic) => regs[inst.d][lane] = generic,
                                        Err(kind) => {
                                            return Err(Halt::Fail(shared_fault(
                                                program, pc, ids[lane], s, inst, len, kind,
                                            )));
                                        }
                                    }
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
                                let size = usize::from(inst.w);
                                let mut spare = 0u32;
                                let hint = hints.get_mut(pc).unwrap_or(&mut spare);
                                // Lanes in lane order, each update atomic on its own.
                                for lane in bits(eff) {
                                    let addr = regs[inst.a][lane].wrapping_add(inst.imm as u64);
                                    if addr & (size as u64 - 1) != 0 {
                                        fault!(
                                            lane,
                                            addr,
                                            size,
                                            Access::Store,
                                            FaultKind::Misaligned
                                        );
                                    }
                                    let (b, c) = (regs[inst.b][lane], regs[inst.c][lane]);
                                    let mut op = |old: u64| atomic_op(inst, old, b, c);
                                    match spaces::update(memory, shared, addr, size, hint, &mut op)
                                    {
                                        Ok(old) => regs[inst.d][lane] = old,
                                        Err(kind) => fault!(lane, addr, size, Access::Store, kind),
                                    }
                                }
                                Flow::Next
                            }
                            Op::Pack => {
                                let w = inst.w;
                                let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                                for lane in bits(eff) {
                                    let mut v = 0u64;
                                    for (i, &slot) in slots.iter().take(inst.c as usize).enumerate()
                                    {
                                        v |= (regs[slot][lane] & mask(w))
                                            << (u32::from(w) * i as u32);
                                    }
                                    regs[inst.d][lane] = v;
                                }
                                Flow::Next
                            }
                            Op::Unpack => {
                                let w = inst.w;
                                let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                                for lane in bits(eff) {
                                    let v = regs[inst.a][lane];
                                    for (i, &slot) in slots.iter().take(inst.c as usize).enumerate()
                                    {
                                        regs[slot][lane] =
                                            (v >> (u32::from(w) * i as u32)) & mask(w);
                                    }
                                }
                                Flow::Next
                            }
                            _ => {
                                alu(regs, eff, inst);
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

/// The new value of an atomic's location from its old value and the operands `b`, `c`, as
/// the PTX ISA defines each operation (`None`: leave it).
fn atomic_op(inst: &Inst, old: u64, b: u64, c: u64) -> Option<u64> {
    let w = inst.w.saturating_mul(8);
    let m = mask(w);
    let signed = inst.f & F_SIGNED != 0;
    let v = match inst.k {
        ATOM_ADD => old.wrapping_add(b),
        // `atom.add.f32` rounds to nearest even and flushes subnormal inputs and results.
        ATOM_ADD_F32 => f32b(ftz(ftz(f32v(old)) + ftz(f32v(b)))),
        ATOM_ADD_F64 => (f64v(old) + f64v(b)).to_bits(),
        ATOM_MIN | ATOM_MAX => {
            let less = if signed {
                sext(b, w) < sext(old, w)
            } else {
                (b & m) < (old & m)
            };
            if less == (inst.k == ATOM_MIN) { b } else { old }
        }
        ATOM_INC => {
            if (old & m) >= (b & m) {
                0
            } else {
                old + 1
            }
        }
        ATOM_DEC => {
            if old & m == 0 || (old & m) > (b & m) {
                b
            } else {
                old - 1
            }
        }
        ATOM_CAS => {
            if old & m == b & m {
                c
            } else {
                return None;
            }
        }
        ATOM_EXCH => b,
        ATOM_AND => old & b,
        ATOM_OR => old | b,
        _ => old ^ b,
    };
    Some(v & m)
}

/// The value of special register `kind` for thread `thread` of a block of `ntid` threads.
/// Warps are the block's threads in linear order (`x` fastest), 32 at a time.
fn special(kind: u8, (_, thread): LaneId, ntid: [u64; 3]) -> u64 {
    let [tx, ty, tz] = thread.map(u64::from);
    let linear = tx + ty * ntid[0] + tz * ntid[0] * ntid[1];
    let lane = linear % 32;
    let lt = (1u64 << lane) - 1;
    match kind {
        SPECIAL_LANEID => lane,
        SPECIAL_WARPID => linear / 32,
        SPECIAL_NWARPID => (ntid[0] * ntid[1] * ntid[2]).div_ceil(32),
        SPECIAL_LANEMASK_EQ => 1 << lane,
        SPECIAL_LANEMASK_LT => lt,
        SPECIAL_LANEMASK_LE => (lt << 1) | 1,
        SPECIAL_LANEMASK_GT => !((lt << 1) | 1) & 0xffff_ffff,
        SPECIAL_LANEMASK_GE => !lt & 0xffff_ffff,
        SPECIAL_CLOCK | SPECIAL_CLOCK64 | SPECIAL_GLOBALTIMER => {
            static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            let ns = EPOCH
                .get_or_init(std::time::Instant::now)
                .elapsed()
                .as_nanos() as u64;
            if kind == SPECIAL_CLOCK {
                ns & 0xffff_ffff
            } else {
                ns
            }
        }
        SPECIAL_ONE => 1,
        _ => 0,
    }
}

/// A comparison on the lanes of `eff`, and the fused branch that follows it, if any.
#[inline(always)]
fn setp(regs: &mut Registers, eff: u64, act: u64, inst: &Inst, pc: usize) -> Flow {
    let (ra, rb) = (&regs[inst.a], &regs[inst.b]);
    // The outcome of every lane as 0 or 1 (a branch-free, vectorizable loop), then as a mask.
    let mut tv = [0u64; LANES];
    if inst.op == Op::SetpI {
        // Comparable keys: sign-extended for signed comparisons, masked for unsigned ones.
        let shift = 64u32.saturating_sub(u32::from(inst.w)).min(63);
        let m = mask(inst.w);
        macro_rules! compare {
            ($key:expr, $op:tt) => {
                for ((o, &a), &b) in tv.iter_mut().zip(ra).zip(rb) {
                    *o = u64::from($key(a) $op $key(b));
                }
            };
        }
        macro_rules! by_kind {
            ($key:expr) => {
                match inst.k {
                    CMP_EQ => compare!($key, ==),
                    CMP_NE => compare!($key, !=),
                    CMP_LT => compare!($key, <),
                    CMP_LE => compare!($key, <=),
                    CMP_GT => compare!($key, >),
                    _ => compare!($key, >=),
                }
            };
        }
        if inst.f & F_SIGNED != 0 {
            by_kind!(|v: u64| ((v << shift) as i64) >> shift);
        } else {
            by_kind!(|v: u64| v & m);
        }
    } else {
        let fmt = if inst.op == Op::SetpF32 {
            FMT_F32
        } else {
            FMT_F64
        };
        let flush = inst.f & F_FTZ != 0;
        for ((o, &a), &b) in tv.iter_mut().zip(ra).zip(rb) {
            let (a, b) = (float_in(a, fmt, flush), float_in(b, fmt, flush));
            *o = u64::from(cmp_float(inst.k, a, b));
        }
    }
    let t = match tv.iter().sum::<u64>() {
        0 => 0,
        64 => u64::MAX,
        _ => tv
            .iter()
            .enumerate()
            .fold(0u64, |m, (lane, &v)| m | (v << lane)),
    };
    if inst.f & F_BRANCH != 0 && eff == act {
        store_row(&mut regs[inst.d], &tv, eff);
        let taken = if inst.f & F_BRANCH_NEG != 0 { !t } else { t };
        return Flow::Split {
            taken: taken & eff,
            target: inst.imm as usize,
            fall: pc + 2,
        };
    }
    let rc = &regs[inst.c];
    let (mut p, mut q) = ([0u64; LANES], [0u64; LANES]);
    for (lane, ((p, q), &c)) in p.iter_mut().zip(q.iter_mut()).zip(rc).enumerate() {
        let t = (t >> lane) & 1 != 0;
        *p = u64::from(combine(t, inst, c));
        *q = u64::from(combine(!t, inst, c));
    }
    store_row(&mut regs[inst.d], &p, eff);
    if inst.e != NONE {
        store_row(&mut regs[inst.e], &q, eff);
    }
    Flow::Next
}

/// A register-to-register instruction on the lanes of `eff`. The frequent ones get their own
/// loop; the rest go lane by lane through [`pure`].
#[inline(always)]
fn alu(regs: &mut Registers, eff: u64, inst: &Inst) {
    let (d, a, b, c, w) = (inst.d, inst.a, inst.b, inst.c, inst.w);
    let m = mask(w);
    let plain_f32 = inst.f & (F_FTZ | F_SAT) == 0;
    match inst.op {
        Op::Mov => map1(regs, eff, d, a, |x| x),
        Op::MovMask => map1(regs, eff, d, a, |x| x & m),
        Op::Add => map2(regs, eff, d, a, b, |x, y| x.wrapping_add(y) & m),
        Op::Sub => map2(regs, eff, d, a, b, |x, y| x.wrapping_sub(y) & m),
        Op::MulLo => map2(regs, eff, d, a, b, |x, y| x.wrapping_mul(y) & m),
        Op::Mad => map3(regs, eff, [d, a, b, c], |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z) & m
        }),
        Op::And => map2(regs, eff, d, a, b, |x, y| x & y & m),
        Op::Or => map2(regs, eff, d, a, b, |x, y| (x | y) & m),
        Op::Xor => map2(regs, eff, d, a, b, |x, y| (x ^ y) & m),
        Op::Not => map1(regs, eff, d, a, |x| !x & m),
        Op::Shl if uniform(&regs[b]) => {
            let amount = regs[b][0] & 0xffff_ffff;
            if amount >= u64::from(w) {
                map1(regs, eff, d, a, |_| 0);
            } else {
                map1(regs, eff, d, a, |x| (x << amount) & m);
            }
        }
        Op::Shl => map2(regs, eff, d, a, b, |x, y| {
            let amount = y & 0xffff_ffff;
            if amount >= u64::from(w) {
                0
            } else {
                (x << amount) & m
            }
        }),
        Op::MulWide if inst.f & F_SIGNED == 0 => {
            let wide = mask(w.saturating_mul(2));
            map2(regs, eff, d, a, b, |x, y| {
                (x & m).wrapping_mul(y & m) & wide
            })
        }
        Op::CvtInt if inst.f & (F_SIGNED | F_SAT) == 0 => {
            let out = mask(inst.imm as u8);
            map1(regs, eff, d, a, |x| x & m & out)
        }
        Op::AddF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) + f32v(y))),
        Op::SubF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) - f32v(y))),
        Op::MulF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) * f32v(y))),
        Op::FmaF32 if plain_f32 => map3(regs, eff, [d, a, b, c], |x, y, z| {
            f32b(f32v(x).mul_add(f32v(y), f32v(z)))
        }),
        Op::Div if inst.f & F_SIGNED == 0 && w == 32 => map2(regs, eff, d, a, b, |x, y| {
            u64::from((x as u32).checked_div(y as u32).unwrap_or(u32::MAX))
        }),
        Op::Div if inst.f & F_SIGNED == 0 => map2(regs, eff, d, a, b, |x, y| {
            (x & m).checked_div(y & m).unwrap_or(u64::MAX) & m
        }),
        Op::AddF64 => map2(regs, eff, d, a, b, |x, y| (f64v(x) + f64v(y)).to_bits()),
        Op::MulF64 => map2(regs, eff, d, a, b, |x, y| (f64v(x) * f64v(y)).to_bits()),
        _ => map3(regs, eff, [d, a, b, c], |x, y, z| pure(inst, x, y, z)),
    }
}

/// The value a register-to-register instruction writes to `d`, from the values of `a`, `b`
/// and `c` (those of the absent operands are unspecified and unused).
#[inline]
fn pure(inst: &Inst, a: u64, b: u64, c: u64) -> u64 {
    let w = inst.w;
    match inst.op {
        Op::Mov => a,
        Op::MovMask => a & mask(w),
        Op::Add => a.wrapping_add(b) & mask(w),
        Op::Sub => a.wrapping_sub(b) & mask(w),
        Op::MulLo => a.wrapping_mul(b) & mask(w),
        Op::Mad => a.wrapping_mul(b).wrapping_add(c) & mask(w),
        Op::MulHi => {
            let v = if inst.f & F_SIGNED != 0 {
                ((i128::from(sext(a, w)) * i128::from(sext(b, w))) >> w) as u64
            } else {
                ((u128::from(a & mask(w)) * u128::from(b & mask(w))) >> w) as u64
            };
            v & mask(w)
        }
        Op::MulWide | Op::MadWide => {
            let mut v = if inst.f & F_SIGNED != 0 {
                sext(a, w).wrapping_mul(sext(b, w)) as u64
            } else {
                (a & mask(w)).wrapping_mul(b & mask(w))
            };
            if inst.op == Op::MadWide {
                v = v.wrapping_add(c);
            }
            v & mask(w.saturating_mul(2))
        }
        Op::Div | Op::Rem => {
            let is_div = inst.op == Op::Div;
            let v = if inst.f & F_SIGNED != 0 {
                let (a, b) = (sext(a, w), sext(b, w));
                // Division by zero has no trap on a GPU; results are defined here as all ones
                // (quotient) and the dividend (remainder).
                match (b, is_div) {
                    (0, true) => -1,
                    (0, false) => a,
                    (_, true) => a.wrapping_div(b),
                    (_, false) => a.wrapping_rem(b),
                }
                .unsigned()
            } else {
                let (a, b) = (a & mask(w), b & mask(w));
                match (b, is_div) {
                    (0, true) => u64::MAX,
                    (0, false) => a,
                    (_, true) => a / b,
                    (_, false) => a % b,
                }
            };
            v & mask(w)
        }
        Op::Min | Op::Max => {
            let a_less = if inst.f & F_SIGNED != 0 {
                sext(a, w) < sext(b, w)
            } else {
                (a & mask(w)) < (b & mask(w))
            };
            let pick_a = a_less == (inst.op == Op::Min);
            (if pick_a { a } else { b }) & mask(w)
        }
        Op::NegI => a.wrapping_neg() & mask(w),
        Op::AbsI => sext(a, w).wrapping_abs().unsigned() & mask(w),
        Op::And => a & b & mask(w),
        Op::Or => (a | b) & mask(w),
        Op::Xor => (a ^ b) & mask(w),
        Op::Not => !a & mask(w),
        Op::Shl => {
            let amount = b & 0xffff_ffff;
            if amount >= u64::from(w) {
                0
            } else {
                (a << amount) & mask(w)
            }
        }
        Op::Shr => {
            let amount = (b & 0xffff_ffff).min(63) as u32;
            if inst.f & F_SIGNED != 0 {
                (sext(a, w) >> amount).unsigned() & mask(w)
            } else if u64::from(amount) >= u64::from(w) {
                0
            } else {
                (a & mask(w)) >> amount
            }
        }
        Op::Selp => {
            if c != 0 {
                a
            } else {
                b
            }
        }
        Op::AddF32
        | Op::SubF32
        | Op::MulF32
        | Op::FmaF32
        | Op::DivF32
        | Op::MinF32
        | Op::MaxF32 => {
            let (mut a, mut b) = (f32v(a), f32v(b));
            let flags = inst.f & (F_FTZ | F_SAT);
            if flags & F_FTZ != 0 {
                a = ftz(a);
                b = ftz(b);
            }
            let mut v = match inst.op {
                Op::AddF32 => a + b,
                Op::SubF32 => a - b,
                Op::MulF32 => a * b,
                Op::FmaF32 => {
                    let mut c = f32v(c);
                    if flags & F_FTZ != 0 {
                        c = ftz(c);
                    }
                    a.mul_add(b, c)
                }
                Op::DivF32 => a / b,
                Op::MinF32 => min32(a, b),
                _ => max32(a, b),
            };
            if flags != 0 {
                v = out32(v, flags);
            }
            f32b(v)
        }
        Op::ArithF32Dir => {
            let flags = inst.f & (F_FTZ | F_SAT);
            let mut a = f32v(a);
            let mut b = f32v(b);
            let mut c = if inst.c == NONE { 0.0 } else { f32v(c) };
            if flags & F_FTZ != 0 {
                a = ftz(a);
                b = ftz(b);
                c = ftz(c);
            }
            let v = arith_f32(inst.k, inst.imm as u8, a, b, c);
            f32b(out32(v, flags))
        }
        Op::NegF32
        | Op::AbsF32
        | Op::SqrtF32
        | Op::RsqrtF32
        | Op::RcpF32
        | Op::Ex2F32
        | Op::Lg2F32
        | Op::SinF32
        | Op::CosF32
        | Op::TanhF32 => {
            let flags = inst.f & (F_FTZ | F_SAT);
            let mut a = f32v(a);
            if flags & F_FTZ != 0 {
                a = ftz(a);
            }
            let v = match inst.op {
                Op::NegF32 => -a,
                Op::AbsF32 => a.abs(),
                Op::SqrtF32 => a.sqrt(),
                Op::RsqrtF32 => 1.0 / a.sqrt(),
                Op::RcpF32 => 1.0 / a,
                Op::Ex2F32 => a.exp2(),
                Op::Lg2F32 => a.log2(),
                Op::SinF32 => a.sin(),
                Op::CosF32 => a.cos(),
                _ => a.tanh(),
            };
            f32b(out32(v, flags))
        }
        Op::AddF64 => (f64v(a) + f64v(b)).to_bits(),
        Op::SubF64 => (f64v(a) - f64v(b)).to_bits(),
        Op::MulF64 => (f64v(a) * f64v(b)).to_bits(),
        Op::DivF64 => (f64v(a) / f64v(b)).to_bits(),
        Op::FmaF64 => f64v(a).mul_add(f64v(b), f64v(c)).to_bits(),
        Op::MinF64 => min64(f64v(a), f64v(b)).to_bits(),
        Op::MaxF64 => max64(f64v(a), f64v(b)).to_bits(),
        Op::NegF64 => (-f64v(a)).to_bits(),
        Op::AbsF64 => f64v(a).abs().to_bits(),
        Op::SqrtF64 => f64v(a).sqrt().to_bits(),
        Op::RsqrtF64 => (1.0 / f64v(a).sqrt()).to_bits(),
        Op::RcpF64 => (1.0 / f64v(a)).to_bits(),
        Op::Half => packed(inst, a, b, c),
        Op::Set => set(inst, a, b, c),
        Op::CvtHalf => cvt_half(inst, a, b),
        Op::CvtInt => {
            let out = inst.imm as u8;
            let v = if inst.f & F_SIGNED != 0 {
                i128::from(sext(a, w))
            } else {
                i128::from(a & mask(w))
            };
            let v = if inst.f & F_SAT != 0 {
                let (lo, hi) = if inst.k != 0 {
                    (-(1i128 << (out - 1)), (1i128 << (out - 1)) - 1)
                } else {
                    (0, (1i128 << out) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            (v as u64) & mask(out)
        }
        Op::CvtIntToFloat => {
            let v = if inst.f & F_SIGNED != 0 {
                i128::from(sext(a, w))
            } else {
                i128::from(a & mask(w))
            };
            let bits = int_to_float(v, inst.k, inst.imm as u8);
            if inst.f & F_SAT != 0 {
                saturate_bits(bits, inst.k)
            } else {
                bits
            }
        }
        Op::CvtFloatToInt => {
            let x = float_in(a, inst.k, inst.f & F_FTZ != 0);
            if x.is_nan() {
                // The ISA's NaN: zero, but the top bit alone from f64 or into 64 bits.
                return if inst.k == FMT_F64 || w >= 64 {
                    1u64 << (w - 1).min(63)
                } else {
                    0
                };
            }
            let x = round_integral(x, inst.imm as u8);
            let v = if inst.f & F_SIGNED != 0 {
                let lo = if w >= 64 {
                    i64::MIN
                } else {
                    -(1i64 << (w - 1))
                };
                let hi = if w >= 64 {
                    i64::MAX
                } else {
                    (1i64 << (w - 1)) - 1
                };
                (x as i64).clamp(lo, hi).unsigned()
            } else {
                (x as u64).min(mask(w))
            };
            v & mask(w)
        }
        Op::CvtFloat => cvt_float(a, inst),
        // Not register-to-register: handled by the run loop, never sent here.
        _ => 0,
    }
}
#[inline]
fn out32(v: f32, flags: u8) -> f32 {
    let v = if flags & F_FTZ != 0 { ftz(v) } else { v };
    if flags & F_SAT != 0 { sat32(v) } else { v }
}

fn saturate_bits(bits: u64, fmt: u8) -> u64 {
    match fmt {
        FMT_F64 => sat64(f64v(bits)).to_bits(),
        FMT_F32 => f32b(sat32(f32v(bits))),
        _ => u64::from(to_half(sat32(from_half(bits as u16, fmt)), fmt)),
    }
}

fn cvt_float(bits: u64, inst: &Inst) -> u64 {
    let (src, dst) = (inst.k, inst.w);
    let flush = inst.f & F_FTZ != 0;
    let x = float_in(bits, src, flush);
    let mode = inst.imm as u8;
    let out = if (4..8).contains(&mode) {
        // Integer rounding within one format: exact in f64 for every source format.
        let r = round_integral(x, mode - 4);
        encode(r, dst, 0)
    } else {
        encode(x, dst, if mode == 8 { 0 } else { mode })
    };
    let out = if dst == FMT_F32 && flush {
        f32b(ftz(f32v(out)))
    } else {
        out
    };
    if inst.f & F_SAT != 0 {
        saturate_bits(out, dst)
    } else {
        out
    }
}

/// An exact f64 value in format `fmt`, rounded in `mode` where it does not fit.
fn encode(x: f64, fmt: u8, mode: u8) -> u64 {
    match fmt {
        FMT_F64 => x.to_bits(),
        FMT_F32 => f32b(f64_to_f32(x, mode)),
        _ => u64::from(f64_to_half(x, fmt, mode)),
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

#[allow(clippy::too_many_arguments)]
#[cold]
fn lane_fault(
    program: &Program,
    nearest: Option<Allocation>,
    pc: usize,
    (block, thread): LaneId,
    address: u64,
    size: usize,
    access: Access,
    kind: FaultKind,
) -> ExecError {
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
