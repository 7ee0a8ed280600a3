//! How an instruction computes on a type (integers by width and signedness, floats by format)
//! and with its rounding and result modifiers, read from the typed model's [`Modifiers`].

use super::{F_FTZ, F_SAT, Inst, RM, RN, RP, RZ};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{Flag, Modifiers, Rounding};

pub(super) enum Class {
    Int { bits: u8, signed: bool },
    F16,
    BF16,
    F16x2,
    BF16x2,
    F32,
    F64,
    Pred,
    Other,
}

pub(super) fn class(ty: ScalarType) -> Class {
    use ScalarType::*;
    match ty {
        // The width is the type's own; bit types compute like unsigned integers.
        B8 | U8 | S8 | B16 | U16 | S16 | B32 | U32 | S32 | B64 | U64 | S64 => Class::Int {
            bits: (ty.bytes() * 8) as u8,
            signed: matches!(ty, S8 | S16 | S32 | S64),
        },
        F16 => Class::F16,
        BF16 => Class::BF16,
        F16x2 => Class::F16x2,
        BF16x2 => Class::BF16x2,
        F32 => Class::F32,
        F64 => Class::F64,
        Pred => Class::Pred,
        B128 => Class::Other,
    }
}

pub(super) fn int_type(bits: u8) -> ScalarType {
    match bits {
        8 => ScalarType::B8,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

/// The `RN`/`RZ`/`RM`/`RP` code of a float rounding modifier (`.rn`, …), if one is written.
/// (`.rna` and `.rs` never reach a family: every instruction refuses them first.)
pub(super) fn rnd(m: &Modifiers) -> Option<u8> {
    m.rounding.map(code)
}

/// The code of an integer rounding modifier (`.rni`, …), if one is written.
pub(super) fn irnd(m: &Modifiers) -> Option<u8> {
    m.int_rounding.map(code)
}

fn code(r: Rounding) -> u8 {
    match r {
        Rounding::Nearest | Rounding::NearestAway | Rounding::Stochastic => RN,
        Rounding::Zero => RZ,
        Rounding::Down => RM,
        Rounding::Up => RP,
    }
}

/// `.ftz` and `.sat` as instruction flags.
pub(super) fn float_flags(inst: &mut Inst, m: &Modifiers) {
    if m.has(Flag::Ftz) {
        inst.f |= F_FTZ;
    }
    if m.has(Flag::Sat) {
        inst.f |= F_SAT;
    }
}
