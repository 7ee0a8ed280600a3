//! The access trace: every load, store and atomic a launch makes, as it makes it, for a caller
//! that checks them (the verifier's whole-kernel soundness test checks each one against what
//! the proof claimed for its line).
//!
//! Tracing costs nothing when it is off: the run loop asks the launch's meter for a trace once
//! per memory instruction, and only then computes the lanes' addresses.

use super::lanes::{LANES, Registers, lanes_in};
use crate::decode::{Inst, Op, Program};
use crate::space::{LOCAL_WINDOW, RESERVED, SHARED_WINDOW, Space, WINDOW_BYTES};

/// What an access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TracedKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// An atomic or reduction: reads and writes.
    Atomic,
}

/// Where an access lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TracedSpace {
    /// The launch's memory (its operands): `addr` is the generic address.
    Global,
    /// The block's shared memory: `addr` is the offset in it.
    Shared,
    /// The thread's local frame: `addr` is the offset in it.
    Local,
    /// A kernel parameter, a `.const` or module variable, or another window of the emulator.
    Other,
}

/// One lane's access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessEvent {
    /// 1-based PTX line of the instruction.
    pub line: u32,
    /// Load, store or atomic.
    pub kind: TracedKind,
    /// Where it lands.
    pub space: TracedSpace,
    /// The address in that space (see [`TracedSpace`]).
    pub addr: u64,
    /// Bytes accessed (a vector's whole width).
    pub bytes: u32,
    /// The thread's block and its index in the block.
    pub block: [u32; 3],
    /// The thread's index in its block.
    pub thread: [u32; 3],
}

/// Receives every access of a launch that runs with it ([`super::RunOptions::trace`]). Called
/// from every worker thread, in each thread's program order.
pub trait AccessTrace: Send + Sync {
    /// One lane's access, made and allowed.
    fn access(&self, event: &AccessEvent);
}

impl std::fmt::Debug for dyn AccessTrace + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessTrace")
    }
}

/// The lanes' addresses of a memory instruction about to run (before a load overwrites its
/// address register): `(lane, generic or space address)`.
pub(super) fn addresses(regs: &Registers, eff: u64, inst: &Inst) -> Vec<(usize, u64)> {
    let row = &regs[inst.a];
    lanes_in(eff)
        .filter(|&lane| lane < LANES)
        .map(|lane| (lane, row[lane].wrapping_add(inst.imm as u64)))
        .collect()
}

/// Reports the accesses `addrs` of instruction `pc` (which succeeded) to `trace`.
pub(super) fn report(
    trace: &dyn AccessTrace,
    program: &Program,
    pc: usize,
    inst: &Inst,
    addrs: &[(usize, u64)],
    ids: &[([u32; 3], [u32; 3])],
) {
    let line = program.sites.get(pc).map_or(0, |s| s.line);
    let (kind, space, bytes) = match inst.op {
        Op::LdGlobal => (TracedKind::Load, inst.k, u32::from(inst.w)),
        Op::LdGlobalV => (TracedKind::Load, inst.k, u32::from(inst.w) * inst.c),
        Op::StGlobal => (TracedKind::Store, inst.k, u32::from(inst.w)),
        Op::StGlobalV => (TracedKind::Store, inst.k, u32::from(inst.w) * inst.c),
        // Atomics address generic memory (a shared variable's address is its window's).
        _ => (TracedKind::Atomic, Space::Generic.code(), u32::from(inst.w)),
    };
    for &(lane, addr) in addrs {
        let (space, addr) = classify(space, addr);
        let (block, thread) = ids.get(lane).copied().unwrap_or_default();
        trace.access(&AccessEvent {
            line,
            kind,
            space,
            addr,
            bytes,
            block,
            thread,
        });
    }
}

/// Which space an access of an instruction of state-space code `k` at `addr` lands in, and its
/// address there.
fn classify(k: u8, addr: u64) -> (TracedSpace, u64) {
    let window = |base: u64| (base..base + WINDOW_BYTES).contains(&addr);
    match k {
        k if k == Space::Shared.code() => (TracedSpace::Shared, addr),
        k if k == Space::Local.code() => (TracedSpace::Local, addr),
        k if k == Space::Global.code() || k == Space::Generic.code() => {
            if window(SHARED_WINDOW) {
                (TracedSpace::Shared, addr - SHARED_WINDOW)
            } else if window(LOCAL_WINDOW) {
                (TracedSpace::Local, addr - LOCAL_WINDOW)
            } else if RESERVED.contains(&addr) {
                (TracedSpace::Other, addr)
            } else {
                (TracedSpace::Global, addr)
            }
        }
        _ => (TracedSpace::Other, addr),
    }
}
