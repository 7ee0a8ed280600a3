//! Instruction modifiers, typed: element types, the state space, vector width, rounding, the
//! comparison, the boolean operation, and every other modifier as a [`Flag`] or a [`Hint`].
//!
//! The text of each modifier is read here and nowhere else. Which of them an opcode takes is
//! for each reader to say ([`Modifiers::flags_within`]); a modifier this model does not know at
//! all is kept as [`Modifiers::unknown`], which every reader refuses.

use super::Opcode;
use crate::model::ScalarType;

/// The state space an instruction names (`ld.global`, `cvta.to.shared`, `atom.shared::cta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.global`.
    Global,
    /// `.local`.
    Local,
    /// `.shared` or `.shared::cta`: the block's shared memory.
    Shared,
    /// `.shared::cluster`: the shared memory of any block of the cluster.
    SharedCluster,
    /// `.const`.
    Const,
    /// `.param` (also `.param::entry`, `.param::func`).
    Param,
    /// `.tex`.
    Tex,
    /// `.generic`, written out (no space written at all is `None`, also generic).
    Generic,
}

/// A rounding modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// `.rn` / `.rni`: to nearest, ties to even.
    Nearest,
    /// `.rz` / `.rzi`: towards zero.
    Zero,
    /// `.rm` / `.rmi`: towards −∞.
    Down,
    /// `.rp` / `.rpi`: towards +∞.
    Up,
    /// `.rna`: to nearest, ties away from zero.
    NearestAway,
    /// `.rs`: stochastic.
    Stochastic,
}

/// The comparison of `setp`, `set` and the video `vset`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compare {
    /// `.eq`
    Eq,
    /// `.ne`
    Ne,
    /// `.lt`
    Lt,
    /// `.le`
    Le,
    /// `.gt`
    Gt,
    /// `.ge`
    Ge,
    /// `.lo`: unsigned `<`.
    Lo,
    /// `.ls`: unsigned `≤`.
    Ls,
    /// `.hi`: unsigned `>`.
    Hi,
    /// `.hs`: unsigned `≥`.
    Hs,
    /// `.equ`: equal or unordered.
    Equ,
    /// `.neu`
    Neu,
    /// `.ltu`
    Ltu,
    /// `.leu`
    Leu,
    /// `.gtu`
    Gtu,
    /// `.geu`
    Geu,
    /// `.num`: both are numbers.
    Num,
    /// `.nan`: either is NaN.
    Nan,
}

/// The boolean operation of `setp.CMP.OP`, `set.CMP.OP` and (as the operation) of `atom`,
/// `red`, `redux` and `bar.red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `.and`
    And,
    /// `.or`
    Or,
    /// `.xor`
    Xor,
}

macro_rules! named {
    ($(#[$meta:meta])* $ty:ident { $($(#[$doc:meta])* $variant:ident = $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $ty {
            $($(#[$doc])* $variant,)*
        }

        impl $ty {
            const ALL: &'static [($ty, &'static str)] = &[$(($ty::$variant, $name),)*];

            /// The modifier named `text` (with its dot).
            pub fn from_text(text: &str) -> Option<Self> {
                Self::ALL.iter().find(|(_, name)| *name == text).map(|&(v, _)| v)
            }

            /// The modifier's text, with its dot.
            pub fn text(self) -> &'static str {
                Self::ALL.get(self as usize).map_or("?", |&(_, name)| name)
            }
        }
    };
}

named! {
    /// A modifier that changes what an instruction computes or how it synchronizes: each
    /// reader accepts only those it gives a meaning to.
    Flag {
        /// `.ftz`
        Ftz = ".ftz",
        /// `.sat`
        Sat = ".sat",
        /// `.approx`
        Approx = ".approx",
        /// `.full`
        Full = ".full",
        /// `.lo` (of `mul`, `mad`, `mul24`, `mad24`)
        Lo = ".lo",
        /// `.hi` (of `mul`, `mad`, `mul24`, `mad24`)
        Hi = ".hi",
        /// `.wide`
        Wide = ".wide",
        /// `.to` (of `cvta`)
        To = ".to",
        /// `.cc`: the instruction writes the carry flag.
        Cc = ".cc",
        /// `.relu`
        Relu = ".relu",
        /// `.satfinite`
        Satfinite = ".satfinite",
        /// `.NaN`
        NaN = ".NaN",
        /// `.xorsign`
        Xorsign = ".xorsign",
        /// `.abs`
        Abs = ".abs",
        /// `.oob`
        Oob = ".oob",
        /// `.l` (of `shf`)
        L = ".l",
        /// `.r` (of `shf`)
        R = ".r",
        /// `.wrap`
        Wrap = ".wrap",
        /// `.clamp`
        Clamp = ".clamp",
        /// `.shiftamt`
        Shiftamt = ".shiftamt",
        /// `.finite` (of `testp`)
        Finite = ".finite",
        /// `.infinite`
        Infinite = ".infinite",
        /// `.number`
        Number = ".number",
        /// `.notanumber`
        Notanumber = ".notanumber",
        /// `.normal`
        Normal = ".normal",
        /// `.subnormal`
        Subnormal = ".subnormal",
        /// `.f4e` (of `prmt`)
        F4e = ".f4e",
        /// `.b4e`
        B4e = ".b4e",
        /// `.rc8`
        Rc8 = ".rc8",
        /// `.ecl`
        Ecl = ".ecl",
        /// `.ecr`
        Ecr = ".ecr",
        /// `.rc16`
        Rc16 = ".rc16",
        /// `.sc`
        Sc = ".sc",
        /// `.acq_rel`
        AcqRel = ".acq_rel",
        /// `.acquire`
        Acquire = ".acquire",
        /// `.release`
        Release = ".release",
        /// `.sync`
        Sync = ".sync",
        /// `.aligned`
        Aligned = ".aligned",
        /// `.up` (of `shfl`)
        Up = ".up",
        /// `.down`
        Down = ".down",
        /// `.bfly`
        Bfly = ".bfly",
        /// `.idx`
        Idx = ".idx",
        /// `.all` (of `vote`, `match`)
        All = ".all",
        /// `.any`
        Any = ".any",
        /// `.ballot`
        Ballot = ".ballot",
        /// `.any_sync`
        AnySync = ".any_sync",
        /// `.red` (of `bar`, `barrier`)
        Red = ".red",
        /// `.popc`
        Popc = ".popc",
        /// `.exch` (of `atom`)
        Exch = ".exch",
        /// `.cas`
        Cas = ".cas",
        /// `.inc`
        Inc = ".inc",
        /// `.dec`
        Dec = ".dec",
        /// `.add`
        Add = ".add",
        /// `.min`
        Min = ".min",
        /// `.max`
        Max = ".max",
        /// `.cluster`
        Cluster = ".cluster",
        /// `.proxy`
        Proxy = ".proxy",
        /// `.async`
        Async = ".async",
        /// `.gl` (of `membar`)
        Gl = ".gl",
        /// `.arrive`
        Arrive = ".arrive",
        /// `.warp`
        Warp = ".warp",
        /// `.pack` (of `cvt.pack`)
        Pack = ".pack",
        /// `.bulk` (of `cp.async.bulk`)
        Bulk = ".bulk",
        /// `.1d`: the geometry of a texture or surface access (`tex`, `tld4`, `suld`, …)
        D1 = ".1d",
        /// `.2d`
        D2 = ".2d",
        /// `.3d`
        D3 = ".3d",
        /// `.a1d`: an array of 1-D textures
        A1d = ".a1d",
        /// `.a2d`
        A2d = ".a2d",
        /// `.cube`
        Cube = ".cube",
        /// `.acube`
        Acube = ".acube",
        /// `.2dms`: multisampled
        D2ms = ".2dms",
        /// `.a2dms`
        A2dms = ".a2dms",
    }
}

named! {
    /// A modifier that changes nothing a single thread can observe: cache operators, cache
    /// eviction hints, memory-ordering scopes of non-synchronizing accesses, branch
    /// uniformity. Readers may ignore hints.
    Hint {
        /// `.nc`
        Nc = ".nc",
        /// `.ca`
        Ca = ".ca",
        /// `.cg`
        Cg = ".cg",
        /// `.cs`
        Cs = ".cs",
        /// `.lu`
        Lu = ".lu",
        /// `.cv`
        Cv = ".cv",
        /// `.wb`
        Wb = ".wb",
        /// `.wt`
        Wt = ".wt",
        /// `.uni`
        Uni = ".uni",
        /// `.volatile`
        Volatile = ".volatile",
        /// `.relaxed`
        Relaxed = ".relaxed",
        /// `.weak`
        Weak = ".weak",
        /// `.cta`
        Cta = ".cta",
        /// `.gpu`
        Gpu = ".gpu",
        /// `.sys`
        Sys = ".sys",
        /// `.L1::…` and `.L2::…` cache hints (except `.L2::cache_hint`, which takes an operand
        /// and is a [`Flag`]-like form no reader knows: it is kept as unknown)
        Cache = ".L1::/.L2::",
    }
}

/// The parsed modifiers of one instruction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Element types, in the order written (`cvt.f32.s32`: destination, then source).
    pub types: Vec<ScalarType>,
    /// `.v2`, `.v4`, `.v8`; 1 when none is written.
    pub vector: u8,
    /// The state space, when one is written.
    pub space: Option<Space>,
    /// A float rounding modifier (`.rn`, `.rz`, `.rm`, `.rp`, `.rna`, `.rs`).
    pub rounding: Option<Rounding>,
    /// An integer rounding modifier (`.rni`, `.rzi`, `.rmi`, `.rpi`).
    pub int_rounding: Option<Rounding>,
    /// The comparison (`setp`, `set`, `vset`); `.lo` and `.hi` are comparisons there.
    pub cmp: Option<Compare>,
    /// `.and`, `.or`, `.xor`.
    pub bool_op: Option<BoolOp>,
    flags: u128,
    hints: u32,
    /// The first modifier this model does not know, as written. Every reader refuses an
    /// instruction that has one.
    pub unknown: Option<String>,
}

impl Modifiers {
    /// Reads the modifiers of an instruction of `opcode`, as written (each with its dot).
    pub fn parse(opcode: Opcode, written: &[&str]) -> Self {
        let mut m = Modifiers {
            vector: 1,
            ..Modifiers::default()
        };
        let compares = matches!(
            opcode,
            Opcode::Setp | Opcode::Set | Opcode::Vset | Opcode::Vset2 | Opcode::Vset4
        );
        for &text in written {
            if m.read(text, compares).is_none() && m.unknown.is_none() {
                m.unknown = Some(text.to_owned());
            }
        }
        m
    }

    fn read(&mut self, text: &str, compares: bool) -> Option<()> {
        if let Some(ty) = ScalarType::from_directive(text) {
            self.types.push(ty);
            return Some(());
        }
        if compares && let Some(cmp) = compare(text) {
            self.cmp = Some(cmp);
            return Some(());
        }
        if let Some(flag) = Flag::from_text(text) {
            self.flags |= 1 << flag as u8;
            return Some(());
        }
        if text.starts_with(".L1::") || (text.starts_with(".L2::") && text != ".L2::cache_hint") {
            self.hints |= 1 << Hint::Cache as u8;
            return Some(());
        }
        if let Some(hint) = Hint::from_text(text) {
            self.hints |= 1 << hint as u8;
            return Some(());
        }
        match text {
            ".v2" => self.vector = 2,
            ".v4" => self.vector = 4,
            ".v8" => self.vector = 8,
            ".global" => self.space = Some(Space::Global),
            ".local" => self.space = Some(Space::Local),
            ".shared" | ".shared::cta" => self.space = Some(Space::Shared),
            ".shared::cluster" => self.space = Some(Space::SharedCluster),
            ".const" => self.space = Some(Space::Const),
            ".param" | ".param::entry" | ".param::func" => self.space = Some(Space::Param),
            ".tex" => self.space = Some(Space::Tex),
            ".generic" => self.space = Some(Space::Generic),
            ".rn" => self.rounding = Some(Rounding::Nearest),
            ".rz" => self.rounding = Some(Rounding::Zero),
            ".rm" => self.rounding = Some(Rounding::Down),
            ".rp" => self.rounding = Some(Rounding::Up),
            ".rna" => self.rounding = Some(Rounding::NearestAway),
            ".rs" => self.rounding = Some(Rounding::Stochastic),
            ".rni" => self.int_rounding = Some(Rounding::Nearest),
            ".rzi" => self.int_rounding = Some(Rounding::Zero),
            ".rmi" => self.int_rounding = Some(Rounding::Down),
            ".rpi" => self.int_rounding = Some(Rounding::Up),
            ".and" => self.bool_op = Some(BoolOp::And),
            ".or" => self.bool_op = Some(BoolOp::Or),
            ".xor" => self.bool_op = Some(BoolOp::Xor),
            _ => match compare(text) {
                // `.eq` … outside a comparison instruction: still a comparison (`.lo` and
                // `.hi` were read as flags above).
                Some(cmp) => self.cmp = Some(cmp),
                None => return None,
            },
        }
        Some(())
    }

    /// Whether `flag` is written.
    pub fn has(&self, flag: Flag) -> bool {
        self.flags & (1 << flag as u8) != 0
    }

    /// Whether `hint` is written.
    pub fn has_hint(&self, hint: Hint) -> bool {
        self.hints & (1 << hint as u8) != 0
    }

    /// Whether every flag written is one of `allowed`.
    pub fn flags_within(&self, allowed: &[Flag]) -> bool {
        let mask = allowed.iter().fold(0u128, |m, &f| m | 1 << f as u8);
        self.flags & !mask == 0
    }

    /// Every flag written, in the order of [`Flag`].
    pub fn flags(&self) -> impl Iterator<Item = Flag> + '_ {
        Flag::ALL
            .iter()
            .map(|&(flag, _)| flag)
            .filter(|&flag| self.has(flag))
    }

    /// The one type written, if exactly one is.
    pub fn one_type(&self) -> Option<ScalarType> {
        match self.types.as_slice() {
            [ty] => Some(*ty),
            _ => None,
        }
    }
}

fn compare(text: &str) -> Option<Compare> {
    Some(match text {
        ".eq" => Compare::Eq,
        ".ne" => Compare::Ne,
        ".lt" => Compare::Lt,
        ".le" => Compare::Le,
        ".gt" => Compare::Gt,
        ".ge" => Compare::Ge,
        ".lo" => Compare::Lo,
        ".ls" => Compare::Ls,
        ".hi" => Compare::Hi,
        ".hs" => Compare::Hs,
        ".equ" => Compare::Equ,
        ".neu" => Compare::Neu,
        ".ltu" => Compare::Ltu,
        ".leu" => Compare::Leu,
        ".gtu" => Compare::Gtu,
        ".geu" => Compare::Geu,
        ".num" => Compare::Num,
        ".nan" => Compare::Nan,
        _ => return None,
    })
}
