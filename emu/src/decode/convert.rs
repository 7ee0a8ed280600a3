//! Moves and conversions: `mov` (including vector pack and unpack), `cvta`, `cvt` (with
//! `.relu`/`.satfinite` and the two-lane `f16x2`/`bf16x2` packing).

use super::class::{Class, class, float_flags, int_type, irnd, rnd};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad, full};
use super::{
    F_FTZ, F_SAT, F_SIGNED, FMT_BF16, FMT_F16, FMT_F32, FMT_F64, HM_RELU, HM_SATFINITE, Inst, Op,
    RN, RZ,
};
use crate::space::Space;
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{Flag, Operand};

impl Decoder<'_> {
    pub(super) fn mov(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let ty = self.one_type(ctx)?;
        if !ins.mods.flags_within(&[]) {
            return bad("this modifier on mov");
        }
        self.expect_count(ctx, 2)?;
        let bits = (ty.bytes() * 8) as u8;
        let (d, a) = (self.operand(ctx, 0)?, self.operand(ctx, 1)?);
        match (d, a) {
            (Operand::Vector(_), Operand::Vector(_)) => bad("vector to vector moves"),
            (Operand::Vector(parts), _) => {
                let lane_bits = lane_bits(bits, parts.len()).ok_or_else(|| {
                    self.invalid(ctx, "a vector that does not split the type evenly")
                })?;
                let start = self.lanes.len() as u32;
                for part in parts {
                    let slot = self.dst_operand(ctx, part)?;
                    self.lanes.push(slot);
                }
                let mut inst = Inst::new(Op::Unpack);
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = start;
                inst.c = parts.len() as u32;
                inst.w = lane_bits;
                self.push(ctx, inst);
                Ok(())
            }
            (_, Operand::Vector(parts)) => {
                let lane_bits = lane_bits(bits, parts.len()).ok_or_else(|| {
                    self.invalid(ctx, "a vector that does not split the type evenly")
                })?;
                let lane_ty = int_type(lane_bits);
                let mut slots = Vec::with_capacity(parts.len());
                for part in parts {
                    slots.push(self.src_operand(ctx, part, lane_ty)?);
                }
                let start = self.lanes.len() as u32;
                self.lanes.extend(slots);
                let mut inst = Inst::new(Op::Pack);
                inst.d = self.dst(ctx, 0)?;
                inst.b = start;
                inst.c = parts.len() as u32;
                inst.w = lane_bits;
                self.push(ctx, inst);
                Ok(())
            }
            (_, Operand::Name(name)) => {
                // The variable's (or kernel parameter's) address in its own state space.
                let sym = self.sym(ctx, *name)?;
                let addr = self.symbol_address(ctx, sym, None)?;
                if bits != 64 {
                    return bad("32-bit addresses");
                }
                let mut inst = Inst::new(Op::Mov);
                inst.d = self.dst(ctx, 0)?;
                inst.a = full(self.const_slot(addr))?;
                self.push(ctx, inst);
                Ok(())
            }
            _ => {
                let mut inst = Inst::new(Op::MovMask);
                let d = self.dst(ctx, 0)?;
                inst.d = d;
                inst.a = self.src(ctx, 1, ty)?;
                inst.w = if ty == ScalarType::Pred { 64 } else { bits };
                self.push(ctx, inst);
                self.sign_extend_dst(ctx, d, ty);
                Ok(())
            }
        }
    }

    /// `cvta.space` makes an address of `space` generic, `cvta.to.space` the reverse: the
    /// window's base added or taken away (nothing for the spaces whose addresses are already
    /// generic). A variable's name converts its address.
    pub(super) fn cvta(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let ty = self.one_type(ctx)?;
        if !m.flags_within(&[Flag::To]) {
            return bad("this modifier on cvta");
        }
        let to = m.has(Flag::To);
        let space = match Space::of(m.space) {
            Some(Space::Generic) | None => {
                return Err(self.invalid(ctx, "cvta needs a state space"));
            }
            Some(space) => space,
        };
        if ty.bytes() != 8 {
            return bad("32-bit addresses");
        }
        self.expect_count(ctx, 2)?;
        let d = self.dst(ctx, 0)?;
        let mut inst = Inst::new(Op::Add);
        inst.d = d;
        inst.w = 64;
        match self.operand(ctx, 1)? {
            Operand::Name(name) => {
                if to {
                    return bad("cvta.to of a variable");
                }
                let sym = self.sym(ctx, *name)?;
                let addr = self.symbol_address(ctx, sym, Some(space))?;
                inst.op = Op::Mov;
                inst.a = full(self.const_slot(space.generic_base().wrapping_add(addr)))?;
            }
            operand => {
                let base = space.generic_base();
                inst.a = self.src_operand(ctx, operand, ty)?;
                inst.b = full(self.const_slot(if to { base.wrapping_neg() } else { base }))?;
            }
        }
        self.push(ctx, inst);
        Ok(())
    }

    pub(super) fn cvt(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let [dty, sty] = m.types.as_slice() else {
            return Err(self.invalid(ctx, "cvt needs a destination and a source type"));
        };
        let (dty, sty) = (*dty, *sty);
        if !m.flags_within(&[Flag::Relu, Flag::Satfinite, Flag::Ftz, Flag::Sat]) {
            return bad("this modifier on a conversion");
        }
        if m.has(Flag::Relu)
            || m.has(Flag::Satfinite)
            || matches!(dty, ScalarType::F16x2 | ScalarType::BF16x2)
        {
            return self.cvt_half(ctx, dty, sty);
        }
        let (m_rnd, m_irnd, ftz, sat) = (rnd(m), irnd(m), m.has(Flag::Ftz), m.has(Flag::Sat));
        self.expect_count(ctx, 2)?;
        let mut inst = Inst::new(Op::Mov);
        let fmt = |c: &Class| match c {
            Class::F16 => Some(FMT_F16),
            Class::BF16 => Some(FMT_BF16),
            Class::F32 => Some(FMT_F32),
            Class::F64 => Some(FMT_F64),
            _ => None,
        };
        let (dc, sc) = (class(dty), class(sty));
        match (&dc, &sc) {
            (
                Class::Int {
                    bits: db,
                    signed: ds,
                },
                Class::Int {
                    bits: sb,
                    signed: ss,
                },
            ) => {
                if m_rnd.is_some() || m_irnd.is_some() || ftz {
                    return bad("these modifiers on integer conversions");
                }
                inst.op = Op::CvtInt;
                inst.w = *sb;
                inst.imm = i64::from(*db);
                if *ss {
                    inst.f |= F_SIGNED;
                }
                if sat {
                    // `.sat` clamps to the destination type's range, so its signedness counts.
                    inst.f |= F_SAT;
                    inst.k = u8::from(*ds);
                }
            }
            (_, Class::Int { bits, signed }) => {
                let Some(df) = fmt(&dc) else {
                    return bad("this conversion");
                };
                if m_irnd.is_some() || ftz {
                    return bad("these modifiers on int-to-float conversions");
                }
                inst.op = Op::CvtIntToFloat;
                inst.w = *bits;
                inst.k = df;
                inst.imm = i64::from(m_rnd.unwrap_or(RN));
                if *signed {
                    inst.f |= F_SIGNED;
                }
                if sat {
                    inst.f |= F_SAT;
                }
            }
            (Class::Int { bits, signed }, _) => {
                let Some(sf) = fmt(&sc) else {
                    return bad("this conversion");
                };
                let Some(r) = m_irnd else {
                    return Err(
                        self.invalid(ctx, "float-to-int conversions need .rni/.rzi/.rmi/.rpi")
                    );
                };
                if m_rnd.is_some() {
                    return Err(self.invalid(ctx, "float-to-int conversions need integer rounding"));
                }
                inst.op = Op::CvtFloatToInt;
                inst.w = *bits;
                inst.k = sf;
                inst.imm = i64::from(r);
                if *signed {
                    inst.f |= F_SIGNED;
                }
                if ftz {
                    inst.f |= F_FTZ;
                }
            }
            _ => {
                let (Some(df), Some(sf)) = (fmt(&dc), fmt(&sc)) else {
                    return bad("this conversion");
                };
                if m_rnd.is_some() && m_irnd.is_some() {
                    return Err(self.invalid(ctx, "two rounding modes"));
                }
                let narrowing = df < sf || (df == FMT_BF16 && sf == FMT_F16);
                if m_irnd.is_some() && df != sf {
                    return Err(self.invalid(ctx, "integer rounding needs equal types"));
                }
                // A rounding mode on a widening conversion (the ISA's own examples write
                // `cvt.f64.bf16.rp`) changes nothing: the value is exact.
                if narrowing && m_rnd.is_none() {
                    return Err(self.invalid(ctx, "a narrowing conversion needs a rounding mode"));
                }
                if ftz && (df != FMT_F32 && sf != FMT_F32) {
                    return bad(".ftz without f32");
                }
                inst.op = Op::CvtFloat;
                inst.k = sf;
                inst.w = df;
                // imm: 0..3 rounding of a narrowing conversion; 4..7 integer rounding; 8 exact.
                inst.imm = match (m_rnd, m_irnd) {
                    (Some(r), _) => i64::from(r),
                    (None, Some(r)) => 4 + i64::from(r),
                    (None, None) => 8,
                };
                float_flags(&mut inst, m);
            }
        }
        let d = self.dst(ctx, 0)?;
        inst.d = d;
        inst.a = self.src(ctx, 1, sty)?;
        self.push(ctx, inst);
        self.sign_extend_dst(ctx, d, dty);
        Ok(())
    }

    /// `cvt.{rn,rz}{.relu}{.satfinite}` from f32 to f16/bf16, and to `f16x2`/`bf16x2` from two
    /// f32s (`d, a, b`: `a` to the upper half).
    fn cvt_half(&mut self, ctx: &mut Ctx<'_>, dty: ScalarType, sty: ScalarType) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let (fmt, x2) = match dty {
            ScalarType::F16 => (FMT_F16, false),
            ScalarType::BF16 => (FMT_BF16, false),
            ScalarType::F16x2 => (FMT_F16, true),
            ScalarType::BF16x2 => (FMT_BF16, true),
            _ => return bad(".relu or .satfinite to this type"),
        };
        if sty != ScalarType::F32 {
            return bad("this conversion to half precision with .relu, .satfinite or x2");
        }
        if m.has(Flag::Ftz) || m.has(Flag::Sat) || irnd(m).is_some() {
            return Err(self.invalid(ctx, "a modifier this conversion does not take"));
        }
        let mut inst = Inst::new(Op::CvtHalf);
        inst.k = match rnd(m) {
            Some(r @ (RN | RZ)) => r,
            Some(_) => return bad("this rounding of a conversion to half precision"),
            None => return Err(self.invalid(ctx, "this conversion needs .rn or .rz")),
        };
        inst.w = fmt;
        if m.has(Flag::Relu) {
            inst.imm |= HM_RELU;
        }
        if m.has(Flag::Satfinite) {
            inst.imm |= HM_SATFINITE;
        }
        self.expect_count(ctx, if x2 { 3 } else { 2 })?;
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, sty)?;
        if x2 {
            inst.b = self.src(ctx, 2, sty)?;
        }
        self.push(ctx, inst);
        Ok(())
    }
}

fn lane_bits(total: u8, lanes: usize) -> Option<u8> {
    match lanes {
        2 | 4 => {
            let per = total / lanes as u8;
            (per >= 8 && per * lanes as u8 == total).then_some(per)
        }
        _ => None,
    }
}
