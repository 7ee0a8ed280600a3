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

/// How many times the bit count found from the intervals is tightened by the facts (`tid <
/// ntid` under a block condition `ntid ≤ 512` bounds `tid` where its interval does not): each
/// try is two proofs, and a partner index needs one or two.
const TIGHTEN: u32 = 4;

impl Analyzer<'_> {
    /// The smallest `k < w` found with both `a` and `b` proven in `[0, 2^k)`, so that `a ^ b`
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
        let mut k = 128 - top.leading_zeros();
        if k >= u32::from(w) {
            return None;
        }
        let below = |this: &mut Self, k: u32| {
            let r = (0, (1i128 << k) - 1);
            this.fits(&st.facts, a, r) && this.fits(&st.facts, b, r)
        };
        if !below(self, k) {
            return None;
        }
        for _ in 0..TIGHTEN {
            if k == 0 || !below(self, k - 1) {
                break;
            }
            k -= 1;
        }
        Some(k)
    }
}
