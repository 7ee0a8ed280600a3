//! The driver: blocks in reverse post-order, loops by induction-variable recognition and
//! Houdini-style invariant inference, and the record of what the final pass found.
//!
//! A loop is analyzed in passes. The first gives every register the loop writes a fresh symbol
//! and reads the back edge: a register whose back-edge value is its symbol plus a loop-invariant
//! step is an induction variable, `init + k·step` with `k ≥ 0` the loop's iteration count.
//! Candidate invariants are the back edge's facts shifted by one iteration (and `c ≥ 1` for a
//! counter tested with `≠`); those that hold on entry are assumed, and the body is re-run until
//! every assumed candidate is re-established on the back edge. Only the last pass — run with
//! invariants that are all proven — records accesses and rejections.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::atoms::{AtomKind, Atoms, INF, S};
use super::contract::{EntryContract, OperandRef};
use super::facts::{Facts, NODE, Tags};
use super::ir::{Access, Body, Kind, Reg};
use super::poly::{Atom, Poly};
use super::proof::{AccessClaim, AccessSummary, Guard};
use super::reject::{RejectKind, Rejection};
use super::value::{PredVal, State, Val};

pub(crate) enum Outcome {
    Continue,
    Stop,
}

#[derive(Debug, Clone)]
struct Loop {
    header: usize,
    /// Blocks of the loop, in reverse post-order.
    blocks: Vec<usize>,
    modified: Vec<Reg>,
}

/// States leaving a region.
#[derive(Default)]
struct RegionOut {
    back: Option<State>,
    exits: Vec<(usize, State)>,
}

/// Work limits: beyond them the body is declined as too complex.
const MAX_BLOCK_VISITS: u64 = 20_000;
/// Prover work, in the search's units: three million nodes' worth.
const MAX_PROVER_STEPS: u64 = 3_000_000 * NODE as u64;

pub(crate) struct Analyzer<'c> {
    pub(crate) body: &'c Body,
    pub(crate) contract: &'c EntryContract,
    pub(crate) atoms: Atoms,
    pub(crate) param_atoms: Vec<Option<Atom>>,
    pub(crate) param_names: Vec<String>,
    pub(crate) shape_atoms: Vec<Atom>,
    /// (atom, operand, axis).
    pub(crate) stride_atoms: Vec<(Atom, OperandRef, u8)>,
    /// Per `.param`: the declared extent of a pointer that has one, as a polynomial.
    pub(crate) declared: Vec<Option<Poly>>,
    /// The launch's dynamic shared bytes, for a contract whose launches carry one.
    pub(crate) dynamic_shared: Option<Poly>,
    pub(crate) wrap_atoms: HashSet<Atom>,
    /// Atoms that stand for loaded integers, or were made from one: an access whose index
    /// holds one and cannot be proven is data-dependent.
    pub(crate) loaded_atoms: HashSet<Atom>,
    /// Whether the instruction being executed has read a value holding a loaded atom: what
    /// it makes is made from loaded data.
    pub(crate) reading_loaded: bool,
    pub(crate) used_tags: Tags,
    pub(crate) grid_stride: bool,
    /// The final pass is inside a loop stepped by the grid's thread count.
    pub(crate) in_grid_loop: bool,
    /// Pointer params the final pass found written (stored or atomically updated) inside a
    /// loop stepped by the grid's thread count, and outside every such loop.
    pub(crate) written_in_grid_loop: HashSet<u32>,
    pub(crate) written_outside_grid_loop: HashSet<u32>,
    pub(crate) rejections: Vec<(usize, Rejection)>,
    pub(crate) summaries: Vec<AccessSummary>,
    /// Every access proven, by line (a set: a loop's body is checked once per visit).
    pub(crate) claims: BTreeSet<AccessClaim>,
    /// In guard mode, the accesses guarded instead of rejected, by instruction; `None`: every
    /// access must be proven.
    pub(crate) guards: Option<BTreeMap<usize, Guard>>,
    /// Lines whose accesses guard mode guards even where it proves them (see
    /// `verify_guarded`: the rewrite's re-proof did not).
    pub(crate) forced: Vec<u32>,
    loops: Vec<Loop>,
    loop_at: HashMap<usize, usize>,
    /// Per loop header: the first atom id its first analysis could create (see [`varies`]).
    loop_marks: HashMap<usize, Atom>,
    rpo: Vec<usize>,
    rpo_pos: Vec<usize>,
    visits: u64,
    pub(crate) too_complex: bool,
    /// Refine by comparisons without proving their operands exact (candidate probes only).
    pub(crate) optimistic: bool,
}

impl<'c> Analyzer<'c> {
    pub(crate) fn new(body: &'c Body, contract: &'c EntryContract, atoms: Atoms) -> Self {
        Analyzer {
            body,
            contract,
            atoms,
            param_atoms: Vec::new(),
            param_names: Vec::new(),
            shape_atoms: Vec::new(),
            stride_atoms: Vec::new(),
            declared: Vec::new(),
            dynamic_shared: None,
            wrap_atoms: HashSet::new(),
            loaded_atoms: HashSet::new(),
            reading_loaded: false,
            used_tags: 0,
            grid_stride: false,
            in_grid_loop: false,
            written_in_grid_loop: HashSet::new(),
            written_outside_grid_loop: HashSet::new(),
            rejections: Vec::new(),
            summaries: Vec::new(),
            claims: BTreeSet::new(),
            guards: None,
            forced: Vec::new(),
            loops: Vec::new(),
            loop_at: HashMap::new(),
            loop_marks: HashMap::new(),
            rpo: Vec::new(),
            rpo_pos: Vec::new(),
            visits: 0,
            too_complex: false,
            optimistic: false,
        }
    }

    pub(crate) fn reject(&mut self, idx: usize, kind: RejectKind, reason: String) {
        let (line, instruction) = self.site(idx);
        self.rejections.push((
            idx,
            Rejection {
                line,
                instruction,
                kind,
                reason,
            },
        ));
    }

    pub(crate) fn reject_unsupported(&mut self, idx: usize, reason: &str) {
        self.reject(idx, RejectKind::Unsupported, reason.to_owned());
    }

    fn site(&self, idx: usize) -> (u32, String) {
        match self.body.insts.get(idx) {
            Some(ins) => (
                ins.line,
                self.body
                    .sites
                    .get(ins.site as usize)
                    .cloned()
                    .unwrap_or_default(),
            ),
            None => (0, String::new()),
        }
    }

    pub(crate) fn record_access(&mut self, param: u32, access: Access, bytes: u32) {
        if access != Access::Load {
            if self.in_grid_loop {
                self.written_in_grid_loop.insert(param);
            } else {
                self.written_outside_grid_loop.insert(param);
            }
        }
        let Some(s) = self.summaries.iter_mut().find(|s| s.param == param) else {
            return;
        };
        match access {
            Access::Load => s.loads += 1,
            Access::Store => s.stores += 1,
            Access::Atomic => s.atomics += 1,
        }
        s.width = bytes;
        s.align = s.align.max(bytes);
    }

    /// Orders blocks and finds loops; `Err` names a block for an irreducible CFG.
    pub(crate) fn prepare(&mut self) -> Result<(), usize> {
        let n = self.body.blocks.len();
        let mut post = Vec::with_capacity(n);
        let mut state = vec![0u8; n];
        let mut back_edges: Vec<(usize, usize)> = Vec::new();
        if n > 0 {
            let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
            state[0] = 1;
            while let Some(&mut (b, ref mut i)) = stack.last_mut() {
                let succs = &self.body.blocks[b].succs;
                if let Some(&(s, _)) = succs.get(*i) {
                    *i += 1;
                    match state.get(s) {
                        Some(0) => {
                            state[s] = 1;
                            stack.push((s, 0));
                        }
                        Some(1) => back_edges.push((b, s)),
                        _ => {}
                    }
                } else {
                    state[b] = 2;
                    post.push(b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        self.rpo = post;
        self.rpo_pos = vec![usize::MAX; n];
        for (i, &b) in self.rpo.iter().enumerate() {
            self.rpo_pos[b] = i;
        }
        // Natural loops, merged per header.
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, block) in self.body.blocks.iter().enumerate() {
            for &(s, _) in &block.succs {
                if let Some(p) = preds.get_mut(s) {
                    p.push(b);
                }
            }
        }
        let mut by_header: HashMap<usize, HashSet<usize>> = HashMap::new();
        for &(latch, header) in &back_edges {
            let set = by_header.entry(header).or_default();
            set.insert(header);
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if set.insert(b) {
                    if b == 0 {
                        return Err(header);
                    }
                    work.extend(preds[b].iter().copied());
                }
            }
        }
        let mut loops: Vec<Loop> = by_header
            .into_iter()
            .map(|(header, set)| {
                let mut blocks: Vec<usize> = set.into_iter().collect();
                blocks.sort_by_key(|&b| self.rpo_pos.get(b).copied().unwrap_or(usize::MAX));
                let mut modified: Vec<Reg> = Vec::new();
                for &b in &blocks {
                    let block = &self.body.blocks[b];
                    for ins in self
                        .body
                        .insts
                        .get(block.start..block.end)
                        .unwrap_or_default()
                    {
                        modified.extend(defs(&ins.kind));
                    }
                }
                modified.sort_unstable();
                modified.dedup();
                Loop {
                    header,
                    blocks,
                    modified,
                }
            })
            .collect();
        // A header must come first in its loop, or the CFG is irreducible.
        for l in &loops {
            if l.blocks.first() != Some(&l.header) {
                return Err(l.header);
            }
        }
        loops.sort_by_key(|l| self.rpo_pos.get(l.header).copied().unwrap_or(usize::MAX));
        for (i, l) in loops.iter().enumerate() {
            self.loop_at.insert(l.header, i);
        }
        self.loops = loops;
        Ok(())
    }

    /// Runs the whole body from `entry`.
    pub(crate) fn run(&mut self, entry: State) {
        let all = self.rpo.clone();
        self.region(&all, None, entry, true);
    }

    fn region(
        &mut self,
        blocks: &[usize],
        own: Option<usize>,
        entry: State,
        final_run: bool,
    ) -> RegionOut {
        let mut out = RegionOut::default();
        let Some(&first) = blocks.first() else {
            return out;
        };
        let members: HashSet<usize> = blocks.iter().copied().collect();
        let mut pending: HashMap<usize, State> = HashMap::new();
        pending.insert(first, entry);
        let mut done: HashSet<usize> = HashSet::new();
        for &b in blocks {
            if done.contains(&b) {
                continue;
            }
            let Some(state) = pending.remove(&b) else {
                done.insert(b);
                continue;
            };
            if state.facts.dead {
                done.insert(b);
                continue;
            }
            self.visits += 1;
            if self.visits > MAX_BLOCK_VISITS || self.atoms.steps.get() > MAX_PROVER_STEPS {
                self.too_complex = true;
                return out;
            }
            let nested = self.loop_at.get(&b).copied().filter(|_| Some(b) != own);
            let leaving: Vec<(usize, State)> = match nested {
                Some(li) => {
                    let l = self.loops[li].clone();
                    for &x in &l.blocks {
                        done.insert(x);
                    }
                    self.loop_run(&l, state, final_run)
                }
                None => {
                    done.insert(b);
                    self.block(b, state, final_run)
                }
            };
            for (succ, st) in leaving {
                if st.facts.dead {
                    continue;
                }
                if Some(succ) == own {
                    out.back = Some(match out.back.take() {
                        None => st,
                        Some(prev) => self.join_states(&prev, &st, (3, succ as u32, 1)),
                    });
                } else if members.contains(&succ) && !done.contains(&succ) {
                    let merged = match pending.remove(&succ) {
                        None => st,
                        Some(prev) => self.join_states(&prev, &st, (3, succ as u32, 0)),
                    };
                    pending.insert(succ, merged);
                } else if members.contains(&succ) {
                    // A retreating edge to something other than this region's header.
                    if final_run {
                        let end = self.body.blocks[b].end.saturating_sub(1);
                        self.reject_unsupported(end, "an irreducible loop is not verified");
                    }
                } else {
                    out.exits.push((succ, st));
                }
            }
        }
        out
    }

    /// Executes a block; returns the states on its outgoing edges.
    fn block(&mut self, b: usize, mut st: State, final_run: bool) -> Vec<(usize, State)> {
        let block = &self.body.blocks[b];
        let (start, end) = (block.start, block.end);
        for idx in start..end {
            let Some(ins) = self.body.insts.get(idx) else {
                break;
            };
            let is_branch = matches!(ins.kind, Kind::Bra { .. })
                || (matches!(ins.kind, Kind::Ret) && ins.guard.is_some());
            if is_branch {
                break;
            }
            match ins.guard {
                None => {
                    if let Outcome::Stop = self.exec(&mut st, idx, ins, final_run) {
                        return Vec::new();
                    }
                }
                Some((p, neg)) => {
                    let pred = match st.get(p) {
                        Val::Pred(x) => x.clone(),
                        _ => PredVal::Unknown,
                    };
                    let mut on = st.clone();
                    self.refine(&mut on, &pred, !neg);
                    if on.facts.dead {
                        continue;
                    }
                    let mut off = st.clone();
                    self.refine(&mut off, &pred, neg);
                    let stop = matches!(self.exec(&mut on, idx, ins, final_run), Outcome::Stop);
                    if off.facts.dead {
                        if stop {
                            return Vec::new();
                        }
                        st = on;
                        continue;
                    }
                    if stop {
                        st = off;
                        continue;
                    }
                    let mut extra = Vec::new();
                    for r in defs(&ins.kind) {
                        let v = self.join_val(
                            on.get(r),
                            st.get(r),
                            &on.facts,
                            &st.facts,
                            (4, idx as u32, r),
                            &mut extra,
                        );
                        st.set(r, v);
                    }
                    for f in extra {
                        st.facts.assume(&self.atoms, &f.p, f.tags);
                    }
                }
            }
        }
        let succs = block.succs.clone();
        let mut out = Vec::with_capacity(succs.len());
        for (s, cond) in succs {
            let mut edge = st.clone();
            if let Some((p, truth)) = cond {
                let pred = match st.get(p) {
                    Val::Pred(x) => x.clone(),
                    _ => PredVal::Unknown,
                };
                self.refine(&mut edge, &pred, truth);
            }
            if !edge.facts.dead {
                out.push((s, edge));
            }
        }
        out
    }

    fn join_states(&mut self, a: &State, b: &State, key: (u32, u32, u32)) -> State {
        if a.facts.dead {
            return b.clone();
        }
        if b.facts.dead {
            return a.clone();
        }
        let mut regs = Vec::with_capacity(a.regs.len());
        let mut extra = Vec::new();
        for (r, (va, vb)) in a.regs.iter().zip(&b.regs).enumerate() {
            if va == vb {
                regs.push(va.clone());
            } else {
                regs.push(self.join_val(
                    va,
                    vb,
                    &a.facts,
                    &b.facts,
                    (key.0, key.1 * 2 + key.2, r as u32),
                    &mut extra,
                ));
            }
        }
        let mut facts = Facts::join(&self.atoms, &a.facts, &b.facts);
        for f in extra {
            facts.assume(&self.atoms, &f.p, f.tags);
        }
        State { regs, facts }
    }

    fn scope(&self, l: &Loop, li: u32, mark: Atom, k: Atom) -> Scope {
        let blocks: HashSet<usize> = l.blocks.iter().copied().collect();
        let mut loops: HashSet<u32> = HashSet::from([li]);
        for (i, inner) in self.loops.iter().enumerate() {
            if blocks.contains(&inner.header) {
                loops.insert(i as u32);
            }
        }
        Scope {
            mark,
            k,
            insts: l
                .blocks
                .iter()
                .filter_map(|&b| self.body.blocks.get(b))
                .map(|b| (b.start, b.end))
                .collect(),
            blocks,
            loops,
        }
    }

    fn loop_run(&mut self, l: &Loop, entry: State, final_run: bool) -> Vec<(usize, State)> {
        let li = self.loop_at.get(&l.header).copied().unwrap_or(0) as u32;
        // Atoms from this mark on may be the loop's own: see `varies`. The mark is that of
        // the loop's first analysis, since a later one (in another pass of an enclosing loop)
        // re-keys the atoms the first created.
        let mark = *self
            .loop_marks
            .entry(l.header)
            .or_insert_with(|| self.atoms.next_id());
        // Pass 1: symbols for everything the loop writes.
        let mut phi = entry.clone();
        let mut symbols: HashMap<Reg, Atom> = HashMap::new();
        for &r in &l.modified {
            let a = self.atoms.keyed(
                (super::atoms::LOOP_SYMBOL, li, r),
                AtomKind::Opaque,
                -INF,
                INF,
            );
            symbols.insert(r, a);
            let v = match entry.get(r) {
                Val::Int { w, .. } => Val::Int {
                    p: Poly::atom(a),
                    w: *w,
                },
                Val::Ptr { param, .. } => Val::Ptr {
                    param: *param,
                    off: Poly::atom(a),
                },
                Val::Pred(_) => Val::Pred(PredVal::Unknown),
                Val::Data => Val::Data,
                Val::PtrData { param } => Val::PtrData { param: *param },
                _ => Val::Int {
                    p: Poly::atom(a),
                    w: 64,
                },
            };
            phi.set(r, v);
        }
        let first = self.region(&l.blocks, Some(l.header), phi, false);
        let Some(back) = first.back else {
            // The body never returns to its header.
            return self
                .region(&l.blocks, Some(l.header), entry, final_run)
                .exits;
        };
        // Induction variables.
        let k = self.atoms.keyed((5, li, 0), AtomKind::Counter, 0, INF);
        let kp = Poly::atom(k);
        let loop_symbols: Vec<Atom> = symbols.values().copied().collect();
        let scope = self.scope(l, li, mark, k);
        // A step must be the same in every iteration: built from atoms that do not vary in
        // the loop (`d` cannot hold `k`, made after the first pass or absent from it).
        let mut memo = HashMap::new();
        let fixed_now: HashSet<Atom> = (0..self.atoms.next_id())
            .filter(|&a| !scope.varies(&self.atoms, a, &mut memo))
            .collect();
        let mut head = entry.clone();
        let mut grid = false;
        let mut varying_regs: Vec<Reg> = Vec::new();
        for &r in &l.modified {
            let Some(&a) = symbols.get(&r) else {
                continue;
            };
            let step = |init: &Poly, b: &Poly| -> Option<(Poly, Poly)> {
                let d = back.facts.normalize(&b.sub(&Poly::atom(a))?)?;
                if loop_symbols.iter().any(|s| d.contains_atom(*s))
                    || d.atoms().any(|x| !fixed_now.contains(&x))
                {
                    return None;
                }
                Some((init.add(&kp.mul(&d)?)?, d))
            };
            let varying = |this: &mut Self, w: u8| -> Poly {
                let _ = w;
                this.opaque((6, li, r), (-(1i128 << 63), (1i128 << 64) - 1), false)
            };
            varying_regs.push(r);
            let v = match (entry.get(r), back.get(r)) {
                (Val::Int { p: init, w }, Val::Int { p: b, .. }) => match step(init, b) {
                    Some((p, d)) => {
                        grid |= is_grid_step(&d);
                        Val::Int { p, w: *w }
                    }
                    None => Val::Int {
                        p: varying(self, *w),
                        w: *w,
                    },
                },
                (Val::Ptr { param, off }, Val::Ptr { param: p2, off: b }) if param == p2 => {
                    match step(off, b) {
                        Some((off, _)) => Val::Ptr { param: *param, off },
                        None => Val::Ptr {
                            param: *param,
                            off: varying(self, 64),
                        },
                    }
                }
                (
                    Val::Ptr { param, .. } | Val::PtrData { param },
                    Val::Ptr { param: p2, .. } | Val::PtrData { param: p2 },
                ) if param == p2 => Val::PtrData { param: *param },
                (Val::Pred(_), _) | (_, Val::Pred(_)) => Val::Pred(PredVal::Unknown),
                (Val::Data, _) | (_, Val::Data) => Val::Data,
                (Val::Int { w, .. }, _) => Val::Int {
                    p: varying(self, *w),
                    w: *w,
                },
                (Val::Undef, Val::Int { w, .. }) => Val::Int {
                    p: varying(self, *w),
                    w: *w,
                },
                (Val::Undef, Val::Undef) => Val::Undef,
                _ => Val::Wild,
            };
            head.set(r, v);
        }
        self.bound_halved(&l.blocks, &varying_regs, &entry, &mut head);
        self.bound_doubled(&l.blocks, l.header, &varying_regs, &entry, &mut head);
        self.bound_tested_bits(li, &l.blocks, l.header, &varying_regs, &entry, &mut head);
        // Candidate invariants: facts, and closed forms of registers that are functions of the
        // induction variables (`rd = sext(r)` of an `int` index).
        let run_with = |this: &mut Self, cands: &[Poly], values: &[(Reg, Val)], final_run: bool| {
            let mut st = head.clone();
            for (r, v) in values {
                st.set(*r, v.clone());
            }
            for c in cands {
                st.facts.assume(&this.atoms, c, 0);
            }
            this.region(&l.blocks, Some(l.header), st, final_run)
        };
        let was = self.optimistic;
        self.optimistic = true;
        let probe = run_with(self, &[], &[], false);
        self.optimistic = was;
        let mut cands: Vec<Poly> = Vec::new();
        if let Some(b) = &probe.back {
            let km1 = kp.add_const(-1).unwrap_or_default();
            for f in &b.facts.ineqs {
                if !f.p.contains_atom(k) || entry.facts.ineqs.iter().any(|e| e.p == f.p) {
                    continue;
                }
                if let Some(c) = f.p.subst(k, &km1) {
                    cands.push(c);
                }
            }
            for n in b.facts.neqs.iter().filter(|n| n.contains_atom(k)) {
                if let Some(c) = n.subst(k, &km1) {
                    cands.extend(c.add_const(-1));
                    cands.extend(c.neg().and_then(|x| x.add_const(-1)));
                }
            }
        }
        let zero = Poly::zero();
        let km1 = kp.add_const(-1).unwrap_or_default();
        let mut values: Vec<(Reg, Val)> = Vec::new();
        if let Some(b) = &probe.back {
            for &r in &varying_regs {
                let guess = match (b.get(r), head.get(r), entry.get(r)) {
                    (Val::Int { p, w }, Val::Int { p: h, .. }, Val::Int { p: e, .. })
                        if !h.contains_atom(k) =>
                    {
                        p.subst(k, &km1)
                            .filter(|g| {
                                g.subst(k, &zero).is_some_and(|g0| {
                                    entry.facts.equal_zero(&g0.sub(e).unwrap_or_default())
                                        && g0.sub(e).is_some()
                                })
                            })
                            .map(|g| Val::Int { p: g, w: *w })
                    }
                    (
                        Val::Ptr { param, off },
                        Val::Ptr { param: hp, off: h },
                        Val::Ptr { param: ep, off: e },
                    ) if param == hp && param == ep && !h.contains_atom(k) => off
                        .subst(k, &km1)
                        .filter(|g| {
                            g.subst(k, &zero).is_some_and(|g0| {
                                entry.facts.equal_zero(&g0.sub(e).unwrap_or_default())
                                    && g0.sub(e).is_some()
                            })
                        })
                        .map(|g| Val::Ptr {
                            param: *param,
                            off: g,
                        }),
                    _ => None,
                };
                if let Some(v) = guess
                    && head.get(r) != &v
                {
                    values.push((r, v));
                }
            }
        }
        // A candidate or closed form may speak of `k`, which the shifts rename, and of values
        // fixed for the whole loop; of nothing else. The shifts leave every other atom as it
        // is, yet one computed in the body names a new value each iteration (the same
        // instruction re-run gets the same atom), as does a header value or a quotient of
        // either: a fact assumed at the head about such an atom is a fact about the last
        // iteration's value, and would bind the one the body computes anew.
        let own = |this: &Self, p: &Poly, memo: &mut HashMap<Atom, bool>| {
            p.atoms()
                .any(|a| a != k && scope.varies(&this.atoms, a, memo))
        };
        cands.retain(|c| !own(self, c, &mut memo));
        values.retain(|(_, v)| match v {
            Val::Int { p, .. } => !own(self, p, &mut memo),
            Val::Ptr { off, .. } => !own(self, off, &mut memo),
            _ => false,
        });
        let mut kept: Vec<Poly> = Vec::new();
        for c in cands {
            if let Some(at0) = c.subst(k, &zero)
                && self.prove(&entry.facts, &at0)
                && !kept.contains(&c)
            {
                kept.push(c);
            }
        }
        // Refinement to a fixed point: each round keeps the candidates the back edge
        // re-establishes while all of them are assumed, so the round that drops none has
        // proven every one it kept (they hold on entry, and each iteration that starts with
        // all of them ends with all of them); a round that drops some proved the rest only
        // under the dropped ones, and must be followed by another. Each such round drops at
        // least one, so there are at most as many rounds as candidates, plus the one that
        // settles. Whatever stops the rounds before that (the work limit) leaves nothing
        // assumed.
        let kp1 = kp.add_const(1).unwrap_or_default();
        let mut settled = false;
        while !settled && !self.too_complex {
            if kept.is_empty() && values.is_empty() {
                settled = true;
                break;
            }
            let out = run_with(self, &kept, &values, false);
            let Some(b) = out.back else {
                // No iteration that starts with every candidate returns to the header: the
                // header is entered once, on entry, where they all hold.
                settled = true;
                break;
            };
            let before = kept.len() + values.len();
            values.retain(|(r, v)| {
                let next = match v {
                    Val::Int { p, w } => p.subst(k, &kp1).map(|p| Val::Int { p, w: *w }),
                    Val::Ptr { param, off } => off
                        .subst(k, &kp1)
                        .map(|off| Val::Ptr { param: *param, off }),
                    _ => None,
                };
                match (next, b.get(*r)) {
                    (Some(Val::Int { p, .. }), Val::Int { p: q, .. }) => {
                        p.sub(q).is_some_and(|d| b.facts.equal_zero(&d))
                    }
                    (Some(Val::Ptr { param, off }), Val::Ptr { param: p2, off: o2 }) => {
                        param == *p2 && off.sub(o2).is_some_and(|d| b.facts.equal_zero(&d))
                    }
                    _ => false,
                }
            });
            let mut next = Vec::with_capacity(before);
            for c in kept {
                if let Some(shifted) = c.subst(k, &kp1)
                    && self.prove(&b.facts, &shifted)
                {
                    next.push(c);
                }
            }
            kept = next;
            settled = kept.len() + values.len() == before;
        }
        if !settled {
            kept.clear();
            values.clear();
        }
        if final_run && grid {
            self.grid_stride = true;
        }
        let outer = self.in_grid_loop;
        self.in_grid_loop |= final_run && grid;
        let exits = run_with(self, &kept, &values, final_run).exits;
        self.in_grid_loop = outer;
        exits
    }
}

/// What belongs to one loop: enough to tell the atoms that name a new value in each of its
/// iterations from those fixed while it runs.
struct Scope {
    /// The first atom id the loop's first analysis could create.
    mark: Atom,
    /// The iteration counter.
    k: Atom,
    /// Instruction ranges of the loop's blocks.
    insts: Vec<(usize, usize)>,
    blocks: HashSet<usize>,
    /// The loop's index and those of the loops inside it.
    loops: HashSet<u32>,
}

impl Scope {
    /// Whether atom `a` may name a different value in different iterations of the loop.
    ///
    /// An atom made before the loop was first analyzed comes from the launch or from an
    /// instruction outside the loop (its blocks are entered only through the header, so none
    /// of its instructions ran before). A keyed atom names the last value of what its key
    /// stands for: an instruction, a join at a block, a header value or counter of a loop;
    /// the ones inside this loop (nested loops included) run anew each iteration, the others
    /// not at all while it runs. A floor or remainder is keyed by its operands, a function of
    /// them: it varies if they do. Anything else made since the mark is taken to vary, and `k`
    /// varies. Over-approximating only loses proofs.
    fn varies(&self, atoms: &Atoms, a: Atom, memo: &mut HashMap<Atom, bool>) -> bool {
        if a == self.k {
            return true;
        }
        if a < self.mark {
            return false;
        }
        if let Some(&v) = memo.get(&a) {
            return v;
        }
        let v = match atoms.operands(a) {
            // The operands of a floor or remainder exist before it: the recursion ends.
            Some((num, den)) => num
                .atoms()
                .chain(den.atoms())
                .any(|x| x >= a || self.varies(atoms, x, memo)),
            None => match atoms.info(a).and_then(|i| i.key) {
                Some((1 | 4, idx, _)) => {
                    let idx = idx as usize;
                    self.insts.iter().any(|&(s, e)| (s..e).contains(&idx))
                }
                // Joins are keyed by `2·block + edge`.
                Some((3, x, _)) => self.blocks.contains(&((x / 2) as usize)),
                Some((2 | 5 | 6, li, _)) => self.loops.contains(&li),
                _ => true,
            },
        };
        memo.insert(a, v);
        v
    }
}

fn is_grid_step(d: &Poly) -> bool {
    match d.terms() {
        [(m, c)] => *c >= 1 && m.atoms() == [S],
        _ => false,
    }
}

/// Registers an instruction writes.
pub(crate) fn defs(kind: &Kind) -> Vec<Reg> {
    match kind {
        Kind::Mov { d, .. }
        | Kind::Int { d, .. }
        | Kind::Cvt { d, .. }
        | Kind::Selp { d, .. }
        | Kind::Pred { d, .. }
        | Kind::LdKParam { d, .. }
        | Kind::SharedAddr { d, .. }
        | Kind::LocalCvta { d, .. } => vec![*d],
        Kind::Setp { d, d2, .. } => {
            let mut v = vec![*d];
            v.extend(d2.iter().copied());
            v
        }
        Kind::Mem { dests, .. } => dests.clone(),
        Kind::Opaque { dests, preds, .. } => dests.iter().chain(preds).copied().collect(),
        Kind::Fresh { d, .. } => vec![*d],
        Kind::Bra { .. } | Kind::Ret | Kind::Refuse { .. } | Kind::Nop | Kind::SharedDecl => {
            Vec::new()
        }
    }
}

/// The initial state: every register undefined, launch facts assumed.
pub(crate) fn initial_state(num_regs: u32, facts: Facts) -> State {
    State {
        regs: vec![Val::Undef; num_regs as usize],
        facts,
    }
}
