//! The verifier's view of a body: a flat list of instructions over numbered registers, with
//! the entry's `.func` calls inlined, cut into basic blocks.

/// A register of the flattened body.
pub(crate) type Reg = u32;

/// A source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Src {
    Reg(Reg),
    /// Immediate bits (two's complement for negative integers; float bit patterns for floats).
    Imm(u64),
    /// `%tid`, `%ntid`, `%ctaid`, `%nctaid` × `.x .y .z`: `group * 3 + dim`.
    Special(u8),
}

/// Integer operations with exact polynomial (or floor) semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    MadLo,
    MadWide,
    MadHi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Not,
    Neg,
    Abs,
}

/// Comparisons of integer `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub(crate) fn negate(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            Cmp::Lt => Cmp::Ge,
            Cmp::Le => Cmp::Gt,
            Cmp::Gt => Cmp::Le,
            Cmp::Ge => Cmp::Lt,
        }
    }
}

/// Predicate logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
}

/// What a memory instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Load,
    Store,
    Atomic,
}

/// Where an address points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddrBase {
    Reg(Reg),
    Absolute,
    /// A variable named in the address (`[s]`, `[params+4]`) in its own state space: its
    /// index in [`Body::shared`].
    Shared(u32),
}

/// Pointer values into variable `v` (of [`Body::shared`]) carry the provenance
/// `SHARED_BASE + v` where a global pointer carries its `.param` index (entries have far fewer
/// params than this): the address of `v` in its own state space.
pub(crate) const SHARED_BASE: u32 = 1 << 30;

/// The provenance `SHARED_BASE + GENERIC + v` is the *generic* address of variable `v`
/// (`cvta.local` of its local-space address), a different number from its local-space one.
pub(crate) const GENERIC: u32 = 1 << 29;

/// The state space a variable the body names lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarSpace {
    /// `.shared`: one per block.
    Shared,
    /// `.local`: one per thread (the `__local_depot` frame of a body).
    Local,
    /// A module `.const` variable: a table every thread reads.
    Const,
    /// A module `.global` variable: likewise (NVRTC's tables for `sinf`'s slow path).
    Global,
}

impl VarSpace {
    /// The PTX spelling, for messages.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Shared => ".shared",
            Self::Local => ".local",
            Self::Const => ".const",
            Self::Global => ".global",
        }
    }
}

/// The state space an access names (`ld.local`, `st.shared`, `ld.global`, or none: generic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemSpace {
    Generic,
    Global,
    Shared,
    Local,
    Const,
}

/// One variable an entry can name: a `.shared` one, a `.local` frame, or a module `.const` or
/// `.global` table; each its own object, of known size (a dynamic shared array aside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SharedVar {
    pub(crate) name: String,
    /// Its size; `None` for a dynamic (`.extern`, unsized) shared array, whose size is the
    /// launch's dynamic shared bytes.
    pub(crate) bytes: Option<u64>,
    /// Its alignment (a power of two).
    pub(crate) align: u64,
    /// Where it lives.
    pub(crate) space: VarSpace,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `d = a` truncated/kept at `w` bits.
    Mov {
        d: Reg,
        a: Src,
        w: u8,
    },
    /// Integer arithmetic at width `w` (the destination's width for `.wide`: `2w`).
    Int {
        op: IntOp,
        d: Reg,
        a: Src,
        b: Option<Src>,
        c: Option<Src>,
        w: u8,
        signed: bool,
    },
    /// Integer-to-integer `cvt`: from `sw` bits (signed: sign-extend) to `dw` bits.
    Cvt {
        d: Reg,
        a: Src,
        dw: u8,
        sw: u8,
        ssigned: bool,
    },
    Setp {
        d: Reg,
        /// The complement destination of `setp p|q`.
        d2: Option<Reg>,
        cmp: Cmp,
        w: u8,
        signed: bool,
        a: Src,
        b: Src,
        /// `.and/.or/.xor` with a predicate (negated?).
        combine: Option<(PredOp, Reg, bool)>,
    },
    /// `d = p ? a : b` at width `w`.
    Selp {
        d: Reg,
        a: Src,
        b: Src,
        p: Reg,
        neg: bool,
        w: u8,
    },
    Pred {
        op: PredOp,
        d: Reg,
        a: Reg,
        a_neg: bool,
        b: Option<(Reg, bool)>,
    },
    /// A kernel `.param` read: `bytes` at `offset` of param `index`.
    LdKParam {
        d: Reg,
        index: u32,
        offset: i64,
        bytes: u32,
    },
    /// A memory access (global or generic).
    Mem {
        access: Access,
        addr: AddrBase,
        offset: i64,
        bytes: u32,
        /// Registers written (loads, atomics), every one of a vector.
        dests: Vec<Reg>,
        /// What each destination holds, where it is a 32- or 64-bit integer: its width and
        /// whether the instruction reads it signed. `None`: narrower or floating-point data,
        /// which no index is computed from in the kernels the analysis follows.
        value: Option<(u8, bool)>,
        /// Written `.shared`: the address is a shared-space one (`space` is
        /// [`MemSpace::Shared`]).
        shared: bool,
        /// The state space the instruction names.
        space: MemSpace,
    },
    /// `d` = the address of variable `var` in its own state space (`mov.u64 %rd, s`).
    SharedAddr {
        d: Reg,
        var: u32,
    },
    /// `cvta.local d, a` (`to_generic`) or `cvta.to.local d, a`: between the local-space and
    /// the generic address of a `.local` variable.
    LocalCvta {
        d: Reg,
        a: Src,
        to_generic: bool,
    },
    /// A `.shared` declaration in the body: verified only for contracts whose launches carry a
    /// shared-memory size (see `EntryContract::three_dimensional`); refused otherwise.
    SharedDecl,
    /// A value computed by something not modeled exactly: data if any source is, else an
    /// unknown integer; every predicate it writes an unknown predicate.
    Opaque {
        dests: Vec<Reg>,
        preds: Vec<Reg>,
        srcs: Vec<Src>,
    },
    /// `d` = some value in `lo..=hi` (at width `w`), e.g. the carry flag an `addc` adds.
    Fresh {
        d: Reg,
        lo: i128,
        hi: i128,
        w: u8,
    },
    Bra {
        target: usize,
    },
    Ret,
    /// Reaching it is a rejection: `unsupported`, or `unknown_form` for what the typed
    /// instruction model does not know.
    Refuse {
        reason: std::borrow::Cow<'static, str>,
        unknown: bool,
    },
    Nop,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ins {
    pub(crate) kind: Kind,
    pub(crate) guard: Option<(Reg, bool)>,
    pub(crate) line: u32,
    /// Index into the site texts.
    pub(crate) site: u32,
}

/// A basic block: instructions `start..end`; the last may branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Successors: (block, edge condition: `Some((pred, taken_when))`).
    pub(crate) succs: Vec<(usize, Option<(Reg, bool)>)>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Body {
    pub(crate) insts: Vec<Ins>,
    /// Line texts, trimmed.
    pub(crate) sites: Vec<String>,
    pub(crate) num_regs: u32,
    pub(crate) blocks: Vec<Block>,
    /// The variables the body can name (module scope first): `.shared`, `.local`, and module
    /// `.const` and `.global` tables.
    pub(crate) shared: Vec<SharedVar>,
    /// Per instruction, the byte range in the module's text of the entry's own instruction it
    /// lowers (`None` for one of an inlined `.func`, whose text serves every call): where a
    /// guard rewrite puts the guard.
    pub(crate) spans: Vec<Option<(usize, usize)>>,
}

impl Body {
    /// Cuts `insts` into blocks; branch targets are instruction indices.
    pub(crate) fn build_blocks(&mut self) {
        let n = self.insts.len();
        let mut leader = vec![false; n + 1];
        if n > 0 {
            leader[0] = true;
        }
        for (i, ins) in self.insts.iter().enumerate() {
            match ins.kind {
                Kind::Bra { target } => {
                    if let Some(l) = leader.get_mut(target) {
                        *l = true;
                    }
                    if let Some(l) = leader.get_mut(i + 1) {
                        *l = true;
                    }
                }
                Kind::Ret if ins.guard.is_none() => {
                    if let Some(l) = leader.get_mut(i + 1) {
                        *l = true;
                    }
                }
                Kind::Ret => {
                    if let Some(l) = leader.get_mut(i + 1) {
                        *l = true;
                    }
                }
                _ => {}
            }
        }
        let mut starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        starts.push(n);
        let mut block_of = vec![usize::MAX; n + 1];
        let mut blocks = Vec::new();
        for w in starts.windows(2) {
            let (s, e) = (w[0], w[1]);
            for b in block_of.iter_mut().take(e).skip(s) {
                *b = blocks.len();
            }
            blocks.push(Block {
                start: s,
                end: e,
                succs: Vec::new(),
            });
        }
        let count = blocks.len();
        for (bi, block) in blocks.iter_mut().enumerate() {
            let Some(last) = block.end.checked_sub(1).and_then(|i| self.insts.get(i)) else {
                continue;
            };
            let next = (bi + 1 < count).then_some(bi + 1);
            match (&last.kind, last.guard) {
                (Kind::Bra { target }, None) => {
                    if let Some(&t) = block_of.get(*target)
                        && t != usize::MAX
                    {
                        block.succs.push((t, None));
                    }
                }
                (Kind::Bra { target }, Some((p, neg))) => {
                    if let Some(&t) = block_of.get(*target)
                        && t != usize::MAX
                    {
                        block.succs.push((t, Some((p, !neg))));
                    }
                    if let Some(nx) = next {
                        block.succs.push((nx, Some((p, neg))));
                    }
                }
                (Kind::Ret, None) => {}
                (Kind::Ret, Some((p, neg))) => {
                    if let Some(nx) = next {
                        block.succs.push((nx, Some((p, neg))));
                    }
                }
                _ => {
                    if let Some(nx) = next {
                        block.succs.push((nx, None));
                    }
                }
            }
        }
        self.blocks = blocks;
    }
}
