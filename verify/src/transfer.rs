//! The abstract semantics of one instruction, branch refinement, and the join of values.

use super::analyze::{Analyzer, Outcome};
use super::atoms::{AtomKind, CTAID, INF, NCTAID, NTID, TID};
use super::contract::ParamContract;
use super::facts::{Fact, Facts, Tags};
use super::ir::{Cmp, GENERIC, Ins, IntOp, Kind, PredOp, SHARED_BASE, Src, VarSpace};
use super::poly::{Poly, gcd};
use super::proof::GuardParam;
use super::reject::RejectKind;
use super::value::{PredVal, State, Val};

pub(crate) fn signed_range(w: u8) -> (i128, i128) {
    let half = 1i128 << (w.clamp(1, 64) - 1);
    (-half, half - 1)
}

pub(crate) fn unsigned_range(w: u8) -> (i128, i128) {
    (0, (1i128 << w.clamp(1, 64)) - 1)
}

/// The value of immediate bits at width `w`, read as signed.
fn imm_value(bits: u64, w: u8) -> i128 {
    let w = w.clamp(1, 64);
    let masked = if w >= 64 {
        bits
    } else {
        bits & ((1u64 << w) - 1)
    };
    let v = i128::from(masked);
    if masked >> (w - 1) & 1 == 1 {
        v - (1i128 << w)
    } else {
        v
    }
}

impl Analyzer<'_> {
    /// `lo ≤ p ≤ hi` on this path.
    pub(crate) fn fits(&mut self, facts: &Facts, p: &Poly, (lo, hi): (i128, i128)) -> bool {
        if self.optimistic {
            return true;
        }
        let (Some(a), Some(b)) = (p.add_const(-lo), p.neg().and_then(|n| n.add_const(hi))) else {
            return false;
        };
        self.prove(facts, &a) && (self.prove(facts, &b) || self.below_an_extent(facts, p, hi))
    }

    /// `p ≤ hi` by way of a declared extent `E`: `p ≤ E − 1` and `E − 1 ≤ hi` (the second a
    /// launch condition's bound on every extent, where the proof assumes one). An index below
    /// the extent it addresses reads exactly at a width the extent fits, though the two steps
    /// together are more than one proof search finds. Tried for `int` reads, with the extents
    /// that share a parameter with `p`.
    fn below_an_extent(&mut self, facts: &Facts, p: &Poly, hi: i128) -> bool {
        let params = |q: &Poly| -> Vec<super::poly::Atom> {
            q.atoms()
                .filter(|&a| {
                    matches!(
                        self.atoms.info(a).map(|i| &i.kind),
                        Some(AtomKind::Param(_))
                    )
                })
                .collect()
        };
        // Signed 32 bits only: below 2^32 an extent's weaker condition would serve, and the
        // search may find the stricter one first.
        let mine = params(p);
        if hi != (1 << 31) - 1 || mine.is_empty() {
            return false;
        }
        let extents: Vec<Poly> = self
            .declared
            .iter()
            .flatten()
            .filter(|e| params(e).iter().any(|a| mine.contains(a)))
            .cloned()
            .collect();
        let p = facts.normalize(p).unwrap_or_else(|| p.clone());
        extents.iter().any(|e| {
            let (Some(inside), Some(capped)) = (
                e.add_const(-1).and_then(|x| x.sub(&p)),
                e.neg().and_then(|x| x.add_const(hi + 1)),
            ) else {
                return false;
            };
            // The conditions a failed attempt's first half used are not the proof's.
            let used = self.used_tags;
            let held = self.prove(facts, &capped) && self.prove(facts, &inside);
            if !held {
                self.used_tags = used;
            }
            held
        })
    }

    pub(crate) fn prove(&mut self, facts: &Facts, g: &Poly) -> bool {
        let found = facts.prove(&self.atoms, g, &std::cell::Cell::new(0));
        self.use_tags(found)
    }

    /// [`Analyzer::prove`] of an access's bound (see [`Facts::prove_access`]).
    pub(crate) fn prove_access(&mut self, facts: &Facts, g: &Poly) -> bool {
        let found = facts.prove_access(&self.atoms, g, &std::cell::Cell::new(0));
        self.use_tags(found)
    }

    /// Whether a proof was `found`, keeping the condition tags it used.
    fn use_tags(&mut self, found: Option<Tags>) -> bool {
        if let Some(t) = found {
            self.used_tags |= t;
        }
        found.is_some()
    }

    /// A fresh (or, for the same key, the same) opaque integer in `range`.
    pub(crate) fn opaque(&mut self, key: (u32, u32, u32), range: (i128, i128), wrap: bool) -> Poly {
        let a = self.atoms.keyed(key, AtomKind::Opaque, range.0, range.1);
        self.atoms.set_range(a, range);
        if wrap {
            self.wrap_atoms.insert(a);
        }
        if self.reading_loaded {
            self.loaded_atoms.insert(a);
        }
        Poly::atom(a)
    }

    fn read(&mut self, st: &State, src: Src, w: u8, key: (u32, u32, u32)) -> Val {
        if let Src::Reg(r) = src
            && let Val::Int { p, .. } = st.get(r)
            && p.atoms().any(|a| self.loaded_atoms.contains(&a))
        {
            self.reading_loaded = true;
        }
        match src {
            Src::Imm(bits) => Val::Int {
                p: Poly::constant(imm_value(bits, w)),
                w,
            },
            Src::Special(code) => {
                let (group, dim) = (code / 3, code % 3);
                let p = if dim == 0 {
                    Poly::atom([TID, NTID, CTAID, NCTAID][usize::from(group.min(3))])
                } else if let Some(a) = self.atoms.axis_atom(group.min(3), dim) {
                    // A three-dimensional launch: y and z are symbols like x.
                    Poly::atom(a)
                } else {
                    // Launches are one-dimensional.
                    Poly::constant(if group == 1 || group == 3 { 1 } else { 0 })
                };
                Val::Int { p, w: 32 }
            }
            Src::Reg(r) => match st.get(r) {
                Val::Int { p, w: w0 } if *w0 < w => {
                    // The upper bits were never defined at this width.
                    let _ = p;
                    Val::Int {
                        p: self.opaque(key, unsigned_range(w), false),
                        w,
                    }
                }
                Val::Undef => Val::Int {
                    p: self.opaque(key, unsigned_range(w), false),
                    w,
                },
                // An `or` of parts read wider than it was written: its upper bits are not the
                // `or` of the parts' (a 32-bit `or` read by a 64-bit `and`).
                Val::OrOf(_, w0) | Val::HiTest(_, w0, _) if *w0 < w => Val::Int {
                    p: self.opaque(key, unsigned_range(w), false),
                    w,
                },
                other => other.clone(),
            },
        }
    }

    /// The operand `src` of an order comparison at width `w`, whose value `v` is a polynomial
    /// that may not read exactly at that width (a 32-bit `mad.lo` of a masked block index
    /// that may wrap): the register holds *some* `w`-bit number, which the comparison reads
    /// signed or unsigned. A fresh number of that range stands for it from here on — in the
    /// register too, so that what the comparison learns of it holds of every later read (a
    /// read of the other signedness does not fit its range and stays unknown). A value that
    /// fits is kept, with every relation it has, and so is one carried around a loop. With the
    /// value read: how it stands to the exact number ([`Reading`]).
    ///
    /// The bits are `p − k·2^w` for an integer `k`: `k ≥ 0` where `p` is proven `≥ lo` (it can
    /// wrap only downward, so the bits are at most `p`), `k ≤ 0` where `p ≤ hi`. So a test
    /// against a bound that may wrap still bounds what it tests from one side: `z <
    /// (ne02 · ne03 mod 2^32)`, unsigned, is `z < ne02 · ne03` for sizes `≥ 0`.
    fn compared_bits(
        &mut self,
        st: &mut State,
        src: Src,
        v: Val,
        w: u8,
        signed: bool,
        key: (u32, u32, u32),
    ) -> (Val, Reading) {
        let range = if signed {
            signed_range(w)
        } else {
            unsigned_range(w)
        };
        let (Src::Reg(r), Val::Int { p, w: held }) = (src, &v) else {
            // An immediate is its own bits where it is a number of the range.
            let exact = matches!(&v, Val::Int { p, .. }
                if p.as_const().is_some_and(|c| (range.0..=range.1).contains(&c)));
            let reading = if exact {
                Reading::Exact
            } else {
                Reading::Unchecked
            };
            return (v, reading);
        };
        // A value carried around a loop is left as it is: its relations (the induction the
        // loop's exit test needs) are worth more than a bound on a fresh number, and it may
        // read exactly once the loop's invariants are known.
        let carried = p.atoms().any(|a| self.atoms.loop_carried(a));
        if *held != w || carried {
            return (v, Reading::Unchecked);
        }
        if self.fits(&st.facts, p, range) {
            return (v, Reading::Exact);
        }
        let exact = p.clone();
        let (lo, hi) = range;
        let side = if exact
            .add_const(-lo)
            .is_some_and(|x| self.prove(&st.facts, &x))
        {
            Reading::AtMost(exact)
        } else if exact
            .neg()
            .and_then(|n| n.add_const(hi))
            .is_some_and(|x| self.prove(&st.facts, &x))
        {
            Reading::AtLeast(exact)
        } else {
            Reading::Bits
        };
        let bits = Val::Int {
            p: self.opaque(key, range, true),
            w,
        };
        st.set(r, bits.clone());
        (bits, side)
    }

    /// `v` written at width `w`: its low `w` bits.
    fn narrow(&mut self, v: Val, w: u8, key: (u32, u32, u32)) -> Val {
        match v {
            Val::Int { p, w: w0 } => Val::Int { p, w: w0.min(w) },
            // Fewer than 64 bits of an address are no address: the register holds its low
            // half (or less), another number entirely.
            Val::Ptr { .. } | Val::PtrData { .. } if w < 64 => Val::Wild,
            // The `or` of parts is kept whole only at its own width.
            Val::OrOf(_, w0) | Val::HiTest(_, w0, _) if w < w0 => Val::Int {
                p: self.opaque(key, unsigned_range(w), false),
                w,
            },
            other => other,
        }
    }

    fn read_raw(&self, st: &State, src: Src) -> Option<Val> {
        match src {
            Src::Reg(r) => Some(st.get(r).clone()),
            _ => None,
        }
    }

    /// Executes one instruction; `idx` is its index in the body.
    pub(crate) fn exec(
        &mut self,
        st: &mut State,
        idx: usize,
        ins: &Ins,
        final_run: bool,
    ) -> Outcome {
        let key = |n: u32| (1, idx as u32, n);
        self.reading_loaded = false;
        match &ins.kind {
            Kind::Nop | Kind::Bra { .. } => Outcome::Continue,
            Kind::Ret => Outcome::Stop,
            Kind::Refuse { reason, unknown } => {
                if final_run {
                    let kind = if *unknown {
                        RejectKind::UnknownForm
                    } else {
                        RejectKind::Unsupported
                    };
                    self.reject(idx, kind, reason.to_string());
                }
                Outcome::Stop
            }
            Kind::Fresh { d, lo, hi, w } => {
                let v = Val::Int {
                    p: self.opaque(key(0), (*lo, *hi), false),
                    w: *w,
                };
                st.set(*d, v);
                Outcome::Continue
            }
            Kind::SharedDecl => {
                if self.contract.three_dimensional() {
                    return Outcome::Continue;
                }
                if final_run {
                    self.reject_unsupported(idx, "shared memory is not verified");
                }
                Outcome::Stop
            }
            Kind::SharedAddr { d, var } => {
                // Only a custom contract's launches carry the shared size its bounds need;
                // elsewhere a shared address is an integer no access may use, as before. A
                // thread's `.local` frame and a module table have a size of their own.
                let shared = self
                    .body
                    .shared
                    .get(*var as usize)
                    .is_none_or(|v| v.space == VarSpace::Shared);
                let v = if !shared || self.contract.three_dimensional() {
                    Val::Ptr {
                        param: SHARED_BASE + *var,
                        off: Poly::zero(),
                    }
                } else {
                    Val::Int {
                        p: self.opaque(key(0), (-(1i128 << 63), (1i128 << 64) - 1), false),
                        w: 64,
                    }
                };
                st.set(*d, v);
                Outcome::Continue
            }
            Kind::LocalCvta { d, a, to_generic } => {
                // The generic and the local-space address of a `.local` variable are different
                // numbers; `cvta` turns the one into the other and anything else into no
                // address.
                let v = match self.read_raw(st, *a) {
                    Some(Val::Ptr { param, off }) => {
                        let local = param
                            .checked_sub(SHARED_BASE)
                            .map(|v| v & !GENERIC)
                            .and_then(|v| self.body.shared.get(v as usize))
                            .is_some_and(|v| v.space == VarSpace::Local);
                        let generic = param >= SHARED_BASE + GENERIC;
                        match (local, generic, *to_generic) {
                            (true, false, true) => Val::Ptr {
                                param: param + GENERIC,
                                off,
                            },
                            (true, true, false) => Val::Ptr {
                                param: param - GENERIC,
                                off,
                            },
                            _ => Val::Wild,
                        }
                    }
                    _ => Val::Wild,
                };
                st.set(*d, v);
                Outcome::Continue
            }
            Kind::Mov { d, a, w } => {
                let v = self.read(st, *a, *w, key(0));
                let v = self.narrow(v, *w, key(1));
                st.set(*d, v);
                Outcome::Continue
            }
            Kind::LdKParam {
                d,
                index,
                offset,
                bytes,
            } => {
                let v = self.load_param(*index, *offset, *bytes, key(0));
                st.set(*d, v);
                Outcome::Continue
            }
            Kind::Cvt {
                d,
                a,
                dw,
                sw,
                ssigned,
            } => {
                let v = self.read(st, *a, *sw, key(1));
                let out = match v {
                    Val::Int { p, .. } if dw <= sw => Val::Int { p, w: *dw },
                    Val::Int { p, .. } => {
                        let range = if *ssigned {
                            signed_range(*sw)
                        } else {
                            unsigned_range(*sw)
                        };
                        if self.fits(&st.facts, &p, range) {
                            Val::Int { p, w: *dw }
                        } else {
                            Val::Int {
                                p: self.opaque(key(0), range, true),
                                w: *dw,
                            }
                        }
                    }
                    Val::Ptr { .. } | Val::PtrData { .. } | Val::Wild => Val::Wild,
                    Val::Data => Val::Data,
                    // An `or` of parts (or its high-word test) converted is a number of the
                    // source's width, no longer the `or` of the parts as the 64-bit test reads
                    // them: a negative 32-bit part zero-extended is below 2^32.
                    Val::OrOf(..) | Val::HiTest(..) | Val::Pred(_) | Val::Undef => {
                        let range = if *ssigned {
                            signed_range(*sw)
                        } else {
                            unsigned_range(*sw)
                        };
                        Val::Int {
                            p: self.opaque(key(2), range, false),
                            w: *dw,
                        }
                    }
                };
                st.set(*d, out);
                Outcome::Continue
            }
            Kind::Int {
                op,
                d,
                a,
                b,
                c,
                w,
                signed,
            } => {
                let out = self.int_op(st, idx, *op, *a, *b, *c, *w, *signed);
                st.set(*d, out);
                Outcome::Continue
            }
            Kind::Setp {
                d,
                d2,
                cmp,
                w,
                signed,
                a,
                b,
                combine,
            } => {
                let va = self.read(st, *a, *w, key(0));
                let vb = self.read(st, *b, *w, key(1));
                let ((va, exact_a), (vb, exact_b)) =
                    if matches!(cmp, Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge) {
                        (
                            self.compared_bits(st, *a, va, *w, *signed, key(2)),
                            self.compared_bits(st, *b, vb, *w, *signed, key(3)),
                        )
                    } else {
                        ((va, Reading::Unchecked), (vb, Reading::Unchecked))
                    };
                let t = match (&va, &vb, cmp) {
                    (Val::HiTest(list, hw, k), Val::Int { p, .. }, Cmp::Eq | Cmp::Ne)
                        if p.is_zero() && hw == w =>
                    {
                        PredVal::HiZero(list.clone(), *cmp == Cmp::Eq, *hw, *k)
                    }
                    (Val::Int { p: pa, .. }, Val::Int { p: pb, .. }, _) => {
                        let t = PredVal::Cmp {
                            cmp: *cmp,
                            signed: *signed,
                            w: *w,
                            a: pa.clone(),
                            b: pb.clone(),
                        };
                        let facts = [false, true].map(|truth| {
                            let cmp = if truth { *cmp } else { cmp.negate() };
                            exact_order(cmp, (pa, &exact_a), (pb, &exact_b))
                        });
                        if facts.iter().any(Option::is_some) {
                            PredVal::Learns(Box::new(t), Box::new(facts))
                        } else {
                            t
                        }
                    }
                    _ => PredVal::Unknown,
                };
                // `setp.CMP.OP p|q, a, b, c`: `p = t OP c`, `q = !t OP c` (the ISA's
                // definition: the complement is taken before combining), written in that
                // order, so that in `p|p` the second write is the one that stays.
                let (p, q) = match combine {
                    None => (t.clone(), t.not()),
                    Some((op, r, neg)) => {
                        let other = match st.get(*r) {
                            Val::Pred(p) => p.clone(),
                            _ => PredVal::Unknown,
                        };
                        let other = if *neg { other.not() } else { other };
                        let with = |x: PredVal| match op {
                            PredOp::And => PredVal::and(x, other.clone()),
                            PredOp::Or => PredVal::or(x, other.clone()),
                            _ => PredVal::Unknown,
                        };
                        (with(t.clone()), with(t.not()))
                    }
                };
                st.set(*d, Val::Pred(p));
                if let Some(d2) = d2 {
                    st.set(*d2, Val::Pred(q));
                }
                Outcome::Continue
            }
            Kind::Pred { op, d, a, a_neg, b } => {
                let get = |st: &State, r: u32, neg: bool| {
                    let p = match st.get(r) {
                        Val::Pred(p) => p.clone(),
                        _ => PredVal::Unknown,
                    };
                    if neg { p.not() } else { p }
                };
                let pa = get(st, *a, *a_neg);
                let pb = b.map(|(r, n)| get(st, r, n));
                let out = match (op, pb) {
                    (PredOp::Mov, _) => pa,
                    (PredOp::Not, _) => pa.not(),
                    (PredOp::And, Some(pb)) => PredVal::and(pa, pb),
                    (PredOp::Or, Some(pb)) => PredVal::or(pa, pb),
                    _ => PredVal::Unknown,
                };
                st.set(*d, Val::Pred(out));
                Outcome::Continue
            }
            Kind::Selp { d, a, b, p, neg, w } => {
                let va = self.read(st, *a, *w, key(0));
                let vb = self.read(st, *b, *w, key(1));
                let _ = (p, neg);
                let mut extra = Vec::new();
                let out = self.join_val(&va, &vb, &st.facts, &st.facts, key(2), &mut extra);
                for f in extra {
                    st.facts.assume(&self.atoms, &f.p, f.tags);
                }
                let out = self.narrow(out, *w, key(3));
                st.set(*d, out);
                Outcome::Continue
            }
            Kind::Opaque { dests, preds, srcs } => {
                let mut data = false;
                let mut wild = false;
                for s in srcs {
                    match self.read_raw(st, *s) {
                        Some(Val::Data | Val::PtrData { .. }) => data = true,
                        Some(Val::Ptr { .. } | Val::Wild) => wild = true,
                        _ => {}
                    }
                }
                for p in preds {
                    st.set(*p, Val::Pred(PredVal::Unknown));
                }
                for (n, dst) in dests.iter().enumerate() {
                    let v = if data {
                        Val::Data
                    } else if wild {
                        Val::Wild
                    } else {
                        Val::Int {
                            p: self.opaque(
                                key(n as u32),
                                (-(1i128 << 63), (1i128 << 64) - 1),
                                false,
                            ),
                            w: 64,
                        }
                    };
                    st.set(*dst, v);
                }
                Outcome::Continue
            }
            Kind::Mem { .. } => {
                self.access(st, idx, ins, final_run);
                if let Kind::Mem { dests, value, .. } = &ins.kind {
                    for (n, dst) in dests.iter().enumerate() {
                        // A loaded integer is some number of its type: a fresh one each time
                        // the load runs (keyed by the instruction, so it varies in a loop),
                        // which what the kernel tests of it then bounds.
                        let v = match *value {
                            Some((w, signed)) => {
                                let range = if signed {
                                    signed_range(w)
                                } else {
                                    unsigned_range(w)
                                };
                                self.reading_loaded = true;
                                Val::Int {
                                    p: self.opaque(key(n as u32), range, false),
                                    w,
                                }
                            }
                            None => Val::Data,
                        };
                        st.set(*dst, v);
                    }
                }
                Outcome::Continue
            }
        }
    }

    fn load_param(&mut self, index: u32, offset: i64, bytes: u32, key: (u32, u32, u32)) -> Val {
        let w = (bytes.min(8) * 8) as u8;
        let Some(role) = self.contract.params.get(index as usize) else {
            return Val::Wild;
        };
        match role {
            ParamContract::Pointer { .. } => {
                if offset == 0 && bytes == 8 {
                    Val::Ptr {
                        param: index,
                        off: Poly::zero(),
                    }
                } else {
                    Val::Wild
                }
            }
            ParamContract::Value | ParamContract::Guard(GuardParam::Tag(_)) => Val::Data,
            ParamContract::Guard(GuardParam::FaultRecord) => {
                if offset == 0 && bytes == 8 {
                    Val::Ptr {
                        param: index,
                        off: Poly::zero(),
                    }
                } else {
                    Val::Wild
                }
            }
            // A limit is a symbol of its own, bounded by the facts the attempt assumes of it.
            ParamContract::Guard(GuardParam::Limit { .. }) => {
                match self.param_atoms.get(index as usize).copied().flatten() {
                    Some(a) if offset == 0 && bytes == 8 => Val::Int {
                        p: Poly::atom(a),
                        w: 64,
                    },
                    _ => Val::Int {
                        p: self.opaque(key, unsigned_range(w), false),
                        w,
                    },
                }
            }
            ParamContract::Int { bits, .. } => {
                // A load at an offset, or wider than the param, reads bytes that are not its
                // value: known only by their width.
                if offset != 0 || u32::from(*bits) < bytes * 8 {
                    return Val::Int {
                        p: self.opaque(key, unsigned_range(w), false),
                        w,
                    };
                }
                // Narrower or exact: the low `w` bits are those of the value.
                let p = match self.param_atoms.get(index as usize).copied().flatten() {
                    Some(a) => Poly::atom(a),
                    None => self.opaque(key, unsigned_range(w), false),
                };
                Val::Int { p, w }
            }
            ParamContract::Count | ParamContract::Shape { .. } | ParamContract::Stride { .. } => {
                if offset != 0 {
                    return Val::Int {
                        p: self.opaque(key, unsigned_range(w), false),
                        w,
                    };
                }
                let p = if matches!(role, ParamContract::Count) {
                    self.atoms.count.clone().unwrap_or_default()
                } else {
                    self.param_atoms
                        .get(index as usize)
                        .copied()
                        .flatten()
                        .map(Poly::atom)
                        .unwrap_or_default()
                };
                Val::Int { p, w }
            }
        }
    }

    fn as_int(&mut self, v: Val, w: u8, key: (u32, u32, u32)) -> Result<Poly, Val> {
        match v {
            Val::Int { p, .. } => Ok(p),
            Val::Data => Err(Val::Data),
            Val::PtrData { param } => Err(Val::PtrData { param }),
            Val::Ptr { .. } | Val::Wild => Err(Val::Wild),
            Val::Pred(_) => Err(Val::Wild),
            _ => Ok(self.opaque(key, unsigned_range(w), false)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn int_op(
        &mut self,
        st: &mut State,
        idx: usize,
        op: IntOp,
        a: Src,
        b: Option<Src>,
        c: Option<Src>,
        w: u8,
        signed: bool,
    ) -> Val {
        let key = |n: u32| (1, idx as u32, n);
        let va = self.read(st, a, w, key(10));
        let vb = b.map(|b| {
            self.read(
                st,
                b,
                if matches!(op, IntOp::Shl | IntOp::Shr) {
                    32
                } else {
                    w
                },
                key(11),
            )
        });
        let dw = if matches!(op, IntOp::MulWide | IntOp::MadWide) {
            w.saturating_mul(2).min(64)
        } else {
            w
        };
        let vc = c.map(|c| self.read(st, c, dw, key(12)));
        // An `or` added to a pointer is some offset of it: the address keeps its provenance,
        // its bounds unproven, whatever the `or` was.
        let pointer = |v: &Val| matches!(v, Val::Ptr { .. } | Val::PtrData { .. });
        let or = |v: &Val| matches!(v, Val::OrOf(..) | Val::HiTest(..));
        let (va, vb) = match (op, va, vb) {
            (IntOp::Add | IntOp::Sub, va, Some(vb)) if pointer(&va) && or(&vb) => {
                let p = self.opaque(key(13), unsigned_range(w), false);
                (va, Some(Val::Int { p, w }))
            }
            (IntOp::Add, va, Some(vb)) if or(&va) && pointer(&vb) => {
                let p = self.opaque(key(13), unsigned_range(w), false);
                (Val::Int { p, w }, Some(vb))
            }
            (_, va, vb) => (va, vb),
        };
        // Pointer arithmetic: at 64 bits. Narrower, the sum is the low part of an address, no
        // address at all (the difference of two pointers is exact at any width).
        if let (IntOp::Add | IntOp::Sub, Some(vb)) = (op, &vb) {
            let difference = matches!((&va, vb), (Val::Ptr { param: p1, .. }, Val::Ptr { param: p2, .. }) if op == IntOp::Sub && p1 == p2);
            if w < 64 && !difference && (pointer(&va) || pointer(vb)) {
                return Val::Wild;
            }
            match (&va, vb) {
                (Val::Ptr { param, off }, Val::Int { p, .. }) => {
                    let off = if op == IntOp::Add {
                        off.add(p)
                    } else {
                        off.sub(p)
                    };
                    return off.map_or(Val::Wild, |off| Val::Ptr { param: *param, off });
                }
                (Val::Int { p, .. }, Val::Ptr { param, off }) if op == IntOp::Add => {
                    return off
                        .add(p)
                        .map_or(Val::Wild, |off| Val::Ptr { param: *param, off });
                }
                // An address at a data-dependent offset less its own operand's base: the offset,
                // some `w`-bit number (what the data made it), read unsigned.
                (Val::PtrData { param: p1 }, Val::Ptr { param: p2, .. })
                    if op == IntOp::Sub && p1 == p2 =>
                {
                    return Val::Int {
                        p: self.opaque(key(23), unsigned_range(w), false),
                        w,
                    };
                }
                (Val::Ptr { param, .. } | Val::PtrData { param }, Val::Data)
                | (Val::Data | Val::PtrData { .. }, Val::Ptr { param, .. })
                | (Val::PtrData { param }, Val::Int { .. } | Val::PtrData { .. }) => {
                    return Val::PtrData { param: *param };
                }
                (Val::Int { .. }, Val::PtrData { param }) => return Val::PtrData { param: *param },
                (Val::Ptr { param: p1, off: o1 }, Val::Ptr { param: p2, off: o2 })
                    if op == IntOp::Sub && p1 == p2 =>
                {
                    return o1.sub(o2).map_or(Val::Wild, |p| Val::Int { p, w });
                }
                _ => {}
            }
        }
        // `a | b` is `a + b` when no bit is set in both: `a` a multiple of 2^k (every
        // coefficient of its polynomial is, so its low k bits are zero at any width ≥ k) and
        // `b` in [0, 2^k). NVRTC writes `100·y + 3` as `or` on those grounds.
        if let (IntOp::Or, Some(vb)) = (op, &vb)
            && let (Val::Int { p: pa, .. }, Val::Int { p: pb, .. }) = (&va, vb)
            && let Some(sum) = self.disjoint_or(st, pa, pb, w)
        {
            return Val::Int { p: sum, w };
        }
        // The `or` of parts is kept for the range test `(a | b) & −2^k == 0` at its own width
        // (NVRTC's high-word test of 64-bit division, `(i − 1 | j − 1) & −32` of a 2-D stencil),
        // each part read at that width: a register of another width (a 32-bit `or` read by a
        // 64-bit `and`) is some number of the reader's width.
        if let (IntOp::Or, Some(vb), 32 | 64) = (op, &vb, w) {
            let part = |v: &Val| -> Option<Vec<Poly>> {
                match v {
                    Val::Int { p, .. } => Some(vec![p.clone()]),
                    Val::OrOf(list, w0) if *w0 == w => Some(list.clone()),
                    _ => None,
                }
            };
            if let (Some(mut x), Some(y)) = (part(&va), part(vb)) {
                if y.iter().all(|p| p.is_zero()) {
                    if let [only] = x.as_slice() {
                        return Val::Int { p: only.clone(), w };
                    }
                } else {
                    x.extend(y);
                    return Val::OrOf(x, w);
                }
            }
        }
        if let (IntOp::And, Some(Val::Int { p: mask, .. }), Val::OrOf(list, w0)) = (op, &vb, &va)
            && *w0 == w
            && let Some(m) = mask.as_const()
            && m < 0
            && (-m).count_ones() == 1
            && (-m).trailing_zeros() < u32::from(w)
        {
            return Val::HiTest(list.clone(), w, (-m).trailing_zeros() as u8);
        }
        let pa = match self.as_int(va, w, key(20)) {
            Ok(p) => p,
            Err(v) => return v,
        };
        let pb = match vb.map(|v| self.as_int(v, w, key(21))) {
            Some(Ok(p)) => Some(p),
            Some(Err(v)) => return v,
            None => None,
        };
        let pc = match vc.map(|v| self.as_int(v, dw, key(22))) {
            Some(Ok(p)) => Some(p),
            Some(Err(v)) => return v,
            None => None,
        };
        let range = if signed {
            signed_range(w)
        } else {
            unsigned_range(w)
        };
        let canon = |this: &Self, p: Option<Poly>| p.and_then(|p| this.atoms.canon(&p));
        let unknown = |this: &mut Self, r: (i128, i128)| Val::Int {
            p: this.opaque(key(0), r, false),
            w: dw,
        };
        let full = (-(1i128 << 63), (1i128 << 64) - 1);
        let result: Option<Poly> = match (op, pb.as_ref()) {
            (IntOp::Add, Some(pb)) => canon(self, pa.add(pb)),
            (IntOp::Sub, Some(pb)) => canon(self, pa.sub(pb)),
            (IntOp::MulLo, Some(pb)) => canon(self, pa.mul(pb)),
            (IntOp::MadLo, Some(pb)) => canon(self, pa.mul(pb).and_then(|x| x.add(pc.as_ref()?))),
            (IntOp::MulWide | IntOp::MadWide, Some(pb)) => {
                if self.fits(&st.facts, &pa, range) && self.fits(&st.facts, pb, range) {
                    let prod = pa.mul(pb);
                    let prod = if op == IntOp::MadWide {
                        prod.and_then(|x| x.add(pc.as_ref()?))
                    } else {
                        prod
                    };
                    canon(self, prod)
                } else {
                    return Val::Int {
                        p: self.opaque(key(0), full, true),
                        w: dw,
                    };
                }
            }
            (IntOp::Not, _) => pa.neg().and_then(|x| x.add_const(-1)),
            (IntOp::Neg, _) => pa.neg(),
            (IntOp::Shl, Some(pb)) => match pb.as_const() {
                Some(k) if (0..i128::from(w)).contains(&k) => pa.scale(1i128 << k),
                Some(_) => Some(Poly::zero()),
                None => None,
            },
            (IntOp::Shr, Some(pb)) => match pb.as_const() {
                Some(0) => Some(pa.clone()),
                Some(k) if (1..i128::from(w)).contains(&k) => {
                    self.shift_right(st, &pa, k as u32, w, signed)
                }
                _ => None,
            },
            (IntOp::Div, Some(pb)) => self.floor_div(st, idx, &pa, pb, range),
            (IntOp::Rem, Some(pb)) => self.remainder(st, idx, &pa, pb, range),
            (IntOp::And, Some(pb)) => match pb.as_const() {
                Some(m) if m > 0 && (m + 1) & m == 0 => self
                    .floor_div(st, idx, &pa, &Poly::constant(m + 1), unsigned_range(w))
                    .and_then(|f| pa.sub(&f.scale(m + 1)?)),
                Some(m) if m < 0 && (-m) & (-m - 1) == 0 => self
                    .floor_div(st, idx, &pa, &Poly::constant(-m), unsigned_range(w))
                    .and_then(|f| f.scale(-m)),
                // The result's zero bits include the mask's: below its lowest set bit `2^t`,
                // it is a multiple of `2^t` (`(4·tid) & 124`, a shared slot's byte offset).
                Some(m) if m > 0 && m.trailing_zeros() > 0 => {
                    let t = m.trailing_zeros();
                    self.opaque(key(0), (0, m >> t), false).scale(1i128 << t)
                }
                Some(m) if m >= 0 => return unknown(self, (0, m)),
                _ => None,
            },
            (IntOp::Xor, Some(pb)) => match self.xor_bits(st, &pa, pb, w) {
                Some(k) => return unknown(self, (0, (1i128 << k) - 1)),
                None => None,
            },
            (IntOp::Min | IntOp::Max, Some(pb)) => {
                if self.fits(&st.facts, &pa, range) && self.fits(&st.facts, pb, range) {
                    let ra = st.facts.range(&self.atoms, &pa);
                    let rb = st.facts.range(&self.atoms, pb);
                    let r = if op == IntOp::Min {
                        (ra.0.min(rb.0), ra.1.min(rb.1))
                    } else {
                        (ra.0.max(rb.0), ra.1.max(rb.1))
                    };
                    let m = self.opaque(key(0), r, false);
                    for x in [&pa, pb] {
                        let f = if op == IntOp::Min {
                            x.sub(&m)
                        } else {
                            m.sub(x)
                        };
                        if let Some(f) = f {
                            st.facts.assume(&self.atoms, &f, 0);
                        }
                    }
                    Some(m)
                } else {
                    None
                }
            }
            _ => None,
        };
        // `x − (x/d)·d` is the remainder.
        let result = result.map(|p| match self.atoms.rem_form(&p) {
            Some(r) => Poly::atom(r),
            None => p,
        });
        match result {
            Some(p) => Val::Int { p, w: dw },
            None => unknown(self, full),
        }
    }

    /// `a | b` as `a + b` when their bits cannot overlap at width `w`: one operand's
    /// polynomial has every coefficient (the constant included) a multiple of 2^k, k ≤ w, so
    /// its low k bits are zero modulo 2^w; the other lies in [0, 2^k), so it is its own low
    /// k bits and nothing above. Then the `or` sets exactly the bits the sum sets.
    fn disjoint_or(&mut self, st: &State, a: &Poly, b: &Poly, w: u8) -> Option<Poly> {
        for (hi, lo) in [(a, b), (b, a)] {
            let g = hi.terms().iter().fold(0, |g, t| gcd(g, t.1));
            let k = if g == 0 {
                u32::from(w)
            } else {
                g.trailing_zeros().min(u32::from(w))
            };
            if k == 0 {
                continue;
            }
            if self.fits(&st.facts, lo, (0, (1i128 << k) - 1)) {
                return hi.add(lo).and_then(|p| self.atoms.canon(&p));
            }
        }
        None
    }

    fn remainder(
        &mut self,
        st: &mut State,
        idx: usize,
        a: &Poly,
        d: &Poly,
        range: (i128, i128),
    ) -> Option<Poly> {
        let f = self.floor_div(st, idx, a, d, range)?;
        let f = f.as_atom()?;
        let a = st.facts.normalize(a)?;
        let d = st.facts.normalize(d)?;
        let (_, dhi) = st.facts.range(&self.atoms, &d);
        let (_, static_hi) = Facts::default().range(&self.atoms, &d);
        let (r, local) = self.atoms.rem(&a, &d, f, static_hi.saturating_sub(1))?;
        for p in local {
            st.facts.assume(&self.atoms, &p, 0);
        }
        st.facts.bound(r, 0, dhi.saturating_sub(1));
        Some(Poly::atom(r))
    }

    /// `a >> k` (arithmetic when `signed`) at width `w`, `1 ≤ k < w`.
    fn shift_right(
        &mut self,
        st: &mut State,
        a: &Poly,
        k: u32,
        w: u8,
        signed: bool,
    ) -> Option<Poly> {
        let a = st.facts.normalize(a)?;
        let den = 1i128 << k;
        // A constant is its low `w` bits, read as the shift reads them; both shifts floor
        // (the arithmetic one rounds toward −∞, the logical one sees a nonnegative number).
        if let Some(c) = a.as_const() {
            let modulus = 1i128 << w.clamp(1, 64);
            let mut v = c.rem_euclid(modulus);
            if signed && v >= modulus / 2 {
                v -= modulus;
            }
            return Some(Poly::constant(v.div_euclid(den)));
        }
        // Otherwise `a` must read exactly as a nonnegative number: then either shift is
        // `floor(a / 2^k)`. The divisor is not a register, so unlike `div` it needs no range
        // check (`2^63` is a fine divisor for `shr.s64 x, 63` though it is no `s64` value).
        let range = if signed {
            signed_range(w)
        } else {
            unsigned_range(w)
        };
        if !self.fits(&st.facts, &a, (0, range.1)) {
            return None;
        }
        if st.facts.range(&self.atoms, &a).1 < den {
            return Some(Poly::zero());
        }
        self.floor_atom(st, &a, &Poly::constant(den))
    }

    /// `floor(a / d)` as an atom when `a` and `d` read exactly in `range` and `d ≥ 1`, `a ≥ 0`.
    fn floor_div(
        &mut self,
        st: &mut State,
        idx: usize,
        a: &Poly,
        d: &Poly,
        range: (i128, i128),
    ) -> Option<Poly> {
        let _ = idx;
        let a = st.facts.normalize(a)?;
        let d = st.facts.normalize(d)?;
        if !self.fits(&st.facts, &a, (0, range.1)) || !self.fits(&st.facts, &d, (1, range.1)) {
            return None;
        }
        if d.as_const() == Some(1) {
            return Some(a);
        }
        if let Some(t) = self.grid_trip(&a, &d) {
            // floor(a / S) ≤ a for a ≥ 0, as for any other quotient below.
            if let Some(x) = a.sub(&t) {
                st.facts.assume(&self.atoms, &x, 0);
            }
            return Some(t);
        }
        self.floor_atom(st, &a, &d)
    }

    /// `floor(a / d)` as an atom; the caller has proven `a ≥ 0` and `d ≥ 1`.
    fn floor_atom(&mut self, st: &mut State, a: &Poly, d: &Poly) -> Option<Poly> {
        let (a, d) = (a.clone(), d.clone());
        let (_, hi) = st.facts.range(&self.atoms, &a);
        let (dlo, _) = st.facts.range(&self.atoms, &d);
        let hi = if dlo >= 1 { hi / dlo } else { hi };
        // The atom is keyed by its operands, so every path that computes this quotient shares
        // it: its range for all of them is only what holds everywhere it is defined, which is
        // nothing (elsewhere `a` may be negative). The bound this path's facts give (`≥ 0`
        // since `a ≥ 0` here; under a guard `a < 10`, at most 4) is this path's alone.
        let (f, local) = self.atoms.floor(&a, &d, -INF, INF)?;
        for p in local {
            st.facts.assume(&self.atoms, &p, 0);
        }
        st.facts.bound(f, 0, hi.min(INF));
        let fp = Poly::atom(f);
        if let Some(x) = a.sub(&fp) {
            st.facts.assume(&self.atoms, &x, 0);
        }
        Some(fp)
    }

    /// Refines `st` by `pred == truth`.
    pub(crate) fn refine(&mut self, st: &mut State, pred: &PredVal, truth: bool) {
        match pred {
            PredVal::Unknown => {}
            PredVal::Not(x) => self.refine(st, x, !truth),
            PredVal::And(x, y) if truth => {
                self.refine(st, x, true);
                self.refine(st, y, true);
            }
            PredVal::Or(x, y) if !truth => {
                self.refine(st, x, false);
                self.refine(st, y, false);
            }
            PredVal::And(..) | PredVal::Or(..) => {}
            PredVal::Learns(x, facts) => {
                self.refine(st, x, truth);
                if let Some(f) = &facts[usize::from(truth)] {
                    st.facts.assume(&self.atoms, f, 0);
                }
            }
            PredVal::HiZero(list, polarity, w, k) => {
                if truth != *polarity {
                    return;
                }
                // Each part reads below 2^k as an unsigned `w`-bit number. A part that reads
                // exactly as a signed or an unsigned `w`-bit number is then in [0, 2^k): a
                // negative one would read at least 2^(w−1) ≥ 2^k.
                for p in list {
                    if (self.fits(&st.facts, p, signed_range(*w))
                        || self.fits(&st.facts, p, unsigned_range(*w)))
                        && let Some(hi) = p.neg().and_then(|n| n.add_const((1i128 << *k) - 1))
                    {
                        st.facts.assume(&self.atoms, p, 0);
                        st.facts.assume(&self.atoms, &hi, 0);
                    }
                }
            }
            PredVal::Cmp {
                cmp,
                signed,
                w,
                a,
                b,
            } => {
                let cmp = if truth { *cmp } else { cmp.negate() };
                let range = if *signed {
                    signed_range(*w)
                } else {
                    unsigned_range(*w)
                };
                let (Some(a), Some(b)) = (st.facts.normalize(a), st.facts.normalize(b)) else {
                    return;
                };
                // Different bits are different numbers; any other conclusion needs both sides
                // to read exactly (no wrap). A probe for candidate invariants skips the check:
                // its facts are only guesses, proven later.
                //
                // Equal bits are equal numbers when the numbers are closer than 2^w: both are
                // exact modulo 2^w (a register read at width `w` holds a value at least that
                // wide, an immediate is read at `w`), so `a − b ≡ 0 (mod 2^w)`, and the only
                // multiple of 2^w strictly between −2^w and 2^w is 0. This is what an unrolled
                // loop's exit test `(k & 3) − k + 4·(j + 1) == 0` needs: neither side reads as
                // a signed 32-bit number for every `k`, but their difference is within range.
                if cmp != Cmp::Ne
                    && !self.optimistic
                    && (!self.fits(&st.facts, &a, range) || !self.fits(&st.facts, &b, range))
                {
                    let span = (1i128 << (*w).clamp(1, 64)) - 1;
                    let close = cmp == Cmp::Eq
                        && a.sub(&b)
                            .is_some_and(|d| self.fits(&st.facts, &d, (-span, span)));
                    if !close {
                        return;
                    }
                }
                let atoms = &self.atoms;
                let f = &mut st.facts;
                let diff = |x: &Poly, y: &Poly, c: i128| x.sub(y).and_then(|d| d.add_const(c));
                match cmp {
                    Cmp::Lt => {
                        if let Some(d) = diff(&b, &a, -1) {
                            f.assume(atoms, &d, 0);
                        }
                    }
                    Cmp::Le => {
                        if let Some(d) = diff(&b, &a, 0) {
                            f.assume(atoms, &d, 0);
                        }
                    }
                    Cmp::Gt => {
                        if let Some(d) = diff(&a, &b, -1) {
                            f.assume(atoms, &d, 0);
                        }
                    }
                    Cmp::Ge => {
                        if let Some(d) = diff(&a, &b, 0) {
                            f.assume(atoms, &d, 0);
                        }
                    }
                    Cmp::Eq => {
                        // `g·x + c = 0` with `g | c` is `x + c/g = 0`: dividing by the
                        // content leaves a unit coefficient to solve for.
                        if let Some(d) = diff(&a, &b, 0) {
                            let g = d.content();
                            let d = match d.div_exact(g) {
                                Some(x) if g > 1 => x,
                                _ => d,
                            };
                            f.assume_eq(atoms, &d);
                        }
                    }
                    Cmp::Ne => {
                        if let Some(d) = diff(&a, &b, 0) {
                            f.assume_ne(atoms, &d);
                        }
                    }
                }
            }
        }
    }

    /// A value valid on both paths.
    pub(crate) fn join_val(
        &mut self,
        a: &Val,
        b: &Val,
        fa: &Facts,
        fb: &Facts,
        key: (u32, u32, u32),
        extra: &mut Vec<Fact>,
    ) -> Val {
        if a == b {
            return a.clone();
        }
        match (a, b) {
            (Val::Int { p: pa, w: wa }, Val::Int { p: pb, w: wb }) => {
                let w = (*wa).min(*wb);
                match self.join_poly(pa, pb, fa, fb, key, extra) {
                    Some(p) => Val::Int { p, w },
                    None => Val::Wild,
                }
            }
            (Val::Ptr { param: x, off: oa }, Val::Ptr { param: y, off: ob }) if x == y => {
                match self.join_poly(oa, ob, fa, fb, key, &mut Vec::new()) {
                    Some(off) => Val::Ptr { param: *x, off },
                    None => Val::Wild,
                }
            }
            (Val::Ptr { param: x, .. } | Val::PtrData { param: x }, Val::PtrData { param: y })
            | (Val::PtrData { param: x }, Val::Ptr { param: y, .. })
                if x == y =>
            {
                Val::PtrData { param: *x }
            }
            (Val::Data, Val::Int { .. } | Val::Data | Val::Undef)
            | (Val::Int { .. } | Val::Undef, Val::Data) => Val::Data,
            (Val::Pred(_), Val::Pred(_) | Val::Undef) | (Val::Undef, Val::Pred(_)) => {
                Val::Pred(PredVal::Unknown)
            }
            (Val::Undef, Val::Int { w, .. }) | (Val::Int { w, .. }, Val::Undef) => Val::Int {
                p: self.opaque(key, unsigned_range(*w), false),
                w: *w,
            },
            (Val::OrOf(..) | Val::HiTest(..), _) | (_, Val::OrOf(..) | Val::HiTest(..)) => {
                Val::Int {
                    p: self.opaque(key, unsigned_range(64), false),
                    w: 64,
                }
            }
            _ => Val::Wild,
        }
    }

    fn join_poly(
        &mut self,
        pa: &Poly,
        pb: &Poly,
        fa: &Facts,
        fb: &Facts,
        key: (u32, u32, u32),
        extra: &mut Vec<Fact>,
    ) -> Option<Poly> {
        let pa = fa.normalize(pa)?;
        let pb = fb.normalize(pb)?;
        if pa == pb {
            return Some(pa);
        }
        let d = pa.sub(&pb)?;
        if fb.equal_zero(&d) {
            return Some(pa);
        }
        if fa.equal_zero(&d) {
            return Some(pb);
        }
        // Equal by proof rather than by rewriting: if one path's facts prove its value equals
        // the other path's polynomial, that polynomial is the value on both. An unrolled loop
        // leaves its counter at `4·(j + 1)` with `j + 1 = floor(k/4)` on exit, and at 0 on the
        // path that skips it for `k < 4`, where `floor(k/4) = 0` follows from the quotient's
        // definition: both are `4·floor(k/4)`, which the remainder loop needs to stay below `k`.
        // (Each direction needs `d ≥ 0` and `−d ≥ 0`; the cheap search keeps joins cheap.)
        // A proof that rests on launch conditions makes the joined value rest on them too.
        if let Some(nd) = d.neg() {
            let (up, down) = (d.tighten(), nd.tighten());
            for (f, other) in [(fa, &pb), (fb, &pa)] {
                // The second direction only when the first held: most joins differ for real.
                if let Some(t1) = f.prove_cheap(&self.atoms, &up)
                    && let Some(t2) = f.prove_cheap(&self.atoms, &down)
                {
                    self.used_tags |= t1 | t2;
                    return Some(other.clone());
                }
            }
        }
        let ra = fa.range(&self.atoms, &pa);
        let rb = fb.range(&self.atoms, &pb);
        let r = (ra.0.min(rb.0), ra.1.max(rb.1));
        let wrap = pa
            .atoms()
            .chain(pb.atoms())
            .any(|x| self.wrap_atoms.contains(&x));
        if let Some(p) = self.join_grid_index(&pa, &pb, fa, fb, key, extra) {
            return Some(p);
        }
        let loaded = pa
            .atoms()
            .chain(pb.atoms())
            .any(|x| self.loaded_atoms.contains(&x));
        let joined = self.opaque(key, r, wrap);
        if loaded && let Some(a) = joined.as_atom() {
            self.loaded_atoms.insert(a);
        }
        Some(joined)
    }
}

/// How the value a comparison reads of a register stands to the register's exact number
/// (see [`Analyzer::compared_bits`]).
#[derive(Debug, Clone, PartialEq)]
enum Reading {
    /// Not checked against the comparison's range: an immediate outside it, a value of
    /// another width, a value carried around a loop, a non-integer.
    Unchecked,
    /// The exact number, proven within the range (or an immediate within it).
    Exact,
    /// Its bits, a number of the range, with nothing known of how they stand to it.
    Bits,
    /// Its bits, at most the exact number given (it can only have wrapped down).
    AtMost(Poly),
    /// Its bits, at least the exact number given (it can only have wrapped up).
    AtLeast(Poly),
}

/// What `a CMP b` (an order) says of the exact numbers behind bits that may have wrapped,
/// `a` and `b` each the value the comparison read with its [`Reading`]. Both must be numbers
/// of the comparison's range (read exactly, or bits). The smaller side's exact number is at
/// most its bits where they are at least it, the larger side's at least its bits where they
/// are at most it: then `small < large` (or `≤`) holds of those too, as `large − small −
/// strict ≥ 0`. `None` where neither side is so bounded.
fn exact_order(cmp: Cmp, a: (&Poly, &Reading), b: (&Poly, &Reading)) -> Option<Poly> {
    let (small, large, strict) = match cmp {
        Cmp::Lt => (a, b, 1),
        Cmp::Le => (a, b, 0),
        Cmp::Gt => (b, a, 1),
        Cmp::Ge => (b, a, 0),
        Cmp::Eq | Cmp::Ne => return None,
    };
    if *small.1 == Reading::Unchecked || *large.1 == Reading::Unchecked {
        return None;
    }
    let small_exact = match small.1 {
        Reading::AtLeast(p) => Some(p),
        _ => None,
    };
    let large_exact = match large.1 {
        Reading::AtMost(p) => Some(p),
        _ => None,
    };
    if small_exact.is_none() && large_exact.is_none() {
        return None;
    }
    large_exact
        .unwrap_or(large.0)
        .sub(small_exact.unwrap_or(small.0))?
        .add_const(-strict)
}
