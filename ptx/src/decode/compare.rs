//! Comparisons and selection: `setp` (with its combining predicate) and `selp`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{
    CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NAN, CMP_NE, CMP_NUM, CMP_UNORDERED, F_FTZ,
    F_NEG_C, F_SIGNED, Inst, NONE, Op,
};
use crate::body::Operand;
use crate::model::ScalarType;

impl<'a> Decoder<'a> {
    pub(super) fn setp(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        let n = ctx.instruction.operands.len();
        if n != 3 && n != 4 {
            return Err(self.invalid(ctx, "wrong number of operands"));
        }
        if (n == 4) != (m.bool_op != 0) {
            return Err(self.invalid(ctx, "a combining predicate goes with .and, .or or .xor"));
        }
        let Some(cmp) = m.cmp else {
            return Err(self.invalid(ctx, "setp needs a comparison"));
        };
        let mut inst = Inst::new(Op::SetpI);
        match class(ty) {
            Class::Int { bits, signed } => {
                let (code, force_unsigned) = match cmp {
                    ".eq" => (CMP_EQ, false),
                    ".ne" => (CMP_NE, false),
                    ".lt" => (CMP_LT, false),
                    ".le" => (CMP_LE, false),
                    ".gt" => (CMP_GT, false),
                    ".ge" => (CMP_GE, false),
                    ".lo" => (CMP_LT, true),
                    ".ls" => (CMP_LE, true),
                    ".hi" => (CMP_GT, true),
                    ".hs" => (CMP_GE, true),
                    _ => return Err(self.invalid(ctx, "a float comparison on integers")),
                };
                inst.k = code;
                inst.w = bits;
                if signed && !force_unsigned {
                    inst.f |= F_SIGNED;
                }
            }
            Class::F32 | Class::F64 => {
                inst.op = if matches!(class(ty), Class::F32) {
                    Op::SetpF32
                } else {
                    Op::SetpF64
                };
                inst.k = match cmp {
                    ".eq" => CMP_EQ,
                    ".ne" => CMP_NE,
                    ".lt" => CMP_LT,
                    ".le" => CMP_LE,
                    ".gt" => CMP_GT,
                    ".ge" => CMP_GE,
                    ".equ" => CMP_EQ + CMP_UNORDERED,
                    ".neu" => CMP_NE + CMP_UNORDERED,
                    ".ltu" => CMP_LT + CMP_UNORDERED,
                    ".leu" => CMP_LE + CMP_UNORDERED,
                    ".gtu" => CMP_GT + CMP_UNORDERED,
                    ".geu" => CMP_GE + CMP_UNORDERED,
                    ".num" => CMP_NUM,
                    ".nan" => CMP_NAN,
                    _ => return Err(self.invalid(ctx, "an integer comparison on floats")),
                };
                if m.ftz {
                    inst.f |= F_FTZ;
                }
            }
            _ => return bad("comparisons of this type"),
        }
        match self.operand(ctx, 0)?.clone() {
            Operand::PredPair(p, q) => {
                let at = ctx.instruction.range.start;
                inst.d = self.reg(ctx.scopes, p, at).map_err(Ok)?;
                inst.e = if q == "_" {
                    NONE
                } else {
                    self.reg(ctx.scopes, q, at).map_err(Ok)?
                };
            }
            _ => inst.d = self.dst(ctx, 0)?,
        }
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        if n == 4 {
            let (c, negated) = self.pred_src(ctx, 3)?;
            inst.c = c;
            if negated {
                inst.f |= F_NEG_C;
            }
            inst.imm = m.bool_op;
        }
        self.push(ctx, inst);
        Ok(())
    }

    pub(super) fn selp(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 4)?;
        let mut inst = Inst::new(Op::Selp);
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        inst.c = self.src(ctx, 3, ScalarType::Pred)?;
        self.push(ctx, inst);
        Ok(())
    }
}
