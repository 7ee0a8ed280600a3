//! Bitwise logic and shifts: `and`, `or`, `xor` (also on predicates), `shl`, `shr`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{F_SIGNED, Inst, Op};
use jitseam_ptx::ScalarType;

impl<'a> Decoder<'a> {
    pub(super) fn bitwise(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 3)?;
        let mut inst = Inst::new(Op::Mov);
        let (bits, signed) = match class(ty) {
            Class::Int { bits, signed } => (bits, signed),
            Class::Pred if matches!(opcode, "and" | "or" | "xor") => (1, false),
            _ => return bad("this type"),
        };
        inst.op = match opcode {
            "and" => Op::And,
            "or" => Op::Or,
            "xor" => Op::Xor,
            "shl" => Op::Shl,
            _ => Op::Shr,
        };
        inst.w = bits;
        if signed && opcode == "shr" {
            inst.f |= F_SIGNED;
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        let bty = if matches!(opcode, "shl" | "shr") {
            ScalarType::U32
        } else {
            ty
        };
        inst.b = self.src(ctx, 2, bty)?;
        self.push(ctx, inst);
        Ok(())
    }
}
