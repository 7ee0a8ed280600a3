//! The atom table: what each symbol stands for, its static range, and the canonical forms of
//! the launch geometry.
//!
//! Thread coordinates are canonicalized so that index arithmetic written in any order meets:
//! `ctaid.x · ntid.x` is rewritten to `I0 − tid.x` (with `I0 = ctaid.x · ntid.x + tid.x`, the
//! global thread index) and `nctaid.x · ntid.x` to `S` (the total thread count).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};

use super::hash::WordMap;
use super::poly::{Atom, Mono, Poly};

/// Magnitudes at or beyond this are "unbounded" in interval arithmetic.
pub(crate) const INF: i128 = 1 << 100;

/// What an atom stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AtomKind {
    Tid,
    Ntid,
    Ctaid,
    Nctaid,
    /// `ctaid.x · ntid.x + tid.x`.
    GlobalIndex,
    /// `nctaid.x · ntid.x`.
    Threads,
    /// The value of `.param` `index` (count, shape or stride).
    Param(u32),
    /// `floor(num / den)`, defined where `den ≥ 1`.
    Floor,
    /// The iteration count of a loop.
    Counter,
    /// Something known only by its range.
    Opaque,
}

#[derive(Debug, Clone)]
pub(crate) struct AtomInfo {
    pub(crate) kind: AtomKind,
    pub(crate) lo: i128,
    pub(crate) hi: i128,
    /// For a floor atom: (numerator, denominator).
    pub(crate) floor: Option<(Poly, Poly)>,
    /// For a remainder atom: the polynomial it equals (`num − den·floor(num/den)`).
    pub(crate) rem: Option<Poly>,
}

/// Fixed atom ids.
pub(crate) const TID: Atom = 0;
pub(crate) const NTID: Atom = 1;
pub(crate) const CTAID: Atom = 2;
pub(crate) const NCTAID: Atom = 3;
pub(crate) const I0: Atom = 4;
pub(crate) const S: Atom = 5;

/// Largest grid × block the launch check allows.
pub(crate) const MAX_THREADS: i128 = ((1i128 << 31) - 1) * 1024;

/// Every atom of one verification.
#[derive(Debug, Clone)]
pub(crate) struct Atoms {
    list: Vec<AtomInfo>,
    floors: HashMap<(Poly, Poly), Atom>,
    keyed: HashMap<(u32, u32, u32), Atom>,
    /// The canonical polynomial of the `Count` param (`Π shape_k` for strided).
    pub(crate) count: Option<Poly>,
    /// Shape atoms (strided).
    pub(crate) shapes: Vec<Atom>,
    /// Facts true everywhere (definitions of floor atoms with a provably positive divisor,
    /// launch geometry).
    global: Vec<Poly>,
    /// Global facts by monomial.
    global_index: WordMap<Mono, Vec<usize>>,
    global_set: HashSet<Poly>,
    /// Prover steps taken (a work limit).
    pub(crate) steps: Cell<u64>,
    q_atom: Option<Atom>,
    /// `x − d·floor(x/d)` → its remainder atom.
    rem_forms: HashMap<Poly, Atom>,
    rems: HashMap<(Poly, Poly), Atom>,
    /// Bumped by every change to atoms, ranges or global facts (proof answers are kept per
    /// generation).
    generation: u64,
}

impl Atoms {
    pub(crate) fn new() -> Atoms {
        let mut atoms = Atoms {
            list: Vec::with_capacity(64),
            floors: HashMap::new(),
            keyed: HashMap::new(),
            count: None,
            shapes: Vec::new(),
            global: Vec::new(),
            global_index: WordMap::default(),
            global_set: HashSet::new(),
            steps: Cell::new(0),
            q_atom: None,
            rem_forms: HashMap::new(),
            rems: HashMap::new(),
            generation: 0,
        };
        atoms.push(AtomKind::Tid, 0, 1023);
        atoms.push(AtomKind::Ntid, 1, 1024);
        atoms.push(AtomKind::Ctaid, 0, (1 << 31) - 2);
        atoms.push(AtomKind::Nctaid, 1, (1 << 31) - 1);
        atoms.push(AtomKind::GlobalIndex, 0, MAX_THREADS - 1);
        atoms.push(AtomKind::Threads, 1, MAX_THREADS);
        // I0 < S, tid ≤ I0, tid < ntid, ntid ≤ S.
        let s = Poly::atom(S);
        let i0 = Poly::atom(I0);
        let tid = Poly::atom(TID);
        let ntid = Poly::atom(NTID);
        let facts = [
            s.sub(&i0).and_then(|p| p.add_const(-1)),
            i0.sub(&tid),
            ntid.sub(&tid).and_then(|p| p.add_const(-1)),
            s.sub(&ntid),
        ];
        for f in facts.into_iter().flatten() {
            atoms.add_global(f);
        }
        atoms
    }

    pub(crate) fn push(&mut self, kind: AtomKind, lo: i128, hi: i128) -> Atom {
        self.generation += 1;
        let id = self.list.len() as Atom;
        self.list.push(AtomInfo {
            kind,
            lo,
            hi,
            floor: None,
            rem: None,
        });
        id
    }

    /// Changes so far to atoms, ranges and global facts.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// How many atoms there are.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// An atom identified by `key`, created once.
    pub(crate) fn keyed(
        &mut self,
        key: (u32, u32, u32),
        kind: AtomKind,
        lo: i128,
        hi: i128,
    ) -> Atom {
        if let Some(&a) = self.keyed.get(&key) {
            return a;
        }
        let a = self.push(kind, lo, hi);
        self.keyed.insert(key, a);
        a
    }

    pub(crate) fn set_range(&mut self, a: Atom, (lo, hi): (i128, i128)) {
        self.generation += 1;
        if let Some(info) = self.list.get_mut(a as usize) {
            info.lo = lo;
            info.hi = hi;
        }
    }

    /// Whether `a` stands for a value the analysis lost track of.
    pub(crate) fn is_opaque(&self, a: Atom) -> bool {
        self.info(a).is_some_and(|i| i.kind == AtomKind::Opaque)
    }

    pub(crate) fn info(&self, a: Atom) -> Option<&AtomInfo> {
        self.list.get(a as usize)
    }

    pub(crate) fn range(&self, a: Atom) -> (i128, i128) {
        self.info(a).map_or((-INF, INF), |i| (i.lo, i.hi))
    }

    /// `floor(num / den)` as an atom (one per pair), with its defining facts added globally:
    /// the caller has proven `den ≥ 1`.
    pub(crate) fn floor(&mut self, num: &Poly, den: &Poly, lo: i128, hi: i128) -> Option<Atom> {
        // floor(floor(x / a) / d) = floor(x / (a·d)) for x ≥ 0 and a, d ≥ 1.
        let inner = num
            .as_atom()
            .and_then(|f| self.info(f))
            .and_then(|i| i.floor.clone());
        let key = match &inner {
            Some((x, a)) => (x.clone(), a.mul(den)?),
            None => (num.clone(), den.clone()),
        };
        let a = match self.floors.get(&key) {
            Some(&a) => a,
            None => {
                let a = self.push(AtomKind::Floor, lo, hi);
                if let Some(info) = self.list.get_mut(a as usize) {
                    info.floor = Some(key.clone());
                }
                self.floors.insert(key.clone(), a);
                self.define(&key.0, &key.1, a)?;
                a
            }
        };
        if inner.is_some() {
            self.define(num, den, a)?;
        }
        Some(a)
    }

    /// `num mod den` as an atom `r = num − den·floor(num/den)`, `0 ≤ r ≤ den − 1` (the caller
    /// has proven `num ≥ 0`, `den ≥ 1`); `hi` bounds `den − 1` statically.
    pub(crate) fn rem(&mut self, num: &Poly, den: &Poly, f: Atom, hi: i128) -> Option<Atom> {
        let key = (num.clone(), den.clone());
        if let Some(&r) = self.rems.get(&key) {
            return Some(r);
        }
        let r = self.push(AtomKind::Floor, 0, hi);
        self.rems.insert(key, r);
        let form = num.sub(&den.mul(&Poly::atom(f))?)?;
        if let Some(info) = self.list.get_mut(r as usize) {
            info.rem = Some(form.clone());
        }
        self.rem_forms.insert(form.clone(), r);
        // form − r = 0, r ≤ den − 1.
        let d = form.sub(&Poly::atom(r))?;
        for p in [
            Some(d.clone()),
            d.neg(),
            den.add_const(-1)?.sub(&Poly::atom(r)).ok_or(()).ok(),
        ]
        .into_iter()
        .flatten()
        {
            self.add_global(p);
        }
        Some(r)
    }

    /// The remainder atom a polynomial of the form `x − d·floor(x/d)` stands for.
    pub(crate) fn rem_form(&self, p: &Poly) -> Option<Atom> {
        self.rem_forms.get(p).copied()
    }

    /// Adds `num − den·f ≥ 0` and `den − 1 − num + den·f ≥ 0`.
    fn define(&mut self, num: &Poly, den: &Poly, f: Atom) -> Option<()> {
        let df = den.mul(&Poly::atom(f))?;
        let low = num.sub(&df)?;
        let high = den.add_const(-1)?.sub(&low)?;
        for p in [low, high] {
            self.add_global(p);
        }
        Some(())
    }

    /// `q = floor((n − 1 − I0) / S)`: `i0 + J·S < n ⟺ J ≤ q`.
    pub(crate) fn q(&mut self) -> Option<Atom> {
        let count = self.count.clone()?;
        let num = count.add_const(-1)?.sub(&Poly::atom(I0))?;
        let a = self.floor(&num, &Poly::atom(S), -1, INF)?;
        // q ≥ −1 because n ≥ 0 and I0 < S.
        self.add_global(Poly::atom(a).add_const(1)?);
        self.q_atom = Some(a);
        Some(a)
    }

    /// Adds a fact true everywhere.
    pub(crate) fn add_global(&mut self, p: Poly) {
        self.generation += 1;
        if !self.global_set.insert(p.clone()) {
            return;
        }
        let at = self.global.len();
        for (m, _) in p.terms() {
            if !m.is_one() {
                self.global_index.entry(*m).or_default().push(at);
            }
        }
        self.global.push(p);
    }

    /// Every fact true everywhere.
    pub(crate) fn globals(&self) -> &[Poly] {
        &self.global
    }

    /// Global facts containing monomial `m`.
    pub(crate) fn global_with(&self, m: &Mono) -> impl Iterator<Item = &Poly> + '_ {
        self.global_index
            .get(m)
            .into_iter()
            .flatten()
            .filter_map(|&i| self.global.get(i))
    }

    pub(crate) fn q_existing(&self) -> Option<Atom> {
        self.q_atom
    }

    /// Rewrites `ctaid·ntid → I0 − tid` and `nctaid·ntid → S`.
    pub(crate) fn canon(&self, p: &Poly) -> Option<Poly> {
        let needs = p
            .terms()
            .iter()
            .any(|(m, _)| m.contains(NTID) && (m.contains(CTAID) || m.contains(NCTAID)));
        if !needs {
            return Some(p.clone());
        }
        let mut out = Poly::zero();
        for &(m, c) in p.terms() {
            let mut term = Poly::from_terms(vec![(Mono::ONE, c)])?;
            let mut rest = m;
            loop {
                if rest.contains(NTID) && rest.contains(CTAID) {
                    rest = rest.without(NTID)?.without(CTAID)?;
                    term = term.mul(&Poly::atom(I0).sub(&Poly::atom(TID))?)?;
                } else if rest.contains(NTID) && rest.contains(NCTAID) {
                    rest = rest.without(NTID)?.without(NCTAID)?;
                    term = term.mul(&Poly::atom(S))?;
                } else {
                    break;
                }
            }
            term = term.mul(&Poly::from_terms(vec![(rest, 1)])?)?;
            out = out.add(&term)?;
        }
        Some(out)
    }
}

/// Saturating interval arithmetic on `i128` with ±[`INF`] as unbounded.
pub(crate) fn clamp(x: i128) -> i128 {
    x.clamp(-INF, INF)
}

pub(crate) fn imul(a: (i128, i128), b: (i128, i128)) -> (i128, i128) {
    let products = [
        a.0.saturating_mul(b.0),
        a.0.saturating_mul(b.1),
        a.1.saturating_mul(b.0),
        a.1.saturating_mul(b.1),
    ];
    let lo = products.iter().copied().min().unwrap_or(-INF);
    let hi = products.iter().copied().max().unwrap_or(INF);
    (clamp(lo), clamp(hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_is_canonical() {
        let atoms = Atoms::new();
        // (nctaid + ctaid)·ntid + tid = S + I0.
        let e = Poly::atom(NCTAID)
            .add(&Poly::atom(CTAID))
            .and_then(|p| p.mul(&Poly::atom(NTID)))
            .and_then(|p| p.add(&Poly::atom(TID)))
            .unwrap();
        let c = atoms.canon(&e).unwrap();
        assert_eq!(c, Poly::atom(S).add(&Poly::atom(I0)).unwrap());
    }

    #[test]
    fn intervals_saturate() {
        assert_eq!(imul((-INF, INF), (1, 2)), (-INF, INF));
        assert_eq!(imul((-2, 3), (4, 5)), (-10, 15));
    }
}
