//! Abstract register values and predicates.

use super::facts::Facts;
use super::ir::Cmp;
use super::poly::Poly;

/// What a register holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    /// Never written on some path.
    Undef,
    /// An integer whose low `w` bits are those of `p` (the polynomial is exact modulo 2^w).
    Int {
        p: Poly,
        w: u8,
    },
    /// `base(param) + off` (mod 2^64).
    Ptr {
        param: u32,
        off: Poly,
    },
    /// A pointer plus an offset that depends on data.
    PtrData {
        param: u32,
    },
    /// Derived from loaded memory or a runtime value parameter.
    Data,
    /// An address-like value with no single provenance (pointer arithmetic gone astray).
    Wild,
    /// `a | b | …` of integers at width `w` (each part exact modulo 2^w), kept for the
    /// `and …, -2^k` test.
    OrOf(Vec<Poly>, u8),
    /// `(a | b | …) & −2^k` at width `w` (the parts, `w`, `k`): zero exactly when every part,
    /// read as an unsigned `w`-bit number, is below 2^k.
    HiTest(Vec<Poly>, u8, u8),
    Pred(PredVal),
}

/// A predicate's meaning.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PredVal {
    Unknown,
    Cmp {
        cmp: Cmp,
        signed: bool,
        w: u8,
        a: Poly,
        b: Poly,
    },
    /// `HiTest == 0` (`true`) or `!= 0` (`false`), with the test's `w` and `k`.
    HiZero(Vec<Poly>, bool, u8, u8),
    Not(Box<PredVal>),
    /// The inner predicate, whose falsity (`[0]`) or truth (`[1]`) also gives the fact there
    /// (`≥ 0`): what a comparison of bits that may have wrapped says of the exact numbers.
    Learns(Box<PredVal>, Box<[Option<Poly>; 2]>),
    And(Box<PredVal>, Box<PredVal>),
    Or(Box<PredVal>, Box<PredVal>),
}

/// The most nodes a predicate's meaning keeps. Past it the meaning is forgotten
/// ([`PredVal::Unknown`], which claims nothing): a chain of `and.pred %p, %p, %q` would
/// otherwise grow the tree with every line (and `and.pred %p, %p, %p` double it), and every walk
/// over it (refinement, comparison, drop) recurses as deep as it is.
pub(crate) const MAX_PRED_NODES: usize = 32;

impl PredVal {
    /// `a ∧ b`, or unknown when that would be larger than [`MAX_PRED_NODES`].
    pub(crate) fn and(a: PredVal, b: PredVal) -> PredVal {
        Self::bounded(a, b, PredVal::And)
    }

    /// `a ∨ b`, or unknown when that would be larger than [`MAX_PRED_NODES`].
    pub(crate) fn or(a: PredVal, b: PredVal) -> PredVal {
        Self::bounded(a, b, PredVal::Or)
    }

    fn bounded(a: PredVal, b: PredVal, node: fn(Box<PredVal>, Box<PredVal>) -> PredVal) -> PredVal {
        if a.nodes() + b.nodes() + 1 > MAX_PRED_NODES {
            return PredVal::Unknown;
        }
        node(Box::new(a), Box::new(b))
    }

    /// Nodes of the tree (bounded by construction, so the recursion is shallow).
    fn nodes(&self) -> usize {
        match self {
            PredVal::Not(x) | PredVal::Learns(x, _) => 1 + x.nodes(),
            PredVal::And(x, y) | PredVal::Or(x, y) => 1 + x.nodes() + y.nodes(),
            PredVal::Unknown | PredVal::Cmp { .. } | PredVal::HiZero(..) => 1,
        }
    }

    pub(crate) fn not(self) -> PredVal {
        match self {
            PredVal::Not(x) => *x,
            PredVal::Unknown => PredVal::Unknown,
            other => PredVal::Not(Box::new(other)),
        }
    }
}

/// Register values and path facts.
#[derive(Debug, Clone)]
pub(crate) struct State {
    pub(crate) regs: Vec<Val>,
    pub(crate) facts: Facts,
}

impl State {
    pub(crate) fn get(&self, r: u32) -> &Val {
        self.regs.get(r as usize).unwrap_or(&Val::Undef)
    }

    pub(crate) fn set(&mut self, r: u32, v: Val) {
        if let Some(slot) = self.regs.get_mut(r as usize) {
            *slot = v;
        }
    }
}
