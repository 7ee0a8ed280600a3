//! Exclusive-or partners: `tid ^ j`, the index of a bitonic sort's or a butterfly's partner.
//!
//! Two numbers in `[0, 2^k)` have no bit at or above `k`, so neither has their exclusive or:
//! it lies in `[0, 2^k)` too, at any width above `k`. A shared array of `2^k` slots indexed by
//! `tid ^ j`, with `tid` and `j` both below `2^k`, stays inside its slots; with `j ≥ 2^k`, or an
//! array whose size is not a power of two (`96` slots, `70 ^ 32 = 102`), it need not, and the
//! rule says nothing the access could use.

use super::analyze::Analyzer;
use super::poly::Poly;
use super::value::State;

impl Analyzer<'_> {
    /// The smallest `k < w` with both `a` and `b` proven in `[0, 2^k)`, so that `a ^ b`
    /// (at width `w`) lies in `[0, 2^k)`; `None` when no such `k` is proven.
    pub(crate) fn xor_bits(&mut self, st: &State, a: &Poly, b: &Poly, w: u8) -> Option<u32> {
        let top = st
            .facts
            .range(&self.atoms, a)
            .1
            .max(st.facts.range(&self.atoms, b).1);
        if top < 0 {
            return None;
        }
        // Below the width's top bit: the facts may prove less than the intervals (a halved
        // loop register's interval is the whole unsigned range).
        let mut k = (128 - top.leading_zeros()).min(u32::from(w).saturating_sub(1));
        let below = |this: &mut Self, k: u32| {
            let r = (0, (1i128 << k) - 1);
            this.fits(&st.facts, a, r) && this.fits(&st.facts, b, r)
        };
        if !below(self, k) {
            return None;
        }
        // The facts may bound a side more tightly than its interval (`tid < ntid` under a block
        // condition `ntid ≤ 256`): the smallest `k` they prove, by bisection (`below` holds of
        // every `k` above one it holds of), at most six tries of two proofs each.
        let mut lo = 0;
        while lo < k {
            let mid = (lo + k) / 2;
            if below(self, mid) {
                k = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(k)
    }
}
