//! Counterexamples to a goal: a point where every premise the prover may use holds and the
//! goal is negative.
//!
//! Each step of the prover's search derives `g ≥ 0` from premises that are true at every
//! integer point satisfying: the atoms' ranges on the path, the path's inequalities and
//! equalities, the global facts, `den ≥ 1` for every floor atom, and a product of distinct
//! shapes below 2^63. At a point satisfying all of them where `g < 0`, no search can succeed,
//! so it need not run. The point is found by a short deterministic local search: free atoms
//! are moved within their ranges, floor, remainder and substituted atoms follow from their
//! definitions, and every premise is checked at the point, so a bad guess only costs time,
//! never a verdict.

use super::atoms::Atoms;
use super::poly::{Atom, Poly};

/// Moves of the local search per refutation attempt.
const MOVES: u32 = 64;
/// Values stay within ±2^62 so that products rarely overflow (an overflow rejects the point).
const LIMIT: i128 = 1 << 62;

/// How a floor or remainder atom follows from the others.
#[derive(Clone, Copy)]
enum Definition<'a> {
    Floor(&'a Poly, &'a Poly),
    Equal(&'a Poly),
}

/// One refutation attempt: the premises and the atoms it may move.
struct Problem<'a> {
    atoms: &'a Atoms,
    ranges: &'a [(i128, i128)],
    subs: &'a [(Atom, Poly)],
    defined: Vec<(usize, Definition<'a>)>,
    /// Polynomials that must be ≥ 0: the path's inequalities and the global facts.
    nonneg: Vec<&'a Poly>,
    /// Floor denominators, which must be ≥ 1.
    dens: Vec<&'a Poly>,
    /// Atoms chosen freely (neither defined nor substituted).
    free: Vec<bool>,
    g: &'a Poly,
}

/// Whether a point refutes `g ≥ 0` under `facts` (the path's inequalities), `subs` (the path's
/// equalities, `atom = value`), `ranges` (every atom's range on the path, by index) and the
/// global facts of `atoms`.
pub(crate) fn refutes<T>(
    atoms: &Atoms,
    ranges: &[(i128, i128)],
    facts: &[(&Poly, T)],
    subs: &[(Atom, Poly)],
    g: &Poly,
) -> bool {
    let n = ranges.len();
    if n != atoms.len()
        || ranges
            .iter()
            .any(|&(lo, hi)| lo.max(-LIMIT) > hi.min(LIMIT))
    {
        return false;
    }
    let mut defined = Vec::new();
    let mut dens = Vec::new();
    let mut free = vec![true; n];
    for (a, slot) in free.iter_mut().enumerate() {
        let Some(info) = atoms.info(a as Atom) else {
            continue;
        };
        match (&info.floor, &info.rem_form) {
            (Some((num, den)), _) => {
                defined.push((a, Definition::Floor(num, den)));
                dens.push(den);
                *slot = false;
            }
            (None, Some(form)) => {
                defined.push((a, Definition::Equal(form)));
                *slot = false;
            }
            (None, None) => {}
        }
    }
    for (a, _) in subs {
        if let Some(slot) = free.get_mut(*a as usize) {
            *slot = false;
        }
    }
    let nonneg = facts
        .iter()
        .map(|(f, _)| *f)
        .chain(atoms.globals())
        .collect();
    let problem = Problem {
        atoms,
        ranges,
        subs,
        defined,
        nonneg,
        dens,
        free,
        g,
    };
    problem.search()
}

impl Problem<'_> {
    fn search(&self) -> bool {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // Start from the point nearest 0 or the one nearest 1, whichever violates less.
        let mut point = self.start(0);
        let mut score = self.violations(&point);
        let other = self.start(1);
        let other_score = self.violations(&other);
        if other_score < score {
            point = other;
            score = other_score;
        }
        let mut trial = point.clone();
        for _ in 0..MOVES {
            if score == 0 {
                return true;
            }
            let Some(a) = self.pick(&point, &mut rng) else {
                return false;
            };
            trial.copy_from_slice(&point);
            let (lo, hi) = self.range(a);
            let current = point.get(a).copied().unwrap_or_default();
            let step = 1i128 << (rng.next() % 6);
            let value = match rng.next() % 8 {
                0 => lo,
                1 => hi,
                2 | 3 => current.saturating_add(step),
                4 | 5 => current.saturating_sub(step),
                6 => 0i128.clamp(lo, hi).saturating_add((rng.next() % 4) as i128),
                _ => lo.saturating_add((rng.next() % 8) as i128),
            };
            if let Some(slot) = trial.get_mut(a) {
                *slot = value.clamp(lo, hi);
            }
            self.settle(&mut trial);
            let trial_score = self.violations(&trial);
            if trial_score <= score {
                std::mem::swap(&mut point, &mut trial);
                score = trial_score;
            }
        }
        score == 0
    }

    fn range(&self, a: usize) -> (i128, i128) {
        let (lo, hi) = self.ranges.get(a).copied().unwrap_or((0, 0));
        (lo.max(-LIMIT), hi.min(LIMIT))
    }

    /// Every free atom at the value of its range nearest `near`; the rest from definitions.
    fn start(&self, near: i128) -> Vec<i128> {
        let mut point: Vec<i128> = (0..self.ranges.len())
            .map(|a| {
                let (lo, hi) = self.range(a);
                near.clamp(lo, hi)
            })
            .collect();
        self.settle(&mut point);
        point
    }

    /// Floor, remainder and substituted atoms from their definitions, twice where there are
    /// substitutions (a definition may read a substituted atom).
    fn settle(&self, point: &mut [i128]) {
        let passes = if self.subs.is_empty() { 1 } else { 2 };
        for _ in 0..passes {
            for &(a, def) in &self.defined {
                let value = match def {
                    Definition::Floor(num, den) => match (eval(num, point), eval(den, point)) {
                        (Some(x), Some(d)) if d >= 1 => Some(x.div_euclid(d)),
                        _ => None,
                    },
                    Definition::Equal(form) => eval(form, point),
                };
                if let (Some(v), Some(slot)) = (value, point.get_mut(a)) {
                    *slot = v;
                }
            }
            for (a, value) in self.subs {
                if let (Some(v), Some(slot)) = (eval(value, point), point.get_mut(*a as usize)) {
                    *slot = v;
                }
            }
        }
    }

    /// The first premise violated at `point` (or the goal, if it holds there): a free atom
    /// it mentions, else any free atom.
    fn pick(&self, point: &[i128], rng: &mut Rng) -> Option<usize> {
        let violated: Option<&Poly> = if eval(self.g, point).is_none_or(|v| v >= 0) {
            Some(self.g)
        } else {
            self.nonneg
                .iter()
                .copied()
                .find(|p| eval(p, point).is_none_or(|v| v < 0))
                .or_else(|| {
                    self.dens
                        .iter()
                        .copied()
                        .find(|d| eval(d, point).is_none_or(|v| v < 1))
                })
        };
        let is_free = |a: &Atom| self.free.get(*a as usize).copied().unwrap_or(false);
        // A defined atom moves with the free atoms of its definition (a few levels down).
        let mut candidates: Vec<Atom> = Vec::new();
        let mut frontier: Vec<Atom> = violated.map(|p| p.atoms().collect()).unwrap_or_default();
        for _ in 0..4 {
            let mut next = Vec::new();
            for a in frontier {
                if is_free(&a) {
                    if !candidates.contains(&a) {
                        candidates.push(a);
                    }
                } else {
                    for p in self.definition(a) {
                        next.extend(p.atoms());
                    }
                }
            }
            frontier = next;
        }
        if candidates.is_empty() {
            candidates = self.g.atoms().filter(is_free).collect();
        }
        if candidates.is_empty() {
            candidates = (0..self.free.len() as Atom).filter(is_free).collect();
        }
        let len = candidates.len() as u64;
        if len == 0 {
            return None;
        }
        candidates
            .get((rng.next() % len) as usize)
            .map(|&a| a as usize)
    }

    /// The polynomials a non-free atom is computed from.
    fn definition(&self, a: Atom) -> Vec<&Poly> {
        let mut out: Vec<&Poly> = Vec::new();
        if let Some(&(_, def)) = self.defined.iter().find(|d| d.0 == a as usize) {
            match def {
                Definition::Floor(num, den) => out.extend([num, den]),
                Definition::Equal(form) => out.push(form),
            }
        }
        out.extend(self.subs.iter().filter(|s| s.0 == a).map(|s| &s.1));
        out
    }

    /// How many premises fail at `point`, plus one if the goal holds there; 0 is a
    /// counterexample.
    fn violations(&self, point: &[i128]) -> usize {
        let mut count = usize::from(eval(self.g, point).is_none_or(|v| v >= 0));
        count += point
            .iter()
            .zip(self.ranges)
            .filter(|&(v, &(lo, hi))| *v < lo || *v > hi)
            .count();
        count += self
            .nonneg
            .iter()
            .filter(|p| eval(p, point).is_none_or(|v| v < 0))
            .count();
        count += self
            .dens
            .iter()
            .filter(|d| eval(d, point).is_none_or(|v| v < 1))
            .count();
        count += self
            .subs
            .iter()
            .filter(|(a, value)| eval(value, point) != point.get(*a as usize).copied())
            .count();
        // A product of distinct shapes is at most their full product, below 2^63.
        let product = self.atoms.shapes.iter().try_fold(1i128, |acc, &s| {
            point
                .get(s as usize)
                .and_then(|&v| acc.checked_mul(v.max(0)))
        });
        count += usize::from(product.is_none_or(|p| p >= 1i128 << 63));
        count
    }
}

/// The value of `p` at `point`; `None` on an atom outside the point or a term or partial sum
/// of magnitude 2^90 or more: the prover's interval arithmetic saturates at 2^100, and a
/// point is only a counterexample where it computes exactly.
fn eval(p: &Poly, point: &[i128]) -> Option<i128> {
    // Unsigned magnitudes: a term can be exactly `i128::MIN`, whose `abs` overflows.
    const BIG: u128 = 1 << 90;
    let mut sum: i128 = 0;
    for (m, c) in p.terms() {
        let mut term = *c;
        for &a in m.atoms() {
            term = term.checked_mul(*point.get(a as usize)?)?;
            if term.unsigned_abs() >= BIG {
                return None;
            }
        }
        sum = sum.checked_add(term)?;
        if sum.unsigned_abs() >= BIG {
            return None;
        }
    }
    Some(sum)
}

/// A xorshift generator: the same points on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_of_the_least_i128_is_no_value() {
        // `i128::MIN` has no absolute value: the magnitude test must not overflow on it
        // (a debug build panicked here when a fact's term reached it at a point).
        assert_eq!(eval(&Poly::constant(i128::MIN), &[]), None);
        let x = Poly::atom(0).scale(-(1i128 << 64)).unwrap_or_default();
        assert_eq!(eval(&x, &[1i128 << 63]), None);
        assert_eq!(eval(&Poly::atom(0), &[5]), Some(5));
    }
}
