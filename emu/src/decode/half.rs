//! Half precision — f16 and bf16, scalar and packed `x2` — arithmetic, `min`/`max`,
//! `neg`/`abs` and the approximate `ex2`/`tanh`, plus the f32 `min`/`max` forms with `.NaN` or
//! `.xorsign.abs`, which compute the same way. Each form's modifiers are checked against those
//! the ISA gives its type; anything else is refused.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{
    AR_ABS, AR_ADD, AR_EX2, AR_FMA, AR_MAX, AR_MIN, AR_MUL, AR_NEG, AR_SUB, AR_TANH, F_FTZ, F_SAT,
    F_X2, FMT_BF16, FMT_F16, FMT_F32, HM_NAN, HM_RELU, HM_XORSIGN_ABS, Inst, Op, RN,
};
use jitseam_ptx::ScalarType;

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
pub(super) fn is_half_form(ty: ScalarType, opcode: &str, m: &Mods<'_>) -> bool {
    half_format(ty).is_some()
        || (ty == ScalarType::F32
            && matches!(opcode, "min" | "max")
            && (m.has(".NaN") || m.has(".xorsign") || m.has(".abs")))
}

impl<'a> Decoder<'a> {
    pub(super) fn half(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
        ty: ScalarType,
    ) -> EResult<()> {
        let (fmt, x2) = match half_format(ty) {
            Some(f) => f,
            None if ty == ScalarType::F32 => (FMT_F32, false),
            None => return bad("this type"),
        };
        let f16 = fmt == FMT_F16;
        let kind = match opcode {
            "add" => AR_ADD,
            "sub" => AR_SUB,
            "mul" => AR_MUL,
            "fma" => AR_FMA,
            "min" => AR_MIN,
            "max" => AR_MAX,
            "neg" => AR_NEG,
            "abs" => AR_ABS,
            "ex2" => AR_EX2,
            "tanh" => AR_TANH,
            "mad" => return Err(self.invalid(ctx, "half precision has fma, not mad")),
            _ => return bad("this half-precision operation"),
        };
        if m.has(".oob") {
            return bad("fma.oob (tensor out-of-bounds NaNs)");
        }
        let allowed: &[&str] = match kind {
            AR_FMA => &[".relu"],
            AR_MIN | AR_MAX => &[".NaN", ".xorsign", ".abs"],
            _ => &[],
        };
        if !m.extra_within(allowed) {
            return bad("this modifier on half precision");
        }
        if m.has(".xorsign") != m.has(".abs") {
            return Err(self.invalid(ctx, ".xorsign and .abs go together"));
        }
        if m.full || m.lo || m.hi || m.wide || m.irnd.is_some() {
            return Err(self.invalid(ctx, "a modifier that float arithmetic does not take"));
        }
        let relu = m.has(".relu");
        // `.ftz` and `.sat` exist for f16 only (and `.ftz` for the f32 min/max and bf16 ex2).
        let (ftz_ok, sat_ok) = match kind {
            AR_ADD | AR_SUB | AR_MUL => (f16, f16),
            AR_FMA => (f16, f16 && !relu),
            AR_MIN | AR_MAX | AR_NEG | AR_ABS => (fmt != FMT_BF16, false),
            AR_EX2 => (fmt == FMT_BF16, false),
            _ => (false, false),
        };
        if (m.ftz && !ftz_ok) || (m.sat && !sat_ok) {
            return bad(".ftz or .sat on this half-precision form");
        }
        let approx = matches!(kind, AR_EX2 | AR_TANH);
        match (kind, m.rnd) {
            (AR_ADD | AR_SUB | AR_MUL, None | Some(RN)) | (AR_FMA, Some(RN)) if !m.approx => {}
            (AR_FMA, None) => return Err(self.invalid(ctx, "fma needs a rounding mode")),
            (_, None) if approx == m.approx && !matches!(kind, AR_ADD | AR_SUB | AR_MUL) => {}
            (_, None) if approx => return Err(self.invalid(ctx, "needs .approx")),
            _ => return bad("this rounding of half precision"),
        }
        if kind == AR_EX2 && fmt == FMT_BF16 && !m.ftz {
            return Err(self.invalid(ctx, "ex2.approx on bf16 needs .ftz"));
        }
        let count = match kind {
            AR_FMA => 4,
            AR_NEG | AR_ABS | AR_EX2 | AR_TANH => 2,
            _ => 3,
        };
        if matches!(kind, AR_MIN | AR_MAX) && ctx.instruction.operands.len() == 4 {
            return bad("three-input min/max");
        }
        self.expect_count(ctx, count)?;
        let mut inst = Inst::new(Op::Half);
        inst.k = kind;
        inst.w = fmt;
        if x2 {
            inst.f |= F_X2;
        }
        if m.ftz {
            inst.f |= F_FTZ;
        }
        if m.sat {
            inst.f |= F_SAT;
        }
        if relu {
            inst.imm |= HM_RELU;
        }
        if m.has(".NaN") {
            inst.imm |= HM_NAN;
        }
        if m.has(".xorsign") {
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
