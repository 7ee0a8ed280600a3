//! Registers a loop only ever halves: `r = r >> c` (unsigned, `c ≥ 1`) is every write to `r`
//! in the loop, as in a tree reduction's `for (s = blockDim.x / 2; s > 0; s >>= 1)`.
//!
//! Such a register never grows: an unsigned right shift of `v` is at most `v`, so at the loop
//! header its unsigned value lies in `[0, e]`, where `e` is its unsigned value on entry. The
//! header's symbol for it (`v`) may be taken to be that unsigned value: a `w`-bit register is
//! modeled by any integer congruent to it modulo `2^w`, and exactly one lies in `[0, 2^w)`.

use super::analyze::{Analyzer, defs};
use super::ir::{IntOp, Kind, Reg, Src};
use super::poly::Poly;
use super::value::{State, Val};

impl Analyzer<'_> {
    /// Whether every write to `r` among the instructions of `blocks` is `r = r op c` with
    /// `1 ≤ c < w`, `op` one of `shr.u<w>` (`IntOp::Shr`, unsigned only) and `shl.b<w>`
    /// (`IntOp::Shl`), predicated or not (either way the register is shifted or kept), and
    /// there is at least one.
    pub(super) fn only_shifted(&self, blocks: &[usize], r: Reg, w: u8, op: IntOp) -> bool {
        let mut any = false;
        for b in blocks {
            let Some(block) = self.body.blocks.get(*b) else {
                return false;
            };
            for ins in self.body.insts.get(block.start..block.end).unwrap_or(&[]) {
                if !defs(&ins.kind).contains(&r) {
                    continue;
                }
                match ins.kind {
                    Kind::Int {
                        op: iop,
                        d,
                        a: Src::Reg(a),
                        b: Some(Src::Imm(c)),
                        c: None,
                        w: iw,
                        signed,
                    } if iop == op
                        && !(op == IntOp::Shr && signed)
                        && d == r
                        && a == r
                        && iw == w
                        && (1..u64::from(w)).contains(&c) =>
                    {
                        any = true;
                    }
                    _ => return false,
                }
            }
        }
        any
    }

    /// At the header `head` of a loop over `blocks` entered with `entry`: for each register
    /// of `regs` the loop only halves and whose header value is the symbol `v`, `0 ≤ v ≤ e`
    /// (the entry value `e`, when it is known to lie in `[0, 2^w)`).
    pub(crate) fn bound_halved(
        &mut self,
        blocks: &[usize],
        regs: &[Reg],
        entry: &State,
        head: &mut State,
    ) {
        for &r in regs {
            let (Val::Int { p: e, w }, Val::Int { p: v, w: hw }) = (entry.get(r), head.get(r))
            else {
                continue;
            };
            let (e, v, w) = (e.clone(), v.clone(), *w);
            let Some(atom) = v.atoms().next() else {
                continue;
            };
            if *hw != w || v != Poly::atom(atom) || !self.only_shifted(blocks, r, w, IntOp::Shr) {
                continue;
            }
            let top = (1i128 << w.clamp(1, 64)) - 1;
            if !self.fits(&entry.facts, &e, (0, top)) {
                continue;
            }
            self.atoms.set_range(atom, (0, top));
            if let Some(f) = e.sub(&v) {
                head.facts.assume(&self.atoms, &f, 0);
            }
        }
    }
}
