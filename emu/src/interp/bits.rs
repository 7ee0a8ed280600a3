//! Integer bit manipulation, `copysign` and `testp` ([`Op::Bits`]), as the PTX ISA defines
//! them.

use crate::decode::{
    BITS_A_SIGNED, BITS_ADD, BITS_B_SIGNED, BITS_BFE, BITS_BFI, BITS_BFIND, BITS_BREV, BITS_CLZ,
    BITS_COPYSIGN, BITS_DP2A, BITS_DP4A, BITS_MODE, BITS_MUL24, BITS_POPC, BITS_PRMT, BITS_SAD,
    BITS_SHF_L, BITS_SHF_R, BITS_TESTP, F_SIGNED, Inst, TESTP_FINITE, TESTP_INFINITE, TESTP_NAN,
    TESTP_NORMAL, TESTP_NUMBER,
};

#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline]
fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

/// The value [`Op::Bits`](crate::decode::Op::Bits) writes to `d` from its sources `a`, `b`,
/// `c`, `e`.
pub(crate) fn bits_op(inst: &Inst, a: u64, b: u64, c: u64, e: u64) -> u64 {
    let w = u32::from(inst.w);
    let m = mask(w);
    let signed = inst.f & F_SIGNED != 0;
    let mode = inst.imm & BITS_MODE != 0;
    match inst.k {
        BITS_BFE => {
            // Bits [pos, pos+len) of a, filled above with the sign of the field (signed) or 0.
            let (pos, len) = (u32::from(b as u8), u32::from(c as u8));
            let msb = w - 1;
            let sbit = if !signed || len == 0 {
                0
            } else {
                (a >> (pos.saturating_add(len) - 1).min(msb)) & 1
            };
            let mut d = 0u64;
            for i in 0..w {
                let bit = if i < len && pos.saturating_add(i) <= msb {
                    (a >> (pos + i)) & 1
                } else {
                    sbit
                };
                d |= bit << i;
            }
            d
        }
        BITS_BFI => {
            // b with bits [pos, pos+len) replaced by the low bits of a.
            let (pos, len) = (u32::from(c as u8), u32::from(e as u8));
            let mut d = b & m;
            for i in 0..len {
                let at = pos.saturating_add(i);
                if at >= w {
                    break;
                }
                d = (d & !(1u64 << at)) | (((a >> i) & 1) << at);
            }
            d
        }
        BITS_PRMT => {
            // Bytes of {b, a} (a the low four) picked by the nibbles of c; bit 3 of a nibble
            // replicates the picked byte's sign bit.
            let bytes = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
            let mut d = 0u64;
            for i in 0..4 {
                let sel = (c >> (4 * i)) & 0xf;
                let byte = (bytes >> (8 * (sel & 7))) & 0xff;
                let byte = if sel & 8 != 0 {
                    if byte & 0x80 != 0 { 0xff } else { 0 }
                } else {
                    byte
                };
                d |= byte << (8 * i);
            }
            d
        }
        BITS_SHF_L | BITS_SHF_R => {
            let n = if mode {
                (c & 0xffff_ffff).min(32)
            } else {
                c & 31
            };
            let both = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
            if inst.k == BITS_SHF_L {
                ((both << n) >> 32) & 0xffff_ffff
            } else {
                (both >> n) & 0xffff_ffff
            }
        }
        BITS_BREV => (a & m).reverse_bits() >> (64 - w),
        BITS_CLZ => u64::from((a & m).leading_zeros() - (64 - w)),
        BITS_POPC => u64::from((a & m).count_ones()),
        BITS_BFIND => {
            // The most significant bit that is not a sign bit; all ones when there is none.
            let v = a & m;
            let v = if signed && (v >> (w - 1)) & 1 == 1 {
                !v & m
            } else {
                v
            };
            if v == 0 {
                0xffff_ffff
            } else {
                let pos = u64::from(63 - v.leading_zeros());
                if mode { u64::from(w - 1) - pos } else { pos }
            }
        }
        BITS_MUL24 => {
            // 24-bit operands, 48-bit product: `.lo` its low 32 bits, `.hi` bits 47..16.
            let (x, y) = if signed {
                (sext(a, 24), sext(b, 24))
            } else {
                ((a & 0xff_ffff) as i64, (b & 0xff_ffff) as i64)
            };
            let p = x.wrapping_mul(y) as u64;
            let r = if mode { p >> 16 } else { p };
            let r = if inst.imm & BITS_ADD != 0 {
                r.wrapping_add(c)
            } else {
                r
            };
            r & 0xffff_ffff
        }
        BITS_SAD => {
            let diff = if signed {
                sext(a, w).abs_diff(sext(b, w))
            } else {
                (a & m).abs_diff(b & m)
            };
            c.wrapping_add(diff) & m
        }
        BITS_DP4A | BITS_DP2A => {
            let sa = inst.imm & BITS_A_SIGNED != 0;
            let sb = inst.imm & BITS_B_SIGNED != 0;
            let byte = |v: u64, i: u32, s: bool| {
                let x = (v >> (8 * i)) & 0xff;
                if s { sext(x, 8) } else { x as i64 }
            };
            let half = |v: u64, i: u32, s: bool| {
                let x = (v >> (16 * i)) & 0xffff;
                if s { sext(x, 16) } else { x as i64 }
            };
            let sum: i64 = if inst.k == BITS_DP4A {
                (0..4).map(|i| byte(a, i, sa) * byte(b, i, sb)).sum()
            } else {
                let base = if mode { 2 } else { 0 };
                half(a, 0, sa) * byte(b, base, sb) + half(a, 1, sa) * byte(b, base + 1, sb)
            };
            c.wrapping_add(sum as u64) & 0xffff_ffff
        }
        BITS_COPYSIGN => {
            let sign = 1u64 << (w - 1);
            ((a & sign) | (b & !sign)) & m
        }
        BITS_TESTP => {
            let (exp_bits, man_bits) = if w == 32 { (8, 23) } else { (11, 52) };
            let exp = (a >> man_bits) & mask(exp_bits);
            let man = a & mask(man_bits);
            let all = mask(exp_bits);
            let t = match inst.imm >> 8 {
                TESTP_FINITE => exp != all,
                TESTP_INFINITE => exp == all && man == 0,
                TESTP_NUMBER => !(exp == all && man != 0),
                TESTP_NAN => exp == all && man != 0,
                TESTP_NORMAL => exp != 0 && exp != all,
                _ => exp == 0 && man != 0,
            };
            u64::from(t)
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Op;

    fn op(k: u8, w: u8, signed: bool, imm: i64) -> Inst {
        let mut inst = Inst::new(Op::Bits);
        inst.k = k;
        inst.w = w;
        inst.imm = imm;
        if signed {
            inst.f |= F_SIGNED;
        }
        inst
    }

    #[test]
    fn bfe_sign_extends_the_field() {
        let u = op(BITS_BFE, 32, false, 0);
        let s = op(BITS_BFE, 32, true, 0);
        assert_eq!(bits_op(&u, 0xf0, 4, 4, 0), 0xf);
        assert_eq!(bits_op(&s, 0xf0, 4, 4, 0), 0xffff_ffff);
        assert_eq!(bits_op(&s, 0x70, 4, 4, 0), 0x7);
        // len 0 gives 0; pos past the msb replicates the msb for signed.
        assert_eq!(bits_op(&s, 0x8000_0000, 0, 0, 0), 0);
        assert_eq!(bits_op(&s, 0x8000_0000, 40, 4, 0), 0xffff_ffff);
        assert_eq!(bits_op(&u, 0x8000_0000, 40, 4, 0), 0);
    }
}
