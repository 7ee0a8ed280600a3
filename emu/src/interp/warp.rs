//! Warp-level instructions on the two 32-lane warps of a lockstep group, as the PTX ISA defines
//! them (`shfl.sync`, `vote.sync`, `redux.sync`, `match.sync`, `activemask`, `bar.warp.sync`).
//!
//! A warp is 32 consecutive threads of a block; in a block-scoped launch lanes 0–31 and 32–63
//! of a group are two warps. The `.sync` forms wait until every thread of the member mask that
//! has not exited executes the same instruction with the same mask. The emulator does not make
//! threads wait for one another inside a warp: it requires them to be converged already, and
//! refuses with a typed error a member thread that has not exited and is not running this
//! instruction with this mask (the GPU would wait for it, or hang), an executing thread that is
//! not in its own mask, and a shuffle that reads a thread that does not take part (undefined
//! on the GPU). Threads that run the instruction together with different masks form separate
//! sets (tiles of a warp), each computed on its own.
//!
//! `activemask` gives the threads of the warp running the instruction together: the emulator
//! runs converged exactly the threads at the same instruction, one of the results the GPU may
//! give (it promises no more than that the executing thread is in the mask).

use super::lanes::{LANES, Registers};
use crate::decode::{
    F_NEG_C, F_SIGNED, Inst, NONE, WARP_ACTIVEMASK, WARP_MATCH_ALL, WARP_MATCH_ANY, WARP_REDUX_ADD,
    WARP_REDUX_AND, WARP_REDUX_MAX, WARP_REDUX_MIN, WARP_REDUX_OR, WARP_REDUX_XOR, WARP_SHFL_BFLY,
    WARP_SHFL_DOWN, WARP_SHFL_IDX, WARP_SHFL_UP, WARP_SYNC, WARP_VOTE_ALL, WARP_VOTE_ANY,
    WARP_VOTE_BALLOT, WARP_VOTE_UNI,
};

/// Runs warp-level instruction `inst` on the lanes of `eff`; `live` are the group's lanes that
/// have not exited. On error: the lane and the reason.
pub(crate) fn warp_op(
    inst: &Inst,
    regs: &mut Registers,
    eff: u64,
    live: u64,
) -> Result<(), (usize, &'static str)> {
    let mut out = [0u64; LANES];
    let mut pred = [0u64; LANES];
    for warp in 0..LANES / 32 {
        let shift = 32 * warp;
        let running = (eff >> shift) as u32;
        let alive = (live >> shift) as u32;
        if running == 0 {
            continue;
        }
        if inst.k == WARP_ACTIVEMASK {
            for lane in bits32(running) {
                out[shift + lane] = u64::from(running);
            }
            continue;
        }
        let masks = &regs[inst.e];
        let mut todo = running;
        while todo != 0 {
            let first = todo.trailing_zeros() as usize;
            let mask = masks[shift + first] as u32;
            let set = bits32(todo).fold(0u32, |s, lane| {
                s | (u32::from(masks[shift + lane] as u32 == mask) << lane)
            });
            todo &= !set;
            if set & !mask != 0 {
                let lane = (set & !mask).trailing_zeros() as usize;
                return Err((shift + lane, "a thread not in its own member mask"));
            }
            if mask & alive != set {
                return Err((
                    shift + first,
                    "a thread of the member mask is not running this instruction with this mask",
                ));
            }
            apply(inst, regs, shift, set, &mut out, &mut pred)?;
        }
    }
    if inst.k == WARP_SYNC {
        return Ok(());
    }
    let d = &mut regs[inst.d];
    for lane in lanes(eff) {
        d[lane] = out[lane];
    }
    if inst.imm != i64::from(NONE) {
        let p = &mut regs[inst.imm as u32];
        for lane in lanes(eff) {
            p[lane] = pred[lane];
        }
    }
    Ok(())
}

/// One set of member threads: `set` (bits = lanes of the warp starting at lane `shift`).
fn apply(
    inst: &Inst,
    regs: &Registers,
    shift: usize,
    set: u32,
    out: &mut [u64; LANES],
    pred: &mut [u64; LANES],
) -> Result<(), (usize, &'static str)> {
    let a = &regs[inst.a];
    let value = |lane: usize| a[shift + lane];
    match inst.k {
        WARP_SHFL_UP | WARP_SHFL_DOWN | WARP_SHFL_BFLY | WARP_SHFL_IDX => {
            let (b, c) = (&regs[inst.b], &regs[inst.c]);
            for lane in bits32(set) {
                let l = lane as i64;
                let bval = (b[shift + lane] & 0x1f) as i64;
                let cval = (c[shift + lane] & 0x1f) as i64;
                let segmask = ((c[shift + lane] >> 8) & 0x1f) as i64;
                let max_lane = (l & segmask) | (cval & !segmask);
                let min_lane = l & segmask;
                let (j, ok) = match inst.k {
                    WARP_SHFL_UP => (l - bval, l - bval >= max_lane),
                    WARP_SHFL_DOWN => (l + bval, l + bval <= max_lane),
                    WARP_SHFL_BFLY => (l ^ bval, (l ^ bval) <= max_lane),
                    _ => {
                        let j = min_lane | (bval & !segmask);
                        (j, j <= max_lane)
                    }
                };
                let j = if ok { j } else { l };
                let source = usize::try_from(j).ok().filter(|&j| j < 32);
                let Some(source) = source.filter(|&j| (set >> j) & 1 != 0) else {
                    return Err((
                        shift + lane,
                        "a shuffle reads a thread that does not take part",
                    ));
                };
                out[shift + lane] = value(source) & 0xffff_ffff;
                pred[shift + lane] = u64::from(ok);
            }
        }
        WARP_VOTE_ALL | WARP_VOTE_ANY | WARP_VOTE_UNI | WARP_VOTE_BALLOT => {
            let c = &regs[inst.c];
            let negate = inst.f & F_NEG_C != 0;
            let ballot = bits32(set).fold(0u32, |m, lane| {
                m | (u32::from((c[shift + lane] != 0) != negate) << lane)
            });
            let result = match inst.k {
                WARP_VOTE_ALL => u64::from(ballot == set),
                WARP_VOTE_ANY => u64::from(ballot != 0),
                WARP_VOTE_UNI => u64::from(ballot == set || ballot == 0),
                _ => u64::from(ballot),
            };
            for lane in bits32(set) {
                out[shift + lane] = result;
            }
        }
        WARP_REDUX_ADD | WARP_REDUX_MIN | WARP_REDUX_MAX | WARP_REDUX_AND | WARP_REDUX_OR
        | WARP_REDUX_XOR => {
            let signed = inst.f & F_SIGNED != 0;
            let mut values = bits32(set).map(|lane| value(lane) as u32);
            let first = values.next().unwrap_or(0);
            let result = values.fold(first, |acc, v| match inst.k {
                WARP_REDUX_ADD => acc.wrapping_add(v),
                WARP_REDUX_MIN if signed => (acc as i32).min(v as i32) as u32,
                WARP_REDUX_MIN => acc.min(v),
                WARP_REDUX_MAX if signed => (acc as i32).max(v as i32) as u32,
                WARP_REDUX_MAX => acc.max(v),
                WARP_REDUX_AND => acc & v,
                WARP_REDUX_OR => acc | v,
                _ => acc ^ v,
            });
            for lane in bits32(set) {
                out[shift + lane] = u64::from(result);
            }
        }
        WARP_MATCH_ANY | WARP_MATCH_ALL => {
            let m = if inst.w >= 64 {
                u64::MAX
            } else {
                u64::from(u32::MAX)
            };
            let same = |lane: usize| {
                bits32(set).fold(0u32, |s, other| {
                    s | (u32::from(value(other) & m == value(lane) & m) << other)
                })
            };
            if inst.k == WARP_MATCH_ANY {
                for lane in bits32(set) {
                    out[shift + lane] = u64::from(same(lane));
                }
            } else {
                let first = set.trailing_zeros() as usize;
                let all = same(first) == set;
                for lane in bits32(set) {
                    out[shift + lane] = if all { u64::from(set) } else { 0 };
                    pred[shift + lane] = u64::from(all);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Lanes (0..32) of the set bits of `mask`, lowest first.
fn bits32(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(lane % 32)
    })
}

/// Lanes (0..LANES) of the set bits of `mask`.
fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&lane| (mask >> lane) & 1 != 0)
}
