//! The arithmetic and logic unit: every instruction that computes registers from registers,
//! one lane loop each — moves, integer and float arithmetic, extended precision with the carry
//! flag, comparisons (with the branch fused to them), conversions, bit manipulation, packing
//! and the per-thread special registers. None of them touches memory or changes which lanes
//! run, so each is a plain function of the register file; the run loop (`exec`) dispatches to
//! them. The value helpers here (`mask`, `sext`, the float views of a register) are the other
//! units' too.

use super::bits::bits_op;
use super::float::{
    arith_f32, cmp_float, f64_to_f32, f64_to_half, from_half, ftz, int_to_float, max32, max64,
    min32, min64, round_integral, sat32, sat64, to_half,
};
use super::half::{cvt_half, packed, set};
use super::lanes::{LANES, Registers, Row, bits, store_row};
use super::meter::LaneId;
use crate::decode::{
    CARRY_IN, CARRY_MUL_HI, CARRY_MUL_LO, CARRY_OUT, CARRY_SUB, CMP_EQ, CMP_GT, CMP_LE, CMP_LT,
    CMP_NE, F_BRANCH, F_BRANCH_NEG, F_FTZ, F_NEG_C, F_SAT, F_SIGNED, FMT_F32, FMT_F64, Inst, NONE,
    Op, SPECIAL_CLOCK, SPECIAL_CLOCK64, SPECIAL_GLOBALTIMER, SPECIAL_LANEID, SPECIAL_LANEMASK_EQ,
    SPECIAL_LANEMASK_GE, SPECIAL_LANEMASK_GT, SPECIAL_LANEMASK_LE, SPECIAL_LANEMASK_LT,
    SPECIAL_NWARPID, SPECIAL_ONE, SPECIAL_WARPID,
};

#[inline(always)]
pub(super) fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline(always)]
pub(super) fn sext(v: u64, bits: u8) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - u32::from(bits);
        ((v << shift) as i64) >> shift
    }
}

pub(super) trait Unsigned {
    fn unsigned(self) -> u64;
}

impl Unsigned for i64 {
    #[inline(always)]
    fn unsigned(self) -> u64 {
        self as u64
    }
}

#[inline(always)]
pub(super) fn f32v(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
pub(super) fn f32b(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[inline(always)]
pub(super) fn f64v(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Reads `len` little-endian bytes (1..=8) as an integer.
#[inline(always)]
pub(super) fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => bytes
            .try_into()
            .map_or(0, |b: [u8; 4]| u64::from(u32::from_le_bytes(b))),
        8 => bytes.try_into().map_or(0, u64::from_le_bytes),
        2 => bytes
            .try_into()
            .map_or(0, |b: [u8; 2]| u64::from(u16::from_le_bytes(b))),
        _ => bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
    }
}

/// A `setp`'s second predicate source (`c`, possibly negated) folded into the comparison.
#[inline(always)]
fn combine(t: bool, inst: &Inst, c: u64) -> bool {
    if inst.c == NONE {
        return t;
    }
    let c = (c != 0) != (inst.f & F_NEG_C != 0);
    match inst.imm {
        1 => t && c,
        2 => t || c,
        _ => t != c,
    }
}

/// Value of a float register in format `fmt`, as f64 (exact).
fn float_in(bits: u64, fmt: u8, flush: bool) -> f64 {
    match fmt {
        FMT_F64 => f64v(bits),
        FMT_F32 => {
            let x = f32v(bits);
            f64::from(if flush { ftz(x) } else { x })
        }
        _ => f64::from(from_half(bits as u16, fmt)),
    }
}

/// Whether every lane of `row` holds the same value.
#[inline(always)]
fn uniform(row: &Row) -> bool {
    let first = row[0];
    row.iter().fold(true, |same, &v| same & (v == first))
}

/// The first set lane of `mask` and the number of lanes from it to the last set one: partial
/// masks touch only that span, so a lone lane costs one iteration, not [`LANES`].
#[inline(always)]
fn span(mask: u64) -> (usize, usize) {
    let lo = mask.trailing_zeros() as usize;
    let hi = LANES - mask.leading_zeros() as usize;
    (lo, hi.saturating_sub(lo))
}

/// `*o = v` where lane `lane` is in `mask`: a select, so that the loop stays branch-free.
#[inline(always)]
fn put(o: &mut u64, v: u64, mask: u64, lane: usize) {
    *o = if (mask >> lane) & 1 != 0 { v } else { *o };
}

/// `d = f(a)` on the lanes of `mask`.
#[inline(always)]
fn map1(regs: &mut Registers, mask: u64, d: u32, a: u32, f: impl Fn(u64) -> u64) {
    let (d, a) = (regs.ix(d), regs.ix(a));
    if let Ok([rd, ra]) = regs.rows.get_disjoint_mut([d, a]) {
        if mask == u64::MAX {
            for (o, &x) in rd.iter_mut().zip(ra.iter()) {
                *o = f(x);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &x)) in rd.iter_mut().zip(ra.iter()).enumerate().skip(lo).take(n) {
                put(o, f(x), mask, lane);
            }
        }
    } else {
        // `d` is `a`.
        let rd = &mut regs.rows[d];
        if mask == u64::MAX {
            for o in rd.iter_mut() {
                *o = f(*o);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, o) in rd.iter_mut().enumerate().skip(lo).take(n) {
                put(o, f(*o), mask, lane);
            }
        }
    }
}

/// `d = f(a, b)` on the lanes of `mask`.
#[inline(always)]
fn map2(regs: &mut Registers, mask: u64, d: u32, a: u32, b: u32, f: impl Fn(u64, u64) -> u64) {
    let (d, a, b) = (regs.ix(d), regs.ix(a), regs.ix(b));
    if let Ok([rd, ra, rb]) = regs.rows.get_disjoint_mut([d, a, b]) {
        if mask == u64::MAX {
            for ((o, &x), &y) in rd.iter_mut().zip(ra.iter()).zip(rb.iter()) {
                *o = f(x, y);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, ((o, &x), &y)) in rd
                .iter_mut()
                .zip(ra.iter())
                .zip(rb.iter())
                .enumerate()
                .skip(lo)
                .take(n)
            {
                put(o, f(x, y), mask, lane);
            }
        }
    } else if let Ok([rd, rb]) = regs.rows.get_disjoint_mut([d, b])
        && d == a
    {
        if mask == u64::MAX {
            for (o, &y) in rd.iter_mut().zip(rb.iter()) {
                *o = f(*o, y);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &y)) in rd.iter_mut().zip(rb.iter()).enumerate().skip(lo).take(n) {
                put(o, f(*o, y), mask, lane);
            }
        }
    } else if let Ok([rd, ra]) = regs.rows.get_disjoint_mut([d, a])
        && d == b
    {
        if mask == u64::MAX {
            for (o, &x) in rd.iter_mut().zip(ra.iter()) {
                *o = f(x, *o);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (o, &x)) in rd.iter_mut().zip(ra.iter()).enumerate().skip(lo).take(n) {
                put(o, f(x, *o), mask, lane);
            }
        }
    } else {
        let mut out = [0u64; LANES];
        for ((o, &x), &y) in out.iter_mut().zip(&regs.rows[a]).zip(&regs.rows[b]) {
            *o = f(x, y);
        }
        store_row(&mut regs.rows[d], &out, mask);
    }
}

/// `d = f(a, b, c)` on the lanes of `mask`.
#[inline(always)]
fn map3(regs: &mut Registers, mask: u64, [d, a, b, c]: [u32; 4], f: impl Fn(u64, u64, u64) -> u64) {
    let (d, a, b, c) = (regs.ix(d), regs.ix(a), regs.ix(b), regs.ix(c));
    if let Ok([rd, ra, rb, rc]) = regs.rows.get_disjoint_mut([d, a, b, c]) {
        let rows = rd.iter_mut().zip(ra.iter()).zip(rb.iter()).zip(rc.iter());
        if mask == u64::MAX {
            for (((o, &x), &y), &z) in rows {
                *o = f(x, y, z);
            }
        } else {
            let (lo, n) = span(mask);
            for (lane, (((o, &x), &y), &z)) in rows.enumerate().skip(lo).take(n) {
                put(o, f(x, y, z), mask, lane);
            }
        }
    } else {
        let mut out = [0u64; LANES];
        let (ra, rb, rc) = (&regs.rows[a], &regs.rows[b], &regs.rows[c]);
        for (((o, &x), &y), &z) in out.iter_mut().zip(ra).zip(rb).zip(rc) {
            *o = f(x, y, z);
        }
        store_row(&mut regs.rows[d], &out, mask);
    }
}

/// The value of special register `kind` for thread `thread` of a block of `ntid` threads.
/// Warps are the block's threads in linear order (`x` fastest), 32 at a time.
fn special(kind: u8, (_, thread): LaneId, ntid: [u64; 3]) -> u64 {
    let [tx, ty, tz] = thread.map(u64::from);
    let linear = tx + ty * ntid[0] + tz * ntid[0] * ntid[1];
    let lane = linear % 32;
    let lt = (1u64 << lane) - 1;
    match kind {
        SPECIAL_LANEID => lane,
        SPECIAL_WARPID => linear / 32,
        SPECIAL_NWARPID => (ntid[0] * ntid[1] * ntid[2]).div_ceil(32),
        SPECIAL_LANEMASK_EQ => 1 << lane,
        SPECIAL_LANEMASK_LT => lt,
        SPECIAL_LANEMASK_LE => (lt << 1) | 1,
        SPECIAL_LANEMASK_GT => !((lt << 1) | 1) & 0xffff_ffff,
        SPECIAL_LANEMASK_GE => !lt & 0xffff_ffff,
        SPECIAL_CLOCK | SPECIAL_CLOCK64 | SPECIAL_GLOBALTIMER => {
            static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            let ns = EPOCH
                .get_or_init(std::time::Instant::now)
                .elapsed()
                .as_nanos() as u64;
            if kind == SPECIAL_CLOCK {
                ns & 0xffff_ffff
            } else {
                ns
            }
        }
        SPECIAL_ONE => 1,
        _ => 0,
    }
}

/// A comparison on the lanes of `eff`, and the fused branch that follows it, if any: then
/// the lanes that take it, its target and the pc of the others.
#[inline(always)]
pub(super) fn setp(
    regs: &mut Registers,
    eff: u64,
    act: u64,
    inst: &Inst,
    pc: usize,
) -> Option<(u64, usize, usize)> {
    let (ra, rb) = (&regs[inst.a], &regs[inst.b]);
    // The outcome of every lane as 0 or 1 (a branch-free, vectorizable loop), then as a mask.
    let mut tv = [0u64; LANES];
    if inst.op == Op::SetpI {
        // Comparable keys: sign-extended for signed comparisons, masked for unsigned ones.
        let shift = 64u32.saturating_sub(u32::from(inst.w)).min(63);
        let m = mask(inst.w);
        macro_rules! compare {
            ($key:expr, $op:tt) => {
                for ((o, &a), &b) in tv.iter_mut().zip(ra).zip(rb) {
                    *o = u64::from($key(a) $op $key(b));
                }
            };
        }
        macro_rules! by_kind {
            ($key:expr) => {
                match inst.k {
                    CMP_EQ => compare!($key, ==),
                    CMP_NE => compare!($key, !=),
                    CMP_LT => compare!($key, <),
                    CMP_LE => compare!($key, <=),
                    CMP_GT => compare!($key, >),
                    _ => compare!($key, >=),
                }
            };
        }
        if inst.f & F_SIGNED != 0 {
            by_kind!(|v: u64| ((v << shift) as i64) >> shift);
        } else {
            by_kind!(|v: u64| v & m);
        }
    } else {
        let fmt = if inst.op == Op::SetpF32 {
            FMT_F32
        } else {
            FMT_F64
        };
        let flush = inst.f & F_FTZ != 0;
        for ((o, &a), &b) in tv.iter_mut().zip(ra).zip(rb) {
            let (a, b) = (float_in(a, fmt, flush), float_in(b, fmt, flush));
            *o = u64::from(cmp_float(inst.k, a, b));
        }
    }
    let t = match tv.iter().sum::<u64>() {
        0 => 0,
        64 => u64::MAX,
        _ => tv
            .iter()
            .enumerate()
            .fold(0u64, |m, (lane, &v)| m | (v << lane)),
    };
    if inst.f & F_BRANCH != 0 && eff == act {
        store_row(&mut regs[inst.d], &tv, eff);
        let taken = if inst.f & F_BRANCH_NEG != 0 { !t } else { t };
        return Some((taken & eff, inst.imm as usize, pc + 2));
    }
    let rc = &regs[inst.c];
    let (mut p, mut q) = ([0u64; LANES], [0u64; LANES]);
    for (lane, ((p, q), &c)) in p.iter_mut().zip(q.iter_mut()).zip(rc).enumerate() {
        let t = (t >> lane) & 1 != 0;
        *p = u64::from(combine(t, inst, c));
        *q = u64::from(combine(!t, inst, c));
    }
    store_row(&mut regs[inst.d], &p, eff);
    if inst.e != NONE {
        store_row(&mut regs[inst.e], &q, eff);
    }
    None
}

/// A register-to-register instruction on the lanes of `eff`. The frequent ones get their own
/// loop; the rest go lane by lane through [`pure`].
#[inline(always)]
pub(super) fn alu(regs: &mut Registers, eff: u64, inst: &Inst) {
    let (d, a, b, c, w) = (inst.d, inst.a, inst.b, inst.c, inst.w);
    let m = mask(w);
    let plain_f32 = inst.f & (F_FTZ | F_SAT) == 0;
    match inst.op {
        Op::Mov => map1(regs, eff, d, a, |x| x),
        Op::MovMask => map1(regs, eff, d, a, |x| x & m),
        Op::Add => map2(regs, eff, d, a, b, |x, y| x.wrapping_add(y) & m),
        Op::Sub => map2(regs, eff, d, a, b, |x, y| x.wrapping_sub(y) & m),
        Op::MulLo => map2(regs, eff, d, a, b, |x, y| x.wrapping_mul(y) & m),
        Op::Mad => map3(regs, eff, [d, a, b, c], |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z) & m
        }),
        Op::And => map2(regs, eff, d, a, b, |x, y| x & y & m),
        Op::Or => map2(regs, eff, d, a, b, |x, y| (x | y) & m),
        Op::Xor => map2(regs, eff, d, a, b, |x, y| (x ^ y) & m),
        Op::Not => map1(regs, eff, d, a, |x| !x & m),
        Op::Shl if uniform(&regs[b]) => {
            let amount = regs[b][0] & 0xffff_ffff;
            if amount >= u64::from(w) {
                map1(regs, eff, d, a, |_| 0);
            } else {
                map1(regs, eff, d, a, |x| (x << amount) & m);
            }
        }
        Op::Shl => map2(regs, eff, d, a, b, |x, y| {
            let amount = y & 0xffff_ffff;
            if amount >= u64::from(w) {
                0
            } else {
                (x << amount) & m
            }
        }),
        Op::MulWide if inst.f & F_SIGNED == 0 => {
            let wide = mask(w.saturating_mul(2));
            map2(regs, eff, d, a, b, |x, y| {
                (x & m).wrapping_mul(y & m) & wide
            })
        }
        Op::CvtInt if inst.f & (F_SIGNED | F_SAT) == 0 => {
            let out = mask(inst.imm as u8);
            map1(regs, eff, d, a, |x| x & m & out)
        }
        Op::AddF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) + f32v(y))),
        Op::SubF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) - f32v(y))),
        Op::MulF32 if plain_f32 => map2(regs, eff, d, a, b, |x, y| f32b(f32v(x) * f32v(y))),
        Op::FmaF32 if plain_f32 => map3(regs, eff, [d, a, b, c], |x, y, z| {
            f32b(f32v(x).mul_add(f32v(y), f32v(z)))
        }),
        Op::Div if inst.f & F_SIGNED == 0 && w == 32 => map2(regs, eff, d, a, b, |x, y| {
            u64::from((x as u32).checked_div(y as u32).unwrap_or(u32::MAX))
        }),
        Op::Div if inst.f & F_SIGNED == 0 => map2(regs, eff, d, a, b, |x, y| {
            (x & m).checked_div(y & m).unwrap_or(u64::MAX) & m
        }),
        Op::AddF64 => map2(regs, eff, d, a, b, |x, y| (f64v(x) + f64v(y)).to_bits()),
        Op::MulF64 => map2(regs, eff, d, a, b, |x, y| (f64v(x) * f64v(y)).to_bits()),
        Op::Carry => carry(regs, eff, inst),
        _ => map3(regs, eff, [d, a, b, c], |x, y, z| pure(inst, x, y, z)),
    }
}

/// The value a register-to-register instruction writes to `d`, from the values of `a`, `b`
/// and `c` (those of the absent operands are unspecified and unused).
#[inline]
fn pure(inst: &Inst, a: u64, b: u64, c: u64) -> u64 {
    let w = inst.w;
    match inst.op {
        Op::Mov => a,
        Op::MovMask => a & mask(w),
        Op::Add => a.wrapping_add(b) & mask(w),
        Op::Sub => a.wrapping_sub(b) & mask(w),
        Op::MulLo => a.wrapping_mul(b) & mask(w),
        Op::Mad => a.wrapping_mul(b).wrapping_add(c) & mask(w),
        Op::MulHi => {
            let v = if inst.f & F_SIGNED != 0 {
                ((i128::from(sext(a, w)) * i128::from(sext(b, w))) >> w) as u64
            } else {
                ((u128::from(a & mask(w)) * u128::from(b & mask(w))) >> w) as u64
            };
            v & mask(w)
        }
        Op::MulWide | Op::MadWide => {
            let mut v = if inst.f & F_SIGNED != 0 {
                sext(a, w).wrapping_mul(sext(b, w)) as u64
            } else {
                (a & mask(w)).wrapping_mul(b & mask(w))
            };
            if inst.op == Op::MadWide {
                v = v.wrapping_add(c);
            }
            v & mask(w.saturating_mul(2))
        }
        Op::Div | Op::Rem => {
            let is_div = inst.op == Op::Div;
            let v = if inst.f & F_SIGNED != 0 {
                let (a, b) = (sext(a, w), sext(b, w));
                // Division by zero has no trap on a GPU; results are defined here as all ones
                // (quotient) and the dividend (remainder).
                match (b, is_div) {
                    (0, true) => -1,
                    (0, false) => a,
                    (_, true) => a.wrapping_div(b),
                    (_, false) => a.wrapping_rem(b),
                }
                .unsigned()
            } else {
                let (a, b) = (a & mask(w), b & mask(w));
                match (b, is_div) {
                    (0, true) => u64::MAX,
                    (0, false) => a,
                    (_, true) => a / b,
                    (_, false) => a % b,
                }
            };
            v & mask(w)
        }
        Op::Min | Op::Max => {
            let a_less = if inst.f & F_SIGNED != 0 {
                sext(a, w) < sext(b, w)
            } else {
                (a & mask(w)) < (b & mask(w))
            };
            let pick_a = a_less == (inst.op == Op::Min);
            (if pick_a { a } else { b }) & mask(w)
        }
        Op::NegI => a.wrapping_neg() & mask(w),
        Op::AbsI => sext(a, w).wrapping_abs().unsigned() & mask(w),
        Op::And => a & b & mask(w),
        Op::Or => (a | b) & mask(w),
        Op::Xor => (a ^ b) & mask(w),
        Op::Not => !a & mask(w),
        Op::Shl => {
            let amount = b & 0xffff_ffff;
            if amount >= u64::from(w) {
                0
            } else {
                (a << amount) & mask(w)
            }
        }
        Op::Shr => {
            let amount = (b & 0xffff_ffff).min(63) as u32;
            if inst.f & F_SIGNED != 0 {
                (sext(a, w) >> amount).unsigned() & mask(w)
            } else if u64::from(amount) >= u64::from(w) {
                0
            } else {
                (a & mask(w)) >> amount
            }
        }
        Op::Selp => {
            if c != 0 {
                a
            } else {
                b
            }
        }
        Op::AddF32
        | Op::SubF32
        | Op::MulF32
        | Op::FmaF32
        | Op::DivF32
        | Op::MinF32
        | Op::MaxF32 => {
            let (mut a, mut b) = (f32v(a), f32v(b));
            let flags = inst.f & (F_FTZ | F_SAT);
            if flags & F_FTZ != 0 {
                a = ftz(a);
                b = ftz(b);
            }
            let mut v = match inst.op {
                Op::AddF32 => a + b,
                Op::SubF32 => a - b,
                Op::MulF32 => a * b,
                Op::FmaF32 => {
                    let mut c = f32v(c);
                    if flags & F_FTZ != 0 {
                        c = ftz(c);
                    }
                    a.mul_add(b, c)
                }
                Op::DivF32 => a / b,
                Op::MinF32 => min32(a, b),
                _ => max32(a, b),
            };
            if flags != 0 {
                v = out32(v, flags);
            }
            f32b(v)
        }
        Op::ArithF32Dir => {
            let flags = inst.f & (F_FTZ | F_SAT);
            let mut a = f32v(a);
            let mut b = f32v(b);
            let mut c = if inst.c == NONE { 0.0 } else { f32v(c) };
            if flags & F_FTZ != 0 {
                a = ftz(a);
                b = ftz(b);
                c = ftz(c);
            }
            let v = arith_f32(inst.k, inst.imm as u8, a, b, c);
            f32b(out32(v, flags))
        }
        Op::NegF32
        | Op::AbsF32
        | Op::SqrtF32
        | Op::RsqrtF32
        | Op::RcpF32
        | Op::Ex2F32
        | Op::Lg2F32
        | Op::SinF32
        | Op::CosF32
        | Op::TanhF32 => {
            let flags = inst.f & (F_FTZ | F_SAT);
            let mut a = f32v(a);
            if flags & F_FTZ != 0 {
                a = ftz(a);
            }
            let v = match inst.op {
                Op::NegF32 => -a,
                Op::AbsF32 => a.abs(),
                Op::SqrtF32 => a.sqrt(),
                Op::RsqrtF32 => 1.0 / a.sqrt(),
                Op::RcpF32 => 1.0 / a,
                Op::Ex2F32 => a.exp2(),
                Op::Lg2F32 => a.log2(),
                Op::SinF32 => a.sin(),
                Op::CosF32 => a.cos(),
                _ => a.tanh(),
            };
            f32b(out32(v, flags))
        }
        Op::AddF64 => (f64v(a) + f64v(b)).to_bits(),
        Op::SubF64 => (f64v(a) - f64v(b)).to_bits(),
        Op::MulF64 => (f64v(a) * f64v(b)).to_bits(),
        Op::DivF64 => (f64v(a) / f64v(b)).to_bits(),
        Op::FmaF64 => f64v(a).mul_add(f64v(b), f64v(c)).to_bits(),
        Op::MinF64 => min64(f64v(a), f64v(b)).to_bits(),
        Op::MaxF64 => max64(f64v(a), f64v(b)).to_bits(),
        Op::NegF64 => (-f64v(a)).to_bits(),
        Op::AbsF64 => f64v(a).abs().to_bits(),
        Op::SqrtF64 => f64v(a).sqrt().to_bits(),
        Op::RsqrtF64 => (1.0 / f64v(a).sqrt()).to_bits(),
        Op::RcpF64 => (1.0 / f64v(a)).to_bits(),
        Op::Half => packed(inst, a, b, c),
        Op::Set => set(inst, a, b, c),
        Op::CvtHalf => cvt_half(inst, a, b),
        Op::CvtInt => {
            let out = inst.imm as u8;
            let v = if inst.f & F_SIGNED != 0 {
                i128::from(sext(a, w))
            } else {
                i128::from(a & mask(w))
            };
            let v = if inst.f & F_SAT != 0 {
                let (lo, hi) = if inst.k != 0 {
                    (-(1i128 << (out - 1)), (1i128 << (out - 1)) - 1)
                } else {
                    (0, (1i128 << out) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            (v as u64) & mask(out)
        }
        Op::CvtIntToFloat => {
            let v = if inst.f & F_SIGNED != 0 {
                i128::from(sext(a, w))
            } else {
                i128::from(a & mask(w))
            };
            let bits = int_to_float(v, inst.k, inst.imm as u8);
            if inst.f & F_SAT != 0 {
                saturate_bits(bits, inst.k)
            } else {
                bits
            }
        }
        Op::CvtFloatToInt => {
            let x = float_in(a, inst.k, inst.f & F_FTZ != 0);
            if x.is_nan() {
                // The ISA's NaN: zero, but the top bit alone from f64 or into 64 bits.
                return if inst.k == FMT_F64 || w >= 64 {
                    1u64 << (w - 1).min(63)
                } else {
                    0
                };
            }
            let x = round_integral(x, inst.imm as u8);
            let v = if inst.f & F_SIGNED != 0 {
                let lo = if w >= 64 {
                    i64::MIN
                } else {
                    -(1i64 << (w - 1))
                };
                let hi = if w >= 64 {
                    i64::MAX
                } else {
                    (1i64 << (w - 1)) - 1
                };
                (x as i64).clamp(lo, hi).unsigned()
            } else {
                (x as u64).min(mask(w))
            };
            v & mask(w)
        }
        Op::CvtFloat => cvt_float(a, inst),
        // Not register-to-register: handled by the run loop, never sent here.
        _ => 0,
    }
}
#[inline]
fn out32(v: f32, flags: u8) -> f32 {
    let v = if flags & F_FTZ != 0 { ftz(v) } else { v };
    if flags & F_SAT != 0 { sat32(v) } else { v }
}

fn saturate_bits(bits: u64, fmt: u8) -> u64 {
    match fmt {
        FMT_F64 => sat64(f64v(bits)).to_bits(),
        FMT_F32 => f32b(sat32(f32v(bits))),
        _ => u64::from(to_half(sat32(from_half(bits as u16, fmt)), fmt)),
    }
}

fn cvt_float(bits: u64, inst: &Inst) -> u64 {
    let (src, dst) = (inst.k, inst.w);
    let flush = inst.f & F_FTZ != 0;
    let x = float_in(bits, src, flush);
    let mode = inst.imm as u8;
    let out = if (4..8).contains(&mode) {
        // Integer rounding within one format: exact in f64 for every source format.
        let r = round_integral(x, mode - 4);
        encode(r, dst, 0)
    } else {
        encode(x, dst, if mode == 8 { 0 } else { mode })
    };
    let out = if dst == FMT_F32 && flush {
        f32b(ftz(f32v(out)))
    } else {
        out
    };
    if inst.f & F_SAT != 0 {
        saturate_bits(out, dst)
    } else {
        out
    }
}

/// An exact f64 value in format `fmt`, rounded in `mode` where it does not fit.
fn encode(x: f64, fmt: u8, mode: u8) -> u64 {
    match fmt {
        FMT_F64 => x.to_bits(),
        FMT_F32 => f32b(f64_to_f32(x, mode)),
        _ => u64::from(f64_to_half(x, fmt, mode)),
    }
}

/// Extended-precision arithmetic (and `mad.hi`) on the lanes of `eff`: the sum (difference)
/// of the two terms and the carry (borrow) in, on `w` bits, with the carry (borrow) out
/// written to the flag. The arithmetic is done in 128 bits, so that the carry is exact.
#[inline]
fn carry(regs: &mut Registers, eff: u64, inst: &Inst) {
    let w = u32::from(inst.w.min(64));
    let m = u128::from(mask(inst.w));
    let k = inst.k;
    let signed = inst.f & F_SIGNED != 0;
    for lane in bits(eff) {
        let (a, b) = (regs[inst.a][lane], regs[inst.b][lane]);
        let carry_in = if k & CARRY_IN != 0 {
            u128::from(regs[inst.e][lane] & 1)
        } else {
            0
        };
        let (x, y) = if k & (CARRY_MUL_LO | CARRY_MUL_HI) != 0 {
            let product = if signed {
                (i128::from(sext(a, inst.w)) * i128::from(sext(b, inst.w))) as u128
            } else {
                (u128::from(a) & m) * (u128::from(b) & m)
            };
            let half = if k & CARRY_MUL_HI != 0 {
                product >> w
            } else {
                product
            };
            (half & m, u128::from(regs[inst.c][lane]) & m)
        } else {
            (u128::from(a) & m, u128::from(b) & m)
        };
        let (value, out) = if k & CARRY_SUB != 0 {
            let taken = y + carry_in;
            (x.wrapping_sub(taken) & m, u64::from(x < taken))
        } else {
            let sum = x + y + carry_in;
            (sum & m, (sum >> w) as u64 & 1)
        };
        regs[inst.d][lane] = value as u64;
        if k & CARRY_OUT != 0 {
            regs[inst.e][lane] = out;
        }
    }
}

/// Bit manipulation, `copysign` and `testp` ([`Op::Bits`]) on the lanes of `eff`.
#[inline(always)]
pub(super) fn bit_manipulation(regs: &mut Registers, eff: u64, inst: &Inst) {
    for lane in bits(eff) {
        let v = bits_op(
            inst,
            regs[inst.a][lane],
            regs[inst.b][lane],
            regs[inst.c][lane],
            regs[inst.e][lane],
        );
        regs[inst.d][lane] = v;
    }
}

/// A special register computed per thread ([`Op::Special`]) for the lanes of `eff`, whose
/// threads `ids` gives.
#[inline(always)]
pub(super) fn special_register(regs: &mut Registers, eff: u64, inst: &Inst, ids: &[LaneId; LANES]) {
    let ntid = [regs[3u32][0], regs[4u32][0], regs[5u32][0]];
    for lane in bits(eff) {
        let v = special(inst.k, ids[lane], ntid);
        regs[inst.d][lane] = v;
    }
}

/// `mov d, {a, b, …}` ([`Op::Pack`]): the elements listed in `lanes` from `inst.b`, `w` bits
/// each, lowest first.
#[inline(always)]
pub(super) fn pack(regs: &mut Registers, eff: u64, inst: &Inst, lanes: &[u32]) {
    let w = inst.w;
    let slots = lanes.get(inst.b as usize..).unwrap_or_default();
    for lane in bits(eff) {
        let mut v = 0u64;
        for (i, &slot) in slots.iter().take(inst.c as usize).enumerate() {
            v |= (regs[slot][lane] & mask(w)) << (u32::from(w) * i as u32);
        }
        regs[inst.d][lane] = v;
    }
}

/// `mov {a, b, …}, s` ([`Op::Unpack`]): the reverse of [`pack`].
#[inline(always)]
pub(super) fn unpack(regs: &mut Registers, eff: u64, inst: &Inst, lanes: &[u32]) {
    let w = inst.w;
    let slots = lanes.get(inst.b as usize..).unwrap_or_default();
    for lane in bits(eff) {
        let v = regs[inst.a][lane];
        for (i, &slot) in slots.iter().take(inst.c as usize).enumerate() {
            regs[slot][lane] = (v >> (u32::from(w) * i as u32)) & mask(w);
        }
    }
}
