//! Atomics on global (and, through `shared`, shared) memory: `atom` and `red` (`add`, `min`, `max`, `inc`, `dec`, `cas`, `exch`,
//! `and`, `or`, `xor` on 32- and 64-bit integers, `add` on f32 and f64).

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{
    ATOM_ADD, ATOM_ADD_F32, ATOM_ADD_F64, ATOM_AND, ATOM_CAS, ATOM_DEC, ATOM_EXCH, ATOM_INC,
    ATOM_MAX, ATOM_MIN, ATOM_OR, ATOM_XOR, F_SIGNED, Inst, Op,
};
use crate::space::Space;
use jitseam_ptx::inst::{BoolOp, Flag, Opcode, Operand, Space as Written};

impl Decoder<'_> {
    pub(super) fn atomic(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        // `.shared` reaches here from `shared_atomic`, which converts the address after.
        let space = match m.space {
            None | Some(Written::Global) => Space::Global,
            Some(Written::Shared) => Space::Shared,
            Some(_) => return bad("atomics outside global and shared memory"),
        };
        if m.vector != 1 {
            return bad("vector atomics");
        }
        use Flag as F;
        let operations = [F::Add, F::Min, F::Max, F::Inc, F::Dec, F::Cas, F::Exch];
        let ordering = [F::Acquire, F::Release, F::AcqRel];
        if !m.flags_within(&[&operations[..], &ordering[..]].concat()) {
            return bad("this modifier on an atomic");
        }
        let ty = self.one_type(ctx)?;
        let has = |f: Flag| m.has(f);
        let (float, bits, signed) = match class(ty) {
            Class::Int { bits, signed } if bits >= 32 => (false, bits, signed),
            Class::F32 => (true, 32, false),
            Class::F64 => (true, 64, false),
            _ => return bad("this atomic type"),
        };
        let k = if has(F::Add) {
            match (float, bits) {
                (false, _) => ATOM_ADD,
                (true, 32) => ATOM_ADD_F32,
                _ => ATOM_ADD_F64,
            }
        } else if float {
            return bad("float atomics other than add");
        } else if has(F::Min) {
            ATOM_MIN
        } else if has(F::Max) {
            ATOM_MAX
        } else if has(F::Inc) {
            ATOM_INC
        } else if has(F::Dec) {
            ATOM_DEC
        } else if has(F::Cas) {
            ATOM_CAS
        } else if has(F::Exch) {
            ATOM_EXCH
        } else {
            match m.bool_op {
                Some(BoolOp::And) => ATOM_AND,
                Some(BoolOp::Or) => ATOM_OR,
                Some(BoolOp::Xor) => ATOM_XOR,
                None => return Err(self.invalid(ctx, "an atomic needs an operation")),
            }
        };
        if matches!(k, ATOM_INC | ATOM_DEC) && bits != 32 {
            return bad("64-bit atom.inc/atom.dec");
        }
        let red = opcode == Opcode::Red;
        let first = usize::from(!red);
        let sources = if k == ATOM_CAS { 2 } else { 1 };
        self.expect_count(ctx, first + 1 + sources)?;
        let Operand::Address { base, offset } = *self.operand(ctx, first)? else {
            return Err(self.invalid(ctx, "an atomic needs an address"));
        };
        let base = self.base_sym(ctx, base)?;
        let mut inst = Inst::new(Op::Atom);
        inst.k = k;
        inst.w = bits / 8;
        if signed {
            inst.f |= F_SIGNED;
        }
        inst.d = if red { self.sink } else { self.dst(ctx, 0)? };
        inst.a = self.base_slot(ctx, space, base)?;
        inst.imm = offset;
        inst.b = self.src(ctx, first + 1, ty)?;
        if k == ATOM_CAS {
            inst.c = self.src(ctx, first + 2, ty)?;
        }
        self.push(ctx, inst);
        if !red {
            self.sign_extend_dst(ctx, inst.d, ty);
        }
        Ok(())
    }
}
