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
    /// The launch's dynamic shared memory bytes.
    DynamicShared,
}

#[derive(Debug, Clone)]
pub(crate) struct AtomInfo {
    pub(crate) kind: AtomKind,
    pub(crate) lo: i128,
    pub(crate) hi: i128,
    /// For a floor atom: (numerator, denominator).
    pub(crate) floor: Option<(Poly, Poly)>,
    /// For a remainder atom: (numerator, denominator).
    pub(crate) rem: Option<(Poly, Poly)>,
    /// For a keyed atom: its key.
    pub(crate) key: Option<(u32, u32, u32)>,
    /// For a remainder atom: the polynomial it equals (`num − den·floor(num/den)`).
    pub(crate) rem_form: Option<Poly>,
}

/// Fixed atom ids.
pub(crate) const TID: Atom = 0;
pub(crate) const NTID: Atom = 1;
pub(crate) const CTAID: Atom = 2;
pub(crate) const NCTAID: Atom = 3;
pub(crate) const I0: Atom = 4;
pub(crate) const S: Atom = 5;

/// The first key word of a loop's symbols: the value at the loop's header of each register
/// the loop writes (`(LOOP_SYMBOL, loop, register)`).
pub(crate) const LOOP_SYMBOL: u32 = 2;

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
    /// Prover work done, in the search's units (a work limit).
    pub(crate) steps: Cell<u64>,
    q_atom: Option<Atom>,
    /// `x − d·floor(x/d)` → its remainder atom.
    rem_forms: HashMap<Poly, Atom>,
    rems: HashMap<(Poly, Poly), Atom>,
    /// The y and z axes of a three-dimensional launch (absent for one-dimensional ones):
    /// `[tid, ntid, ctaid, nctaid, global index, threads]` along each.
    pub(crate) axes: Vec<[Atom; 6]>,
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
            axes: Vec::new(),
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
        // And ctaid < nctaid: a block's index is below the grid's size (`partial[blockIdx.x]`
        // against an extent of `grid.x`).
        let facts = [
            s.sub(&i0).and_then(|p| p.add_const(-1)),
            i0.sub(&tid),
            ntid.sub(&tid).and_then(|p| p.add_const(-1)),
            s.sub(&ntid),
            Poly::atom(NCTAID)
                .sub(&Poly::atom(CTAID))
                .and_then(|p| p.add_const(-1)),
        ];
        for f in facts.into_iter().flatten() {
            atoms.add_global(f);
        }
        atoms
    }

    /// Atoms for the y and z axes of a three-dimensional launch, with the facts x has and the
    /// ranges of [`crate::MAX_BLOCK`] and [`crate::MAX_GRID`] along each: `0 ≤ tid < ntid ≤
    /// B`, `0 ≤ ctaid < nctaid ≤ G`, the global index `I = ctaid · ntid + tid` with `tid ≤ I <
    /// S ≤ B · G`, `S = nctaid · ntid ≥ ntid`. The launch check refuses a launch outside these
    /// ranges (`ctaid < nctaid` and `tid < ntid` hold by the hardware's definition of the
    /// coordinates).
    pub(crate) fn add_axes(&mut self) {
        if !self.axes.is_empty() {
            return;
        }
        for axis in 1..3 {
            let block = i128::from(crate::MAX_BLOCK[axis]);
            let grid = i128::from(crate::MAX_GRID[axis]);
            let tid = self.push(AtomKind::Tid, 0, block - 1);
            let ntid = self.push(AtomKind::Ntid, 1, block);
            let ctaid = self.push(AtomKind::Ctaid, 0, grid - 1);
            let nctaid = self.push(AtomKind::Nctaid, 1, grid);
            let i0 = self.push(AtomKind::GlobalIndex, 0, block * grid - 1);
            let s = self.push(AtomKind::Threads, 1, block * grid);
            let (sp, ip, tp, np) = (
                Poly::atom(s),
                Poly::atom(i0),
                Poly::atom(tid),
                Poly::atom(ntid),
            );
            let facts = [
                sp.sub(&ip).and_then(|p| p.add_const(-1)),
                ip.sub(&tp),
                np.sub(&tp).and_then(|p| p.add_const(-1)),
                sp.sub(&np),
                Poly::atom(nctaid)
                    .sub(&Poly::atom(ctaid))
                    .and_then(|p| p.add_const(-1)),
            ];
            for f in facts.into_iter().flatten() {
                self.add_global(f);
            }
            self.axes.push([tid, ntid, ctaid, nctaid, i0, s]);
        }
    }

    /// `%tid`, `%ntid`, `%ctaid` or `%nctaid` (`group` 0..=3) along axis `dim` (1 = y, 2 = z)
    /// of a three-dimensional launch.
    pub(crate) fn axis_atom(&self, group: u8, dim: u8) -> Option<Atom> {
        let axis = self.axes.get(usize::from(dim).checked_sub(1)?)?;
        axis.get(usize::from(group)).copied()
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
            key: None,
            rem_form: None,
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

    /// The id the next new atom gets: every atom below it exists already.
    pub(crate) fn next_id(&self) -> Atom {
        self.list.len() as Atom
    }

    /// The operands a floor or remainder atom is a function of: such an atom has one value
    /// wherever its operands have one, whichever instruction computed it.
    pub(crate) fn operands(&self, a: Atom) -> Option<(&Poly, &Poly)> {
        let info = self.info(a)?;
        info.floor
            .as_ref()
            .or(info.rem.as_ref())
            .map(|(num, den)| (num, den))
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
        if let Some(info) = self.list.get_mut(a as usize) {
            info.key = Some(key);
        }
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

    /// Whether `a` is a loop's symbol (its header's value of a register the loop writes) or
    /// a loop's iteration count.
    pub(crate) fn loop_carried(&self, a: Atom) -> bool {
        self.info(a).is_some_and(|i| {
            i.kind == AtomKind::Counter || i.key.is_some_and(|k| k.0 == LOOP_SYMBOL)
        })
    }

    pub(crate) fn range(&self, a: Atom) -> (i128, i128) {
        self.info(a).map_or((-INF, INF), |i| (i.lo, i.hi))
    }

    /// Whether `p ≥ 1` wherever anything is: positive multiples of the launch geometry's
    /// counts (whose ranges never change) and a nonnegative constant.
    pub(crate) fn fixed_positive(&self, p: &Poly) -> bool {
        !p.is_zero()
            && p.terms().iter().all(|(m, c)| {
                *c > 0
                    && m.atoms().iter().all(|a| {
                        [NTID, NCTAID, S].contains(a)
                            || self.axes.iter().any(|x| [x[1], x[3], x[5]].contains(a))
                    })
            })
    }

    /// `floor(num / den)` as an atom (one per pair); the caller has proven `den ≥ 1` on its
    /// path. The atom is shared by every path computing the same quotient, so its defining
    /// facts hold everywhere only where `den ≥ 1` does: they are added globally then, and
    /// otherwise returned, for the caller to assume on its path (at every use, not just the
    /// first). `lo..=hi` must hold everywhere the atom is defined.
    pub(crate) fn floor(
        &mut self,
        num: &Poly,
        den: &Poly,
        lo: i128,
        hi: i128,
    ) -> Option<(Atom, Vec<Poly>)> {
        // floor(floor(x / a) / d) = floor(x / (a·d)) for x ≥ 0 and a, d ≥ 1.
        let inner = num
            .as_atom()
            .and_then(|f| self.info(f))
            .and_then(|i| i.floor.clone());
        let key = match &inner {
            Some((x, a)) => (x.clone(), a.mul(den)?),
            None => (num.clone(), den.clone()),
        };
        let mut local = Vec::new();
        let a = match self.floors.get(&key) {
            Some(&a) => a,
            None => {
                let a = self.push(AtomKind::Floor, lo, hi);
                if let Some(info) = self.list.get_mut(a as usize) {
                    info.floor = Some(key.clone());
                }
                self.floors.insert(key.clone(), a);
                a
            }
        };
        for (n, d) in [Some((&key.0, &key.1)), inner.as_ref().map(|_| (num, den))]
            .into_iter()
            .flatten()
        {
            let defs = define(n, d, a)?;
            if self.fixed_positive(d) {
                for p in defs {
                    self.add_global(p);
                }
            } else {
                local.extend(defs);
            }
        }
        Some((a, local))
    }

    /// `num mod den` as an atom `r = num − den·floor(num/den)`, `0 ≤ r ≤ den − 1` (the caller
    /// has proven `num ≥ 0`, `den ≥ 1`); `hi` bounds `den − 1` statically. As for
    /// [`Atoms::floor`], the bounds hold everywhere only if `den ≥ 1` does; otherwise
    /// `r ≤ den − 1` is returned for the caller's path and the range is the caller's to bound.
    pub(crate) fn rem(
        &mut self,
        num: &Poly,
        den: &Poly,
        f: Atom,
        hi: i128,
    ) -> Option<(Atom, Vec<Poly>)> {
        let fixed = self.fixed_positive(den);
        let below = den.add_const(-1)?;
        let key = (num.clone(), den.clone());
        if let Some(&r) = self.rems.get(&key) {
            let local = if fixed {
                Vec::new()
            } else {
                vec![below.sub(&Poly::atom(r))?]
            };
            return Some((r, local));
        }
        let (lo, hi) = if fixed { (0, hi) } else { (-INF, INF) };
        let r = self.push(AtomKind::Floor, lo, hi);
        if let Some(info) = self.list.get_mut(r as usize) {
            info.rem = Some(key.clone());
        }
        self.rems.insert(key, r);
        let form = num.sub(&den.mul(&Poly::atom(f))?)?;
        if let Some(info) = self.list.get_mut(r as usize) {
            info.rem_form = Some(form.clone());
        }
        self.rem_forms.insert(form.clone(), r);
        // form − r = 0 defines r; r ≤ den − 1 is floor's.
        let d = form.sub(&Poly::atom(r))?;
        self.add_global(d.clone());
        self.add_global(d.neg()?);
        let top = below.sub(&Poly::atom(r))?;
        if fixed {
            self.add_global(top);
            Some((r, Vec::new()))
        } else {
            Some((r, vec![top]))
        }
    }

    /// The remainder atom a polynomial of the form `x − d·floor(x/d)` stands for.
    pub(crate) fn rem_form(&self, p: &Poly) -> Option<Atom> {
        self.rem_forms.get(p).copied()
    }

    /// `q = floor((n − 1 − I0) / S)`: `i0 + J·S < n ⟺ J ≤ q`.
    pub(crate) fn q(&mut self) -> Option<Atom> {
        let count = self.count.clone()?;
        let num = count.add_const(-1)?.sub(&Poly::atom(I0))?;
        let (a, _) = self.floor(&num, &Poly::atom(S), -1, INF)?;
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

    /// Rewrites `ctaid·ntid → I0 − tid` and `nctaid·ntid → S`, along every axis there is.
    pub(crate) fn canon(&self, p: &Poly) -> Option<Poly> {
        let mut axes = vec![[TID, NTID, CTAID, NCTAID, I0, S]];
        axes.extend(self.axes.iter().copied());
        let needs = p.terms().iter().any(|(m, _)| {
            axes.iter()
                .any(|x| m.contains(x[1]) && (m.contains(x[2]) || m.contains(x[3])))
        });
        if !needs {
            return Some(p.clone());
        }
        let mut out = Poly::zero();
        for &(m, c) in p.terms() {
            let mut term = Poly::from_terms(vec![(Mono::ONE, c)])?;
            let mut rest = m;
            for &[tid, ntid, ctaid, nctaid, i0, s] in &axes {
                loop {
                    if rest.contains(ntid) && rest.contains(ctaid) {
                        rest = rest.without(ntid)?.without(ctaid)?;
                        term = term.mul(&Poly::atom(i0).sub(&Poly::atom(tid))?)?;
                    } else if rest.contains(ntid) && rest.contains(nctaid) {
                        rest = rest.without(ntid)?.without(nctaid)?;
                        term = term.mul(&Poly::atom(s))?;
                    } else {
                        break;
                    }
                }
            }
            term = term.mul(&Poly::from_terms(vec![(rest, 1)])?)?;
            out = out.add(&term)?;
        }
        Some(out)
    }
}

/// `num − den·f ≥ 0` and `den − 1 − num + den·f ≥ 0`: `f = floor(num / den)` for `den ≥ 1`.
fn define(num: &Poly, den: &Poly, f: Atom) -> Option<[Poly; 2]> {
    let df = den.mul(&Poly::atom(f))?;
    let low = num.sub(&df)?;
    let high = den.add_const(-1)?.sub(&low)?;
    Some([low, high])
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
