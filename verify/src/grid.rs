//! The grid-stride index `I0 + S·J` (`J` strides past the thread's first index): its trip
//! count, and joins that keep its shape.
//!
//! A loop unrolled by hand (`for (; i + stride < n; i += 2 * stride)`) leaves its index at
//! `I0 + S·J` for some `J` that depends on the path (`J = 0` when the loop never runs), and the
//! tail loop that follows starts there. Kept in this shape, the tail is the ordinary
//! grid-stride pattern shifted by `J`, which the prover already handles through
//! `q = floor((n − 1 − I0) / S)`.

use super::analyze::Analyzer;
use super::atoms::{I0, S};
use super::facts::{Fact, Facts, match_q};
use super::poly::Poly;

impl Analyzer<'_> {
    /// `floor(num / S)` when `num = n − 1 − I0 − S·J`: it is `q − J`.
    ///
    /// Sound for every integer `J` and `S ≥ 1`: `floor((x − S·J) / S) = floor(x / S) − J`, and
    /// `q` is defined as `floor((n − 1 − I0) / S)`.
    pub(crate) fn grid_trip(&self, num: &Poly, den: &Poly) -> Option<Poly> {
        if den.as_atom() != Some(S) {
            return None;
        }
        let q = self.atoms.q_existing()?;
        match match_q(&self.atoms, num) {
            Some((j, -1)) => Poly::atom(q).sub(&j),
            _ => None,
        }
    }

    /// Joins `I0 + S·ja` (under `fa`) and `I0 + S·jb` (under `fb`) into `I0 + S·m`, with `m`
    /// the symbol for `key`. Each bound `q + 1 − J ≥ 0`, `q − J ≥ 0`, `J ≥ 0` that both paths
    /// prove for their own `J` is pushed to `extra` as a fact about `m`.
    ///
    /// Sound because on each path `m` stands for that path's `J` (the joined value is exact
    /// there), so a bound both paths prove holds for `m` on the joined path, resting on the
    /// launch conditions either proof used (its tags).
    pub(crate) fn join_grid_index(
        &mut self,
        pa: &Poly,
        pb: &Poly,
        fa: &Facts,
        fb: &Facts,
        key: (u32, u32, u32),
        extra: &mut Vec<Fact>,
    ) -> Option<Poly> {
        let q = Poly::atom(self.atoms.q_existing()?);
        let i0 = Poly::atom(I0);
        let (ra, ja) = pa.split_on(S)?;
        let (rb, jb) = pb.split_on(S)?;
        if ra != i0 || rb != i0 || ja.contains_atom(S) || jb.contains_atom(S) {
            return None;
        }
        let bounds = |j: &Poly| -> Option<[Poly; 3]> {
            Some([q.add_const(1)?.sub(j)?, q.sub(j)?, j.clone()])
        };
        let (ba, bb) = (bounds(&ja)?, bounds(&jb)?);
        let wrap = ja
            .atoms()
            .chain(jb.atoms())
            .any(|x| self.wrap_atoms.contains(&x));
        let wa = fa.range(&self.atoms, &ja);
        let wb = fb.range(&self.atoms, &jb);
        let m = self.opaque(key, (wa.0.min(wb.0), wa.1.max(wb.1)), wrap);
        let bm = bounds(&m)?;
        for ((ga, gb), gm) in ba.iter().zip(&bb).zip(bm) {
            if let (Some(ta), Some(tb)) = (
                fa.prove_cheap(&self.atoms, ga),
                fb.prove_cheap(&self.atoms, gb),
            ) {
                extra.push(Fact {
                    p: gm,
                    tags: ta | tb,
                });
            }
        }
        i0.add(&Poly::atom(S).mul(&m)?)
    }
}
