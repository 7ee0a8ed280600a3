//! Comparisons and selection: `setp` (with its combining predicate; on half precision one
//! predicate per half), `set` (a comparison written as a value) and `selp`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::half::half_format;
use super::operands::{EResult, bad};
use super::{
    CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NAN, CMP_NE, CMP_NUM, CMP_UNORDERED, F_FTZ,
    F_NEG_C, F_SIGNED, F_X2, FMT_BF16, FMT_F16, FMT_F32, FMT_F64, Inst, NONE, Op, SET_BF16,
    SET_F16, SET_F32, SET_INT16, SET_INT32, SET_PRED,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{BoolOp, Compare, Flag, Modifiers, Operand};

/// The `imm` code of a combining operation: 0 none, 1 and, 2 or, 3 xor.
pub(super) fn bool_code(m: &Modifiers) -> i64 {
    match m.bool_op {
        None => 0,
        Some(BoolOp::And) => 1,
        Some(BoolOp::Or) => 2,
        Some(BoolOp::Xor) => 3,
    }
}

impl Decoder<'_> {
    /// The operand count and the comparison of `setp` or `set`, with the checks of the
    /// combining operation and the modifiers both share; `missing` says what is wrong without
    /// a comparison.
    fn comparison(&self, ctx: &Ctx<'_>, missing: &'static str) -> EResult<(usize, Compare)> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let n = ins.operands.len();
        if n != 3 && n != 4 {
            return Err(self.invalid(ctx, "wrong number of operands"));
        }
        if (n == 4) != m.bool_op.is_some() {
            return Err(self.invalid(ctx, "a combining predicate goes with .and, .or or .xor"));
        }
        let Some(cmp) = m.cmp else {
            return Err(self.invalid(ctx, missing));
        };
        if !m.flags_within(&[Flag::Ftz]) || m.rounding.is_some() || m.int_rounding.is_some() {
            return bad("this modifier on a comparison");
        }
        Ok((n, cmp))
    }

    pub(super) fn setp(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let ty = self.one_type(ctx)?;
        let (n, cmp) = self.comparison(ctx, "setp needs a comparison")?;
        let mut inst = Inst::new(Op::SetpI);
        match class(ty) {
            Class::Int { bits, signed } => {
                if m.has(Flag::Ftz) {
                    return bad(".ftz on an integer comparison");
                }
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
                if m.has(Flag::Ftz) {
                    inst.f |= F_FTZ;
                }
            }
            Class::F16 | Class::BF16 | Class::F16x2 | Class::BF16x2 => {
                return self.setp_half(ctx, ty, cmp);
            }
            _ => return bad("comparisons of this type"),
        }
        match self.operand(ctx, 0)? {
            Operand::Pair(p, q) => {
                inst.d = self.reg_slot(ctx, *p)?;
                inst.e = match q {
                    None => NONE,
                    Some(q) => self.reg_slot(ctx, *q)?,
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
            inst.imm = bool_code(m);
        }
        self.push(ctx, inst);
        Ok(())
    }

    /// `CMP_*` code of a comparison of integers, and whether it compares as unsigned whatever
    /// the type (`.lo`, `.ls`, `.hi`, `.hs`).
    fn int_cmp(&self, ctx: &Ctx<'_>, cmp: Compare) -> EResult<(u8, bool)> {
        use Compare as C;
        Ok(match cmp {
            C::Eq => (CMP_EQ, false),
            C::Ne => (CMP_NE, false),
            C::Lt => (CMP_LT, false),
            C::Le => (CMP_LE, false),
            C::Gt => (CMP_GT, false),
            C::Ge => (CMP_GE, false),
            C::Lo => (CMP_LT, true),
            C::Ls => (CMP_LE, true),
            C::Hi => (CMP_GT, true),
            C::Hs => (CMP_GE, true),
            C::Equ | C::Neu | C::Ltu | C::Leu | C::Gtu | C::Geu | C::Num | C::Nan => {
                return Err(self.invalid(ctx, "a float comparison on integers"));
            }
        })
    }

    fn float_cmp(&self, ctx: &Ctx<'_>, cmp: Compare) -> EResult<u8> {
        use Compare as C;
        Ok(match cmp {
            C::Eq => CMP_EQ,
            C::Ne => CMP_NE,
            C::Lt => CMP_LT,
            C::Le => CMP_LE,
            C::Gt => CMP_GT,
            C::Ge => CMP_GE,
            C::Equ => CMP_EQ + CMP_UNORDERED,
            C::Neu => CMP_NE + CMP_UNORDERED,
            C::Ltu => CMP_LT + CMP_UNORDERED,
            C::Leu => CMP_LE + CMP_UNORDERED,
            C::Gtu => CMP_GT + CMP_UNORDERED,
            C::Geu => CMP_GE + CMP_UNORDERED,
            C::Num => CMP_NUM,
            C::Nan => CMP_NAN,
            C::Lo | C::Ls | C::Hi | C::Hs => {
                return Err(self.invalid(ctx, "an integer comparison on floats"));
            }
        })
    }

    /// `setp` on f16/bf16: one predicate; on `x2` types `p|q`, `p` from the low halves and `q`
    /// from the high halves, each combined with `c` on its own.
    fn setp_half(&mut self, ctx: &mut Ctx<'_>, ty: ScalarType, cmp: Compare) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let Some((fmt, x2)) = half_format(ty) else {
            return bad("comparisons of this type");
        };
        let ftz = m.has(Flag::Ftz);
        if ftz && fmt == FMT_BF16 {
            return bad(".ftz on bf16");
        }
        let mut inst = Inst::new(Op::Set);
        inst.k = self.float_cmp(ctx, cmp)?;
        inst.w = fmt;
        if ftz {
            inst.f |= F_FTZ;
        }
        inst.imm = bool_code(m) | (SET_PRED << 8);
        let (p, q) = match self.operand(ctx, 0)? {
            Operand::Pair(p, q) if x2 => {
                let p = self.reg_slot(ctx, *p)?;
                let q = match q {
                    None => self.sink,
                    Some(q) => self.reg_slot(ctx, *q)?,
                };
                (p, q)
            }
            Operand::Pair(..) => {
                return Err(self.invalid(ctx, "a scalar half-precision setp writes one predicate"));
            }
            _ if x2 => return Err(self.invalid(ctx, "an x2 setp writes p|q")),
            _ => (self.dst(ctx, 0)?, NONE),
        };
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        if ctx.ins.operands.len() == 4 {
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
    pub(super) fn set(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let [dty, sty] = m.types.as_slice() else {
            return Err(self.invalid(ctx, "set needs a destination and a source type"));
        };
        let (dty, sty) = (*dty, *sty);
        let (n, cmp) = self.comparison(ctx, "set needs a comparison")?;
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
        let ftz = m.has(Flag::Ftz);
        if ftz && !ftz_ok {
            return bad(".ftz on this comparison");
        }
        if ftz {
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
        inst.imm = bool_code(m) | (out << 8);
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

    pub(super) fn selp(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ty = self.one_type(ctx)?;
        if !ctx.ins.mods.flags_within(&[]) {
            return bad("this modifier on selp");
        }
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
