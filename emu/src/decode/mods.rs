//! Instruction modifiers (`.rn`, `.ftz`, `.v4`, `.global`, comparisons, …), parsed once per
//! instruction.

use super::decoder::Decoder;
use super::{F_FTZ, F_SAT, Inst, RM, RN, RP, RZ};
use jitseam_ptx::ScalarType;
use jitseam_ptx::body::Instruction;

/// Parsed modifiers of one instruction.
#[derive(Debug, Default)]
pub(super) struct Mods<'a> {
    pub(super) types: Vec<ScalarType>,
    pub(super) vec: u8,
    pub(super) space: Option<&'a str>,
    pub(super) rnd: Option<u8>,
    pub(super) irnd: Option<u8>,
    pub(super) ftz: bool,
    pub(super) sat: bool,
    pub(super) approx: bool,
    pub(super) full: bool,
    pub(super) lo: bool,
    pub(super) hi: bool,
    pub(super) wide: bool,
    pub(super) cmp: Option<&'a str>,
    pub(super) bool_op: i64,
    pub(super) to: bool,
    /// Modifiers only some instructions take (`.l`, `.wrap`, `.shiftamt`, `testp` tests, …),
    /// for the instruction's family to interpret.
    pub(super) extra: Vec<&'a str>,
}

impl Mods<'_> {
    /// Whether every modifier of `extra` is one of `allowed` (each family names those it runs).
    pub(super) fn extra_within(&self, allowed: &[&str]) -> bool {
        self.extra.iter().all(|e| allowed.contains(e))
    }

    pub(super) fn has(&self, modifier: &str) -> bool {
        self.extra.contains(&modifier)
    }
}

fn rnd_code(text: &str) -> Option<u8> {
    Some(match text {
        ".rn" | ".rni" => RN,
        ".rz" | ".rzi" => RZ,
        ".rm" | ".rmi" => RM,
        ".rp" | ".rpi" => RP,
        _ => return None,
    })
}

impl<'a> Decoder<'a> {
    pub(super) fn mods(&self, ins: &Instruction<'a>) -> Result<Mods<'a>, &'static str> {
        let mut m = Mods {
            vec: 1,
            ..Mods::default()
        };
        for &text in &ins.modifiers {
            if let Some(ty) = ScalarType::from_directive(text) {
                m.types.push(ty);
                continue;
            }
            if let Some(r) = rnd_code(text) {
                if text.len() == 4 {
                    m.irnd = Some(r);
                } else {
                    m.rnd = Some(r);
                }
                continue;
            }
            match text {
                ".v2" => m.vec = 2,
                ".v4" => m.vec = 4,
                ".global" | ".param" | ".local" | ".shared" | ".const" | ".tex" | ".generic" => {
                    m.space = Some(text);
                }
                ".shared::cta" => m.space = Some(".shared"),
                ".ftz" => m.ftz = true,
                ".sat" => m.sat = true,
                ".approx" => m.approx = true,
                ".full" => m.full = true,
                ".lo" => m.lo = true,
                ".hi" => m.hi = true,
                ".wide" => m.wide = true,
                ".to" => m.to = true,
                ".l" | ".r" | ".wrap" | ".clamp" | ".shiftamt" | ".finite" | ".infinite"
                | ".number" | ".notanumber" | ".normal" | ".subnormal" | ".f4e" | ".b4e"
                | ".rc8" | ".ecl" | ".ecr" | ".rc16" | ".sc" | ".acq_rel" | ".acquire"
                | ".release" | ".sync" | ".aligned" | ".up" | ".down" | ".bfly" | ".idx"
                | ".all" | ".any" | ".ballot" | ".any_sync" | ".red" | ".popc" | ".exch"
                | ".cas" | ".inc" | ".dec" | ".add" | ".min" | ".max" | ".cluster" | ".proxy"
                | ".async" | ".gl" | ".arrive" | ".warp" => m.extra.push(text),
                // Float result modifiers, for the float families to check.
                ".NaN" | ".xorsign" | ".abs" | ".relu" | ".satfinite" | ".oob" => {
                    m.extra.push(text);
                }
                ".and" => m.bool_op = 1,
                ".or" => m.bool_op = 2,
                ".xor" => m.bool_op = 3,
                ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge" | ".ls" | ".hs" | ".equ" | ".neu"
                | ".ltu" | ".leu" | ".gtu" | ".geu" | ".num" | ".nan" => {
                    m.cmp = Some(text);
                }
                // Cache and ordering hints change nothing for one thread at a time.
                ".nc" | ".ca" | ".cg" | ".cs" | ".lu" | ".cv" | ".wb" | ".wt" | ".uni"
                | ".volatile" | ".relaxed" | ".weak" | ".cta" | ".gpu" | ".sys" => {}
                _ if text.starts_with(".L1::") || text.starts_with(".L2::") => {}
                _ => return Err("this modifier"),
            }
        }
        if matches!(ins.opcode, "setp" | "set") && m.cmp.is_none() {
            if m.lo {
                m.cmp = Some(".lo");
            } else if m.hi {
                m.cmp = Some(".hi");
            }
        }
        Ok(m)
    }

    pub(super) fn float_flags(&self, inst: &mut Inst, m: &Mods<'a>) {
        if m.ftz {
            inst.f |= F_FTZ;
        }
        if m.sat {
            inst.f |= F_SAT;
        }
    }
}
