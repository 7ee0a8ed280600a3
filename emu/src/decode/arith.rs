//! Arithmetic: integer, f32 and f64 (half precision is `half`'s) — `add` … `max`, `mad`/`fma`, `div`/`rem`, and
//! the one-operand `neg`, `abs`, `not`, `sqrt`, `rcp` and approximate transcendentals.

use super::class::{Class, class, int_type};
use super::decoder::{Ctx, Decoder};
use super::half::is_half_form;
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{AR_ADD, AR_FMA, AR_MUL, AR_SUB, F_SIGNED, Inst, Op, RN};

impl<'a> Decoder<'a> {
    pub(super) fn arith(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        if is_half_form(ty, opcode, m) {
            return self.half(ctx, m, opcode, ty);
        }
        if !m.extra.is_empty() {
            return bad("this modifier on arithmetic");
        }
        let three = matches!(opcode, "mad" | "fma");
        self.expect_count(ctx, if three { 4 } else { 3 })?;
        let mut inst = Inst::new(Op::Mov);
        match class(ty) {
            Class::Int { bits, signed } => {
                if m.sat || m.rnd.is_some() || m.ftz || m.approx || m.full {
                    return bad("these modifiers on integer arithmetic");
                }
                let wide = m.wide;
                inst.op = match opcode {
                    "add" => Op::Add,
                    "sub" => Op::Sub,
                    "mul" if wide => Op::MulWide,
                    "mul" if m.hi => Op::MulHi,
                    "mul" if m.lo => Op::MulLo,
                    "mad" if wide => Op::MadWide,
                    "mad" if m.lo => Op::Mad,
                    "div" => Op::Div,
                    "rem" => Op::Rem,
                    "min" => Op::Min,
                    "max" => Op::Max,
                    "mul" | "mad" => return Err(self.invalid(ctx, "needs .lo, .hi or .wide")),
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
            }
            Class::F32 => {
                let rnd = m.rnd;
                inst.op = match (opcode, rnd) {
                    ("add", None | Some(RN)) => Op::AddF32,
                    ("sub", None | Some(RN)) => Op::SubF32,
                    ("mul", None | Some(RN)) => Op::MulF32,
                    ("fma" | "mad", Some(RN)) => Op::FmaF32,
                    ("add" | "sub" | "mul" | "fma" | "mad", Some(r)) => {
                        inst.k = match opcode {
                            "add" => AR_ADD,
                            "sub" => AR_SUB,
                            "mul" => AR_MUL,
                            _ => AR_FMA,
                        };
                        inst.imm = i64::from(r);
                        Op::ArithF32Dir
                    }
                    ("fma" | "mad", None) => return Err(self.invalid(ctx, "needs a rounding mode")),
                    ("div", Some(RN)) if !m.approx && !m.full => Op::DivF32,
                    ("div", None) if m.approx || m.full => Op::DivF32,
                    ("div", _) => return bad("directed rounding of division"),
                    ("min", None) => Op::MinF32,
                    ("max", None) => Op::MaxF32,
                    _ => return bad("this float operation"),
                };
                self.float_flags(&mut inst, m);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            Class::F64 => {
                if m.ftz || m.sat {
                    return bad("these modifiers on f64");
                }
                inst.op = match (opcode, m.rnd) {
                    ("add", None | Some(RN)) => Op::AddF64,
                    ("sub", None | Some(RN)) => Op::SubF64,
                    ("mul", None | Some(RN)) => Op::MulF64,
                    ("fma" | "mad", Some(RN)) => Op::FmaF64,
                    ("div", Some(RN)) => Op::DivF64,
                    ("min", None) => Op::MinF64,
                    ("max", None) => Op::MaxF64,
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

    pub(super) fn unary(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        if is_half_form(ty, opcode, m) {
            return self.half(ctx, m, opcode, ty);
        }
        if !m.extra.is_empty() {
            return bad("this modifier on arithmetic");
        }
        self.expect_count(ctx, 2)?;
        let mut inst = Inst::new(Op::Mov);
        match class(ty) {
            Class::Int { bits, signed } => {
                inst.op = match opcode {
                    "neg" if signed => Op::NegI,
                    "abs" if signed => Op::AbsI,
                    "not" => Op::Not,
                    _ => return bad("this integer operation"),
                };
                inst.w = bits;
            }
            Class::Pred if opcode == "not" => {
                inst.op = Op::Not;
                inst.w = 1;
            }
            Class::F32 => {
                let approx = m.approx;
                inst.op = match (opcode, m.rnd) {
                    ("neg", None) => Op::NegF32,
                    ("abs", None) => Op::AbsF32,
                    ("sqrt", Some(RN)) => Op::SqrtF32,
                    ("sqrt", None) if approx => Op::SqrtF32,
                    ("rsqrt", None) if approx => Op::RsqrtF32,
                    ("rcp", Some(RN)) => Op::RcpF32,
                    ("rcp", None) if approx => Op::RcpF32,
                    ("ex2", None) if approx => Op::Ex2F32,
                    ("lg2", None) if approx => Op::Lg2F32,
                    ("sin", None) if approx => Op::SinF32,
                    ("cos", None) if approx => Op::CosF32,
                    ("tanh", None) if approx => Op::TanhF32,
                    _ => return bad("this f32 operation or rounding mode"),
                };
                self.float_flags(&mut inst, m);
            }
            Class::F64 => {
                if m.sat {
                    return bad("saturation on f64");
                }
                inst.op = match (opcode, m.rnd) {
                    ("neg", None) => Op::NegF64,
                    ("abs", None) => Op::AbsF64,
                    ("sqrt", Some(RN)) => Op::SqrtF64,
                    ("rsqrt", None) if m.approx => Op::RsqrtF64,
                    ("rcp", Some(RN)) => Op::RcpF64,
                    ("rcp", None) if m.approx => Op::RcpF64,
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
