//! Integer bit manipulation and small-integer arithmetic: `bfe`, `bfi`, `prmt`, `shf`, `brev`,
//! `clz`, `popc`, `bfind`, `mul24`, `mad24`, `sad`, `dp4a`, `dp2a`; and `copysign`, `testp`.
//! All become one [`Op::Bits`] with a `BITS_*` sub-kind in `k`.

use super::class::{Class, class};
use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{F_SIGNED, Inst, Op};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{Flag, Opcode};

/// Sub-kinds of [`Op::Bits`] (in `k`).
pub(crate) const BITS_BFE: u8 = 0;
pub(crate) const BITS_BFI: u8 = 1;
pub(crate) const BITS_PRMT: u8 = 2;
pub(crate) const BITS_SHF_L: u8 = 3;
pub(crate) const BITS_SHF_R: u8 = 4;
pub(crate) const BITS_BREV: u8 = 5;
pub(crate) const BITS_CLZ: u8 = 6;
pub(crate) const BITS_POPC: u8 = 7;
pub(crate) const BITS_BFIND: u8 = 8;
pub(crate) const BITS_MUL24: u8 = 9;
pub(crate) const BITS_SAD: u8 = 10;
pub(crate) const BITS_DP4A: u8 = 11;
pub(crate) const BITS_DP2A: u8 = 12;
pub(crate) const BITS_COPYSIGN: u8 = 13;
pub(crate) const BITS_TESTP: u8 = 14;

/// `imm` bits of [`Op::Bits`].
/// `shf`: clamp the shift amount (else wrap it); `bfind`: `.shiftamt`; `mul24`/`dp2a`: `.hi`.
pub(crate) const BITS_MODE: i64 = 1;
/// `mad24`: add `c`.
pub(crate) const BITS_ADD: i64 = 2;
/// `dp4a`/`dp2a`: `a` signed; `b` signed.
pub(crate) const BITS_A_SIGNED: i64 = 4;
pub(crate) const BITS_B_SIGNED: i64 = 8;
/// `testp`: the test, in bits 8.. (`TESTP_*`).
pub(crate) const TESTP_FINITE: i64 = 0;
pub(crate) const TESTP_INFINITE: i64 = 1;
pub(crate) const TESTP_NUMBER: i64 = 2;
pub(crate) const TESTP_NAN: i64 = 3;
pub(crate) const TESTP_NORMAL: i64 = 4;
/// (Any other value: subnormal.)
pub(crate) const TESTP_SUBNORMAL: i64 = 5;

impl Decoder<'_> {
    pub(super) fn int_bits(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        use Flag as F;
        let known: &[Flag] = match opcode {
            Opcode::Shf => &[F::L, F::R, F::Wrap, F::Clamp],
            Opcode::Bfind => &[F::Shiftamt],
            Opcode::Mul24 | Opcode::Mad24 => &[F::Lo, F::Hi, F::Sat],
            Opcode::Dp2a => &[F::Lo, F::Hi],
            Opcode::Testp => &[
                F::Finite,
                F::Infinite,
                F::Number,
                F::Notanumber,
                F::Normal,
                F::Subnormal,
            ],
            _ => &[],
        };
        if !m.flags_within(known) {
            return bad(if opcode == Opcode::Prmt {
                "prmt modes other than the default"
            } else {
                "this modifier on a bit manipulation"
            });
        }
        if m.rounding.is_some() || m.int_rounding.is_some() {
            return bad("a rounding modifier on a bit manipulation");
        }
        let mut inst = Inst::new(Op::Bits);
        let ty = match (opcode, m.types.as_slice()) {
            (Opcode::Dp4a | Opcode::Dp2a, [a, b]) => {
                if matches!(a, ScalarType::S32) {
                    inst.imm |= BITS_A_SIGNED;
                }
                if matches!(b, ScalarType::S32) {
                    inst.imm |= BITS_B_SIGNED;
                }
                if !matches!(a, ScalarType::S32 | ScalarType::U32)
                    || !matches!(b, ScalarType::S32 | ScalarType::U32)
                {
                    return bad("this type");
                }
                if inst.imm != 0 {
                    ScalarType::S32
                } else {
                    ScalarType::U32
                }
            }
            (_, [ty]) => *ty,
            _ => return Err(self.invalid(ctx, "expected exactly one type")),
        };
        let (bits, signed, float) = match class(ty) {
            Class::Int { bits, signed } => (bits, signed, false),
            Class::F32 => (32, false, true),
            Class::F64 => (64, false, true),
            _ => return bad("this type"),
        };
        if float != matches!(opcode, Opcode::Copysign | Opcode::Testp) {
            return bad("this type");
        }
        inst.w = bits;
        if signed {
            inst.f |= F_SIGNED;
        }
        let has = |f: Flag| m.has(f);
        let u32t = ScalarType::U32;
        // (kind, source types) — the destination is operand 0.
        let (k, sources): (u8, Vec<ScalarType>) = match opcode {
            Opcode::Bfe if bits >= 32 => (BITS_BFE, vec![ty, u32t, u32t]),
            Opcode::Bfi if bits >= 32 => (BITS_BFI, vec![ty, ty, u32t, u32t]),
            Opcode::Prmt if bits == 32 => (BITS_PRMT, vec![ty, ty, ty]),
            Opcode::Shf if bits == 32 => {
                let k = if has(F::L) {
                    BITS_SHF_L
                } else if has(F::R) {
                    BITS_SHF_R
                } else {
                    return Err(self.invalid(ctx, "shf needs .l or .r"));
                };
                if has(F::Clamp) {
                    inst.imm |= BITS_MODE;
                } else if !has(F::Wrap) {
                    return Err(self.invalid(ctx, "shf needs .wrap or .clamp"));
                }
                (k, vec![ty, ty, u32t])
            }
            Opcode::Brev if bits >= 32 => (BITS_BREV, vec![ty]),
            Opcode::Clz if bits >= 32 => (BITS_CLZ, vec![ty]),
            Opcode::Popc if bits >= 32 => (BITS_POPC, vec![ty]),
            Opcode::Bfind if bits >= 32 => {
                if has(F::Shiftamt) {
                    inst.imm |= BITS_MODE;
                }
                (BITS_BFIND, vec![ty])
            }
            Opcode::Mul24 | Opcode::Mad24 if bits == 32 => {
                if has(F::Hi) {
                    inst.imm |= BITS_MODE;
                } else if !has(F::Lo) {
                    return Err(self.invalid(ctx, "needs .lo or .hi"));
                }
                if has(F::Sat) {
                    return bad("mad24.sat");
                }
                if opcode == Opcode::Mad24 {
                    inst.imm |= BITS_ADD;
                    (BITS_MUL24, vec![ty, ty, ty])
                } else {
                    (BITS_MUL24, vec![ty, ty])
                }
            }
            Opcode::Sad if bits >= 16 => (BITS_SAD, vec![ty, ty, ty]),
            Opcode::Dp4a => (BITS_DP4A, vec![u32t, u32t, ty]),
            Opcode::Dp2a => {
                if has(F::Hi) {
                    inst.imm |= BITS_MODE;
                } else if !has(F::Lo) {
                    return Err(self.invalid(ctx, "needs .lo or .hi"));
                }
                (BITS_DP2A, vec![u32t, u32t, ty])
            }
            Opcode::Copysign => (BITS_COPYSIGN, vec![ty, ty]),
            Opcode::Testp => {
                let test = if has(F::Finite) {
                    TESTP_FINITE
                } else if has(F::Infinite) {
                    TESTP_INFINITE
                } else if has(F::Number) {
                    TESTP_NUMBER
                } else if has(F::Notanumber) {
                    TESTP_NAN
                } else if has(F::Normal) {
                    TESTP_NORMAL
                } else if has(F::Subnormal) {
                    TESTP_SUBNORMAL
                } else {
                    return Err(self.invalid(ctx, "testp needs a test"));
                };
                inst.imm |= test << 8;
                (BITS_TESTP, vec![ty])
            }
            _ => return bad("this type"),
        };
        inst.k = k;
        self.expect_count(ctx, 1 + sources.len())?;
        inst.d = self.dst(ctx, 0)?;
        let mut slots = [super::NONE; 4];
        for (i, (slot, sty)) in slots.iter_mut().zip(&sources).enumerate() {
            *slot = self.src(ctx, i + 1, *sty)?;
        }
        [inst.a, inst.b, inst.c, inst.e] = slots;
        self.push(ctx, inst);
        Ok(())
    }
}
