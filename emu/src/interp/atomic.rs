//! Atomics: `atom` and `red` ([`Op::Atom`](crate::decode::Op::Atom)) on global and shared
//! memory, lane by lane in lane order, each read-modify-write atomic on its own, and the value
//! each operation leaves in memory as the PTX ISA defines it. Kept apart from the plain loads
//! and stores because an atomic is the one access other threads (on other workers) may race
//! with: it goes through [`Memory::update`](super::memory::Memory::update), never a load then a
//! store.

use super::access::{LaneFault, address};
use super::alu::{f32b, f32v, f64v, mask, sext};
use super::fault::Access;
use super::float::ftz;
use super::lanes::{Registers, bits};
use super::memory::Memory;
use super::shared::SharedMemory;
use super::spaces;
use crate::decode::{
    ATOM_ADD, ATOM_ADD_F32, ATOM_ADD_F64, ATOM_AND, ATOM_CAS, ATOM_DEC, ATOM_EXCH, ATOM_INC,
    ATOM_MAX, ATOM_MIN, ATOM_OR, F_SIGNED, Inst,
};

/// An atomic on the lanes of `eff`: each lane's old value to `d`, the first faulting lane's
/// access as the error (the lanes before it have done theirs).
#[inline(always)]
pub(super) fn atom<M: Memory>(
    regs: &mut Registers,
    eff: u64,
    inst: &Inst,
    hint: &mut u32,
    memory: &M,
    shared: &SharedMemory,
) -> Result<(), LaneFault> {
    let size = usize::from(inst.w);
    let fault = |lane, addr, kind| LaneFault::new(lane, addr, size, Access::Store, kind);
    for lane in bits(eff) {
        let addr = address(&regs[inst.a], lane, inst, size, Access::Store)?;
        let (b, c) = (regs[inst.b][lane], regs[inst.c][lane]);
        let mut op = |old: u64| atomic_op(inst, old, b, c);
        match spaces::update(memory, shared, addr, size, hint, &mut op) {
            Ok(old) => regs[inst.d][lane] = old,
            Err(kind) => return Err(fault(lane, addr, kind)),
        }
    }
    Ok(())
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
