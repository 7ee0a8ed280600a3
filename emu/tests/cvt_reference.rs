//! Differential test of `cvt` (and of sign/zero extension by `ld` and `cvt` into wider
//! registers) against reference semantics written here from the PTX ISA's definitions, in exact
//! integer arithmetic, independent of the interpreter's own float code.
//!
//! For every integer and float conversion pair and every rounding/saturation/flush modifier the
//! emulator accepts, a kernel loads one source value per thread, converts it and stores the whole
//! destination register; the stored bits must equal the reference exactly (any NaN equals any
//! NaN). A combination the emulator refuses at decode time is allowed (and listed), a wrong
//! answer never is.

use jitseam_emu::interp::{LaunchDims, Regions, run};
use jitseam_emu::{DecodeError, decode};
use jitseam_ptx::parse_module;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    BF16,
    F32,
    F64,
}

use T::*;

const ALL: [T; 12] = [U8, U16, U32, U64, S8, S16, S32, S64, F16, BF16, F32, F64];

impl T {
    fn name(self) -> &'static str {
        match self {
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
        }
    }
    fn bits(self) -> u32 {
        match self {
            U8 | S8 => 8,
            U16 | S16 | F16 | BF16 => 16,
            U32 | S32 | F32 => 32,
            U64 | S64 | F64 => 64,
        }
    }
    fn float(self) -> bool {
        matches!(self, F16 | BF16 | F32 | F64)
    }
    fn signed(self) -> bool {
        matches!(self, S8 | S16 | S32 | S64)
    }
    /// Register the value lives in: integers narrower than 32 bits in a 32-bit register (so
    /// that loads and conversions into it must extend), the rest in their own width.
    fn reg(self) -> (&'static str, u32) {
        match self {
            U8 | U16 | U32 | S8 | S16 | S32 => (".b32", 32),
            U64 | S64 => (".b64", 64),
            F16 | BF16 => (".b16", 16),
            F32 => (".f32", 32),
            F64 => (".f64", 64),
        }
    }
    /// `(mantissa bits, exponent bits, bias)` of a float type.
    fn format(self) -> (u32, u32, i32) {
        match self {
            F16 => (10, 5, 15),
            BF16 => (7, 8, 127),
            F32 => (23, 8, 127),
            _ => (52, 11, 1023),
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The register's contents after writing an integer of type `t` (value `v`) into a register of
/// `reg` bits: sign-extended for signed types, zero-extended otherwise.
fn extend(v: i128, t: T, reg: u32) -> u64 {
    let low = (v as u64) & mask(t.bits());
    let wide = if t.signed() && t.bits() < 64 && (low >> (t.bits() - 1)) & 1 == 1 {
        low | !mask(t.bits())
    } else {
        low
    };
    wide & mask(reg)
}

/// An exact float value: NaN, ±infinity, or `(-1)^neg * mag * 2^exp`.
#[derive(Debug, Clone, Copy)]
enum Exact {
    Nan,
    Inf(bool),
    Fin { neg: bool, mag: u128, exp: i32 },
}

fn decode_float(bits: u64, t: T) -> Exact {
    let (m, e, bias) = t.format();
    let neg = (bits >> (m + e)) & 1 == 1;
    let field = ((bits >> m) & mask(e)) as i32;
    let frac = bits & mask(m);
    if field == mask(e) as i32 {
        return if frac == 0 {
            Exact::Inf(neg)
        } else {
            Exact::Nan
        };
    }
    let (mag, exp) = if field == 0 {
        (u128::from(frac), 1 - bias - m as i32)
    } else {
        (u128::from(frac | (1 << m)), field - bias - m as i32)
    };
    Exact::Fin { neg, mag, exp }
}

fn is_subnormal(bits: u64, t: T) -> bool {
    let (m, e, _) = t.format();
    (bits >> m) & mask(e) == 0 && bits & mask(m) != 0
}

const RN: u8 = 0;
const RZ: u8 = 1;
const RM: u8 = 2;
const RP: u8 = 3;

/// Rounds an exact value to float type `t` in `mode`, IEEE 754 style.
fn round_to(x: Exact, t: T, mode: u8) -> u64 {
    let (m, e, bias) = t.format();
    let sign_bit = |neg: bool| u64::from(neg) << (m + e);
    let inf = |neg: bool| sign_bit(neg) | (mask(e) << m);
    let max = |neg: bool| sign_bit(neg) | ((mask(e) - 1) << m) | mask(m);
    match x {
        Exact::Nan => inf(false) | (1 << (m - 1)),
        Exact::Inf(neg) => inf(neg),
        Exact::Fin { neg, mag: 0, .. } => sign_bit(neg),
        Exact::Fin { neg, mag, exp } => {
            let top = exp + (127 - mag.leading_zeros() as i32);
            let emin = 1 - bias;
            let emax = bias;
            let mut q = top.max(emin) - m as i32;
            let shift = q - exp;
            let (mut k, up) = if shift <= 0 {
                (mag << (-shift) as u32, false)
            } else {
                let (k, rem_gt_half, rem_eq_half, rem_nonzero) = if shift >= 128 {
                    (0u128, false, false, true)
                } else {
                    let k = mag >> shift;
                    let rem = mag & ((1u128 << shift) - 1);
                    let half = 1u128 << (shift - 1);
                    (k, rem > half, rem == half, rem != 0)
                };
                let up = match mode {
                    RN => rem_gt_half || (rem_eq_half && k & 1 == 1),
                    RZ => false,
                    RM => neg && rem_nonzero,
                    _ => !neg && rem_nonzero,
                };
                (k, up)
            };
            if up {
                k += 1;
            }
            if k == 1u128 << (m + 1) {
                k >>= 1;
                q += 1;
            }
            if k >= 1u128 << m && q + m as i32 > emax {
                let to_inf = match mode {
                    RN => true,
                    RZ => false,
                    RM => neg,
                    _ => !neg,
                };
                return if to_inf { inf(neg) } else { max(neg) };
            }
            if k < 1u128 << m {
                sign_bit(neg) | k as u64
            } else {
                let field = (q + m as i32 + bias) as u64;
                sign_bit(neg) | (field << m) | (k as u64 & mask(m))
            }
        }
    }
}

/// The exact value of a float as f64 (every source format is exact in f64).
fn as_f64(x: Exact) -> f64 {
    match x {
        Exact::Nan => f64::NAN,
        Exact::Inf(neg) => {
            if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Exact::Fin { neg, mag, exp } => {
            // Two steps, so that 2^exp itself never underflows (exact for every source value).
            let half = exp / 2;
            let v = mag as f64 * 2f64.powi(half) * 2f64.powi(exp - half);
            if neg { -v } else { v }
        }
    }
}

fn flush_in(bits: u64, t: T, ftz: bool) -> u64 {
    if ftz && t == F32 && is_subnormal(bits, t) {
        bits & (1 << 31)
    } else {
        bits
    }
}

/// `.sat` on a float result: clamped to [0, 1], NaN to +0.
fn saturate(bits: u64, t: T) -> u64 {
    let v = as_f64(decode_float(bits, t));
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= 1.0 {
        round_to(
            Exact::Fin {
                neg: false,
                mag: 1,
                exp: 0,
            },
            t,
            RN,
        )
    } else {
        bits
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Mods {
    rnd: Option<u8>,
    irnd: Option<u8>,
    sat: bool,
    ftz: bool,
}

impl Mods {
    fn text(&self) -> String {
        let mut s = String::new();
        if let Some(r) = self.rnd {
            s += [".rn", ".rz", ".rm", ".rp"][r as usize];
        }
        if let Some(r) = self.irnd {
            s += [".rni", ".rzi", ".rmi", ".rpi"][r as usize];
        }
        if self.ftz {
            s += ".ftz";
        }
        if self.sat {
            s += ".sat";
        }
        s
    }
}

/// What `cvt{mods}.{dst}.{src}` leaves in the destination register, from the source bits.
fn reference(dst: T, src: T, m: Mods, bits: u64) -> u64 {
    let (_, reg) = dst.reg();
    let bits = bits & mask(src.bits());
    match (dst.float(), src.float()) {
        (false, false) => {
            let v = if src.signed() {
                i128::from(extend(i128::from(bits), src, 64) as i64)
            } else {
                i128::from(bits)
            };
            let v = if m.sat {
                let (lo, hi) = if dst.signed() {
                    (
                        -(1i128 << (dst.bits() - 1)),
                        (1i128 << (dst.bits() - 1)) - 1,
                    )
                } else {
                    (0, (1i128 << dst.bits()) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            extend(v, dst, reg)
        }
        (true, false) => {
            let v = if src.signed() {
                i128::from(extend(i128::from(bits), src, 64) as i64)
            } else {
                i128::from(bits)
            };
            let x = Exact::Fin {
                neg: v < 0,
                mag: v.unsigned_abs(),
                exp: 0,
            };
            let out = round_to(x, dst, m.rnd.unwrap_or(RN));
            if m.sat { saturate(out, dst) } else { out }
        }
        (false, true) => {
            let x = as_f64(decode_float(flush_in(bits, src, m.ftz), src));
            let r = match m.irnd.unwrap_or(RZ) {
                RN => x.round_ties_even(),
                RZ => x.trunc(),
                RM => x.floor(),
                _ => x.ceil(),
            };
            let n = dst.bits() as i32;
            let v: i128 = if r.is_nan() {
                // "Zero if source is not .f64 and destination is not .s64, .u64. Otherwise
                // 1 << (BitWidth(dst) - 1)."
                if src == F64 || dst.bits() == 64 {
                    1i128 << (n - 1)
                } else {
                    0
                }
            } else if dst.signed() {
                if r >= 2f64.powi(n - 1) {
                    (1i128 << (n - 1)) - 1
                } else if r < -(2f64.powi(n - 1)) {
                    -(1i128 << (n - 1))
                } else {
                    r as i128
                }
            } else if r >= 2f64.powi(n) {
                (1i128 << n) - 1
            } else if r <= 0.0 {
                0
            } else {
                r as i128
            };
            extend(v, dst, reg)
        }
        (true, true) => {
            let x = decode_float(flush_in(bits, src, m.ftz), src);
            let out = if let Some(r) = m.irnd {
                // Rounding to an integral value within one format is exact in f64.
                let v = as_f64(x);
                let v = match r {
                    RN => v.round_ties_even(),
                    RZ => v.trunc(),
                    RM => v.floor(),
                    _ => v.ceil(),
                };
                let out = round_to(exact_f64(v), dst, RN);
                // A NaN stays a NaN; a zero keeps the source's sign.
                if v == 0.0 {
                    out | u64::from(v.is_sign_negative()) << (dst.bits() - 1)
                } else {
                    out
                }
            } else {
                round_to(x, dst, m.rnd.unwrap_or(RN))
            };
            let out = flush_in(out, dst, m.ftz);
            if m.sat { saturate(out, dst) } else { out }
        }
    }
}

fn exact_f64(v: f64) -> Exact {
    decode_float(v.to_bits(), F64)
}

/// Interesting source bit patterns for type `t`, plus pseudo-random ones.
fn inputs(t: T) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let b = t.bits();
    if t.float() {
        let from = |v: f64| round_to(exact_f64(v), t, RN);
        for v in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            2.5,
            -2.5,
            3.5,
            0.49999997,
            127.0,
            128.0,
            255.0,
            255.5,
            256.0,
            -128.0,
            -129.0,
            32767.0,
            32768.0,
            65504.0,
            65519.0,
            65520.0,
            65536.0,
            -32769.0,
            1e10,
            -1e10,
            2147483647.0,
            2147483648.0,
            -2147483648.0,
            -2147483649.0,
            4294967295.0,
            4294967296.0,
            9.223372036854776e18,
            -9.223372036854776e18,
            1.8446744073709552e19,
            1e30,
            -1e30,
            3.4028234663852886e38,
            3.5e38,
            1e300,
            1e-300,
            1e-40,
            6e-8,
            3e-8,
            1e-5,
            1.0000001,
        ] {
            out.push(from(v));
        }
        let (m, e, _) = t.format();
        let sign = 1u64 << (m + e);
        for raw in [
            1u64,
            2,
            mask(m),
            1 << m,
            mask(e) << m,
            (mask(e) << m) | 1,
            (mask(e) << m) | (1 << (m - 1)),
            ((mask(e) - 1) << m) | mask(m),
        ] {
            out.push(raw);
            out.push(raw | sign);
        }
    } else {
        for v in [
            0u64,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x100,
            0x7fff,
            0x8000,
            0xffff,
            0x1_0000,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x1_0000_0000,
            0x7fff_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
            u64::MAX,
            0x00ff_ffff,
            0x0100_0001,
            0x0100_0003,
            (1 << 53) + 1,
            (1 << 24) + 1,
            2049,
            2051,
        ] {
            out.push(v & mask(b));
            out.push(v.wrapping_neg() & mask(b));
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(b);
    for _ in 0..160 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push(state & mask(b));
    }
    out
}

fn kernel(dst: T, src: T, m: Mods) -> String {
    let (sreg, _) = src.reg();
    let (dreg, dbits) = dst.reg();
    let (sname, dname) = (src.name(), dst.name());
    let ssize = src.bits() / 8;
    let dsize = dbits / 8;
    let mods = m.text();
    // Stores write the whole destination register, so extension bits are checked too.
    let store = match dreg {
        ".b32" => "b32",
        ".b64" => "b64",
        ".b16" => "b16",
        ".f32" => "f32",
        _ => "f64",
    };
    format!(
        "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .reg {sreg} %s;
    .reg {dreg} %d;
    ld.param.u64 %rd1, [k_in];
    ld.param.u64 %rd2, [k_out];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    mul.lo.u64 %rd4, %rd3, {ssize};
    add.u64 %rd5, %rd1, %rd4;
    ld.global.{sname} %s, [%rd5];
    cvt{mods}.{dname}.{sname} %d, %s;
    mul.lo.u64 %rd6, %rd3, {dsize};
    add.u64 %rd7, %rd2, %rd6;
    st.global.{store} [%rd7], %d;
    ret;
}}
"
    )
}

fn same(a: u64, b: u64, t: T) -> bool {
    if a == b {
        return true;
    }
    if t.float() {
        let (x, y) = (decode_float(a, t), decode_float(b, t));
        return matches!((x, y), (Exact::Nan, Exact::Nan));
    }
    false
}

/// Runs one conversion over all inputs; `Err` if the emulator refuses it.
fn check(dst: T, src: T, m: Mods, failures: &mut Vec<String>) -> Result<(), String> {
    let ptx = kernel(dst, src, m);
    let module = parse_module(&ptx).unwrap();
    let program = match decode(&ptx, &module, "k") {
        Ok(p) => p,
        Err(DecodeError::Unsupported { reason, .. }) => return Err(reason.to_owned()),
        Err(e) => panic!("cvt{}.{}.{}: {e}", m.text(), dst.name(), src.name()),
    };
    let values = inputs(src);
    let ssize = (src.bits() / 8) as usize;
    let (_, dbits) = dst.reg();
    let dsize = (dbits / 8) as usize;
    let mut input: Vec<u8> = Vec::new();
    for v in &values {
        input.extend_from_slice(&v.to_le_bytes()[..ssize]);
    }
    let mut output = vec![0u8; values.len() * dsize];
    let (in_base, out_base) = (0x10_0000u64, 0x20_0000u64);
    {
        let mut regions =
            Regions::new(vec![(in_base, &mut input[..]), (out_base, &mut output[..])]);
        let mut params = in_base.to_le_bytes().to_vec();
        params.extend_from_slice(&out_base.to_le_bytes());
        run(
            &program,
            &params,
            LaunchDims::linear(1, values.len() as u32),
            &mut regions,
        )
        .unwrap();
    }
    for (i, &v) in values.iter().enumerate() {
        let mut got = [0u8; 8];
        got[..dsize].copy_from_slice(&output[i * dsize..(i + 1) * dsize]);
        let got = u64::from_le_bytes(got);
        let want = reference(dst, src, m, v);
        let cmp_t = if dst.float() { dst } else { U64 };
        if !same(got, want, cmp_t) {
            failures.push(format!(
                "cvt{}.{}.{} of {v:#x}: got {got:#x}, want {want:#x}",
                m.text(),
                dst.name(),
                src.name()
            ));
        }
    }
    Ok(())
}

/// The modifier sets that are valid PTX for a pair.
fn modifier_sets(dst: T, src: T) -> Vec<Mods> {
    let mut out = Vec::new();
    let modes = [RN, RZ, RM, RP];
    match (dst.float(), src.float()) {
        (false, false) => {
            out.push(Mods::default());
            out.push(Mods {
                sat: true,
                ..Mods::default()
            });
        }
        (true, false) => {
            for r in modes {
                out.push(Mods {
                    rnd: Some(r),
                    ..Mods::default()
                });
                out.push(Mods {
                    rnd: Some(r),
                    sat: true,
                    ..Mods::default()
                });
            }
        }
        (false, true) => {
            for r in modes {
                out.push(Mods {
                    irnd: Some(r),
                    ..Mods::default()
                });
                // Redundant (float-to-integer conversions clamp anyway), but legal.
                out.push(Mods {
                    irnd: Some(r),
                    sat: true,
                    ..Mods::default()
                });
                if src == F32 {
                    out.push(Mods {
                        irnd: Some(r),
                        ftz: true,
                        ..Mods::default()
                    });
                }
            }
        }
        (true, true) => {
            let f32_involved = dst == F32 || src == F32;
            let narrowing =
                dst.bits() < src.bits() || (dst.bits() == 16 && src.bits() == 16 && dst != src);
            let widening = !narrowing && dst != src;
            if dst == src {
                for r in modes {
                    out.push(Mods {
                        irnd: Some(r),
                        ..Mods::default()
                    });
                    if f32_involved {
                        out.push(Mods {
                            irnd: Some(r),
                            ftz: true,
                            ..Mods::default()
                        });
                    }
                }
            } else if widening {
                out.push(Mods::default());
                if f32_involved {
                    out.push(Mods {
                        ftz: true,
                        ..Mods::default()
                    });
                }
                out.push(Mods {
                    sat: true,
                    ..Mods::default()
                });
            } else {
                for r in modes {
                    out.push(Mods {
                        rnd: Some(r),
                        ..Mods::default()
                    });
                    if f32_involved {
                        out.push(Mods {
                            rnd: Some(r),
                            ftz: true,
                            ..Mods::default()
                        });
                    }
                }
                out.push(Mods {
                    rnd: Some(RN),
                    sat: true,
                    ..Mods::default()
                });
            }
        }
    }
    out
}

#[test]
fn every_conversion_matches_the_reference() {
    let mut failures = Vec::new();
    let mut refused = Vec::new();
    let mut checked = 0;
    for dst in ALL {
        for src in ALL {
            // A float with a different float of the same width (f16/bf16) is a narrowing pair.
            for m in modifier_sets(dst, src) {
                match check(dst, src, m, &mut failures) {
                    Ok(()) => checked += 1,
                    Err(reason) => refused.push(format!(
                        "cvt{}.{}.{}: {reason}",
                        m.text(),
                        dst.name(),
                        src.name()
                    )),
                }
            }
        }
    }
    println!(
        "{checked} conversions checked; refused:\n{}",
        refused.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} wrong results, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Every pair with every modifier set must be supported.
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    assert!(checked > 700, "only {checked} conversions ran");
}

/// `ld` of a narrow signed type into a wider register sign-extends; unsigned and bit types
/// zero-extend (the PTX rule for destination operands wider than the instruction type).
#[test]
fn loads_extend_to_the_register_width() {
    for t in [U8, U16, U32, S8, S16, S32] {
        for (reg, rbits) in [(".b32", 32u32), (".b64", 64)] {
            if t.bits() > rbits {
                continue;
            }
            let name = t.name();
            let size = t.bits() / 8;
            let store = if rbits == 32 { "b32" } else { "b64" };
            let ptx = format!(
                "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<8>;
    .reg {reg} %v;
    ld.param.u64 %rd1, [k_in];
    ld.param.u64 %rd2, [k_out];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    mul.lo.u64 %rd4, %rd3, {size};
    add.u64 %rd5, %rd1, %rd4;
    ld.global.{name} %v, [%rd5];
    mul.lo.u64 %rd6, %rd3, {};
    add.u64 %rd7, %rd2, %rd6;
    st.global.{store} [%rd7], %v;
}}
",
                rbits / 8
            );
            let module = parse_module(&ptx).unwrap();
            let program = decode(&ptx, &module, "k").unwrap();
            let values = inputs(t);
            let mut input = Vec::new();
            for v in &values {
                input.extend_from_slice(&v.to_le_bytes()[..size as usize]);
            }
            let dsize = (rbits / 8) as usize;
            let mut output = vec![0u8; values.len() * dsize];
            {
                let mut regions =
                    Regions::new(vec![(0x1000, &mut input[..]), (0x10_0000, &mut output[..])]);
                let mut params = 0x1000u64.to_le_bytes().to_vec();
                params.extend_from_slice(&0x10_0000u64.to_le_bytes());
                run(
                    &program,
                    &params,
                    LaunchDims::linear(1, values.len() as u32),
                    &mut regions,
                )
                .unwrap();
            }
            for (i, &v) in values.iter().enumerate() {
                let mut got = [0u8; 8];
                got[..dsize].copy_from_slice(&output[i * dsize..(i + 1) * dsize]);
                let got = u64::from_le_bytes(got);
                let want = extend(i128::from(v), t, rbits);
                assert_eq!(got, want, "ld.{name} of {v:#x} into {reg}");
            }
        }
    }
}

/// The reference's rounding agrees with the `half` crate's f32 to f16/bf16 conversions (one
/// rounding to nearest even), a second, independent implementation.
#[test]
fn reference_rounding_agrees_with_the_half_crate() {
    let rn = Mods {
        rnd: Some(RN),
        ..Mods::default()
    };
    let mut inputs = inputs(F32);
    inputs.extend((0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9) & 0xffff_ffff));
    for bits in inputs {
        let x = f32::from_bits(bits as u32);
        let f16 = u64::from(half::f16::from_f32(x).to_bits());
        let bf16 = u64::from(half::bf16::from_f32(x).to_bits());
        assert!(
            same(reference(F16, F32, rn, bits), f16, F16),
            "f16 {bits:#x}"
        );
        assert!(
            same(reference(BF16, F32, rn, bits), bf16, BF16),
            "bf16 {bits:#x}"
        );
    }
}
