//! Floating-point semantics that Rust's operators do not give directly: directed rounding,
//! flush-to-zero, saturation, PTX `min`/`max`, rounding to half precision once, comparisons,
//! and conversions with every rounding mode.
//!
//! The technique throughout: compute the exact result as an unevaluated sum `s + e` of two f64s
//! (f32, f16 and bf16 operands make sums exact with TwoSum and products exact outright), then
//! round that once to the target format in the requested mode. Rounding to half precision goes
//! through round-to-odd at f64 and then f32, which makes the final round-to-nearest-even exact.

use crate::decode::{
    AR_ADD, AR_FMA, AR_MUL, AR_SUB, CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NAN, CMP_NE,
    CMP_NUM, CMP_UNORDERED, FMT_BF16, FMT_F16, FMT_F32, RM, RN, RP, RZ,
};

/// `s + e == a + b` exactly (Knuth's TwoSum), for finite inputs whose sum does not overflow.
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

pub(crate) fn next_up_f32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let bits = x.to_bits();
    f32::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

pub(crate) fn next_down_f32(x: f32) -> f32 {
    -next_up_f32(-x)
}

fn next_up_f64(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

fn next_down_f64(x: f64) -> f64 {
    -next_up_f64(-x)
}

/// Rounds the exact value `s + e` (|e| ≤ ulp(s)/2) to f32 in `mode`.
pub(crate) fn round_f32(s: f64, e: f64, mode: u8) -> f32 {
    let r = s as f32;
    if mode == RN || s.is_nan() {
        // `s` is already the f64 nearest to s+e; a tie at f32 precision needs e's sign.
        let rv = f64::from(r);
        if rv != s && e != 0.0 && s.is_finite() {
            // Is s exactly halfway between two f32s? Then e decides.
            let other = if rv < s {
                f64::from(next_up_f32(r))
            } else {
                f64::from(next_down_f32(r))
            };
            if (s - rv).abs() == (other - s).abs() {
                let toward_other = (other > s) == (e > 0.0);
                if toward_other {
                    return other as f32;
                }
            }
        }
        return r;
    }
    let rv = f64::from(r);
    let above = rv > s || (rv == s && e < 0.0);
    let below = rv < s || (rv == s && e > 0.0);
    let positive = s > 0.0 || (s == 0.0 && e > 0.0);
    match mode {
        RM if above => next_down_f32(r),
        RP if below => next_up_f32(r),
        RZ if positive && above => next_down_f32(r),
        RZ if !positive && below => next_up_f32(r),
        _ => r,
    }
}

/// Rounds the exact value `s + e` to an f64 with round-to-odd: exact values stay, inexact ones
/// get an odd last bit. Rounding that to any format at least two bits narrower is exact.
fn round_odd_f64(s: f64, e: f64) -> f64 {
    if e == 0.0 || !s.is_finite() || s.to_bits() & 1 == 1 {
        return s;
    }
    if e > 0.0 {
        next_up_f64(s)
    } else {
        next_down_f64(s)
    }
}

/// f64 to f32 with round-to-odd.
fn odd_f32(x: f64) -> f32 {
    let r = x as f32;
    let rv = f64::from(r);
    if rv == x || !x.is_finite() || r.is_infinite() || r.to_bits() & 1 == 1 {
        return r;
    }
    if rv < x {
        next_up_f32(r)
    } else {
        next_down_f32(r)
    }
}

/// The exact `s + e` rounded to nearest-even f16 or bf16 bits.
pub(crate) fn round_half(s: f64, e: f64, fmt: u8) -> u16 {
    let x = odd_f32(round_odd_f64(s, e));
    to_half(x, fmt)
}

pub(crate) fn to_half(x: f32, fmt: u8) -> u16 {
    if fmt == FMT_BF16 {
        half::bf16::from_f32(x).to_bits()
    } else {
        half::f16::from_f32(x).to_bits()
    }
}

pub(crate) fn from_half(bits: u16, fmt: u8) -> f32 {
    if fmt == FMT_BF16 {
        half::bf16::from_bits(bits).to_f32()
    } else {
        half::f16::from_bits(bits).to_f32()
    }
}

/// `a ∘ b [∘ c]` on f32 values, exactly, then rounded once in `mode`.
pub(crate) fn arith_f32(kind: u8, mode: u8, a: f32, b: f32, c: f32) -> f32 {
    let (a, b, c) = (f64::from(a), f64::from(b), f64::from(c));
    let (s, e) = exact(kind, a, b, c);
    if s == 0.0 && e == 0.0 && mode == RM && kind != AR_MUL {
        // An exact zero sum of opposite terms is -0 when rounding down.
        let (x, y) = if kind == AR_FMA { (a * b, c) } else { (a, b) };
        let y = if kind == AR_SUB { -y } else { y };
        if x.is_sign_negative() || y.is_sign_negative() || x != 0.0 || y != 0.0 {
            return -0.0;
        }
    }
    round_f32(s, e, mode)
}

/// `a ∘ b [∘ c]` (an `AR_*` kind) as an unevaluated sum `s + e`, exact for operands of f32 or
/// narrower formats.
pub(crate) fn exact(kind: u8, a: f64, b: f64, c: f64) -> (f64, f64) {
    match kind {
        AR_ADD => two_sum(a, b),
        AR_SUB => two_sum(a, -b),
        AR_MUL => (a * b, 0.0),
        _ => two_sum(a * b, c),
    }
}

/// A `setp`/`set` comparison (`CMP_*`) of two float values: ordered ones are false with a NaN
/// operand, unordered ones true.
pub(crate) fn cmp_float(k: u8, a: f64, b: f64) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    match k {
        CMP_NUM => !unordered,
        CMP_NAN => unordered,
        _ if unordered => k >= CMP_UNORDERED,
        _ => match k & !CMP_UNORDERED {
            CMP_EQ => a == b,
            CMP_NE => a != b,
            CMP_LT => a < b,
            CMP_LE => a <= b,
            CMP_GT => a > b,
            CMP_GE => a >= b,
            _ => false,
        },
    }
}

/// Flushes an f32 subnormal to a zero of the same sign.
#[inline]
pub(crate) fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// Clamps to [+0, 1]: NaN and -0 become +0 (the clamp uses PTX `max`, where -0 < +0).
#[inline]
pub(crate) fn sat32(x: f32) -> f32 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(1.0)
    }
}

#[inline]
pub(crate) fn sat64(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(1.0)
    }
}

/// PTX `min.f32`: a NaN operand yields the other; `-0 < +0`.
#[inline]
pub(crate) fn min32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else {
        f32::from_bits(a.to_bits() | b.to_bits())
    }
}

#[inline]
pub(crate) fn max32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else {
        f32::from_bits(a.to_bits() & b.to_bits())
    }
}

#[inline]
pub(crate) fn min64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else {
        f64::from_bits(a.to_bits() | b.to_bits())
    }
}

#[inline]
pub(crate) fn max64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else {
        f64::from_bits(a.to_bits() & b.to_bits())
    }
}

/// Rounds to an integral value in the integer rounding mode (`.rni` … `.rpi`).
pub(crate) fn round_integral(x: f64, mode: u8) -> f64 {
    match mode {
        RN => x.round_ties_even(),
        RZ => x.trunc(),
        RM => x.floor(),
        _ => x.ceil(),
    }
}

/// An integer converted to float format `fmt` (as bits) in rounding `mode`.
pub(crate) fn int_to_float(v: i128, fmt: u8, mode: u8) -> u64 {
    match fmt {
        FMT_F32 => {
            let r = v as f32;
            let r = match compare_int(f64::from(r), v) {
                std::cmp::Ordering::Greater if mode == RM || (mode == RZ && v > 0) => {
                    next_down_f32(r)
                }
                std::cmp::Ordering::Less if mode == RP || (mode == RZ && v < 0) => next_up_f32(r),
                _ => r,
            };
            u64::from(r.to_bits())
        }
        FMT_F16 | FMT_BF16 => {
            // |v| < 2^128: f64 with round-to-odd then the usual path.
            let s = v as f64;
            let e = match compare_int(s, v) {
                std::cmp::Ordering::Greater => -1.0,
                std::cmp::Ordering::Less => 1.0,
                std::cmp::Ordering::Equal => 0.0,
            };
            let s = round_odd_f64(s, e * f64::MIN_POSITIVE);
            u64::from(round_half_mode(s, 0.0, fmt, mode))
        }
        _ => {
            let r = v as f64;
            let r = match compare_int(r, v) {
                std::cmp::Ordering::Greater if mode == RM || (mode == RZ && v > 0) => {
                    next_down_f64(r)
                }
                std::cmp::Ordering::Less if mode == RP || (mode == RZ && v < 0) => next_up_f64(r),
                _ => r,
            };
            r.to_bits()
        }
    }
}

/// Compares an integral float (at most 2^128 in magnitude) with an integer exactly.
fn compare_int(r: f64, v: i128) -> std::cmp::Ordering {
    if r >= 2f64.powi(127) {
        return std::cmp::Ordering::Greater;
    }
    if r < -(2f64.powi(127)) {
        return std::cmp::Ordering::Less;
    }
    (r as i128).cmp(&v)
}

/// f64 to f32 in `mode`.
pub(crate) fn f64_to_f32(x: f64, mode: u8) -> f32 {
    round_f32(x, 0.0, mode)
}

/// f64 to f16/bf16 bits in `mode`, with one rounding.
pub(crate) fn f64_to_half(x: f64, fmt: u8, mode: u8) -> u16 {
    round_half_mode(x, 0.0, fmt, mode)
}

/// The exact `s + e` rounded to f16 or bf16 bits in `mode`. Round-to-odd at f64 and then f32
/// keeps at least two bits beyond half precision and a sticky last bit, so the final rounding
/// in any mode is exact.
pub(crate) fn round_half_mode(s: f64, e: f64, fmt: u8, mode: u8) -> u16 {
    let mut y = odd_f32(round_odd_f64(s, e));
    if y.is_infinite() && s.is_finite() {
        // Beyond f32 is beyond every half format too; the largest f32 rounds the same way.
        y = f32::MAX.copysign(y);
    }
    let r = to_half(y, fmt);
    if mode == RN || y.is_nan() {
        return r;
    }
    let rv = from_half(r, fmt);
    let toward_zero_needed = |r: u16| {
        // The magnitude of the nearest-even result exceeds |y|: step towards zero.
        half_step(r, false)
    };
    let negative = y.is_sign_negative();
    if rv.abs() > y.abs() {
        // Rounded away from zero: RZ steps back; RM steps back for positives; RP for negatives.
        let back = match mode {
            RZ => true,
            RM => !negative,
            _ => negative,
        };
        if back {
            return toward_zero_needed(r);
        }
    } else if rv.abs() < y.abs() {
        // Rounded towards zero: RM steps out for negatives, RP for positives.
        let out = match mode {
            RM => negative,
            RP => !negative,
            _ => false,
        };
        if out {
            return half_step(r, true);
        }
    }
    r
}

/// The half-precision bits next to `bits` in magnitude: one step away from zero (`away`) or
/// towards it, keeping the sign. Works for f16 and bf16 alike (both order by their bits).
fn half_step(bits: u16, away: bool) -> u16 {
    let sign = bits & 0x8000;
    let mag = bits & 0x7fff;
    let mag = if away {
        mag.saturating_add(1)
    } else {
        mag.saturating_sub(1)
    };
    sign | mag
}

/// Convenience: RP/RZ/RM/RN names for tests.
#[cfg(test)]
pub(crate) const MODES: [u8; 4] = [RN, RZ, RM, RP];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_add_brackets_the_exact_sum() {
        let (a, b) = (1.0f32, 1e-10f32);
        assert_eq!(arith_f32(AR_ADD, RN, a, b, 0.0), 1.0);
        assert_eq!(arith_f32(AR_ADD, RZ, a, b, 0.0), 1.0);
        assert_eq!(arith_f32(AR_ADD, RM, a, b, 0.0), 1.0);
        assert_eq!(arith_f32(AR_ADD, RP, a, b, 0.0), next_up_f32(1.0));
        assert_eq!(arith_f32(AR_ADD, RM, -a, -b, 0.0), next_down_f32(-1.0));
        assert_eq!(arith_f32(AR_ADD, RZ, -a, -b, 0.0), -1.0);
        for mode in MODES {
            assert_eq!(arith_f32(AR_MUL, mode, 3.0, 5.0, 0.0), 15.0);
        }
    }

    #[test]
    fn fma_rn_matches_mul_add() {
        let xs = [1.1f32, -3.7, 1e30, 1e-30, 0.1, 7.0, -0.3333];
        for &a in &xs {
            for &b in &xs {
                for &c in &xs {
                    assert_eq!(
                        arith_f32(AR_FMA, RN, a, b, c).to_bits(),
                        a.mul_add(b, c).to_bits(),
                        "{a} {b} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn rn_tie_uses_the_error_term() {
        // 1 + 2^-24 is a tie between 1 and 1+2^-23 in f32; a tiny extra decides.
        let s = 1.0 + 2f64.powi(-24);
        assert_eq!(round_f32(s, 0.0, RN), 1.0);
        assert_eq!(round_f32(s, 1e-30, RN), next_up_f32(1.0));
        assert_eq!(round_f32(s, -1e-30, RN), 1.0);
    }

    #[test]
    fn int_to_float_modes() {
        let v: i128 = (1 << 24) + 1;
        assert_eq!(
            f32::from_bits(int_to_float(v, FMT_F32, RN) as u32),
            16777216.0
        );
        assert_eq!(
            f32::from_bits(int_to_float(v, FMT_F32, RP) as u32),
            16777218.0
        );
        assert_eq!(
            f32::from_bits(int_to_float(-v, FMT_F32, RZ) as u32),
            -16777216.0
        );
        assert_eq!(
            f32::from_bits(int_to_float(-v, FMT_F32, RM) as u32),
            -16777218.0
        );
        assert_eq!(
            int_to_float(2049, FMT_F16, RN) as u16,
            half::f16::from_f32(2048.0).to_bits()
        );
        assert_eq!(
            int_to_float(2051, FMT_F16, RN) as u16,
            half::f16::from_f32(2052.0).to_bits()
        );
    }
}
