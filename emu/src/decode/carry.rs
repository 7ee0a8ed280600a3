//! Extended-precision integer arithmetic: `add.cc`, `addc{.cc}`, `sub.cc`, `subc{.cc}`,
//! `mad{.lo,.hi}.cc` and `madc{.lo,.hi}{.cc}` on `.u32`, `.s32`, `.u64` and `.s64`, as one
//! [`Op::Carry`] each.
//!
//! The carry flag is one per thread, in a slot of its own (allocated when the model says some
//! instruction reads or writes it, [`Instruction::carry`]): an instruction with `.cc` writes
//! the carry out of its addition (the borrow out of its subtraction), `addc`/`subc`/`madc` add
//! it in (take it away). The PTX ISA does not preserve it across calls; the emulator sets it to
//! zero before a call and after it returns, and it reads zero before any write.
//!
//! [`Instruction::carry`]: jitseam_ptx::inst::Instruction::carry

use super::class::{irnd, rnd};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad, full};
use super::{CARRY_IN, CARRY_MUL_HI, CARRY_MUL_LO, CARRY_OUT, CARRY_SUB, F_SIGNED, Inst, NONE, Op};
use jitseam_ptx::inst::{Flag, Opcode};

impl Decoder<'_> {
    pub(super) fn carry(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        let ty = self.one_type(ctx)?;
        use jitseam_ptx::ScalarType as T;
        let (bits, signed) = match ty {
            T::U32 => (32, false),
            T::S32 => (32, true),
            T::U64 => (64, false),
            T::S64 => (64, true),
            _ => {
                return Err(self.invalid(
                    ctx,
                    "extended-precision arithmetic takes .u32, .s32, .u64 or .s64",
                ));
            }
        };
        let multiplies = matches!(opcode, Opcode::Mad | Opcode::Madc);
        let halves: &[Flag] = if multiplies {
            &[Flag::Cc, Flag::Lo, Flag::Hi]
        } else {
            &[Flag::Cc]
        };
        if !m.flags_within(halves) || rnd(m).is_some() || irnd(m).is_some() {
            return Err(self.invalid(
                ctx,
                "a modifier extended-precision arithmetic does not take",
            ));
        }
        let carry = ins.carry();
        let mut k = 0u8;
        if carry.reads {
            k |= CARRY_IN;
        }
        if carry.writes {
            k |= CARRY_OUT;
        }
        if matches!(opcode, Opcode::Sub | Opcode::Subc) {
            k |= CARRY_SUB;
        }
        if multiplies {
            k |= match (m.has(Flag::Lo), m.has(Flag::Hi)) {
                (true, false) => CARRY_MUL_LO,
                (false, true) => CARRY_MUL_HI,
                _ => return Err(self.invalid(ctx, "needs .lo or .hi")),
            };
        }
        let Some(flag) = self.carry else {
            return bad("the carry flag");
        };
        self.expect_count(ctx, if multiplies { 4 } else { 3 })?;
        let mut inst = Inst::new(Op::Carry);
        inst.k = k;
        inst.w = bits;
        if signed {
            inst.f |= F_SIGNED;
        }
        inst.e = if k & (CARRY_IN | CARRY_OUT) != 0 {
            flag
        } else {
            NONE
        };
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        if multiplies {
            inst.c = self.src(ctx, 3, ty)?;
        }
        self.push(ctx, inst);
        Ok(())
    }

    /// Around a call: the carry flag set to zero, when the program has one (the PTX ISA does not
    /// preserve it across calls).
    pub(super) fn clear_carry(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        if let Some(flag) = self.carry {
            let mut inst = Inst::new(Op::Mov);
            inst.d = flag;
            inst.a = full(self.const_slot(0))?;
            self.push(ctx, inst);
        }
        Ok(())
    }
}
