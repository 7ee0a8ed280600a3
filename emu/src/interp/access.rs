//! Memory operations: `ld` and `st`, scalar and vector, in every state space
//! ([`Op::LdGlobal`], [`Op::LdGlobalV`], [`Op::StGlobal`], [`Op::StGlobalV`]), the loads of
//! kernel parameters from the argument packet ([`Op::LdKParam`]) and the conversion of a
//! shared-space address to a generic one ([`Op::ToShared`]).
//!
//! Each goes lane by lane in lane order and stops at the first lane whose access is misaligned
//! for its full width (a vector's, for `.v2`/`.v4`) or refused by the space it reaches; the
//! lanes before it have done theirs, none after it has, and a faulting vector access moves
//! none of its elements. The run loop (`exec`) turns the failing lane's [`LaneFault`] into the
//! launch's error, with the site and the nearest allocation.
//!
//! [`Op::LdGlobal`]: crate::decode::Op::LdGlobal
//! [`Op::LdGlobalV`]: crate::decode::Op::LdGlobalV
//! [`Op::StGlobal`]: crate::decode::Op::StGlobal
//! [`Op::StGlobalV`]: crate::decode::Op::StGlobalV
//! [`Op::LdKParam`]: crate::decode::Op::LdKParam
//! [`Op::ToShared`]: crate::decode::Op::ToShared

use super::alu::read_le;
use super::fault::{Access, FaultKind};
use super::lanes::{LANES, Registers, Row, bits, lanes_in, store_row};
use super::local::LocalFrames;
use super::memory::Memory;
use super::shared::{SharedMemory, to_generic};
use super::spaces;
use crate::decode::{Inst, Op};

/// The access of one lane that stopped a memory instruction.
#[derive(Debug, Clone, Copy)]
pub(super) struct LaneFault {
    pub(super) lane: usize,
    /// The first byte accessed.
    pub(super) addr: u64,
    /// Bytes accessed.
    pub(super) size: usize,
    pub(super) access: Access,
    pub(super) kind: FaultKind,
}

impl LaneFault {
    /// Lane `lane`'s `size`-byte `access` at `addr`, refused for `kind`.
    #[cold]
    pub(super) fn new(
        lane: usize,
        addr: u64,
        size: usize,
        access: Access,
        kind: FaultKind,
    ) -> Self {
        Self {
            lane,
            addr,
            size,
            access,
            kind,
        }
    }
}

/// Lane `lane`'s address `[a + imm]` (`addrs` is `a`'s row), refused unless it is aligned to
/// the access's whole `width`.
#[inline(always)]
pub(super) fn address(
    addrs: &Row,
    lane: usize,
    inst: &Inst,
    width: usize,
    access: Access,
) -> Result<u64, LaneFault> {
    let addr = addrs[lane].wrapping_add(inst.imm as u64);
    if addr & (width as u64 - 1) != 0 {
        return Err(LaneFault::new(
            lane,
            addr,
            width,
            access,
            FaultKind::Misaligned,
        ));
    }
    Ok(addr)
}

/// A load or store, scalar or vector ([`Op::LdGlobal`], [`Op::LdGlobalV`], [`Op::StGlobal`],
/// [`Op::StGlobalV`]), on the lanes of `eff`.
#[inline(always)]
pub(super) fn access<M: Memory>(
    regs: &mut Registers,
    eff: u64,
    inst: &Inst,
    lanes: &[u32],
    hint: &mut u32,
    to: &mut Spaces<'_, M>,
) -> Result<(), LaneFault> {
    match inst.op {
        Op::LdGlobal => load(regs, eff, inst, hint, to),
        Op::LdGlobalV => load_vector(regs, eff, inst, lanes, hint, to),
        Op::StGlobal => store(regs, eff, inst, hint, to),
        _ => store_vector(regs, eff, inst, lanes, hint, to),
    }
}

/// Where the lanes of a memory instruction go: the launch's memory, the group's local frames
/// and the block's shared memory.
pub(super) struct Spaces<'s, M> {
    pub(super) memory: &'s M,
    pub(super) local: &'s mut LocalFrames,
    pub(super) shared: &'s SharedMemory,
}

/// `ld` of `w` bytes at `[a + imm]` in space `k` into `d`, for the lanes of `eff`.
#[inline(always)]
fn load<M: Memory>(
    regs: &mut Registers,
    eff: u64,
    inst: &Inst,
    hint: &mut u32,
    to: &mut Spaces<'_, M>,
) -> Result<(), LaneFault> {
    let size = usize::from(inst.w);
    let (ai, di) = (regs.ix(inst.a), regs.ix(inst.d));
    // The address row is copied only when the load overwrites it.
    let copy;
    let (addrs, out): (&Row, &mut Row) = match regs.rows.get_disjoint_mut([ai, di]) {
        Ok([ra, rd]) => (ra, rd),
        Err(_) => {
            copy = regs.rows[ai];
            (&copy, &mut regs.rows[di])
        }
    };
    let fault = |lane, addr, kind| LaneFault {
        lane,
        addr,
        size,
        access: Access::Load,
        kind,
    };
    for lane in lanes_in(eff) {
        let addr = address(addrs, lane, inst, size, Access::Load)?;
        match spaces::load(
            to.memory, to.local, to.shared, inst.k, lane, addr, size, hint,
        ) {
            Ok(v) => out[lane] = v,
            Err(kind) => return Err(fault(lane, addr, kind)),
        }
    }
    Ok(())
}

/// A vector access's shape: its element size and count (at most 4), its whole width, and the
/// register rows of the elements listed in `lanes` from `start`.
#[inline(always)]
fn vector(
    regs: &Registers,
    inst: &Inst,
    lanes: &[u32],
    start: u32,
) -> (usize, usize, usize, [usize; 4]) {
    let size = usize::from(inst.w);
    let count = (inst.c as usize).min(4);
    let slots = lanes.get(start as usize..).unwrap_or_default();
    let mut rows = [usize::MAX; 4];
    for (row, &slot) in rows.iter_mut().zip(slots).take(count) {
        *row = regs.ix(slot);
    }
    (size, count, size * count, rows)
}

/// `ld.v2`/`ld.v4`: `c` elements of `w` bytes at `[a + imm]` into the registers listed in
/// `lanes` from `d`.
#[inline(always)]
fn load_vector<M: Memory>(
    regs: &mut Registers,
    eff: u64,
    inst: &Inst,
    lanes: &[u32],
    hint: &mut u32,
    to: &mut Spaces<'_, M>,
) -> Result<(), LaneFault> {
    let (size, count, total, rows) = vector(regs, inst, lanes, inst.d);
    let addrs = regs[inst.a];
    let addrs = &addrs;
    let rows = rows.get(..count).unwrap_or_default();
    let mut values = [0u64; 4];
    let values = values.get_mut(..count).unwrap_or_default();
    let fault = |lane, addr, kind| LaneFault::new(lane, addr, total, Access::Load, kind);
    for lane in lanes_in(eff) {
        let addr = address(addrs, lane, inst, total, Access::Load)?;
        if let Err(kind) = spaces::load_many(
            to.memory, to.local, to.shared, inst.k, lane, addr, size, values, hint,
        ) {
            return Err(fault(lane, addr, kind));
        }
        for (&row, &v) in rows.iter().zip(values.iter()) {
            if let Some(row) = regs.rows.get_mut(row) {
                row[lane] = v;
            }
        }
    }
    Ok(())
}

/// `st` of the low `w` bytes of `b` at `[a + imm]` in space `k`, for the lanes of `eff`.
#[inline(always)]
fn store<M: Memory>(
    regs: &Registers,
    eff: u64,
    inst: &Inst,
    hint: &mut u32,
    to: &mut Spaces<'_, M>,
) -> Result<(), LaneFault> {
    let size = usize::from(inst.w);
    let (addrs, values) = (&regs[inst.a], &regs[inst.b]);
    let fault = |lane, addr, kind| LaneFault::new(lane, addr, size, Access::Store, kind);
    for lane in lanes_in(eff) {
        let addr = address(addrs, lane, inst, size, Access::Store)?;
        if let Err(kind) = spaces::store(
            to.memory,
            to.local,
            to.shared,
            inst.k,
            lane,
            addr,
            size,
            values[lane],
            hint,
        ) {
            return Err(fault(lane, addr, kind));
        }
    }
    Ok(())
}

/// `st.v2`/`st.v4`: the `c` registers listed in `lanes` from `b` at `[a + imm]`.
#[inline(always)]
fn store_vector<M: Memory>(
    regs: &Registers,
    eff: u64,
    inst: &Inst,
    lanes: &[u32],
    hint: &mut u32,
    to: &mut Spaces<'_, M>,
) -> Result<(), LaneFault> {
    let (size, count, total, rows) = vector(regs, inst, lanes, inst.b);
    let addrs = &regs[inst.a];
    let rows = rows.get(..count).unwrap_or_default();
    let mut values = [0u64; 4];
    let values = values.get_mut(..count).unwrap_or_default();
    let fault = |lane, addr, kind| LaneFault::new(lane, addr, total, Access::Store, kind);
    for lane in lanes_in(eff) {
        let addr = address(addrs, lane, inst, total, Access::Store)?;
        for (value, &row) in values.iter_mut().zip(rows) {
            *value = regs.rows.get(row).map_or(0, |row| row[lane]);
        }
        // A faulting vector store writes none of its elements.
        if let Err(kind) = spaces::store_many(
            to.memory, to.local, to.shared, inst.k, lane, addr, size, values, hint,
        ) {
            return Err(fault(lane, addr, kind));
        }
    }
    Ok(())
}

/// The `w` bytes of the argument packet at `imm` into `d`; `None` if the packet is too short.
#[inline(always)]
pub(super) fn load_param(regs: &mut Registers, eff: u64, inst: &Inst, params: &[u8]) -> Option<()> {
    let start = inst.imm as usize;
    let bytes = params.get(start..start.checked_add(usize::from(inst.w))?)?;
    store_row(&mut regs[inst.d], &[read_le(bytes); LANES], eff);
    Some(())
}

/// `d` = the generic address of the shared-space address `a + imm`, checked against the
/// block's shared memory first; the first lane outside it, with its shared address, the
/// memory's size and why, as the error.
#[inline(always)]
pub(super) fn to_shared(
    regs: &mut Registers,
    eff: u64,
    inst: &Inst,
    shared: &SharedMemory,
) -> Result<(), (usize, u64, u64, FaultKind)> {
    let len = shared.allocation(0).size;
    for lane in bits(eff) {
        let s = regs[inst.a][lane].wrapping_add(inst.imm as u64);
        match to_generic(s, inst.w, len) {
            Ok(generic) => regs[inst.d][lane] = generic,
            Err(kind) => return Err((lane, s, len, kind)),
        }
    }
    Ok(())
}
