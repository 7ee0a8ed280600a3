//! What an abstract state claims about one concrete state: atoms given values, polynomials
//! evaluated, facts and predicates checked.
//!
//! Atoms the launch or an input defines are given their concrete value; a floor or remainder
//! atom is computed from its operands (and its operands must then be in its domain: the
//! analysis created it only after proving so); an opaque atom an instruction created is
//! solved for from the concrete result it stands for. A claim with an atom left unknown is
//! counted as unchecked, never as passed.

use std::collections::HashMap;

use crate::atoms::Atoms;
use crate::facts::Facts;
use crate::ir::Cmp;
use crate::poly::{Atom, Poly};
use crate::value::PredVal;

/// Atom values.
#[derive(Debug, Clone, Default)]
pub(super) struct Env {
    pub(super) vals: HashMap<Atom, i128>,
}

/// A claim that does not hold: what, in words.
pub(super) type Violation = String;

/// The outcome of checking one claim.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Check {
    Holds,
    /// An atom has no value: nothing was checked.
    Unknown,
    Fails(Violation),
}

impl Env {
    /// The value of atom `a`: given, or computed from its definition.
    pub(super) fn atom(&mut self, atoms: &Atoms, a: Atom) -> Result<Option<i128>, Violation> {
        if let Some(&v) = self.vals.get(&a) {
            return Ok(Some(v));
        }
        let Some(info) = atoms.info(a) else {
            return Ok(None);
        };
        let (def, is_rem) = match (&info.floor, &info.rem) {
            (Some(def), _) => (def.clone(), false),
            (None, Some(def)) => (def.clone(), true),
            (None, None) => return Ok(None),
        };
        let (Some(num), Some(den)) = (self.poly(atoms, &def.0)?, self.poly(atoms, &def.1)?) else {
            return Ok(None);
        };
        // The analysis makes a quotient only after proving `den ≥ 1` on its path (and, for
        // `floor_div`, `num ≥ 0`); a concrete state of that path outside the domain means the
        // proof was wrong.
        if den < 1 {
            return Err(format!(
                "atom {a} = floor({num} / {den}) is used where its divisor is below 1"
            ));
        }
        let q = num.div_euclid(den);
        let v = if is_rem { num - den * q } else { q };
        self.vals.insert(a, v);
        Ok(Some(v))
    }

    /// The exact value of `p`, if every atom in it has one and it fits an `i128` (a fact
    /// beyond that is left unchecked).
    pub(super) fn poly(&mut self, atoms: &Atoms, p: &Poly) -> Result<Option<i128>, Violation> {
        self.eval(atoms, p, false)
    }

    /// The value of `p` modulo `2^128`: what a register value (exact modulo its width, at most
    /// 64 bits) is compared by.
    pub(super) fn poly_mod(&mut self, atoms: &Atoms, p: &Poly) -> Result<Option<i128>, Violation> {
        self.eval(atoms, p, true)
    }

    fn eval(&mut self, atoms: &Atoms, p: &Poly, wrap: bool) -> Result<Option<i128>, Violation> {
        let mut sum: i128 = 0;
        for (mono, coeff) in p.terms() {
            let mut term = *coeff;
            for &a in mono.atoms() {
                let Some(v) = self.atom(atoms, a)? else {
                    return Ok(None);
                };
                term = if wrap {
                    term.wrapping_mul(v)
                } else {
                    match term.checked_mul(v) {
                        Some(t) => t,
                        None => return Ok(None),
                    }
                };
            }
            sum = if wrap {
                sum.wrapping_add(term)
            } else {
                match sum.checked_add(term) {
                    Some(s) => s,
                    None => return Ok(None),
                }
            };
        }
        Ok(Some(sum))
    }

    /// Whether every fact of `facts`, the global facts of `atoms` and the static ranges of the
    /// atoms given or computed so far hold.
    pub(super) fn facts(&mut self, atoms: &Atoms, facts: &Facts) -> Check {
        if facts.dead {
            return Check::Fails("the path's facts are contradictory (dead)".to_owned());
        }
        let mut unknown = false;
        let mut check = |this: &mut Self, what: &str, p: &Poly, ok: fn(i128) -> bool| match this
            .poly(atoms, p)
        {
            Ok(Some(v)) if ok(v) => None,
            Ok(Some(v)) => Some(format!("{what} {p:?} is {v}")),
            Ok(None) => {
                unknown = true;
                None
            }
            Err(e) => Some(e),
        };
        for f in &facts.ineqs {
            if let Some(v) = check(self, "fact ≥ 0:", &f.p, |v| v >= 0) {
                return Check::Fails(v);
            }
        }
        for p in atoms.globals() {
            if let Some(v) = check(self, "global fact ≥ 0:", p, |v| v >= 0) {
                return Check::Fails(v);
            }
        }
        for p in &facts.neqs {
            if let Some(v) = check(self, "fact ≠ 0:", p, |v| v != 0) {
                return Check::Fails(v);
            }
        }
        for (a, p) in &facts.subs {
            let Ok(diff) = Poly::atom(*a).sub(p).ok_or(()) else {
                continue;
            };
            if let Some(v) = check(self, "equation = 0:", &diff, |v| v == 0) {
                return Check::Fails(v);
            }
        }
        for &(a, lo, hi) in &facts.bounds {
            match self.atom(atoms, a) {
                Ok(Some(v)) if v < lo || v > hi => {
                    return Check::Fails(format!("atom {a} = {v} outside its bound {lo}..={hi}"));
                }
                Ok(Some(_)) => {}
                Ok(None) => unknown = true,
                Err(e) => return Check::Fails(e),
            }
        }
        let given: Vec<(Atom, i128)> = self.vals.iter().map(|(&a, &v)| (a, v)).collect();
        for (a, v) in given {
            let (lo, hi) = atoms.range(a);
            if v < lo || v > hi {
                return Check::Fails(format!("atom {a} = {v} outside its range {lo}..={hi}"));
            }
        }
        if unknown {
            Check::Unknown
        } else {
            Check::Holds
        }
    }

    /// The truth of `pred`, if it can be computed.
    pub(super) fn pred(
        &mut self,
        atoms: &Atoms,
        pred: &PredVal,
    ) -> Result<Option<bool>, Violation> {
        Ok(match pred {
            PredVal::Unknown => None,
            PredVal::Not(x) => self.pred(atoms, x)?.map(|t| !t),
            PredVal::Learns(x, _) => self.pred(atoms, x)?,
            PredVal::And(x, y) => match (self.pred(atoms, x)?, self.pred(atoms, y)?) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            PredVal::Or(x, y) => match (self.pred(atoms, x)?, self.pred(atoms, y)?) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            PredVal::HiZero(parts, polarity, w, k) => {
                let mut all_low = true;
                for p in parts {
                    let Some(v) = self.poly_mod(atoms, p)? else {
                        return Ok(None);
                    };
                    all_low &= read(v, *w, false) < 1 << k;
                }
                Some(all_low == *polarity)
            }
            PredVal::Cmp {
                cmp,
                signed,
                w,
                a,
                b,
            } => {
                let (Some(a), Some(b)) = (self.poly_mod(atoms, a)?, self.poly_mod(atoms, b)?)
                else {
                    return Ok(None);
                };
                let (a, b) = (read(a, *w, *signed), read(b, *w, *signed));
                Some(match cmp {
                    Cmp::Eq => a == b,
                    Cmp::Ne => a != b,
                    Cmp::Lt => a < b,
                    Cmp::Le => a <= b,
                    Cmp::Gt => a > b,
                    Cmp::Ge => a >= b,
                })
            }
        })
    }
}

/// `v` modulo `2^w`, read as a `w`-bit number, signed or not.
pub(super) fn read(v: i128, w: u8, signed: bool) -> i128 {
    let w = w.clamp(1, 64);
    let modulus = 1i128 << w;
    let low = v.rem_euclid(modulus);
    if signed && low >= modulus / 2 {
        low - modulus
    } else {
        low
    }
}

/// The values congruent to `bits` modulo `2^w` within `lo..=hi` (at most three are tried:
/// ranges are at most `[−2^63, 2^64)` wide in practice).
pub(super) fn representatives(bits: i128, w: u8, lo: i128, hi: i128) -> Vec<i128> {
    let modulus = 1i128 << w.clamp(1, 64);
    let low = bits.rem_euclid(modulus);
    // The smallest representative ≥ lo.
    let first = lo + (low - lo).rem_euclid(modulus);
    (0..3)
        .map(|k| first + k * modulus)
        .filter(|&v| v <= hi)
        .collect()
}
