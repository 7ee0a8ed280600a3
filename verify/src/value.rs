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
    /// `a | b | …` of integers, kept for the `and …, -4294967296` test.
    OrOf(Vec<Poly>),
    /// `(a | b | …) & ~0xffffffff`: zero exactly when every part is below 2^32 (unsigned).
    HiTest(Vec<Poly>),
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
    /// `HiTest == 0` (`true`) or `!= 0` (`false`).
    HiZero(Vec<Poly>, bool),
    Not(Box<PredVal>),
    And(Box<PredVal>, Box<PredVal>),
    Or(Box<PredVal>, Box<PredVal>),
}

impl PredVal {
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
