//! Polynomials with integer coefficients over symbolic atoms: the exact value of an integer
//! register (modulo 2^width) in terms of thread coordinates, parameters, loop counters and
//! opaque quantities.
//!
//! Every operation is checked: a coefficient that leaves `i128` or a monomial of degree above
//! [`MAX_DEGREE`] yields `None`, and the caller treats the value as unknown.

use std::fmt;

/// An atom: an integer-valued symbol, by index into the analysis' atom table.
pub(crate) type Atom = u32;

/// The highest degree a monomial may have.
pub(crate) const MAX_DEGREE: usize = 12;

/// A product of atoms (with repetition), sorted; the empty product is 1. Ordered by degree,
/// then by atoms. The slots past `len` are zero.
#[derive(Clone, Copy, Default)]
pub(crate) struct Mono {
    len: u8,
    atoms: [Atom; MAX_DEGREE],
}

impl Mono {
    pub(crate) const ONE: Mono = Mono {
        len: 0,
        atoms: [0; MAX_DEGREE],
    };

    pub(crate) fn atom(a: Atom) -> Mono {
        let mut atoms = [0; MAX_DEGREE];
        atoms[0] = a;
        Mono { len: 1, atoms }
    }

    pub(crate) fn atoms(&self) -> &[Atom] {
        &self.atoms[..usize::from(self.len).min(MAX_DEGREE)]
    }

    pub(crate) fn is_one(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn degree(&self) -> usize {
        usize::from(self.len)
    }

    pub(crate) fn contains(&self, a: Atom) -> bool {
        self.atoms().contains(&a)
    }

    pub(crate) fn mul(&self, other: &Mono) -> Option<Mono> {
        let total = self.degree() + other.degree();
        if total > MAX_DEGREE {
            return None;
        }
        let mut atoms = [0; MAX_DEGREE];
        atoms[..self.degree()].copy_from_slice(self.atoms());
        atoms[self.degree()..total].copy_from_slice(other.atoms());
        atoms[..total].sort_unstable();
        Some(Mono {
            len: total as u8,
            atoms,
        })
    }

    /// This monomial with one occurrence of `a` removed, if it has one.
    pub(crate) fn without(&self, a: Atom) -> Option<Mono> {
        let at = self.atoms().iter().position(|&x| x == a)?;
        let mut atoms = [0; MAX_DEGREE];
        let mut len = 0;
        for (i, &x) in self.atoms().iter().enumerate() {
            if i != at {
                atoms[len] = x;
                len += 1;
            }
        }
        Some(Mono {
            len: len as u8,
            atoms,
        })
    }

    /// How many times `a` occurs.
    pub(crate) fn power(&self, a: Atom) -> usize {
        self.atoms().iter().filter(|&&x| x == a).count()
    }
}

// By hand, reading only the used slots: the prover compares and hashes monomials at every
// node, and most have one or two atoms of twelve.
impl PartialEq for Mono {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.atoms().iter().zip(other.atoms()).all(|(a, b)| a == b)
    }
}

impl Eq for Mono {}

impl std::hash::Hash for Mono {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u8(self.len);
        for &a in self.atoms() {
            state.write_u32(a);
        }
    }
}

// The order the derive would give (degree, then every slot, the unused ones zero).
impl Ord for Mono {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.len
            .cmp(&other.len)
            .then_with(|| self.atoms().cmp(other.atoms()))
    }
}

impl PartialOrd for Mono {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for Mono {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_one() {
            return f.write_str("1");
        }
        for (i, a) in self.atoms().iter().enumerate() {
            if i > 0 {
                f.write_str("*")?;
            }
            write!(f, "a{a}")?;
        }
        Ok(())
    }
}

/// A sum of monomials with nonzero integer coefficients, sorted by monomial.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Poly {
    terms: Vec<(Mono, i128)>,
}

impl fmt::Debug for Poly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        for (i, (m, c)) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(" + ")?;
            }
            if m.is_one() {
                write!(f, "{c}")?;
            } else if *c == 1 {
                write!(f, "{m:?}")?;
            } else {
                write!(f, "{c}*{m:?}")?;
            }
        }
        Ok(())
    }
}

impl Poly {
    pub(crate) fn zero() -> Poly {
        Poly { terms: Vec::new() }
    }

    pub(crate) fn constant(c: i128) -> Poly {
        if c == 0 {
            Poly::zero()
        } else {
            Poly {
                terms: vec![(Mono::ONE, c)],
            }
        }
    }

    pub(crate) fn atom(a: Atom) -> Poly {
        Poly {
            terms: vec![(Mono::atom(a), 1)],
        }
    }

    pub(crate) fn from_terms(mut terms: Vec<(Mono, i128)>) -> Option<Poly> {
        terms.sort_unstable_by_key(|t| t.0);
        let mut out: Vec<(Mono, i128)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some(last) if last.0 == m => last.1 = last.1.checked_add(c)?,
                _ => out.push((m, c)),
            }
        }
        out.retain(|t| t.1 != 0);
        Some(Poly { terms: out })
    }

    pub(crate) fn terms(&self) -> &[(Mono, i128)] {
        &self.terms
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value, if the polynomial is a constant.
    pub(crate) fn as_const(&self) -> Option<i128> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_one() => Some(*c),
            _ => None,
        }
    }

    /// The constant term.
    pub(crate) fn constant_term(&self) -> i128 {
        match self.terms.first() {
            Some((m, c)) if m.is_one() => *c,
            _ => 0,
        }
    }

    /// The coefficient of `m`.
    pub(crate) fn coeff(&self, m: &Mono) -> i128 {
        self.terms
            .binary_search_by(|t| t.0.cmp(m))
            .ok()
            .and_then(|i| self.terms.get(i))
            .map_or(0, |t| t.1)
    }

    pub(crate) fn contains_atom(&self, a: Atom) -> bool {
        self.terms.iter().any(|(m, _)| m.contains(a))
    }

    pub(crate) fn atoms(&self) -> impl Iterator<Item = Atom> + '_ {
        self.terms
            .iter()
            .flat_map(|(m, _)| m.atoms().iter().copied())
    }

    pub(crate) fn add(&self, other: &Poly) -> Option<Poly> {
        let mut out = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            match (self.terms.get(i), other.terms.get(j)) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    let c = a.1.checked_add(b.1)?;
                    if c != 0 {
                        out.push((a.0, c));
                    }
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    out.push(*a);
                    i += 1;
                }
                (Some(_), Some(b)) | (None, Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (Some(a), None) => {
                    out.push(*a);
                    i += 1;
                }
                (None, None) => break,
            }
        }
        Some(Poly { terms: out })
    }

    pub(crate) fn scale(&self, k: i128) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::zero());
        }
        let terms = self
            .terms
            .iter()
            .map(|&(m, c)| c.checked_mul(k).map(|c| (m, c)))
            .collect::<Option<Vec<_>>>()?;
        Some(Poly { terms })
    }

    pub(crate) fn neg(&self) -> Option<Poly> {
        self.scale(-1)
    }

    pub(crate) fn sub(&self, other: &Poly) -> Option<Poly> {
        self.add(&other.neg()?)
    }

    /// `s·self + k − t·f` in one pass: `None` exactly where `self.scale(s)`, `add_const(k)`,
    /// `f.scale(t)` and `sub` in turn would give `None`.
    pub(crate) fn combine(&self, s: i128, k: i128, t: i128, f: &Poly) -> Option<Poly> {
        let mut out = Vec::with_capacity(self.terms.len() + f.terms.len() + 1);
        let (mut i, mut j) = (0, 0);
        let mut constant_done = false;
        loop {
            let a = self.terms.get(i);
            let b = f.terms.get(j);
            // The next monomial in order: the constant (the least monomial) comes first.
            let m = match (a, b) {
                (Some(x), Some(y)) => x.0.min(y.0),
                (Some(x), None) => x.0,
                (None, Some(y)) => y.0,
                (None, None) if !constant_done => Mono::ONE,
                (None, None) => break,
            };
            let m = if constant_done { m } else { Mono::ONE.min(m) };
            let mut x = 0i128;
            if let Some(&(am, ac)) = a
                && am == m
            {
                x = ac.checked_mul(s)?;
                i += 1;
            }
            if m.is_one() {
                x = x.checked_add(k)?;
                constant_done = true;
            }
            if let Some(&(bm, bc)) = b
                && bm == m
            {
                let y = bc.checked_mul(t)?.checked_mul(-1)?;
                x = x.checked_add(y)?;
                j += 1;
            }
            if x != 0 {
                out.push((m, x));
            }
        }
        Some(Poly { terms: out })
    }

    pub(crate) fn add_const(&self, c: i128) -> Option<Poly> {
        self.add(&Poly::constant(c))
    }

    pub(crate) fn mul(&self, other: &Poly) -> Option<Poly> {
        if let Some(k) = other.as_const() {
            return self.scale(k);
        }
        if let Some(k) = self.as_const() {
            return other.scale(k);
        }
        let mut terms = Vec::with_capacity(self.terms.len() * other.terms.len());
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                terms.push((ma.mul(mb)?, ca.checked_mul(*cb)?));
            }
        }
        Poly::from_terms(terms)
    }

    /// Replaces every occurrence of atom `a` by `value`.
    pub(crate) fn subst(&self, a: Atom, value: &Poly) -> Option<Poly> {
        if !self.contains_atom(a) {
            return Some(self.clone());
        }
        let mut out = Poly::zero();
        for (m, c) in &self.terms {
            let power = m.power(a);
            let mut rest = *m;
            for _ in 0..power {
                rest = rest.without(a)?;
            }
            let mut term = Poly {
                terms: vec![(rest, *c)],
            };
            for _ in 0..power {
                term = term.mul(value)?;
            }
            out = out.add(&term)?;
        }
        Some(out)
    }

    /// Splits into (monomials without `a`, the cofactor of `a` in the others): `self = rest + a·cof`.
    pub(crate) fn split_on(&self, a: Atom) -> Option<(Poly, Poly)> {
        let mut rest = Vec::new();
        let mut cof = Vec::new();
        for &(m, c) in &self.terms {
            match m.without(a) {
                Some(r) => cof.push((r, c)),
                None => rest.push((m, c)),
            }
        }
        Some((Poly::from_terms(rest)?, Poly::from_terms(cof)?))
    }

    /// Exact division by an integer, if every coefficient is a multiple of it.
    pub(crate) fn div_exact(&self, k: i128) -> Option<Poly> {
        if k == 0 || self.terms.iter().any(|t| t.1 % k != 0) {
            return None;
        }
        Some(Poly {
            terms: self.terms.iter().map(|&(m, c)| (m, c / k)).collect(),
        })
    }

    /// Greatest common divisor of the non-constant coefficients (0 for a constant).
    pub(crate) fn content(&self) -> i128 {
        self.terms
            .iter()
            .filter(|t| !t.0.is_one())
            .fold(0, |g, t| gcd(g, t.1))
    }

    /// The integer tightening of `self ≥ 0`: divide by the content, flooring the constant.
    pub(crate) fn tighten(&self) -> Poly {
        let g = self.content();
        if g <= 1 {
            return self.clone();
        }
        let terms = self
            .terms
            .iter()
            .map(|&(m, c)| {
                if m.is_one() {
                    (m, c.div_euclid(g))
                } else {
                    (m, c / g)
                }
            })
            .filter(|t| t.1 != 0)
            .collect();
        Poly { terms }
    }

    /// Whether this is exactly `atom` (coefficient 1, nothing else).
    pub(crate) fn as_atom(&self) -> Option<Atom> {
        match self.terms.as_slice() {
            [(m, 1)] if m.degree() == 1 => m.atoms().first().copied(),
            _ => None,
        }
    }
}

pub(crate) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(terms: &[(&[Atom], i128)]) -> Poly {
        let mut out = Poly::zero();
        for (atoms, c) in terms {
            let mut m = Mono::ONE;
            for &a in *atoms {
                m = m.mul(&Mono::atom(a)).unwrap();
            }
            out = out
                .add(&Poly {
                    terms: vec![(m, *c)],
                })
                .unwrap();
        }
        out
    }

    #[test]
    fn arithmetic_is_canonical() {
        let x = Poly::atom(1);
        let y = Poly::atom(2);
        let s = x.add(&y).unwrap();
        let d = s.sub(&y).unwrap();
        assert_eq!(d, x);
        let sq = s.mul(&s).unwrap();
        assert_eq!(sq, p(&[(&[1, 1], 1), (&[1, 2], 2), (&[2, 2], 1)]));
        assert!(s.sub(&s).unwrap().is_zero());
    }

    #[test]
    fn substitution_expands_powers() {
        let x2 = p(&[(&[1, 1], 3), (&[], 1)]);
        let v = p(&[(&[2], 1), (&[], 1)]);
        assert_eq!(
            x2.subst(1, &v).unwrap(),
            p(&[(&[2, 2], 3), (&[2], 6), (&[], 4)])
        );
    }

    #[test]
    fn tightening_floors_the_constant() {
        // 4m - 5 >= 0  ⟹  m - 2 >= 0.
        assert_eq!(
            p(&[(&[3], 4), (&[], -5)]).tighten(),
            p(&[(&[3], 1), (&[], -2)])
        );
        // 4m - 1 ≥ 0 ⟹ m - 1 ≥ 0.
        assert_eq!(
            p(&[(&[3], 4), (&[], -1)]).tighten(),
            p(&[(&[3], 1), (&[], -1)])
        );
        assert_eq!(p(&[(&[3], 1)]).tighten(), p(&[(&[3], 1)]));
    }

    #[test]
    fn degree_and_coefficients_are_checked() {
        let x = Poly::atom(1);
        let mut xn = x.clone();
        for _ in 1..MAX_DEGREE {
            xn = xn.mul(&x).unwrap();
        }
        assert!(xn.mul(&x).is_none());
        let big = Poly::constant(i128::MAX);
        assert!(big.add(&Poly::constant(1)).is_none());
    }

    #[test]
    fn combine_is_scale_add_const_sub() {
        let g = p(&[(&[], -3), (&[1], 2), (&[2, 5], -1)]);
        let f = p(&[(&[1], 4), (&[5], 1)]);
        for (s, k, t) in [(1, 0, 1), (3, 2, 2), (2, -7, 5)] {
            let want = g
                .scale(s)
                .and_then(|x| x.add_const(k))
                .and_then(|x| x.sub(&f.scale(t)?));
            assert_eq!(g.combine(s, k, t, &f), want);
        }
        let c = p(&[(&[], 5)]);
        assert_eq!(c.combine(1, -5, 1, &Poly::zero()), Some(Poly::zero()));
        let big = p(&[(&[1], i128::MAX)]);
        assert_eq!(big.combine(2, 0, 1, &f), None);
        assert_eq!(f.combine(1, 0, 2, &big), None);
    }

    #[test]
    fn split_on_factors_one_atom() {
        let e = p(&[(&[1], 1), (&[2, 5], 3), (&[5], 2)]);
        let (rest, cof) = e.split_on(5).unwrap();
        assert_eq!(rest, p(&[(&[1], 1)]));
        assert_eq!(cof, p(&[(&[2], 3), (&[], 2)]));
    }
}
