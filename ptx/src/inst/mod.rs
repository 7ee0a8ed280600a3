//! The typed instruction model: one reading of every instruction, for every reader.
//!
//! [`resolve`](crate::resolve) turns the statements [`body::parse_body`](crate::body::parse_body)
//! reads into [`Instruction`]s: an [`Opcode`], typed [`Modifiers`], [`Operand`]s whose names are
//! resolved (to a register of the function, a parameter, a variable, a function or a label), the
//! source line, and — computed here, once — the registers the instruction writes, **in the order
//! it writes them** ([`Instruction::defs`]), and those it reads ([`Instruction::uses`]).
//!
//! The interpreter (`jitseam-emu`) and the body verifier (`jitseam-verify`) both read this model
//! and nothing else of an instruction; each gives every [`Opcode`] its meaning in an exhaustive
//! match, and both refuse what the model does not know ([`Instruction::unknown`]) with the same
//! [`UnknownForm`].

mod modifier;
mod opcode;

pub use modifier::{BoolOp, Compare, Flag, Hint, Modifiers, Rounding, Space};
pub use opcode::Opcode;

use std::ops::Range;

use crate::lexer::FloatValue;

/// A register of one function body: an index into [`Body::regs`](crate::resolve::Body::regs).
/// Each component of a vector register is a register of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);

/// A variable a body can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarRef {
    /// A module-scope variable: an index into
    /// [`ResolvedModule::vars`](crate::resolve::ResolvedModule::vars).
    Module(u32),
    /// A variable declared in the body: an index into
    /// [`Body::vars`](crate::resolve::Body::vars).
    Body(u32),
}

/// What a name in an operand means, once resolved in its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Name {
    /// A scalar register (or one component of a vector register).
    Reg(RegId),
    /// Parameter `i` of the function itself (a kernel parameter of an entry; a `.param`-space
    /// parameter of a `.func`).
    Param(u32),
    /// Return parameter `i` of a `.func` (in the `.param` space).
    Return(u32),
    /// A `.param` variable declared in the body (a call sequence's argument or return value):
    /// an index into [`Body::params`](crate::resolve::Body::params).
    LocalParam(u32),
    /// A variable of the `.global`, `.const`, `.local` or `.shared` space.
    Var(VarRef),
    /// A `.func` of the module: an index into [`Module::functions`](crate::Module::functions).
    Func(u32),
    /// A label of the body: an index into [`Body::labels`](crate::resolve::Body::labels).
    Label(u32),
}

/// A special register, or a constant the ISA names (`WARP_SZ`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    /// `%tid.{x,y,z}`
    Tid(u8),
    /// `%ntid.{x,y,z}`
    Ntid(u8),
    /// `%ctaid.{x,y,z}`
    Ctaid(u8),
    /// `%nctaid.{x,y,z}`
    Nctaid(u8),
    /// `%cluster_ctaid.{x,y,z}`
    ClusterCtaid(u8),
    /// `%cluster_nctaid.{x,y,z}`
    ClusterNctaid(u8),
    /// `%clusterid.{x,y,z}`
    Clusterid(u8),
    /// `%nclusterid.{x,y,z}`
    Nclusterid(u8),
    /// `%laneid`
    Laneid,
    /// `%warpid`
    Warpid,
    /// `%nwarpid`
    Nwarpid,
    /// `%smid`
    Smid,
    /// `%nsmid`
    Nsmid,
    /// `%gridid`
    Gridid,
    /// `%lanemask_eq`
    LanemaskEq,
    /// `%lanemask_lt`
    LanemaskLt,
    /// `%lanemask_le`
    LanemaskLe,
    /// `%lanemask_gt`
    LanemaskGt,
    /// `%lanemask_ge`
    LanemaskGe,
    /// `%clock`
    Clock,
    /// `%clock_hi`
    ClockHi,
    /// `%clock64`
    Clock64,
    /// `%globaltimer`
    Globaltimer,
    /// `%globaltimer_lo`
    GlobaltimerLo,
    /// `%globaltimer_hi`
    GlobaltimerHi,
    /// `%cluster_ctarank`
    ClusterCtarank,
    /// `%cluster_nctarank`
    ClusterNctarank,
    /// `%is_explicit_cluster`
    IsExplicitCluster,
    /// `%total_smem_size`
    TotalSmemSize,
    /// `%dynamic_smem_size`
    DynamicSmemSize,
    /// `%aggr_smem_size`
    AggrSmemSize,
    /// `%envreg0` … `%envreg31`
    Envreg(u8),
    /// `%pm0` … `%pm7` and `%pm0_64` …: performance counters
    Pm(u8),
    /// `WARP_SZ`: the constant 32
    WarpSz,
}

impl Special {
    /// The special register written `name` (without a component).
    pub(crate) fn scalar(name: &str) -> Option<Self> {
        Some(match name {
            "%laneid" => Self::Laneid,
            "%warpid" => Self::Warpid,
            "%nwarpid" => Self::Nwarpid,
            "%smid" => Self::Smid,
            "%nsmid" => Self::Nsmid,
            "%gridid" => Self::Gridid,
            "%lanemask_eq" => Self::LanemaskEq,
            "%lanemask_lt" => Self::LanemaskLt,
            "%lanemask_le" => Self::LanemaskLe,
            "%lanemask_gt" => Self::LanemaskGt,
            "%lanemask_ge" => Self::LanemaskGe,
            "%clock" => Self::Clock,
            "%clock_hi" => Self::ClockHi,
            "%clock64" => Self::Clock64,
            "%globaltimer" => Self::Globaltimer,
            "%globaltimer_lo" => Self::GlobaltimerLo,
            "%globaltimer_hi" => Self::GlobaltimerHi,
            "%cluster_ctarank" => Self::ClusterCtarank,
            "%cluster_nctarank" => Self::ClusterNctarank,
            "%is_explicit_cluster" => Self::IsExplicitCluster,
            "%total_smem_size" => Self::TotalSmemSize,
            "%dynamic_smem_size" => Self::DynamicSmemSize,
            "%aggr_smem_size" => Self::AggrSmemSize,
            "WARP_SZ" => Self::WarpSz,
            _ => {
                if let Some(n) = name.strip_prefix("%envreg") {
                    return n.parse().ok().filter(|&n: &u8| n < 32).map(Self::Envreg);
                }
                let n = name.strip_prefix("%pm")?;
                let n = n.strip_suffix("_64").unwrap_or(n);
                return n.parse().ok().filter(|&n: &u8| n < 8).map(Self::Pm);
            }
        })
    }

    /// The special register written `name.{x,y,z}`, component `dim`.
    pub(crate) fn component(name: &str, dim: u8) -> Option<Self> {
        if dim > 2 {
            return None;
        }
        Some(match name {
            "%tid" => Self::Tid(dim),
            "%ntid" => Self::Ntid(dim),
            "%ctaid" => Self::Ctaid(dim),
            "%nctaid" => Self::Nctaid(dim),
            "%cluster_ctaid" => Self::ClusterCtaid(dim),
            "%cluster_nctaid" => Self::ClusterNctaid(dim),
            "%clusterid" => Self::Clusterid(dim),
            "%nclusterid" => Self::Nclusterid(dim),
            _ => return None,
        })
    }
}

/// The base of an address operand `[base + offset]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrBase {
    /// `[imm]`: an absolute address.
    Absolute,
    /// `[%r + off]`: a register.
    Reg(RegId),
    /// `[name + off]`: a parameter or variable named directly.
    Name(Name),
}

/// An operand, with its names resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(RegId),
    /// `_`: the sink.
    Sink,
    /// A parameter, variable, function or label named as a value (its address, for a
    /// variable or parameter; its target, for a label or function).
    Name(Name),
    /// A special register or `WARP_SZ`.
    Special(Special),
    /// `!%p`.
    Not(RegId),
    /// `%p|%q`: the two destinations of `setp`, `shfl`, `elect` (`None` for `_`).
    Pair(RegId, Option<RegId>),
    /// An integer immediate (a leading `-` applied, two's complement).
    Int(u64),
    /// A float immediate (a leading `-` applied).
    Float(FloatValue),
    /// `[base + offset]`.
    Address {
        /// What the address starts from.
        base: AddrBase,
        /// The byte offset (or the absolute address).
        offset: i64,
    },
    /// `{a, b, …}`, or a vector register named whole: its components.
    Vector(Vec<Operand>),
    /// `(a, b, …)` in a call.
    List(Vec<Operand>),
    /// `[tex, {x, y}]` or `[tex, sampler, {x, y}]`.
    Texture(Vec<Operand>),
}

impl Operand {
    /// The register, if the operand is one.
    pub fn reg(&self) -> Option<RegId> {
        match self {
            Self::Reg(r) => Some(*r),
            _ => None,
        }
    }

    /// Every register this operand reads when it is a source (an address's base too).
    fn read_regs(&self, out: &mut Vec<RegId>) {
        match self {
            Self::Reg(r) | Self::Not(r) => out.push(*r),
            Self::Address {
                base: AddrBase::Reg(r),
                ..
            } => out.push(*r),
            Self::Vector(items) | Self::List(items) | Self::Texture(items) => {
                for item in items {
                    item.read_regs(out);
                }
            }
            Self::Pair(p, q) => {
                out.push(*p);
                out.extend(q);
            }
            Self::Sink
            | Self::Name(_)
            | Self::Special(_)
            | Self::Int(_)
            | Self::Float(_)
            | Self::Address { .. } => {}
        }
    }

    /// The registers this operand writes when it is a destination, in the order written, or
    /// `None` if it cannot be a destination (an address, an immediate).
    fn written_regs(&self, out: &mut Vec<RegId>) -> bool {
        match self {
            Self::Reg(r) => out.push(*r),
            Self::Sink => {}
            Self::Pair(p, q) => {
                out.push(*p);
                out.extend(q);
            }
            Self::Vector(items) => {
                for item in items {
                    match item {
                        Self::Reg(r) => out.push(*r),
                        Self::Sink => {}
                        _ => return false,
                    }
                }
            }
            _ => return false,
        }
        true
    }
}

/// `@%p` or `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register.
    pub reg: RegId,
    /// `@!%p`.
    pub negated: bool,
}

/// How an instruction uses the carry flag of the extended-precision arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Carry {
    /// `addc`, `subc`, `madc`: the flag is an input.
    pub reads: bool,
    /// `.cc`: the instruction sets the flag.
    pub writes: bool,
}

/// One instruction of a body, typed and resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// The guard predicate, if any.
    pub guard: Option<Guard>,
    /// The opcode.
    pub opcode: Opcode,
    /// The modifiers.
    pub mods: Modifiers,
    /// The operands, in order.
    pub operands: Vec<Operand>,
    defs: Vec<RegId>,
    uses: Vec<RegId>,
    unknown: Option<UnknownPart>,
    /// 1-based source line of the instruction.
    pub line: u32,
    /// 1-based column (in characters) where the instruction starts.
    pub col: u32,
    /// Byte range of the instruction (guard through `;`) in the module's text.
    pub range: Range<usize>,
    /// The instruction's text with runs of whitespace collapsed, for diagnostics.
    pub text: String,
}

/// What the model does not know about an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownPart {
    /// The opcode.
    #[error("the opcode `{0}`")]
    Opcode(String),
    /// A modifier.
    #[error("the modifier `{0}`")]
    Modifier(String),
}

/// An instruction with a part the typed model does not know: every reader refuses it with
/// this error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `{instruction}`: {part} is not known to jitseam")]
pub struct UnknownForm {
    /// 1-based source line.
    pub line: u32,
    /// The instruction's text.
    pub instruction: String,
    /// What is unknown.
    pub part: UnknownPart,
}

impl Instruction {
    /// `name` is the opcode as written (for an unknown one's message).
    pub(crate) fn new(
        guard: Option<Guard>,
        name: &str,
        modifiers: &[&str],
        operands: Vec<Operand>,
        (line, col): (u32, u32),
        range: Range<usize>,
        text: String,
    ) -> Self {
        let opcode = Opcode::from_name(name);
        let mods = Modifiers::parse(opcode, modifiers);
        let unknown = if opcode == Opcode::Unknown {
            Some(UnknownPart::Opcode(crate::error::excerpt(name)))
        } else {
            mods.unknown
                .as_deref()
                .map(|m| UnknownPart::Modifier(crate::error::excerpt(m)))
        };
        let mut ins = Self {
            guard,
            opcode,
            mods,
            operands,
            defs: Vec::new(),
            uses: Vec::new(),
            unknown,
            line,
            col,
            range,
            text,
        };
        ins.roles();
        ins
    }

    /// Every register the instruction writes, in the order it writes them: for `setp p|q` the
    /// `p` then the `q`, for `ld.v4 {a, b, c, d}` the `a` first. A register written twice (`setp
    /// p|p`) is listed twice; the last write is the value it keeps.
    pub fn defs(&self) -> &[RegId] {
        &self.defs
    }

    /// Every register the instruction reads: its sources, the base register of each address,
    /// and its guard.
    pub fn uses(&self) -> &[RegId] {
        &self.uses
    }

    /// The opcode with its modifiers as written (`ld.global.nc.f32`), for messages: the first
    /// word of [`Self::text`] after the guard.
    pub fn opcode_text(&self) -> &str {
        let mut rest = self.text.as_str();
        if self.guard.is_some()
            && let Some(guarded) = rest.strip_prefix('@')
        {
            // `@%p`, `@!%p`, with or without spaces between the parts.
            let guarded = guarded.trim_start().trim_start_matches('!').trim_start();
            let end = guarded.find(char::is_whitespace).unwrap_or(guarded.len());
            rest = guarded.get(end..).unwrap_or("").trim_start();
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(rest.len());
        rest.get(..end).unwrap_or("")
    }

    /// How the instruction uses the carry flag.
    pub fn carry(&self) -> Carry {
        Carry {
            reads: matches!(self.opcode, Opcode::Addc | Opcode::Subc | Opcode::Madc),
            writes: self.mods.has(Flag::Cc),
        }
    }

    /// What the model does not know about this instruction, if anything: every reader refuses
    /// such an instruction with this error.
    pub fn unknown(&self) -> Option<UnknownForm> {
        Some(UnknownForm {
            line: self.line,
            instruction: crate::error::excerpt(&self.text),
            part: self.unknown.clone()?,
        })
    }

    /// Whether operand 0 is a destination. It is for every opcode except those whose first
    /// operand is always a source or an address, and `bar`/`barrier` without `.red`.
    fn first_is_destination(&self) -> bool {
        use Opcode as O;
        match self.opcode {
            O::Bar | O::Barrier => self.mods.has(Flag::Red),
            O::St
            | O::Red
            | O::Bra
            | O::Brx
            | O::Call
            | O::Ret
            | O::Exit
            | O::Trap
            | O::Brkpt
            | O::Membar
            | O::Fence
            | O::Prefetch
            | O::Prefetchu
            | O::Nanosleep
            | O::Pmevent
            | O::Griddepcontrol
            | O::Setmaxnreg
            | O::Applypriority
            | O::Discard
            | O::Sust
            | O::Sured
            | O::Cp
            | O::Stmatrix
            | O::Stackrestore
            | O::Tensormap => false,
            _ => true,
        }
    }

    /// Why operand 0 cannot be this instruction's destination, if it cannot: a special
    /// register, an immediate, a negated predicate or a name that is not a register where the
    /// opcode writes its first operand. The resolver refuses such an instruction, so that no
    /// reader takes it for one that writes nothing.
    pub(crate) fn destination_problem(&self) -> Option<&'static str> {
        if matches!(
            self.opcode,
            Opcode::Unknown | Opcode::Wgmma | Opcode::Tcgen05
        ) || !self.first_is_destination()
        {
            return None;
        }
        match self.operands.first()? {
            Operand::Special(_) => Some("a special register cannot be written"),
            Operand::Int(_) | Operand::Float(_) => Some("an immediate cannot be written"),
            Operand::Not(_) => Some("a negated predicate cannot be written"),
            Operand::Name(_) => Some("the destination must be a register"),
            _ => None,
        }
    }

    /// Computes [`Self::defs`] and [`Self::uses`].
    fn roles(&mut self) {
        let mut defs = Vec::new();
        let mut uses = Vec::new();
        let mut sources = self.operands.iter();
        if self.opcode == Opcode::Call {
            // `call (rets), f, (args)`: registers in the return list are written after the
            // call; everything else is read.
            if let Some(Operand::List(rets)) = self.operands.first() {
                for ret in rets {
                    if let Operand::Reg(r) = ret {
                        defs.push(*r);
                    }
                }
                sources.next();
            }
        } else if self.first_is_destination()
            && let Some(first) = self.operands.first()
        {
            let mut written = Vec::new();
            if first.written_regs(&mut written) {
                defs = written;
                sources.next();
            }
        }
        for operand in sources {
            operand.read_regs(&mut uses);
        }
        if let Some(guard) = self.guard {
            uses.push(guard.reg);
        }
        self.defs = defs;
        self.uses = uses;
    }
}
