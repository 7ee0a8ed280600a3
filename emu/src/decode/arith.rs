//! Arithmetic: integer, f32 and f64 (half precision is `half`'s, extended precision `carry`'s)
//! — `add` … `max`, `mad`/`fma`, `div`/`rem`, and the one-operand `neg`, `abs`, `not`, `sqrt`,
//! `rcp` and approximate transcendentals.

use super::class::{Class, class, float_flags, int_type, irnd, rnd};
use super::decoder::{Ctx, Decoder};
use super::half::is_half_form;
use super::operands::{EResult, bad};
use super::{AR_ADD, AR_FMA, AR_MUL, AR_SUB, CARRY_MUL_HI, F_SIGNED, Inst, Op, RN};
use jitseam_ptx::inst::{Flag, Opcode};

impl Decoder<'_> {
    pub(super) fn arith(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        let ty = self.one_type(ctx)?;
        if is_half_form(ty, opcode, m) {
            return self.half(ctx, ty);
        }
        use Flag as F;
        if !m.flags_within(&[
            F::Ftz,
            F::Sat,
            F::Approx,
            F::Full,
            F::Lo,
            F::Hi,
            F::Wide,
            F::Relu,
        ]) {
            return bad("this modifier on arithmetic");
        }
        // `.relu` is the integer `min`/`max`'s alone here (the half forms took theirs above).
        let relu = m.has(F::Relu);
        if relu
            && !(matches!(opcode, Opcode::Min | Opcode::Max)
                && matches!(
                    class(ty),
                    Class::Int {
                        signed: true,
                        bits: 16 | 32
                    }
                ))
        {
            return bad(".relu outside signed 16- and 32-bit min and max");
        }
        let three = matches!(opcode, Opcode::Mad | Opcode::Fma);
        self.expect_count(ctx, if three { 4 } else { 3 })?;
        let mut inst = Inst::new(Op::Mov);
        let rounding = rnd(m);
        match class(ty) {
            Class::Int { bits, signed } => {
                if opcode == Opcode::Mad && m.has(F::Hi) && m.has(F::Sat) {
                    return bad("mad.hi.sat (the saturating high half)");
                }
                if m.has(F::Sat)
                    || rounding.is_some()
                    || irnd(m).is_some()
                    || m.has(F::Ftz)
                    || m.has(F::Approx)
                    || m.has(F::Full)
                {
                    return bad("these modifiers on integer arithmetic");
                }
                let (wide, lo, hi) = (m.has(F::Wide), m.has(F::Lo), m.has(F::Hi));
                let multiplies = matches!(opcode, Opcode::Mul | Opcode::Mad);
                if !multiplies && (wide || lo || hi) {
                    return Err(self.invalid(ctx, ".lo, .hi and .wide belong to mul and mad"));
                }
                if u8::from(wide) + u8::from(lo) + u8::from(hi) > 1 {
                    return Err(self.invalid(ctx, "one of .lo, .hi or .wide"));
                }
                inst.op = match opcode {
                    Opcode::Add => Op::Add,
                    Opcode::Sub => Op::Sub,
                    Opcode::Mul if wide => Op::MulWide,
                    Opcode::Mul if hi => Op::MulHi,
                    Opcode::Mul if lo => Op::MulLo,
                    Opcode::Mad if wide => Op::MadWide,
                    Opcode::Mad if lo => Op::Mad,
                    // The high half of the product plus `c`: the extended-precision form
                    // without the carry.
                    Opcode::Mad if hi => {
                        inst.k = CARRY_MUL_HI;
                        Op::Carry
                    }
                    Opcode::Div => Op::Div,
                    Opcode::Rem => Op::Rem,
                    Opcode::Min => Op::Min,
                    Opcode::Max => Op::Max,
                    Opcode::Mul | Opcode::Mad => {
                        return Err(self.invalid(ctx, "needs .lo, .hi or .wide"));
                    }
                    _ => return bad("this integer operation"),
                };
                if wide && bits > 32 {
                    return Err(self.invalid(ctx, ".wide needs a 16- or 32-bit type"));
                }
                inst.w = bits;
                if signed {
                    inst.f |= F_SIGNED;
                }
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    let cty = if wide { int_type(bits * 2) } else { ty };
                    inst.c = self.src(ctx, 3, cty)?;
                }
                if relu {
                    // `max(min(a, b), 0)` (or of `max`): the result clamped at zero, signed.
                    let d = inst.d;
                    self.push(ctx, inst);
                    let mut clamp = Inst::new(Op::Max);
                    clamp.w = bits;
                    clamp.f |= F_SIGNED;
                    clamp.d = d;
                    clamp.a = d;
                    clamp.b = self.const_slot(0).map_err(Ok)?;
                    self.push(ctx, clamp);
                    return Ok(());
                }
            }
            Class::F32 => {
                if m.has(F::Lo) || m.has(F::Hi) || m.has(F::Wide) {
                    return Err(self.invalid(ctx, ".lo, .hi and .wide are integer modifiers"));
                }
                let (approx, full) = (m.has(F::Approx), m.has(F::Full));
                inst.op = match (opcode, rounding) {
                    (Opcode::Add, None | Some(RN)) if !approx && !full => Op::AddF32,
                    (Opcode::Sub, None | Some(RN)) if !approx && !full => Op::SubF32,
                    (Opcode::Mul, None | Some(RN)) if !approx && !full => Op::MulF32,
                    (Opcode::Fma | Opcode::Mad, Some(RN)) if !approx && !full => Op::FmaF32,
                    (
                        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Fma | Opcode::Mad,
                        Some(r),
                    ) if !approx && !full => {
                        inst.k = match opcode {
                            Opcode::Add => AR_ADD,
                            Opcode::Sub => AR_SUB,
                            Opcode::Mul => AR_MUL,
                            _ => AR_FMA,
                        };
                        inst.imm = i64::from(r);
                        Op::ArithF32Dir
                    }
                    (Opcode::Fma | Opcode::Mad, None) => {
                        return Err(self.invalid(ctx, "needs a rounding mode"));
                    }
                    (Opcode::Div, Some(RN)) if !approx && !full => Op::DivF32,
                    (Opcode::Div, None) if approx || full => Op::DivF32,
                    (Opcode::Div, _) => return bad("directed rounding of division"),
                    (Opcode::Min, None) if !approx && !full => Op::MinF32,
                    (Opcode::Max, None) if !approx && !full => Op::MaxF32,
                    _ => return bad("this float operation"),
                };
                float_flags(&mut inst, m);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            Class::F64 => {
                if m.has(F::Ftz) || m.has(F::Sat) {
                    return bad("these modifiers on f64");
                }
                if m.has(F::Lo) || m.has(F::Hi) || m.has(F::Wide) {
                    return Err(self.invalid(ctx, ".lo, .hi and .wide are integer modifiers"));
                }
                if m.has(F::Approx) || m.has(F::Full) {
                    return bad("this f64 operation or rounding mode");
                }
                inst.op = match (opcode, rounding) {
                    (Opcode::Add, None | Some(RN)) => Op::AddF64,
                    (Opcode::Sub, None | Some(RN)) => Op::SubF64,
                    (Opcode::Mul, None | Some(RN)) => Op::MulF64,
                    (Opcode::Fma | Opcode::Mad, Some(RN)) => Op::FmaF64,
                    (Opcode::Div, Some(RN)) => Op::DivF64,
                    (Opcode::Min, None) => Op::MinF64,
                    (Opcode::Max, None) => Op::MaxF64,
                    _ => return bad("this f64 operation or rounding mode"),
                };
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            _ => return bad("this type"),
        }
        self.push(ctx, inst);
        Ok(())
    }

    pub(super) fn unary(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        let ty = self.one_type(ctx)?;
        if is_half_form(ty, opcode, m) {
            return self.half(ctx, ty);
        }
        use Flag as F;
        if !m.flags_within(&[F::Ftz, F::Sat, F::Approx]) {
            return bad("this modifier on arithmetic");
        }
        self.expect_count(ctx, 2)?;
        let mut inst = Inst::new(Op::Mov);
        let (rounding, approx) = (rnd(m), m.has(F::Approx));
        match class(ty) {
            Class::Int { bits, signed } => {
                if !m.flags_within(&[]) || rounding.is_some() || irnd(m).is_some() {
                    return bad("these modifiers on integer arithmetic");
                }
                inst.op = match opcode {
                    Opcode::Neg if signed => Op::NegI,
                    Opcode::Abs if signed => Op::AbsI,
                    Opcode::Not => Op::Not,
                    _ => return bad("this integer operation"),
                };
                inst.w = bits;
            }
            Class::Pred if opcode == Opcode::Not => {
                if !m.flags_within(&[]) || rounding.is_some() {
                    return bad("these modifiers on a predicate");
                }
                inst.op = Op::Not;
                inst.w = 1;
            }
            Class::F32 => {
                inst.op = match (opcode, rounding) {
                    (Opcode::Neg, None) if !approx => Op::NegF32,
                    (Opcode::Abs, None) if !approx => Op::AbsF32,
                    (Opcode::Sqrt, Some(RN)) if !approx => Op::SqrtF32,
                    (Opcode::Sqrt, None) if approx => Op::SqrtF32,
                    (Opcode::Rsqrt, None) if approx => Op::RsqrtF32,
                    (Opcode::Rcp, Some(RN)) if !approx => Op::RcpF32,
                    (Opcode::Rcp, None) if approx => Op::RcpF32,
                    (Opcode::Ex2, None) if approx => Op::Ex2F32,
                    (Opcode::Lg2, None) if approx => Op::Lg2F32,
                    (Opcode::Sin, None) if approx => Op::SinF32,
                    (Opcode::Cos, None) if approx => Op::CosF32,
                    (Opcode::Tanh, None) if approx => Op::TanhF32,
                    _ => return bad("this f32 operation or rounding mode"),
                };
                float_flags(&mut inst, m);
            }
            Class::F64 => {
                if m.has(F::Sat) {
                    return bad("saturation on f64");
                }
                inst.op = match (opcode, rounding) {
                    (Opcode::Neg, None) if !approx => Op::NegF64,
                    (Opcode::Abs, None) if !approx => Op::AbsF64,
                    (Opcode::Sqrt, Some(RN)) if !approx => Op::SqrtF64,
                    (Opcode::Rsqrt, None) if approx => Op::RsqrtF64,
                    (Opcode::Rcp, Some(RN)) if !approx => Op::RcpF64,
                    (Opcode::Rcp, None) if approx => Op::RcpF64,
                    _ => return bad("this f64 operation or rounding mode"),
                };
            }
            _ => return bad("this type"),
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        self.push(ctx, inst);
        Ok(())
    }
}
