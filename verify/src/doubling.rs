//! Registers a loop tests against a bound before every back edge.
//!
//! Each back edge is taken only when the register's unsigned value, as the edge carries it to
//! the header, is at most `X` (an unsigned `w`-bit number the loop never writes). So at the
//! header the register's unsigned value is its entry value or at most `X`: when the entry
//! value is at most `X` as well, the header's symbol `v` for it (any integer congruent to the
//! register modulo `2^w`, so it may be taken to be the unsigned value) lies in `[0, X]`,
//! whatever the loop writes to it. Two kinds of register use this:
//!
//! - one the loop only doubles, `for (k = 2; k <= blockDim.x; k <<= 1)` (the outer loop of a
//!   bitonic sort, lowered to `shl.b32 k, k, 1; setp.le.u32 p, k, X; @p bra head`). A shift
//!   left may wrap to 0 (`k = 2^31` doubled); the test sees the wrapped value, which is what
//!   the header gets.
//! - one that entered the loop as bits that may have wrapped, and is stepped by anything: the
//!   CUDA samples' `reduce7`, `for (unsigned i = blockIdx.x * 512 + tid; i < n; i += gridSize)`,
//!   whose `512 · blockIdx.x` and `i + gridSize` wrap on large grids. Its exact value is lost
//!   at the first wrap, and so is the induction the loop would otherwise be read by; each
//!   value it holds is tested before it is used, and that is what bounds it.

use super::analyze::{Analyzer, defs};
use super::ir::{Cmp, IntOp, Kind, Reg, Src};
use super::poly::Poly;
use super::value::{State, Val};

impl Analyzer<'_> {
    /// Whether `x` is written by no instruction of `blocks`.
    fn unwritten(&self, blocks: &[usize], x: Reg) -> bool {
        blocks.iter().all(|b| {
            self.body.blocks.get(*b).is_some_and(|block| {
                self.body
                    .insts
                    .get(block.start..block.end)
                    .unwrap_or(&[])
                    .iter()
                    .all(|ins| !defs(&ins.kind).contains(&x))
            })
        })
    }

    /// The bound `X` of `r` that every edge from `blocks` to `header` is taken under, and
    /// whether every edge is taken under `r < X`: the edge's predicate is the last write in
    /// its block of an unguarded unsigned `setp` of `r` against the same `X` (`r ≤ X`, `r <
    /// X`, or their mirror images and negations, as the edge is taken), with neither `r` nor
    /// `X`'s register written after it in that block.
    fn back_edge_bound(
        &self,
        blocks: &[usize],
        header: usize,
        r: Reg,
        w: u8,
    ) -> Option<(Src, bool)> {
        let mut bound: Option<Src> = None;
        let mut strict = true;
        for b in blocks {
            let block = self.body.blocks.get(*b)?;
            for &(to, cond) in &block.succs {
                if to != header {
                    continue;
                }
                let (p, taken) = cond?;
                let insts = self.body.insts.get(block.start..block.end)?;
                let at = insts.iter().rposition(|ins| defs(&ins.kind).contains(&p))?;
                let ins = insts.get(at)?;
                let Kind::Setp {
                    d,
                    d2: None,
                    cmp,
                    w: sw,
                    signed: false,
                    a,
                    b: bsrc,
                    combine: None,
                } = ins.kind
                else {
                    return None;
                };
                if d != p || sw != w || ins.guard.is_some() {
                    return None;
                }
                // As the edge is taken: `r ≤ X` or `r < X`, read from either side.
                let cmp = if taken { cmp } else { cmp.negate() };
                let x = match (a, bsrc, cmp) {
                    (Src::Reg(ra), x, Cmp::Le | Cmp::Lt) if ra == r => x,
                    (x, Src::Reg(rb), Cmp::Ge | Cmp::Gt) if rb == r => x,
                    _ => return None,
                };
                strict &= matches!(cmp, Cmp::Lt | Cmp::Gt);
                let later = insts.get(at + 1..).unwrap_or(&[]);
                let touched = |reg: Reg| later.iter().any(|i| defs(&i.kind).contains(&reg));
                match x {
                    Src::Reg(xr) if xr == r || touched(xr) || !self.unwritten(blocks, xr) => {
                        return None;
                    }
                    Src::Reg(_) | Src::Imm(_) => {}
                    _ => return None,
                }
                if touched(r) || bound.is_some_and(|o| o != x) {
                    return None;
                }
                bound = Some(x);
            }
        }
        bound.map(|x| (x, strict))
    }

    /// At the header `head` of a loop over `blocks` entered with `entry`: for each register
    /// of `regs` the loop only doubles, with every back edge taken under `r ≤ X`, whose header
    /// value is the symbol `v` and whose entry value `e` is proven in `[0, X]`, `0 ≤ v ≤ X`
    /// (`≤ X − 1` where every edge is taken under `r < X` and `e ≤ X − 1`).
    pub(crate) fn bound_doubled(
        &mut self,
        blocks: &[usize],
        header: usize,
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
            if hw != &w || v != Poly::atom(atom) || !self.only_shifted(blocks, r, w, IntOp::Shl) {
                continue;
            }
            let Some(xp) = self.entered_within_bound(blocks, header, r, w, &e, entry) else {
                continue;
            };
            self.atoms
                .set_range(atom, (0, (1i128 << w.clamp(1, 64)) - 1));
            if let Some(f) = xp.sub(&v) {
                head.facts.assume(&self.atoms, &f, 0);
            }
        }
    }

    /// At the header of loop `li` over `blocks`: each register of `regs` that entered as
    /// bits that may have wrapped (a single atom of [`Analyzer::wrap_atoms`], which an order
    /// test bounds) and is tested `≤ X` or `< X` before every back edge, its entry value
    /// proven in `[0, X]`, is at the header a fresh number `v` of the loop, `0 ≤ v ≤ X`, in
    /// place of whatever induction its steps make.
    pub(crate) fn bound_tested_bits(
        &mut self,
        li: u32,
        blocks: &[usize],
        header: usize,
        regs: &[Reg],
        entry: &State,
        head: &mut State,
    ) {
        for &r in regs {
            let Val::Int { p: e, w } = entry.get(r) else {
                continue;
            };
            let (e, w) = (e.clone(), *w);
            let wrapped = e
                .atoms()
                .next()
                .is_some_and(|a| e == Poly::atom(a) && self.wrap_atoms.contains(&a));
            if !wrapped {
                continue;
            }
            let Some(xp) = self.entered_within_bound(blocks, header, r, w, &e, entry) else {
                continue;
            };
            let v = self.opaque((6, li, r), (0, (1i128 << w.clamp(1, 64)) - 1), false);
            if let Some(f) = xp.sub(&v) {
                head.facts.assume(&self.atoms, &f, 0);
            }
            head.set(r, Val::Int { p: v, w });
        }
    }

    /// The largest value `r` may have at `header`, as a polynomial of `entry`: the bound `X`
    /// every back edge is taken under (`X − 1` where every edge is taken under `r < X`),
    /// where `X` and the entry value `e` are `w`-bit unsigned numbers and `e` is at most it.
    fn entered_within_bound(
        &mut self,
        blocks: &[usize],
        header: usize,
        r: Reg,
        w: u8,
        e: &Poly,
        entry: &State,
    ) -> Option<Poly> {
        let (x, strict) = self.back_edge_bound(blocks, header, r, w)?;
        let top = (1i128 << w.clamp(1, 64)) - 1;
        let xp = match x {
            Src::Imm(c) => Poly::constant(i128::from(c) & top),
            Src::Reg(xr) => match entry.get(xr) {
                Val::Int { p, w: xw } if *xw == w => p.clone(),
                _ => return None,
            },
            _ => return None,
        };
        if !self.fits(&entry.facts, &xp, (0, top)) || !self.fits(&entry.facts, e, (0, top)) {
            return None;
        }
        let most = xp.add_const(-i128::from(strict))?;
        let room = most.sub(e)?;
        self.prove(&entry.facts, &room).then_some(most)
    }
}
