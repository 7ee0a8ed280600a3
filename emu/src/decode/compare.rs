//! Comparisons and selection: `setp` (with its combining predicate; on half precision one
//! predicate per half), `set` (a comparison written as a value) and `selp`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::half::half_format;
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{
    CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NAN, CMP_NE, CMP_NUM, CMP_UNORDERED, F_FTZ,
    F_NEG_C, F_SIGNED, F_X2, FMT_BF16, FMT_F16, FMT_F32, FMT_F64, Inst, NONE, Op, SET_BF16,
    SET_F16, SET_F32, SET_INT16, SET_INT32, SET_PRED,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::body::Operand;

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
        if !m.extra.is_empty() || m.rnd.is_some() || m.irnd.is_some() || m.sat || m.approx {
            return bad("this modifier on a comparison");
        }
        let mut inst = Inst::new(Op::SetpI);
        match class(ty) {
            Class::Int { bits, signed } => {
                let (code, force_unsigned) = self.int_cmp(ctx, cmp)?;
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
                inst.k = self.float_cmp(ctx, cmp)?;
                if m.ftz {
                    inst.f |= F_FTZ;
                }
            }
            Class::F16 | Class::BF16 | Class::F16x2 | Class::BF16x2 => {
                return self.setp_half(ctx, m, ty, cmp);
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

    /// `CMP_*` code of a comparison of integers, and whether it compares as unsigned whatever
    /// the type (`.lo`, `.ls`, `.hi`, `.hs`).
    fn int_cmp(&self, ctx: &Ctx<'_, 'a, '_>, cmp: &str) -> EResult<(u8, bool)> {
        Ok(match cmp {
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
        })
    }

    fn float_cmp(&self, ctx: &Ctx<'_, 'a, '_>, cmp: &str) -> EResult<u8> {
        Ok(match cmp {
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
        })
    }

    /// `setp` on f16/bf16: one predicate; on `x2` types `p|q`, `p` from the low halves and `q`
    /// from the high halves, each combined with `c` on its own.
    fn setp_half(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        ty: ScalarType,
        cmp: &str,
    ) -> EResult<()> {
        let Some((fmt, x2)) = half_format(ty) else {
            return bad("comparisons of this type");
        };
        if m.ftz && fmt == FMT_BF16 {
            return bad(".ftz on bf16");
        }
        let mut inst = Inst::new(Op::Set);
        inst.k = self.float_cmp(ctx, cmp)?;
        inst.w = fmt;
        if m.ftz {
            inst.f |= F_FTZ;
        }
        inst.imm = m.bool_op | (SET_PRED << 8);
        let at = ctx.instruction.range.start;
        let (p, q) = match self.operand(ctx, 0)?.clone() {
            Operand::PredPair(p, q) if x2 => {
                let p = self.reg(ctx.scopes, p, at).map_err(Ok)?;
                let q = if q == "_" {
                    self.sink
                } else {
                    self.reg(ctx.scopes, q, at).map_err(Ok)?
                };
                (p, q)
            }
            Operand::PredPair(..) => {
                return Err(self.invalid(ctx, "a scalar half-precision setp writes one predicate"));
            }
            _ if x2 => return Err(self.invalid(ctx, "an x2 setp writes p|q")),
            _ => (self.dst(ctx, 0)?, NONE),
        };
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        if ctx.instruction.operands.len() == 4 {
            let (c, negated) = self.pred_src(ctx, 3)?;
            inst.c = c;
            if negated {
                inst.f |= F_NEG_C;
            }
        }
        if !x2 {
            inst.d = p;
            self.push(ctx, inst);
            return Ok(());
        }
        inst.f |= F_X2;
        let (mut low, mut high) = (inst, inst);
        low.d = p;
        high.d = q;
        high.imm |= 1 << 16;
        // Both halves read `c`: write the one that overwrites it last.
        let order = if p == inst.c {
            [high, low]
        } else {
            [low, high]
        };
        for i in order {
            self.push(ctx, i);
        }
        Ok(())
    }

    /// `set`: a comparison written as a value of the destination type (all ones or 1.0 for
    /// true, zero for false), per half for `x2` sources.
    pub(super) fn set(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let [dty, sty] = m.types.as_slice() else {
            return Err(self.invalid(ctx, "set needs a destination and a source type"));
        };
        let (dty, sty) = (*dty, *sty);
        let n = ctx.instruction.operands.len();
        if n != 3 && n != 4 {
            return Err(self.invalid(ctx, "wrong number of operands"));
        }
        if (n == 4) != (m.bool_op != 0) {
            return Err(self.invalid(ctx, "a combining predicate goes with .and, .or or .xor"));
        }
        let Some(cmp) = m.cmp else {
            return Err(self.invalid(ctx, "set needs a comparison"));
        };
        if !m.extra.is_empty() || m.rnd.is_some() || m.irnd.is_some() || m.sat || m.approx {
            return bad("this modifier on a comparison");
        }
        let mut inst = Inst::new(Op::Set);
        let ftz_ok;
        let x2 = match class(sty) {
            Class::Int { bits, signed } => {
                let (code, force_unsigned) = self.int_cmp(ctx, cmp)?;
                inst.k = code;
                inst.w = bits;
                if signed && !force_unsigned {
                    inst.f |= F_SIGNED;
                }
                ftz_ok = false;
                false
            }
            Class::F32 | Class::F64 | Class::F16 | Class::BF16 | Class::F16x2 | Class::BF16x2 => {
                inst.k = self.float_cmp(ctx, cmp)?;
                let (fmt, x2) = match class(sty) {
                    Class::F32 => (FMT_F32, false),
                    Class::F64 => (FMT_F64, false),
                    _ => half_format(sty).unwrap_or((FMT_F16, false)),
                };
                inst.w = fmt;
                ftz_ok = matches!(fmt, FMT_F32 | FMT_F16);
                x2
            }
            _ => return bad("comparisons of this type"),
        };
        if m.ftz && !ftz_ok {
            return bad(".ftz on this comparison");
        }
        if m.ftz {
            inst.f |= F_FTZ;
        }
        use ScalarType as S;
        let out = match (dty, x2) {
            (S::U16 | S::S16, false) => SET_INT16,
            (S::U32 | S::S32, _) => SET_INT32,
            (S::F32, false) => SET_F32,
            (S::F16, false) => SET_F16,
            (S::BF16, false) => SET_BF16,
            (S::F16x2, true) if sty == S::F16x2 => SET_F16,
            (S::BF16x2, true) if sty == S::BF16x2 => SET_BF16,
            _ => return bad("set to this destination type"),
        };
        if x2 {
            inst.f |= F_X2;
        }
        inst.imm = m.bool_op | (out << 8);
        let d = self.dst(ctx, 0)?;
        inst.d = d;
        inst.a = self.src(ctx, 1, sty)?;
        inst.b = self.src(ctx, 2, sty)?;
        if n == 4 {
            let (c, negated) = self.pred_src(ctx, 3)?;
            inst.c = c;
            if negated {
                inst.f |= F_NEG_C;
            }
        }
        self.push(ctx, inst);
        self.sign_extend_dst(ctx, d, dty);
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
