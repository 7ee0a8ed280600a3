//! Lane semantics of half precision (f16, bf16 and their `x2` packings) and of the float forms
//! that share them: arithmetic computed exactly and rounded once to nearest even, with `.ftz`,
//! `.sat` and `.relu`; `min`/`max` with `.NaN` and `.xorsign.abs` (f32 too); the approximate
//! `ex2`/`tanh`; comparisons that write a value (`set`, half `setp`); and `cvt` from f32 to half
//! with `.relu`, `.satfinite` and two-lane packing.
//!
//! NaN results: the ISA leaves the NaN of half-precision arithmetic unspecified and asks for the
//! canonical NaN (all exponent and mantissa bits set, sign clear) after `.relu` and `.NaN`; the
//! emulator writes the canonical NaN every time. `ex2.approx`/`tanh.approx` return the correctly
//! rounded value of the exact function, well within the ISA's error bounds (relative 2^-9.9
//! and 2^-7 for `ex2`, absolute 2^-10.987 and 2^-8 for `tanh`, f16 and bf16), so a GPU may
//! differ from the emulator by up to those bounds there and only there.

use super::float::{cmp_float, exact, f64_to_half, from_half, round_f32, round_half};
use crate::decode::{
    AR_ABS, AR_EX2, AR_MAX, AR_MIN, AR_NEG, AR_TANH, F_FTZ, F_NEG_C, F_SAT, F_SIGNED, F_X2,
    FMT_BF16, FMT_F16, FMT_F32, FMT_F64, HM_NAN, HM_RELU, HM_SATFINITE, HM_XORSIGN_ABS, Inst, NONE,
    RN, SET_BF16, SET_F16, SET_F32, SET_INT16, SET_PRED,
};

fn width(fmt: u8) -> u32 {
    if fmt == FMT_F32 { 32 } else { 16 }
}

fn sign(fmt: u8) -> u64 {
    1 << (width(fmt) - 1)
}

fn exponent_mask(fmt: u8) -> u64 {
    match fmt {
        FMT_F16 => 0x7c00,
        FMT_BF16 => 0x7f80,
        _ => 0x7f80_0000,
    }
}

fn mantissa_mask(fmt: u8) -> u64 {
    match fmt {
        FMT_F16 => 0x3ff,
        FMT_BF16 => 0x7f,
        _ => 0x7f_ffff,
    }
}

fn is_nan(bits: u64, fmt: u8) -> bool {
    let e = exponent_mask(fmt);
    bits & e == e && bits & mantissa_mask(fmt) != 0
}

fn is_inf(bits: u64, fmt: u8) -> bool {
    bits & !sign(fmt) == exponent_mask(fmt)
}

/// The canonical NaN: sign clear, every other bit set.
fn canonical_nan(fmt: u8) -> u64 {
    sign(fmt) - 1
}

fn one(fmt: u8) -> u64 {
    match fmt {
        FMT_F16 => 0x3c00,
        FMT_BF16 => 0x3f80,
        _ => 0x3f80_0000,
    }
}

/// The largest finite magnitude.
fn max_norm(fmt: u8) -> u64 {
    exponent_mask(fmt) - 1
}

/// A subnormal becomes a zero of the same sign.
fn flush(bits: u64, fmt: u8) -> u64 {
    if bits & exponent_mask(fmt) == 0 {
        bits & sign(fmt)
    } else {
        bits
    }
}

fn value(bits: u64, fmt: u8) -> f64 {
    if fmt == FMT_F32 {
        f64::from(f32::from_bits(bits as u32))
    } else {
        f64::from(from_half(bits as u16, fmt))
    }
}

/// The exact `s + e` rounded to nearest even in `fmt`; any NaN is the canonical one.
fn round(s: f64, e: f64, fmt: u8) -> u64 {
    if s.is_nan() {
        canonical_nan(fmt)
    } else if fmt == FMT_F32 {
        u64::from(round_f32(s, e, RN).to_bits())
    } else {
        u64::from(round_half(s, e, fmt))
    }
}

/// `.sat`: clamped to [+0, 1]; NaN and -0 become +0.
fn saturate(bits: u64, fmt: u8) -> u64 {
    if is_nan(bits, fmt) || bits & sign(fmt) != 0 {
        0
    } else if value(bits, fmt) >= 1.0 {
        one(fmt)
    } else {
        bits
    }
}

/// `.relu`: a negative result (sign bit set, so -0 too) becomes +0, NaN the canonical NaN.
fn relu(bits: u64, fmt: u8) -> u64 {
    if is_nan(bits, fmt) {
        canonical_nan(fmt)
    } else if bits & sign(fmt) != 0 {
        0
    } else {
        bits
    }
}

/// `min`/`max` as the ISA defines them: a NaN operand yields the other (`.NaN`: the canonical
/// NaN), two NaNs the canonical NaN, `-0 < +0`; `.xorsign.abs` compares magnitudes and gives
/// the result the XOR of the operands' signs.
fn min_max(is_max: bool, mods: i64, fmt: u8, a: u64, b: u64) -> u64 {
    let s = sign(fmt);
    let xorsign = mods & HM_XORSIGN_ABS != 0;
    let result_sign = (a ^ b) & s;
    let (a, b) = if xorsign { (a & !s, b & !s) } else { (a, b) };
    let (an, bn) = (is_nan(a, fmt), is_nan(b, fmt));
    let d = if (an && bn) || (mods & HM_NAN != 0 && (an || bn)) {
        canonical_nan(fmt)
    } else if an {
        b
    } else if bn {
        a
    } else {
        let (va, vb) = (value(a, fmt), value(b, fmt));
        if va == vb {
            // Equal values differ at most in the sign of a zero: +0 is the larger.
            if is_max { a & b } else { a | b }
        } else if (va < vb) != is_max {
            a
        } else {
            b
        }
    };
    if xorsign && !is_nan(d, fmt) {
        (d & !s) | result_sign
    } else {
        d
    }
}

/// One lane of [`crate::decode::Op::Half`].
fn lane(inst: &Inst, a: u64, b: u64, c: u64) -> u64 {
    let fmt = inst.w;
    let ftz = inst.f & F_FTZ != 0;
    let flushed = |x: u64| if ftz { flush(x, fmt) } else { x };
    let (a, b, c) = (flushed(a), flushed(b), flushed(c));
    let r = match inst.k {
        AR_NEG => a ^ sign(fmt),
        AR_ABS => a & !sign(fmt),
        AR_MIN | AR_MAX => min_max(inst.k == AR_MAX, inst.imm, fmt, a, b),
        AR_EX2 => round(value(a, fmt).exp2(), 0.0, fmt),
        AR_TANH => round(value(a, fmt).tanh(), 0.0, fmt),
        kind => {
            let (s, e) = exact(kind, value(a, fmt), value(b, fmt), value(c, fmt));
            round(s, e, fmt)
        }
    };
    let r = flushed(r);
    let r = if inst.f & F_SAT != 0 {
        saturate(r, fmt)
    } else {
        r
    };
    if inst.imm & HM_RELU != 0 {
        relu(r, fmt)
    } else {
        r
    }
}

/// [`crate::decode::Op::Half`]: every lane of `a`, `b`, `c` (absent ones read as zero).
pub(crate) fn packed(inst: &Inst, a: u64, b: u64, c: u64) -> u64 {
    let c = if inst.c == NONE { 0 } else { c };
    let bits = width(inst.w);
    let lanes = if inst.f & F_X2 != 0 { 2 } else { 1 };
    let m = (1u64 << bits) - 1;
    (0..lanes).fold(0, |out, i| {
        let shift = bits * i;
        let v = lane(inst, (a >> shift) & m, (b >> shift) & m, (c >> shift) & m);
        out | ((v & m) << shift)
    })
}

/// `a CMP b` for one lane (shifted to the low bits) of a `set`/half `setp`.
fn compare(inst: &Inst, a: u64, b: u64) -> bool {
    let w = inst.w;
    if w >= 8 {
        let m = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let (x, y) = (a & m, b & m);
        let ord = if inst.f & F_SIGNED != 0 {
            let shift = 64 - u32::from(w);
            (((x << shift) as i64) >> shift).cmp(&(((y << shift) as i64) >> shift))
        } else {
            x.cmp(&y)
        };
        return cmp_int(inst.k, ord);
    }
    let ftz = inst.f & F_FTZ != 0;
    let val = |x: u64| -> f64 {
        match w {
            FMT_F64 => f64::from_bits(x),
            FMT_F32 => value(
                if ftz {
                    flush(x & 0xffff_ffff, w)
                } else {
                    x & 0xffff_ffff
                },
                w,
            ),
            _ => value(
                if ftz {
                    flush(x & 0xffff, w)
                } else {
                    x & 0xffff
                },
                w,
            ),
        }
    };
    cmp_float(inst.k, val(a), val(b))
}

fn cmp_int(k: u8, ord: std::cmp::Ordering) -> bool {
    use crate::decode::{CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NE};
    use std::cmp::Ordering::{Equal, Greater, Less};
    match k {
        CMP_EQ => ord == Equal,
        CMP_NE => ord != Equal,
        CMP_LT => ord == Less,
        CMP_LE => ord != Greater,
        CMP_GT => ord == Greater,
        CMP_GE => ord != Less,
        _ => false,
    }
}

/// The comparison of one lane combined with the predicate `c`, if any.
fn test(inst: &Inst, a: u64, b: u64, c: u64) -> bool {
    let t = compare(inst, a, b);
    if inst.c == NONE {
        return t;
    }
    let c = (c != 0) != (inst.f & F_NEG_C != 0);
    match inst.imm & 0xff {
        1 => t && c,
        2 => t || c,
        3 => t != c,
        _ => t,
    }
}

/// [`crate::decode::Op::Set`].
pub(crate) fn set(inst: &Inst, a: u64, b: u64, c: u64) -> u64 {
    let out = (inst.imm >> 8) & 0xff;
    if inst.f & F_X2 == 0 {
        let t = test(inst, a, b, c);
        return match (t, out) {
            (false, _) => 0,
            (true, SET_PRED) => 1,
            (true, SET_INT16) => 0xffff,
            (true, SET_F32) => one(FMT_F32),
            (true, SET_F16) => one(FMT_F16),
            (true, SET_BF16) => one(FMT_BF16),
            (true, _) => 0xffff_ffff,
        };
    }
    if out == SET_PRED {
        let shift = 16 * ((inst.imm >> 16) & 1) as u32;
        return u64::from(test(inst, a >> shift, b >> shift, c));
    }
    let true_lane = match out {
        SET_F16 => one(FMT_F16),
        SET_BF16 => one(FMT_BF16),
        _ => 0xffff,
    };
    let lo = if test(inst, a, b, c) { true_lane } else { 0 };
    let hi = if test(inst, a >> 16, b >> 16, c) {
        true_lane
    } else {
        0
    };
    lo | (hi << 16)
}

/// [`crate::decode::Op::CvtHalf`]: f32 `a` (and `b`) to half precision, `a` in the high half
/// when there are two.
pub(crate) fn cvt_half(inst: &Inst, a: u64, b: u64) -> u64 {
    let fmt = inst.w;
    let one_lane = |x: u64| -> u64 {
        let x = f32::from_bits(x as u32);
        if x.is_nan() {
            return canonical_nan(fmt);
        }
        let mut r = u64::from(f64_to_half(f64::from(x), fmt, inst.k));
        if inst.imm & HM_SATFINITE != 0 && is_inf(r, fmt) {
            r = (r & sign(fmt)) | max_norm(fmt);
        }
        if inst.imm & HM_RELU != 0 {
            r = relu(r, fmt);
        }
        r
    };
    if inst.b == NONE {
        one_lane(a)
    } else {
        (one_lane(a) << 16) | one_lane(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{AR_FMA, Op};

    fn half_inst(kind: u8, fmt: u8) -> Inst {
        let mut inst = Inst::new(Op::Half);
        inst.k = kind;
        inst.w = fmt;
        inst
    }

    #[test]
    fn bf16_fma_rounds_once() {
        // 1.0625 * 1.0625 = 1 + 2^-3 + 2^-8 is a bf16 tie; a tiny addend must break it, which
        // rounding the f64 sum to nearest first would lose.
        let bf = |x: f32| u64::from(half::bf16::from_f32(x).to_bits());
        let a = bf(1.0625);
        let tiny = bf(2f32.powi(-100));
        let mut inst = half_inst(AR_FMA, FMT_BF16);
        inst.c = 0;
        assert_eq!(packed(&inst, a, a, tiny), bf(1.0 + 0.125 + 2f32.powi(-7)));
        assert_eq!(packed(&inst, a, a, 0), bf(1.125));
        assert_eq!(packed(&inst, a, a, tiny | 0x8000), bf(1.125));
    }

    #[test]
    fn min_max_zeros_nans_and_xorsign() {
        let (pz, nz, nan) = (0x0000u64, 0x8000u64, 0x7e01u64);
        let min = half_inst(AR_MIN, FMT_F16);
        let max = half_inst(AR_MAX, FMT_F16);
        assert_eq!(packed(&min, pz, nz, 0), nz);
        assert_eq!(packed(&max, nz, pz, 0), pz);
        assert_eq!(packed(&min, nan, 0x3c00, 0), 0x3c00);
        assert_eq!(packed(&min, nan, nan, 0), 0x7fff);
        let mut xs = half_inst(AR_MAX, FMT_F16);
        xs.imm = HM_XORSIGN_ABS;
        // max(|-2|, |1|) = 2 with sign 1 ^ 0.
        assert_eq!(packed(&xs, 0xc000, 0x3c00, 0), 0xc000);
        assert_eq!(packed(&xs, 0xc000, 0xbc00, 0), 0x4000);
    }
}
