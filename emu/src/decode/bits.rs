//! Bitwise logic and shifts: `and`, `or`, `xor` (also on predicates), `shl`, `shr`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{F_SIGNED, Inst, Op};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::Opcode;

impl Decoder<'_> {
    pub(super) fn bitwise(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        let ty = self.one_type(ctx)?;
        if !m.flags_within(&[]) || m.rounding.is_some() || m.int_rounding.is_some() {
            return bad("this modifier on a bitwise operation");
        }
        self.expect_count(ctx, 3)?;
        let mut inst = Inst::new(Op::Mov);
        let logic = matches!(opcode, Opcode::And | Opcode::Or | Opcode::Xor);
        let (bits, signed) = match class(ty) {
            Class::Int { bits, signed } => (bits, signed),
            Class::Pred if logic => (1, false),
            _ => return bad("this type"),
        };
        inst.op = match opcode {
            Opcode::And => Op::And,
            Opcode::Or => Op::Or,
            Opcode::Xor => Op::Xor,
            Opcode::Shl => Op::Shl,
            _ => Op::Shr,
        };
        inst.w = bits;
        if signed && opcode == Opcode::Shr {
            inst.f |= F_SIGNED;
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        let bty = if logic { ty } else { ScalarType::U32 };
        inst.b = self.src(ctx, 2, bty)?;
        self.push(ctx, inst);
        Ok(())
    }
}
