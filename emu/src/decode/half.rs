//! Half precision — f16 and bf16, scalar and packed `x2` — arithmetic, `min`/`max`,
//! `neg`/`abs` and the approximate `ex2`/`tanh`, plus the f32 `min`/`max` forms with `.NaN` or
//! `.xorsign.abs`, which compute the same way. Each form's modifiers are checked against those
//! the ISA gives its type; anything else is refused.

use super::class::{Class, class, irnd, rnd};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{
    AR_ABS, AR_ADD, AR_EX2, AR_FMA, AR_MAX, AR_MIN, AR_MUL, AR_NEG, AR_SUB, AR_TANH, F_FTZ, F_SAT,
    F_X2, FMT_BF16, FMT_F16, FMT_F32, HM_NAN, HM_RELU, HM_XORSIGN_ABS, Inst, Op, RN,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{Flag, Modifiers, Opcode};

/// The format of a half-precision type and whether it packs two lanes.
pub(super) fn half_format(ty: ScalarType) -> Option<(u8, bool)> {
    Some(match class(ty) {
        Class::F16 => (FMT_F16, false),
        Class::F16x2 => (FMT_F16, true),
        Class::BF16 => (FMT_BF16, false),
        Class::BF16x2 => (FMT_BF16, true),
        _ => return None,
    })
}

/// Whether `opcode` on `ty` goes to [`Decoder::half`]: every half-precision type, and f32
/// `min`/`max` with `.NaN` or `.xorsign.abs`.
pub(super) fn is_half_form(ty: ScalarType, opcode: Opcode, m: &Modifiers) -> bool {
    half_format(ty).is_some()
        || (ty == ScalarType::F32
            && matches!(opcode, Opcode::Min | Opcode::Max)
            && (m.has(Flag::NaN) || m.has(Flag::Xorsign) || m.has(Flag::Abs)))
}

impl Decoder<'_> {
    pub(super) fn half(&mut self, ctx: &mut Ctx<'_>, ty: ScalarType) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        let (fmt, x2) = match half_format(ty) {
            Some(f) => f,
            None if ty == ScalarType::F32 => (FMT_F32, false),
            None => return bad("this type"),
        };
        let f16 = fmt == FMT_F16;
        let kind = match opcode {
            Opcode::Add => AR_ADD,
            Opcode::Sub => AR_SUB,
            Opcode::Mul => AR_MUL,
            Opcode::Fma => AR_FMA,
            Opcode::Min => AR_MIN,
            Opcode::Max => AR_MAX,
            Opcode::Neg => AR_NEG,
            Opcode::Abs => AR_ABS,
            Opcode::Ex2 => AR_EX2,
            Opcode::Tanh => AR_TANH,
            Opcode::Mad => return Err(self.invalid(ctx, "half precision has fma, not mad")),
            _ => return bad("this half-precision operation"),
        };
        if m.has(Flag::Oob) {
            return bad("fma.oob (tensor out-of-bounds NaNs)");
        }
        use Flag as F;
        // Besides the modifiers every form is checked for below.
        let common = [F::Ftz, F::Sat, F::Approx, F::Full, F::Lo, F::Hi, F::Wide];
        let allowed: &[Flag] = match kind {
            AR_FMA => &[F::Relu],
            AR_MIN | AR_MAX => &[F::NaN, F::Xorsign, F::Abs],
            _ => &[],
        };
        if !m.flags_within(&[&common[..], allowed].concat()) {
            return bad("this modifier on half precision");
        }
        if m.has(F::Xorsign) != m.has(F::Abs) {
            return Err(self.invalid(ctx, ".xorsign and .abs go together"));
        }
        if m.has(F::Full) || m.has(F::Lo) || m.has(F::Hi) || m.has(F::Wide) || irnd(m).is_some() {
            return Err(self.invalid(ctx, "a modifier that float arithmetic does not take"));
        }
        let relu = m.has(F::Relu);
        let (ftz, sat, approx_written) = (m.has(F::Ftz), m.has(F::Sat), m.has(F::Approx));
        // `.ftz` and `.sat` exist for f16 only (and `.ftz` for the f32 min/max and bf16 ex2).
        let (ftz_ok, sat_ok) = match kind {
            AR_ADD | AR_SUB | AR_MUL => (f16, f16),
            AR_FMA => (f16, f16 && !relu),
            AR_MIN | AR_MAX | AR_NEG | AR_ABS => (fmt != FMT_BF16, false),
            AR_EX2 => (fmt == FMT_BF16, false),
            _ => (false, false),
        };
        if (ftz && !ftz_ok) || (sat && !sat_ok) {
            return bad(".ftz or .sat on this half-precision form");
        }
        let approx = matches!(kind, AR_EX2 | AR_TANH);
        match (kind, rnd(m)) {
            (AR_ADD | AR_SUB | AR_MUL, None | Some(RN)) | (AR_FMA, Some(RN)) if !approx_written => {
            }
            (AR_FMA, None) => return Err(self.invalid(ctx, "fma needs a rounding mode")),
            (_, None) if approx == approx_written && !matches!(kind, AR_ADD | AR_SUB | AR_MUL) => {}
            (_, None) if approx => return Err(self.invalid(ctx, "needs .approx")),
            _ => return bad("this rounding of half precision"),
        }
        if kind == AR_EX2 && fmt == FMT_BF16 && !ftz {
            return Err(self.invalid(ctx, "ex2.approx on bf16 needs .ftz"));
        }
        let count = match kind {
            AR_FMA => 4,
            AR_NEG | AR_ABS | AR_EX2 | AR_TANH => 2,
            _ => 3,
        };
        if matches!(kind, AR_MIN | AR_MAX) && ins.operands.len() == 4 {
            return bad("three-input min/max");
        }
        self.expect_count(ctx, count)?;
        let mut inst = Inst::new(Op::Half);
        inst.k = kind;
        inst.w = fmt;
        if x2 {
            inst.f |= F_X2;
        }
        if ftz {
            inst.f |= F_FTZ;
        }
        if sat {
            inst.f |= F_SAT;
        }
        if relu {
            inst.imm |= HM_RELU;
        }
        if m.has(F::NaN) {
            inst.imm |= HM_NAN;
        }
        if m.has(F::Xorsign) {
            inst.imm |= HM_XORSIGN_ABS;
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        if count > 2 {
            inst.b = self.src(ctx, 2, ty)?;
        }
        if count > 3 {
            inst.c = self.src(ctx, 3, ty)?;
        }
        self.push(ctx, inst);
        Ok(())
    }
}
