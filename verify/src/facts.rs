//! Path facts and the prover.
//!
//! A [`Facts`] holds what is known on one path: inequalities `p ≥ 0` (integer-tightened),
//! equalities kept as substitutions `atom := poly`, disequalities `p ≠ 0`, and atom ranges.
//! [`Facts::prove`] decides `g ≥ 0` by a search bounded in depth and in work (nodes expanded
//! and leaves ranged, see [`NODE`]): interval evaluation, cancelling a
//! monomial of the goal against a fact that contains it, the grid-stride rule
//! (`I0 + J·S < n ⟺ J ≤ q`), splitting on a nonnegative atom, and multiplying through the
//! divisor of a floor atom. Every step is sound for integers; a failed search proves nothing.
//!
//! Three things spare work without changing any outcome: a search replays the recorded outcome
//! of a subgoal it met before (charging the work it took), each question's answer is kept for
//! the content of the facts it was asked on (every copy of equal facts in one analysis finds
//! it, until they change), and a search that has grown past a few nodes first looks for a
//! counterexample point, where no search could succeed.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::atoms::{AtomKind, Atoms, I0, INF, S, clamp, imul};
use super::hash::WordMap;
use super::poly::{Atom, Mono, Poly, gcd};
use super::witness;

/// Condition tags carried by facts that a launch condition introduced.
pub(crate) type Tags = u16;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Fact {
    pub(crate) p: Poly,
    pub(crate) tags: Tags,
}

/// What is known on one path.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    pub(crate) ineqs: Vec<Fact>,
    pub(crate) subs: Vec<(Atom, Poly)>,
    pub(crate) neqs: Vec<Poly>,
    pub(crate) bounds: Vec<(Atom, i128, i128)>,
    /// The path is infeasible.
    pub(crate) dead: bool,
    /// Outcomes of earlier proofs on exactly these facts. Every method that changes the
    /// facts empties it; the fields are changed nowhere else.
    answers: Answers,
    /// The outcomes of the analysis these facts belong to, by content: shared by every copy
    /// and join of the facts it started from.
    table: Rc<AnswerTable>,
}

/// A proof question: the normalized goal and the search's effort.
type Question = (Poly, Effort);

/// Its answer: the tags (or a failure) and the work the search took.
type Answer = (Option<Tags>, u64);

/// The proof outcomes of these facts: shared by every copy of them with the same content in
/// one analysis (its [`AnswerTable`]), found at the first question that its
/// interval does not settle. Every method that changes the facts drops it.
#[derive(Default)]
struct Answers {
    shared: RefCell<Option<Rc<Shared>>>,
}

impl Answers {
    fn clear(&mut self) {
        *self.shared.get_mut() = None;
    }
}

// A copy of the facts finds its answers again in the table, by content.
impl Clone for Answers {
    fn clone(&self) -> Self {
        Answers::default()
    }
}

impl std::fmt::Debug for Answers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self
            .shared
            .borrow()
            .as_ref()
            .map_or(0, |s| s.map.borrow().len());
        write!(f, "{n} answers")
    }
}

/// The outcomes of proofs on one content of facts (what a search reads: the inequalities in
/// order, the substitutions in order, the bounds) at one generation of the atoms.
struct Shared {
    ineqs: Vec<Fact>,
    subs: Vec<(Atom, Poly)>,
    bounds: Vec<(Atom, i128, i128)>,
    generation: u64,
    map: RefCell<WordMap<Question, Answer>>,
}

/// Proof outcomes by the content of the facts they were found on, for one analysis (the facts
/// it starts from, their copies and their joins): the same
/// path state reached again (another visit of a loop body, the same branch taken by another
/// path) asks the same questions, and a failing search is the prover's costliest work. An
/// outcome is replayed only for facts equal to the ones it was found on, in full (the hash
/// only finds candidates), at the same generation of the atoms: exactly what the search would
/// find again.
#[derive(Default)]
pub(crate) struct AnswerTable {
    by_content: RefCell<WordMap<u64, Vec<Rc<Shared>>>>,
    kept: Cell<usize>,
}

/// The contents an [`AnswerTable`] keeps at most; past it, facts keep their answers alone.
const MAX_CONTENTS: usize = 4096;

impl std::fmt::Debug for AnswerTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} fact contents", self.kept.get())
    }
}

impl AnswerTable {
    /// The answers of `facts`' content at `generation`: kept ones, or new ones (kept while
    /// there is room).
    fn of(&self, facts: &Facts, generation: u64) -> Rc<Shared> {
        use std::hash::{Hash, Hasher};
        let mut h = super::hash::WordHasher::default();
        facts.ineqs.hash(&mut h);
        facts.subs.hash(&mut h);
        facts.bounds.hash(&mut h);
        generation.hash(&mut h);
        let key = h.finish();
        let same = |s: &Shared| {
            s.generation == generation
                && s.ineqs == facts.ineqs
                && s.subs == facts.subs
                && s.bounds == facts.bounds
        };
        if let Some(found) = self
            .by_content
            .borrow()
            .get(&key)
            .and_then(|list| list.iter().find(|s| same(s)))
        {
            return Rc::clone(found);
        }
        let shared = Rc::new(Shared {
            ineqs: facts.ineqs.clone(),
            subs: facts.subs.clone(),
            bounds: facts.bounds.clone(),
            generation,
            map: RefCell::new(WordMap::default()),
        });
        if self.kept.get() < MAX_CONTENTS {
            self.kept.set(self.kept.get() + 1);
            self.by_content
                .borrow_mut()
                .entry(key)
                .or_default()
                .push(Rc::clone(&shared));
        }
        shared
    }
}

/// A search's work, in units. Expanding a node costs `NODE`; a subgoal at depth 0 that its
/// interval does not settle (a leaf: nothing is searched below it) costs its search's
/// [`Effort::leaf`]. A node has a child for each fact holding the monomial it cancels, so the
/// leaves below a node at depth 1 are most of a failing search's time: a budget of nodes
/// alone let one question build thousands of them.
pub(crate) const NODE: u32 = 32;

/// How far a search may go: its depth and its budget, in units of [`NODE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Effort {
    depth: u32,
    budget: u32,
    /// What a leaf costs.
    leaf: u32,
}

/// A proof's search: a leaf costs a thirty-second of a node.
const FULL: Effort = Effort {
    depth: 6,
    budget: 400 * NODE,
    leaf: 1,
};

/// A cheap attempt (a join keeping a fact of one path where the other proves it, for each
/// fact the paths do not share): shallow, and every leaf costs a node.
const CHEAP: Effort = Effort {
    depth: 2,
    budget: 24 * NODE,
    leaf: NODE,
};

/// The search of a goal with its coordinates at their bounds, before the goal's own: most
/// such goals are linear in what is left and settle in a few steps.
const AT_BOUNDS: Effort = Effort {
    depth: 4,
    budget: 32 * NODE,
    leaf: 1,
};

/// The most coordinates one goal puts at their bounds (a row-major index over three axes of
/// blocks and three of threads needs six).
const MAX_AT_BOUNDS: u32 = 12;

/// The work after which a failing search looks for a counterexample.
const REFUTE_AFTER: u32 = 16 * NODE;

impl Facts {
    pub(crate) fn normalize(&self, p: &Poly) -> Option<Poly> {
        let mut out = p.clone();
        for (a, v) in &self.subs {
            // `subst` of an absent atom is a copy.
            if out.contains_atom(*a) {
                out = out.subst(*a, v)?;
            }
        }
        Some(out)
    }

    pub(crate) fn atom_range(&self, atoms: &Atoms, a: Atom) -> (i128, i128) {
        let (mut lo, mut hi) = atoms.range(a);
        if let Some(&(_, l, h)) = self.bounds.iter().find(|b| b.0 == a) {
            lo = lo.max(l);
            hi = hi.min(h);
        }
        (lo, hi)
    }

    /// Narrows the range of `a` on this path.
    pub(crate) fn bound(&mut self, a: Atom, lo: i128, hi: i128) {
        self.answers.clear();
        match self.bounds.iter_mut().find(|b| b.0 == a) {
            Some(b) => {
                b.1 = b.1.max(lo);
                b.2 = b.2.min(hi);
            }
            None => self.bounds.push((a, lo, hi)),
        }
    }

    pub(crate) fn mono_range(&self, atoms: &Atoms, m: &Mono) -> (i128, i128) {
        mono_range_by(
            atoms,
            m,
            |a| self.atom_range(atoms, a),
            || {
                atoms
                    .shapes
                    .iter()
                    .all(|&s| self.atom_range(atoms, s).0 >= 1)
            },
        )
    }

    /// Interval of `p` (no normalization).
    pub(crate) fn range(&self, atoms: &Atoms, p: &Poly) -> (i128, i128) {
        range_by(p, |m| self.mono_range(atoms, m))
    }

    /// Every atom's range on this path, by index: built once per proof, read at every node.
    fn range_table(&self, atoms: &Atoms) -> Ranges {
        let mut table: Vec<(i128, i128)> =
            (0..atoms.len() as Atom).map(|a| atoms.range(a)).collect();
        for &(a, lo, hi) in &self.bounds {
            if let Some(r) = table.get_mut(a as usize) {
                *r = (r.0.max(lo), r.1.min(hi));
            }
        }
        let shapes_positive = atoms
            .shapes
            .iter()
            .all(|&s| table.get(s as usize).map_or(atoms.range(s), |r| *r).0 >= 1);
        Ranges {
            table,
            shapes_positive,
            products: RefCell::new(WordMap::default()),
        }
    }

    /// Adds `p ≥ 0`.
    pub(crate) fn assume(&mut self, atoms: &Atoms, p: &Poly, tags: Tags) {
        self.answers.clear();
        if self.dead {
            return;
        }
        let Some(p) = self.normalize(p) else {
            return;
        };
        let p = p.tighten();
        if let Some(c) = p.as_const() {
            if c < 0 {
                self.dead = true;
            }
            return;
        }
        let (lo, hi) = self.range(atoms, &p);
        if hi < 0 {
            self.dead = true;
            return;
        }
        if lo >= 0 || self.ineqs.iter().any(|f| f.p == p) {
            return;
        }
        // A single atom: refine its range.
        let linear: Vec<&(Mono, i128)> = p.terms().iter().filter(|t| !t.0.is_one()).collect();
        if let [(m, c)] = linear.as_slice()
            && tags == 0
            && m.degree() == 1
            && let Some(&a) = m.atoms().first()
        {
            let k = p.constant_term();
            let (old_lo, old_hi) = self.atom_range(atoms, a);
            if *c > 0 {
                let bound = (-k).div_euclid(*c) + i128::from((-k).rem_euclid(*c) != 0);
                self.bound(a, bound.max(old_lo), old_hi);
            } else {
                let bound = k.div_euclid(-*c);
                self.bound(a, old_lo, bound.min(old_hi));
            }
            let (l, h) = self.atom_range(atoms, a);
            if l > h {
                self.dead = true;
            }
        }
        // The grid-stride rule on facts: `n − I0 − S·J + c ≥ 0` with `c ≤ −1` gives `J ≤ q`;
        // with `J ≥ 0` it also gives `n ≥ 1`, hence every shape ≥ 1.
        if let Some((j, c)) = match_q(atoms, &p)
            && c <= -1
            && tags == 0
            && self.range(atoms, &j).0 >= 0
        {
            for &s in &atoms.shapes {
                let (_, hi) = self.atom_range(atoms, s);
                self.bound(s, 1, hi);
            }
            if let Some(n) = atoms.count.as_ref().and_then(Poly::as_atom) {
                let (_, hi) = self.atom_range(atoms, n);
                self.bound(n, 1, hi);
            }
        }
        if let Some((j, c)) = match_q(atoms, &p)
            && c <= -1
            && let Some(q) = atoms.q_existing()
            && let Some(d) = Poly::atom(q).sub(&j)
        {
            let d = self.normalize(&d).unwrap_or(d).tighten();
            if !self.ineqs.iter().any(|f| f.p == d) && d.as_const().is_none() {
                self.ineqs.push(Fact { p: d, tags });
            }
        }
        let quotients = self.quotient_facts(atoms, &p);
        self.ineqs.push(Fact { p, tags });
        for d in quotients {
            let d = self.normalize(&d).unwrap_or(d).tighten();
            if d.as_const().is_none()
                && self.range(atoms, &d).0 < 0
                && !self.ineqs.iter().any(|f| f.p == d)
            {
                self.ineqs.push(Fact { p: d, tags });
            }
        }
    }

    /// Division by a symbol positive at every launch: when `λ·p + μ·f = s·X + c` for the new
    /// fact `p ≥ 0`, a fact `f ≥ 0` true everywhere (a floor's definition, say) or none, an
    /// atom `s ≥ 1` at every launch (`ntid`, `nctaid`, their product along an axis), integers
    /// `λ, μ ≥ 1` and a constant `c ≤ −1`, then `s·X ≥ 1`, so `X > 0`, and `X ≥ 1` since `X`
    /// is an integer. A sum whose coefficients share a factor `d > 1` is tightened the same
    /// way (`d·X + c ≥ 0` gives `X + floor(c / d) ≥ 0`): a block-stride loop stepped by a
    /// constant. This is how a loop guard `I0 + S·(J + 4k) < n` against the definition
    /// of `f = floor((n − 1 − I0) / S)` says `J + 4k ≤ f`: the unrolled grid-stride loop's
    /// iteration `k` has its four strides left.
    fn quotient_facts(&self, atoms: &Atoms, p: &Poly) -> Vec<Poly> {
        const MAX_SUMS: usize = 8;
        let mut sums = vec![p.clone()];
        for &(m, c) in p.terms() {
            if m.is_one() || sums.len() >= MAX_SUMS {
                continue;
            }
            for f in atoms.global_with(&m) {
                let Some(f) = self.normalize(f) else {
                    continue;
                };
                let e = f.coeff(&m);
                if e == 0 || (e > 0) == (c > 0) {
                    continue;
                }
                let g = gcd(c, e);
                let (lp, lf) = (e.abs() / g, c.abs() / g);
                if let Some(sum) = p.scale(lp).and_then(|x| x.add(&f.scale(lf)?)) {
                    sums.push(sum);
                }
                if sums.len() >= MAX_SUMS {
                    break;
                }
            }
        }
        let mut out = Vec::new();
        for q in &sums {
            // A constant divisor: `d·X + c ≥ 0` is `X + floor(c / d) ≥ 0` (the sum's own
            // integer tightening; `p` alone is tightened already).
            if q.content() > 1 {
                out.push(q.tighten());
            }
            let mut seen: Vec<Atom> = Vec::new();
            for a in q.atoms() {
                if seen.contains(&a) || !atoms.fixed_positive(&Poly::atom(a)) {
                    continue;
                }
                seen.push(a);
                if let Some((rest, cof)) = q.split_on(a)
                    && rest.as_const().is_some_and(|c| c <= -1)
                    && cof.as_const().is_none()
                    && let Some(x) = cof.add_const(-1)
                {
                    out.push(x);
                }
            }
        }
        out
    }

    /// Adds `p = 0`.
    pub(crate) fn assume_eq(&mut self, atoms: &Atoms, p: &Poly) {
        self.answers.clear();
        if self.dead {
            return;
        }
        let Some(p) = self.normalize(p) else {
            return;
        };
        if let Some(c) = p.as_const() {
            if c != 0 {
                self.dead = true;
            }
            return;
        }
        // Pivot: the newest atom occurring only linearly with coefficient ±1.
        let mut pivot = None;
        for &(m, c) in p.terms() {
            if m.degree() == 1
                && (c == 1 || c == -1)
                && let Some(&a) = m.atoms().first()
                && p.terms().iter().filter(|t| t.0.contains(a)).count() == 1
                && pivot.is_none_or(|(b, _)| a > b)
            {
                pivot = Some((a, c));
            }
        }
        let Some((a, c)) = pivot else {
            if let Some(n) = p.neg() {
                self.assume(atoms, &p, 0);
                self.assume(atoms, &n, 0);
            }
            return;
        };
        // c·a + rest = 0  ⟹  a = −rest / c.
        let Some(value) = p
            .sub(&Poly::from_terms(vec![(Mono::atom(a), c)]).unwrap_or_default())
            .and_then(|rest| rest.scale(-c))
        else {
            return;
        };
        let Some(subs) = self
            .subs
            .iter()
            .map(|(b, v)| v.subst(a, &value).map(|v| (*b, v)))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        self.subs = subs;
        self.subs.push((a, value.clone()));
        let old = std::mem::take(&mut self.ineqs);
        let neqs = std::mem::take(&mut self.neqs);
        // Keep the atom's range as a fact on its value.
        let (lo, hi) = self.atom_range(atoms, a);
        for f in old {
            if let Some(q) = f.p.subst(a, &value) {
                self.assume(atoms, &q, f.tags);
            }
        }
        if lo > -INF
            && let Some(q) = value.add_const(-lo)
        {
            self.assume(atoms, &q, 0);
        }
        if hi < INF
            && let Some(q) = value.neg().and_then(|v| v.add_const(hi))
        {
            self.assume(atoms, &q, 0);
        }
        for n in neqs {
            if let Some(q) = n.subst(a, &value) {
                self.assume_ne(atoms, &q);
            }
        }
    }

    /// Adds `p ≠ 0`.
    pub(crate) fn assume_ne(&mut self, atoms: &Atoms, p: &Poly) {
        self.answers.clear();
        if self.dead {
            return;
        }
        let Some(p) = self.normalize(p) else {
            return;
        };
        if let Some(c) = p.as_const() {
            if c == 0 {
                self.dead = true;
            }
            return;
        }
        // `p ≥ 0` and `p ≠ 0` give `p ≥ 1`. The strengthened fact rests on whatever launch
        // conditions proved `p ≥ 0`, so it carries their tags: a proof that uses it later must
        // report them.
        let used = Cell::new(0);
        if let Some(t) = self.prove(atoms, &p, &used)
            && let Some(q) = p.add_const(-1)
        {
            self.assume(atoms, &q, t);
        } else if let Some(n) = p.neg()
            && let Some(t) = self.prove(atoms, &n, &used)
            && let Some(q) = n.add_const(-1)
        {
            self.assume(atoms, &q, t);
        }
        if !self.neqs.contains(&p) {
            self.neqs.push(p);
        }
    }

    /// Proves `g ≥ 0`; returns the condition tags the proof used.
    pub(crate) fn prove(&self, atoms: &Atoms, g: &Poly, _used: &Cell<Tags>) -> Option<Tags> {
        // Only a proof that needs no launch condition is taken from the bounds' shortcut: it
        // can reach a stricter condition's fact before the goal's own search (or the caller's
        // next attempt) finds a weaker one, and a proof must not ask more of a launch than the
        // search would.
        if let Some(bounded) = self.coordinates_at_bounds(atoms, g)
            && self.prove_within(atoms, &bounded, AT_BOUNDS) == Some(0)
        {
            return Some(0);
        }
        if let Some(bounded) = self.coordinates_by_cofactor(atoms, g)
            && self.prove_within(atoms, &bounded, AT_BOUNDS) == Some(0)
        {
            return Some(0);
        }
        self.prove_within(atoms, g, FULL)
    }

    /// `g` with thread and block coordinates at their bounds, where that is a weaker goal:
    /// while `g` has a product monomial `c·q·a` with `c < 0` that holds a coordinate `a`
    /// (`%tid` or `%ctaid` along an axis) and `q ≥ 0` on this path, it is cancelled against
    /// the launch geometry's bound `B − 1 − a ≥ 0` scaled by `q` (`B` the block's or grid's
    /// size along `a`'s axis), highest degree first. Each `q·(B − 1 − a) ≥ 0`, so the goal
    /// left implies `g`. This is a row-major index over the grid, `((ctaid.z·nctaid.y +
    /// ctaid.y)·nctaid.x + ctaid.x)·n + i < nctaid.z·nctaid.y·nctaid.x·n`, which a search
    /// cancelling one monomial at a time finds only after trying every other fact at every
    /// level. `None` where no monomial is such.
    ///
    /// Each step replaces one monomial by monomials with one coordinate fewer (a bound holds
    /// sizes only), so the rewriting ends; [`MAX_AT_BOUNDS`] caps its steps all the same.
    // Not inlined: `prove`'s frame stays live under the whole search that follows, and this
    // one's locals would double it (the loom model of the slot table, whose threads run on
    // small stacks, loads a kernel and overflowed).
    #[inline(never)]
    pub(crate) fn coordinates_at_bounds(&self, atoms: &Atoms, g: &Poly) -> Option<Poly> {
        let coordinate = |a: Atom| is_coordinate(atoms, a);
        let mut g = self.normalize(g)?;
        let mut steps = 0;
        loop {
            let next = g.terms().iter().rev().find_map(|&(m, c)| {
                if c >= 0 || m.degree() < 2 {
                    return None;
                }
                m.atoms().iter().copied().find_map(|a| {
                    let q = m.without(a)?;
                    let nonnegative = q.atoms().iter().all(|&b| self.atom_range(atoms, b).0 >= 0);
                    (coordinate(a) && nonnegative).then_some((c, a, q))
                })
            });
            let Some((c, a, q)) = next else {
                break;
            };
            if steps == MAX_AT_BOUNDS {
                return None;
            }
            let bound = coordinate_bound(atoms, a)?;
            let scaled = bound.mul(&Poly::from_terms(vec![(q, 1)])?)?;
            g = g.combine(1, 0, c.abs(), &scaled)?;
            steps += 1;
        }
        if steps == 0 {
            return None;
        }
        // An atom this path fixes to one value (a declared block's `%ntid`) is that value: a
        // bound scaled by it is then a plain multiple, which intervals compare exactly.
        let fixed: Vec<(Atom, i128)> = g
            .atoms()
            .filter_map(|a| {
                let (lo, hi) = self.atom_range(atoms, a);
                (lo == hi).then_some((a, lo))
            })
            .collect();
        for (a, v) in fixed {
            g = g.subst(a, &Poly::constant(v))?;
        }
        Some(g)
    }

    /// `g` with each coordinate `a` whose cofactor `Q` (`g = a·Q + R`, `a` in no power above
    /// one) has terms of both signs put at the bound the cofactor's sign picks: `R + (B − 1)·Q`
    /// where `Q ≤ 0` on this path, `R` where `Q ≥ 0` (a coordinate is never negative). Either
    /// way `a·Q ≥` what replaces it, so the goal left implies `g`. This is a stride that is a
    /// difference, as a concatenation's second source is laid out:
    /// `(i − n₀) + ctaid.y·(n − n₀) + ctaid.z·(n − n₀)·nctaid.y < (n − n₀)·nctaid.y·nctaid.z`,
    /// whose expansion splits each stride into monomials of both signs that
    /// [`Facts::coordinates_at_bounds`] cannot pair. A cofactor of one sign throughout is left
    /// to that rewriting, and a constant one to the search. `None` where nothing is rewritten.
    #[inline(never)]
    pub(crate) fn coordinates_by_cofactor(&self, atoms: &Atoms, g: &Poly) -> Option<Poly> {
        let mut g = self.normalize(g)?;
        let coordinates: Vec<Atom> = g.atoms().filter(|&a| is_coordinate(atoms, a)).collect();
        let mut rewritten = false;
        for a in coordinates {
            if g.terms().iter().any(|(m, _)| m.power(a) > 1) {
                continue;
            }
            let (rest, cofactor) = g.split_on(a)?;
            let signs = |positive: bool| cofactor.terms().iter().any(|&(_, c)| (c > 0) == positive);
            if cofactor.as_const().is_some() || !signs(true) || !signs(false) {
                continue;
            }
            g = if self.prove_within(atoms, &cofactor.neg()?, AT_BOUNDS) == Some(0) {
                // `B − 1`: the geometry's bound `B − 1 − a ≥ 0` with `a` added back.
                let top = coordinate_bound(atoms, a)?.add(&Poly::atom(a))?;
                rest.add(&cofactor.mul(&top)?)?
            } else if self.prove_within(atoms, &cofactor, AT_BOUNDS) == Some(0) {
                rest
            } else {
                continue;
            };
            rewritten = true;
        }
        rewritten.then_some(g)
    }

    /// [`Facts::prove`] for an access's bound: first by one fact and intervals
    /// ([`Facts::cancel_the_lone_bad`]). Only there: a value's exact reading (`fits`) or a
    /// fact kept at a join that this proves makes every later search on the path weigh more.
    pub(crate) fn prove_access(&self, atoms: &Atoms, g: &Poly, used: &Cell<Tags>) -> Option<Tags> {
        if !self.dead
            && let Some(n) = self.normalize(g)
            && let Some(tags) = self.cancel_the_lone_bad(atoms, &n)
        {
            return Some(tags);
        }
        self.prove(atoms, g, used)
    }

    /// `g ≥ 0` by one fact and intervals, where the constant covers (by their intervals)
    /// every monomial that may take `g` below zero but the lowest, `c·m`: some fact `f ≥ 0`
    /// (of the path, or of every path) holding `m` with a coefficient `e` of `c`'s sign that
    /// divides it leaves `g − (c/e)·f`, whose interval is tried. A bin's byte offset beside a
    /// warp's, `6140 − 1024·warp − 4·(data & 255)` with `warp ≤ 5`, is one: `data & 255 ≤ 255`
    /// settles it, while the search cancels the first such monomial (`warp`) and never gets
    /// there. No search, no budget: a certificate `g = k·f + r`, `k ≥ 1`, `r ≥ 0`.
    pub(crate) fn cancel_the_lone_bad(&self, atoms: &Atoms, g: &Poly) -> Option<Tags> {
        let mut short = g.constant_term();
        let mut lowest: Option<(i128, Mono, i128)> = None;
        for &(m, c) in g.terms() {
            if m.is_one() {
                continue;
            }
            let low = imul(self.mono_range(atoms, &m), (c, c)).0;
            if low < 0 {
                short = short.saturating_add(low);
                if lowest.is_none_or(|(l, _, _)| low < l) {
                    lowest = Some((low, m, c));
                }
            }
        }
        let (low, m, c) = lowest?;
        if short.saturating_sub(low) < 0 {
            return None;
        }
        let local = self.ineqs.iter().map(|f| (Cow::Borrowed(&f.p), f.tags));
        let global = atoms.global_with(&m).filter_map(|p| {
            if self.subs.is_empty() {
                Some((Cow::Borrowed(p), 0))
            } else {
                self.normalize(p).map(|p| (Cow::Owned(p), 0))
            }
        });
        local.chain(global).find_map(|(f, tags)| {
            let e = f.coeff(&m);
            if tags != 0 || e == 0 || (e > 0) != (c > 0) || c % e != 0 {
                return None;
            }
            let rest = g.combine(1, 0, c / e, &f)?;
            (self.range(atoms, &rest).0 >= 0).then_some(tags)
        })
    }

    /// A cheap attempt (joins): see [`CHEAP`].
    pub(crate) fn prove_cheap(&self, atoms: &Atoms, g: &Poly) -> Option<Tags> {
        self.prove_within(atoms, g, CHEAP)
    }

    fn prove_within(&self, atoms: &Atoms, g: &Poly, effort: Effort) -> Option<Tags> {
        if self.dead {
            return Some(0);
        }
        let g = self.normalize(g)?;
        // What its interval settles needs no search (nor a node: the search would return at
        // its root, as here). A tightened goal's interval is no wider below zero.
        if self.range(atoms, &g).0 >= 0 {
            return Some(0);
        }
        // The same question on the same facts and atoms: the same search, replayed with its
        // step count so that the work limit runs out exactly where it would have.
        let shared = {
            let mut slot = self.answers.shared.borrow_mut();
            match slot.as_ref() {
                Some(s) if s.generation == atoms.generation() => Rc::clone(s),
                _ => {
                    let s = self.table.of(self, atoms.generation());
                    *slot = Some(Rc::clone(&s));
                    s
                }
            }
        };
        let key = (g, effort);
        if let Some(&(result, work)) = shared.map.borrow().get(&key) {
            atoms.steps.set(atoms.steps.get().saturating_add(work));
            return result;
        }
        let start = atoms.steps.get();
        let result = self.search_within(atoms, &key.0, effort);
        let work = atoms.steps.get().saturating_sub(start);
        shared.map.borrow_mut().insert(key, (result, work));
        result
    }

    fn search_within(&self, atoms: &Atoms, g: &Poly, effort: Effort) -> Option<Tags> {
        let Effort {
            depth: max_depth,
            budget,
            leaf,
        } = effort;
        let cx = Search {
            atoms,
            facts: self.ineqs.iter().map(|f| (&f.p, f.tags)).collect(),
            holding: std::cell::OnceCell::new(),
            ranges: self.range_table(atoms),
            budget: Cell::new(budget),
            leaf,
            memo: RefCell::new(WordMap::default()),
        };
        // Iterative deepening: shallow proofs first, within one budget.
        let mut looked = false;
        for depth in 1..=max_depth {
            if let Some(t) = self.search(&cx, g, depth) {
                return Some(t);
            }
            if cx.budget.get() == 0 {
                break;
            }
            // Most goals are proven cheaply; once a search has cost more than looking for a
            // point where every premise holds and the goal is false, look for one: no deeper
            // search could succeed there (failures that spend the whole budget are most of
            // the work).
            if !looked && depth < max_depth && budget - cx.budget.get() >= REFUTE_AFTER {
                looked = true;
                if witness::refutes(atoms, &cx.ranges.table, &cx.facts, &self.subs, g) {
                    return None;
                }
            }
        }
        None
    }

    /// Proves `g = 0` (syntactically, after normalization).
    pub(crate) fn equal_zero(&self, g: &Poly) -> bool {
        self.dead || self.normalize(g).is_some_and(|p| p.is_zero())
    }

    fn search(&self, cx: &Search<'_>, g: &Poly, depth: u32) -> Option<Tags> {
        let (atoms, budget) = (cx.atoms, &cx.budget);
        // Tightening allocates only when there is something to divide.
        let tightened;
        let g = if g.content() > 1 {
            tightened = g.tighten();
            &tightened
        } else {
            g
        };
        let (lo, _) = cx.ranges.range(atoms, g);
        if lo >= 0 {
            return Some(0);
        }
        if depth == 0 {
            cx.charge(cx.leaf.min(budget.get()));
            return None;
        }
        if budget.get() == 0 {
            return None;
        }
        // The same subgoal at the same depth recurs often (cancellations in another order,
        // the next round of deepening). A recorded outcome is replayed only where re-running
        // would give exactly it, and charges the work re-running would take, so the verdict,
        // the budget left and the step count are as if it were searched again.
        let key = (g.clone(), depth);
        let hit = cx.memo.borrow().get(&key).copied();
        match hit {
            Some(Outcome::Failed(work)) => {
                // An unbudgeted failure also fails with less budget, spending all of it.
                cx.charge(work.min(budget.get()));
                return None;
            }
            Some(Outcome::Proved(tags, work)) if budget.get() > work => {
                cx.charge(work);
                return Some(tags);
            }
            _ => {}
        }
        let before = budget.get();
        let result = self.expand(cx, g, depth);
        let after = budget.get();
        // A search that never ran out is the unbudgeted one: its outcome holds for any
        // budget above what it took.
        if after > 0 {
            let work = before - after;
            let outcome = match result {
                Some(tags) => Outcome::Proved(tags, work),
                None => Outcome::Failed(work),
            };
            cx.memo.borrow_mut().insert(key, outcome);
        }
        result
    }

    /// One node of the search: `g` (tightened) is not settled by its interval, and there is
    /// depth and budget left.
    fn expand(&self, cx: &Search<'_>, g: &Poly, depth: u32) -> Option<Tags> {
        let (atoms, budget) = (cx.atoms, &cx.budget);
        cx.charge(NODE.min(budget.get()));
        // The grid-stride rule.
        if let Some((j, c)) = match_q(atoms, g)
            && c >= -1
            && let Some(q) = atoms.q_existing()
            && let Some(goal) = Poly::atom(q).sub(&j)
            && let Some(t) = self.search(cx, &goal, depth - 1)
        {
            return Some(t);
        }
        // Lift a bound on `I0 + S·J` to one against n through a fact `L − n − … ≥ 0`.
        if let Some(count) = &atoms.count
            && g.coeff(&Mono::atom(I0)) == -1
            && let Some(lead) = count.terms().last().map(|t| t.0)
            && g.coeff(&lead) == 0
        {
            for (f, tags) in cx.holding(&lead) {
                if f.coeff(&lead) == -1
                    && f.coeff(&Mono::atom(I0)) == 0
                    && let Some(g2) = g.sub(f)
                    && let Some(t) = self.search(cx, &g2, depth - 1)
                {
                    return Some(t | tags);
                }
            }
        }
        // Cancel one monomial against a fact containing it with the same sign: bad ones
        // (negative contribution) first, then, when only the constant is short, any other.
        let mut bad: Vec<Mono> = Vec::new();
        let mut other: Vec<Mono> = Vec::new();
        for (m, c) in g.terms() {
            if m.is_one() {
                continue;
            }
            let r = imul(cx.ranges.mono(atoms, m), (*c, *c));
            if r.0 < 0 {
                bad.push(*m);
            } else {
                other.push(*m);
            }
        }
        let candidates: Vec<Mono> = if bad.is_empty() {
            other
        } else {
            bad.truncate(1);
            bad
        };
        for m in &candidates {
            let c = g.coeff(m);
            let global: Vec<(Cow<'_, Poly>, Tags)> = atoms
                .global_with(m)
                .filter_map(|p| {
                    if self.subs.is_empty() {
                        Some((Cow::Borrowed(p), 0))
                    } else {
                        self.normalize(p).map(|p| (Cow::Owned(p), 0))
                    }
                })
                .collect();
            let chained = cx
                .holding(m)
                .chain(global.iter().map(|(f, tags)| (&**f, *tags)));
            for (f, tags) in chained {
                let e = f.coeff(m);
                if e == 0 || (e > 0) != (c > 0) {
                    continue;
                }
                let s = e.abs();
                let t = c.abs();
                let Some(g2) = g.combine(s, s - 1, t, f) else {
                    continue;
                };
                if let Some(u) = self.search(cx, &g2, depth - 1) {
                    return Some(u | tags);
                }
                if budget.get() == 0 {
                    return None;
                }
            }
        }
        if let Some(t) = self.scaled_fact(cx, g, depth) {
            return Some(t);
        }
        if let Some(t) = self.scaled_by_product(cx, g, depth) {
            return Some(t);
        }
        // Split on a nonnegative atom: g = rest + a·cof with rest ≥ 0 and cof ≥ 0.
        let mut seen: Vec<Atom> = Vec::new();
        for a in g.atoms() {
            if seen.contains(&a) {
                continue;
            }
            seen.push(a);
            if cx.ranges.atom(atoms, a).0 < 0 {
                continue;
            }
            // `a` only as a term of its own: the split would leave a constant cofactor and the
            // rest, which gains nothing (skipped below); known without splitting.
            let mut containing = g.terms().iter().filter(|(m, _)| m.contains(a));
            if let (Some((m, _)), None) = (containing.next(), containing.next())
                && m.degree() == 1
            {
                continue;
            }
            let Some((rest, cof)) = g.split_on(a) else {
                continue;
            };
            if rest.is_zero() && cof.as_const().is_some() {
                continue;
            }
            if cof.as_const().is_some() && rest.terms().len() + 1 >= g.terms().len() {
                // Nothing to gain from a linear term alone.
                continue;
            }
            if let Some(t1) = self.search(cx, &rest, depth - 1)
                && let Some(t2) = self.search(cx, &cof, depth - 1)
            {
                return Some(t1 | t2);
            }
        }
        // Through a floor atom's divisor: d·(g + 1) − 1 ≥ 0 with d ≥ 1 gives g ≥ 0.
        for a in g.atoms() {
            let Some((_, den)) = atoms.info(a).and_then(|i| i.floor.as_ref()) else {
                continue;
            };
            if den.as_atom() == Some(S) {
                continue;
            }
            let Some(g2) = g
                .add_const(1)
                .and_then(|x| x.mul(den))
                .and_then(|x| x.add_const(-1))
            else {
                continue;
            };
            if let Some(t) = self.search(cx, &g2, depth - 1) {
                return Some(t);
            }
        }
        None
    }

    /// Cancels a product monomial `x·m` of `g` whose contribution may be negative against a
    /// fact `f ≥ 0` holding `m` with the same sign, scaled by an atom `x ≥ 0`: then
    /// `x·f ≥ 0`, and `s·g + (s − 1) − t·x·f ≥ 0` (with `s = |coeff of m in f|`,
    /// `t = |coeff of x·m in g|`) gives `s·g > −s`, so `g ≥ 0` for integers. This is how
    /// `a < A ∧ b < B ⇒ a·B + b < A·B` (for `a, b ≥ 0`) is proven: `B·(A − 1 − a) ≥ 0` leaves
    /// `B − 1 − b ≥ 0`.
    fn scaled_fact(&self, cx: &Search<'_>, g: &Poly, depth: u32) -> Option<Tags> {
        let atoms = cx.atoms;
        for &(m, c) in g.terms() {
            if m.degree() < 2 || imul(cx.ranges.mono(atoms, &m), (c, c)).0 >= 0 {
                continue;
            }
            let mut tried: Vec<Atom> = Vec::new();
            for &x in m.atoms() {
                // `x ≥ 0` from its range on this path (bounds carry no launch condition).
                if tried.contains(&x) || cx.ranges.atom(atoms, x).0 < 0 {
                    continue;
                }
                tried.push(x);
                let rest = m.without(x)?;
                let global: Vec<Poly> = atoms
                    .global_with(&rest)
                    .filter_map(|p| self.normalize(p))
                    .collect();
                let chained = cx.holding(&rest).chain(global.iter().map(|f| (f, 0)));
                for (f, tags) in chained {
                    let e = f.coeff(&rest);
                    if e == 0 || (e > 0) != (c > 0) {
                        continue;
                    }
                    let (s, t) = (e.abs(), c.abs());
                    let Some(g2) = f
                        .mul(&Poly::atom(x))
                        .and_then(|xf| g.combine(s, s - 1, t, &xf))
                    else {
                        continue;
                    };
                    if let Some(u) = self.search(cx, &g2, depth - 1) {
                        return Some(u | tags);
                    }
                    if cx.budget.get() == 0 {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// [`Self::scaled_fact`] with a product of atoms for the scale: a monomial `q·a` of `g`
    /// (`a` an atom, `q` a product of two or three atoms, each `≥ 0` on this path) whose
    /// contribution may be negative is cancelled against a fact `f ≥ 0` holding `a` with the
    /// same sign, since `q·f ≥ 0`. This is how `a < A ∧ b < B ∧ c < C ⇒ (a·B + b)·C + c <
    /// A·B·C` is proven: the leading `a·B·C` needs `A − 1 − a` scaled by `B·C` (a row-major
    /// index over a 3-D grid, `(blockIdx.z · gridDim.y + blockIdx.y) · ne0 + i`).
    fn scaled_by_product(&self, cx: &Search<'_>, g: &Poly, depth: u32) -> Option<Tags> {
        let atoms = cx.atoms;
        for &(m, c) in g.terms() {
            if !(3..=4).contains(&m.degree()) || imul(cx.ranges.mono(atoms, &m), (c, c)).0 >= 0 {
                continue;
            }
            let mut tried: Vec<Atom> = Vec::new();
            for &a in m.atoms() {
                if tried.contains(&a) {
                    continue;
                }
                tried.push(a);
                let Some(q) = m.without(a) else {
                    continue;
                };
                if q.atoms().iter().any(|&b| cx.ranges.atom(atoms, b).0 < 0) {
                    continue;
                }
                let r = Mono::atom(a);
                let Some(scale) = Poly::from_terms(vec![(q, 1)]) else {
                    continue;
                };
                let global: Vec<Cow<'_, Poly>> = atoms
                    .global_with(&r)
                    .filter_map(|p| {
                        if self.subs.is_empty() {
                            Some(Cow::Borrowed(p))
                        } else {
                            self.normalize(p).map(Cow::Owned)
                        }
                    })
                    .collect();
                // Only bounds `A − 1 − a` true everywhere (the launch geometry's, a floor's),
                // linear and short: another fact scaled by a product is seldom what a goal
                // needs, and each is a search.
                for f in &global {
                    let e = f.coeff(&r);
                    if e == 0
                        || (e > 0) != (c > 0)
                        || f.terms().len() > 3
                        || f.terms().iter().any(|(fm, _)| fm.degree() > 1)
                    {
                        continue;
                    }
                    let (s, t) = (e.abs(), c.abs());
                    let Some(g2) = f.mul(&scale).and_then(|qf| g.combine(s, s - 1, t, &qf)) else {
                        continue;
                    };
                    if let Some(u) = self.search(cx, &g2, depth - 1) {
                        return Some(u);
                    }
                    if cx.budget.get() == 0 {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Facts of both paths: each kept where the other path proves it.
    pub(crate) fn join(atoms: &Atoms, a: &Facts, b: &Facts) -> Facts {
        if a.dead {
            return b.clone();
        }
        if b.dead {
            return a.clone();
        }
        let mut out = Facts {
            table: Rc::clone(&a.table),
            ..Facts::default()
        };
        for (x, y) in [(a, b), (b, a)] {
            for (v, value) in &x.subs {
                let Some(d) = Poly::atom(*v).sub(value) else {
                    continue;
                };
                if y.equal_zero(&d) {
                    out.assume_eq(atoms, &d);
                } else {
                    // Keep the inequalities the equality implies where they hold.
                    for d in [Some(d.clone()), d.neg()].into_iter().flatten() {
                        if let Some(t) = y.prove_cheap(atoms, &d) {
                            out.assume(atoms, &d, t);
                        }
                    }
                }
            }
        }
        for (x, y) in [(a, b), (b, a)] {
            for f in &x.ineqs {
                if y.ineqs.contains(f) {
                    out.assume(atoms, &f.p, f.tags);
                } else if let Some(t) = y.prove_cheap(atoms, &f.p) {
                    out.assume(atoms, &f.p, f.tags | t);
                }
            }
            for &(atom, _, _) in &x.bounds {
                if out.bounds.iter().any(|b| b.0 == atom) {
                    continue;
                }
                let (l1, h1) = x.atom_range(atoms, atom);
                let (l2, h2) = y.atom_range(atoms, atom);
                let (lo, hi) = (l1.min(l2), h1.max(h2));
                let (sl, sh) = atoms.range(atom);
                if lo > sl || hi < sh {
                    out.bounds.push((atom, lo, hi));
                }
            }
        }
        for n in &a.neqs {
            if b.neqs.contains(n) {
                out.neqs.push(n.clone());
            }
        }
        out
    }
}

/// Matches `g = N − I0 − S·J + c` (N the count's polynomial); returns `(J, c)`.
pub(crate) fn match_q(atoms: &Atoms, g: &Poly) -> Option<(Poly, i128)> {
    let count = atoms.count.as_ref()?;
    if !g.contains_atom(I0) || g.coeff(&Mono::atom(I0)) != -1 {
        return None;
    }
    let rest = g.sub(count)?.add(&Poly::atom(I0))?;
    let c = rest.constant_term();
    let body = rest.add_const(-c)?;
    let (without, cof) = body.split_on(S)?;
    if !without.is_zero() || cof.contains_atom(I0) {
        return None;
    }
    // rest − c = −S·J.
    Some((cof.neg()?, c))
}

/// One proof search: the atoms, the path's facts, its atom ranges, the work left, and the
/// outcome of every subgoal searched so far.
struct Search<'a> {
    atoms: &'a Atoms,
    facts: Vec<(&'a Poly, Tags)>,
    /// The facts holding each monomial, by index into `facts`, in order: built at the first
    /// node that cancels (most proofs end at their interval before it).
    holding: std::cell::OnceCell<WordMap<Mono, Vec<u32>>>,
    ranges: Ranges,
    /// Work left, in units of [`NODE`].
    budget: Cell<u32>,
    /// What a leaf costs.
    leaf: u32,
    memo: RefCell<WordMap<(Poly, u32), Outcome>>,
}

/// How a subgoal's search ended when it did not run out of budget, and the work it took.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    Proved(Tags, u32),
    Failed(u32),
}

impl<'a> Search<'a> {
    /// The facts that hold `m` with a nonzero coefficient, in their order.
    fn holding(&self, m: &Mono) -> impl Iterator<Item = (&'a Poly, Tags)> + '_ {
        let index = self.holding.get_or_init(|| {
            let mut index: WordMap<Mono, Vec<u32>> = WordMap::default();
            for (i, (f, _)) in self.facts.iter().enumerate() {
                for (m, _) in f.terms() {
                    if !m.is_one() {
                        index.entry(*m).or_default().push(i as u32);
                    }
                }
            }
            index
        });
        index
            .get(m)
            .into_iter()
            .flatten()
            .filter_map(|&i| self.facts.get(i as usize).copied())
    }

    /// Spends `units` of the budget (the caller knows there are that many left).
    fn charge(&self, units: u32) {
        self.budget.set(self.budget.get().saturating_sub(units));
        self.atoms
            .steps
            .set(self.atoms.steps.get().saturating_add(u64::from(units)));
    }
}

/// Atom ranges by index, with the path's bounds applied, and the ranges of the products of
/// atoms met so far.
struct Ranges {
    table: Vec<(i128, i128)>,
    shapes_positive: bool,
    products: RefCell<WordMap<Mono, (i128, i128)>>,
}

impl Ranges {
    fn atom(&self, atoms: &Atoms, a: Atom) -> (i128, i128) {
        self.table
            .get(a as usize)
            .copied()
            .unwrap_or_else(|| atoms.range(a))
    }

    fn mono(&self, atoms: &Atoms, m: &Mono) -> (i128, i128) {
        if m.degree() <= 1 {
            return mono_range_by(atoms, m, |a| self.atom(atoms, a), || self.shapes_positive);
        }
        // A product's range costs several saturating 128-bit products; searches meet the
        // same few products at every node.
        if let Some(&r) = self.products.borrow().get(m) {
            return r;
        }
        let r = mono_range_by(atoms, m, |a| self.atom(atoms, a), || self.shapes_positive);
        self.products.borrow_mut().insert(*m, r);
        r
    }

    fn range(&self, atoms: &Atoms, p: &Poly) -> (i128, i128) {
        range_by(p, |m| self.mono(atoms, m))
    }
}

/// Interval of a monomial, from each atom's range; `shapes_positive` says whether every shape
/// is at least 1 (asked only for a product of distinct shapes).
fn mono_range_by(
    atoms: &Atoms,
    m: &Mono,
    atom_range: impl Fn(Atom) -> (i128, i128),
    shapes_positive: impl FnOnce() -> bool,
) -> (i128, i128) {
    // One atom (the common case): its range, as `imul((1, 1), range)` gives it.
    if let [a] = m.atoms() {
        let (x, y) = atom_range(*a);
        return (clamp(x.min(y)), clamp(x.max(y)));
    }
    let mut r = (1, 1);
    let list = m.atoms();
    let mut i = 0;
    while i < list.len() {
        let a = list[i];
        let mut power = 1;
        while i + power < list.len() && list[i + power] == a {
            power += 1;
        }
        let ar = atom_range(a);
        let mut pr = ar;
        for _ in 1..power {
            pr = imul(pr, ar);
        }
        if power % 2 == 0 && ar.0 < 0 {
            pr.0 = pr.0.max(0);
        }
        r = imul(r, pr);
        i += power;
    }
    // A product of distinct shapes, all ≥ 1, is at most their full product n < 2^63.
    if m.degree() > 1
        && !atoms.shapes.is_empty()
        && m.atoms().windows(2).all(|w| w[0] != w[1])
        && m.atoms().iter().all(|a| atoms.shapes.contains(a))
        && shapes_positive()
    {
        r.1 = r.1.min((1i128 << 63) - 1);
    }
    r
}

/// Interval of a polynomial from its monomials' intervals.
fn range_by(p: &Poly, mono_range: impl Fn(&Mono) -> (i128, i128)) -> (i128, i128) {
    let mut lo: i128 = 0;
    let mut hi: i128 = 0;
    for (m, c) in p.terms() {
        let (a, b) = mono_range(m);
        // A unit coefficient (the common case) is `imul` without its four products.
        let (x, y) = match *c {
            1 => (clamp(a.min(b)), clamp(a.max(b))),
            -1 => (clamp((-a).min(-b)), clamp((-a).max(-b))),
            c => imul((a, b), (c, c)),
        };
        lo = clamp(lo.saturating_add(x));
        hi = clamp(hi.saturating_add(y));
    }
    (lo, hi)
}

/// Whether `a` is a thread or block coordinate (`%tid` or `%ctaid` along an axis).
fn is_coordinate(atoms: &Atoms, a: Atom) -> bool {
    matches!(
        atoms.info(a).map(|i| &i.kind),
        Some(AtomKind::Tid | AtomKind::Ctaid)
    )
}

/// The launch geometry's `B − 1 − a ≥ 0` for the coordinate `a`: `B` the block's or grid's
/// size along `a`'s axis, a fact of every path.
fn coordinate_bound(atoms: &Atoms, a: Atom) -> Option<&Poly> {
    let size = |b: Atom| {
        matches!(
            atoms.info(b).map(|i| &i.kind),
            Some(AtomKind::Ntid | AtomKind::Nctaid)
        )
    };
    let alone = Mono::atom(a);
    atoms.global_with(&alone).find(|f| {
        f.coeff(&alone) == -1
            && f.terms().iter().all(|(fm, _)| {
                fm.is_one()
                    || *fm == alone
                    || (fm.degree() == 1 && fm.atoms().iter().all(|&b| size(b)))
            })
    })
}
