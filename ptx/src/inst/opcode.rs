//! Every PTX opcode, by name: the one place an opcode's text becomes a value.

macro_rules! opcodes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A PTX opcode, without its modifiers (`ld` of `ld.global.nc.f32`).
        ///
        /// Opcodes written with a dot in the ISA's tables (`bar.warp.sync`, `cp.async`,
        /// `st.async`, `brx.idx`, `cvt.pack`) are the opcode before the first dot; the rest are
        /// modifiers. [`Opcode::Unknown`] is every name the model does not know: each reader of
        /// the model refuses it.
        ///
        /// Not `#[non_exhaustive]`: every reader matches it exhaustively, so that a new opcode
        /// is a compile error in each until it says what the opcode means.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Opcode {
            $($(#[$doc])* $variant,)*
            /// A name that is no PTX opcode this model knows.
            Unknown,
        }

        impl Opcode {
            /// The opcode named `name` (without a dot), or [`Opcode::Unknown`].
            pub fn from_name(name: &str) -> Self {
                match name {
                    $($name => Self::$variant,)*
                    _ => Self::Unknown,
                }
            }

            /// The opcode's PTX name; `"?"` for [`Opcode::Unknown`].
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                    Self::Unknown => "?",
                }
            }
        }
    };
}

opcodes! {
    /// `abs`
    Abs = "abs",
    /// `activemask`
    Activemask = "activemask",
    /// `add` (with `.cc`: writes the carry flag)
    Add = "add",
    /// `addc`: add with the carry flag
    Addc = "addc",
    /// `alloca`
    Alloca = "alloca",
    /// `and`
    And = "and",
    /// `applypriority`
    Applypriority = "applypriority",
    /// `atom`
    Atom = "atom",
    /// `bar` (and `bar.warp.sync`)
    Bar = "bar",
    /// `barrier`
    Barrier = "barrier",
    /// `bfe`
    Bfe = "bfe",
    /// `bfi`
    Bfi = "bfi",
    /// `bfind`
    Bfind = "bfind",
    /// `bmsk`
    Bmsk = "bmsk",
    /// `bra`
    Bra = "bra",
    /// `brev`
    Brev = "brev",
    /// `brkpt`
    Brkpt = "brkpt",
    /// `brx.idx`
    Brx = "brx",
    /// `call`
    Call = "call",
    /// `clusterlaunchcontrol`
    Clusterlaunchcontrol = "clusterlaunchcontrol",
    /// `clz`
    Clz = "clz",
    /// `cnot`
    Cnot = "cnot",
    /// `copysign`
    Copysign = "copysign",
    /// `cos`
    Cos = "cos",
    /// `cp.async`, `cp.async.bulk`, `cp.reduce.async.bulk` and their forms
    Cp = "cp",
    /// `createpolicy`
    Createpolicy = "createpolicy",
    /// `cvt` (and `cvt.pack`)
    Cvt = "cvt",
    /// `cvta`
    Cvta = "cvta",
    /// `discard`
    Discard = "discard",
    /// `div`
    Div = "div",
    /// `dp2a`
    Dp2a = "dp2a",
    /// `dp4a`
    Dp4a = "dp4a",
    /// `elect`
    Elect = "elect",
    /// `ex2`
    Ex2 = "ex2",
    /// `exit`
    Exit = "exit",
    /// `fence`
    Fence = "fence",
    /// `fma`
    Fma = "fma",
    /// `fns`
    Fns = "fns",
    /// `getctarank`
    Getctarank = "getctarank",
    /// `griddepcontrol`
    Griddepcontrol = "griddepcontrol",
    /// `isspacep`
    Isspacep = "isspacep",
    /// `istypep`
    Istypep = "istypep",
    /// `ld`
    Ld = "ld",
    /// `ldmatrix`
    Ldmatrix = "ldmatrix",
    /// `ldu`
    Ldu = "ldu",
    /// `lg2`
    Lg2 = "lg2",
    /// `lop3`
    Lop3 = "lop3",
    /// `mad` (with `.cc`: writes the carry flag)
    Mad = "mad",
    /// `mad24`
    Mad24 = "mad24",
    /// `madc`: multiply-add with the carry flag
    Madc = "madc",
    /// `mapa`
    Mapa = "mapa",
    /// `match`
    Match = "match",
    /// `max`
    Max = "max",
    /// `mbarrier`
    Mbarrier = "mbarrier",
    /// `membar`
    Membar = "membar",
    /// `min`
    Min = "min",
    /// `mma`
    Mma = "mma",
    /// `mov`
    Mov = "mov",
    /// `movmatrix`
    Movmatrix = "movmatrix",
    /// `mul`
    Mul = "mul",
    /// `mul24`
    Mul24 = "mul24",
    /// `multimem`
    Multimem = "multimem",
    /// `nanosleep`
    Nanosleep = "nanosleep",
    /// `neg`
    Neg = "neg",
    /// `not`
    Not = "not",
    /// `or`
    Or = "or",
    /// `pmevent`
    Pmevent = "pmevent",
    /// `popc`
    Popc = "popc",
    /// `prefetch`
    Prefetch = "prefetch",
    /// `prefetchu`
    Prefetchu = "prefetchu",
    /// `prmt`
    Prmt = "prmt",
    /// `rcp`
    Rcp = "rcp",
    /// `red` (and `red.async`)
    Red = "red",
    /// `redux`
    Redux = "redux",
    /// `rem`
    Rem = "rem",
    /// `ret`
    Ret = "ret",
    /// `rsqrt`
    Rsqrt = "rsqrt",
    /// `sad`
    Sad = "sad",
    /// `selp`
    Selp = "selp",
    /// `set`
    Set = "set",
    /// `setmaxnreg`
    Setmaxnreg = "setmaxnreg",
    /// `setp`
    Setp = "setp",
    /// `shf`
    Shf = "shf",
    /// `shfl`
    Shfl = "shfl",
    /// `shl`
    Shl = "shl",
    /// `shr`
    Shr = "shr",
    /// `sin`
    Sin = "sin",
    /// `slct`
    Slct = "slct",
    /// `sqrt`
    Sqrt = "sqrt",
    /// `st` (and `st.async`)
    St = "st",
    /// `stackrestore`
    Stackrestore = "stackrestore",
    /// `stacksave`
    Stacksave = "stacksave",
    /// `stmatrix`
    Stmatrix = "stmatrix",
    /// `sub` (with `.cc`: writes the borrow flag)
    Sub = "sub",
    /// `subc`: subtract with the borrow flag
    Subc = "subc",
    /// `suld`
    Suld = "suld",
    /// `suq`
    Suq = "suq",
    /// `sured`
    Sured = "sured",
    /// `sust`
    Sust = "sust",
    /// `szext`
    Szext = "szext",
    /// `tanh`
    Tanh = "tanh",
    /// `tcgen05`
    Tcgen05 = "tcgen05",
    /// `tensormap`
    Tensormap = "tensormap",
    /// `testp`
    Testp = "testp",
    /// `tex`
    Tex = "tex",
    /// `tld4`
    Tld4 = "tld4",
    /// `trap`
    Trap = "trap",
    /// `txq`
    Txq = "txq",
    /// `vabsdiff` (and the other video instructions below)
    Vabsdiff = "vabsdiff",
    /// `vabsdiff2`
    Vabsdiff2 = "vabsdiff2",
    /// `vabsdiff4`
    Vabsdiff4 = "vabsdiff4",
    /// `vadd`
    Vadd = "vadd",
    /// `vadd2`
    Vadd2 = "vadd2",
    /// `vadd4`
    Vadd4 = "vadd4",
    /// `vavrg2`
    Vavrg2 = "vavrg2",
    /// `vavrg4`
    Vavrg4 = "vavrg4",
    /// `vmad`
    Vmad = "vmad",
    /// `vmax`
    Vmax = "vmax",
    /// `vmax2`
    Vmax2 = "vmax2",
    /// `vmax4`
    Vmax4 = "vmax4",
    /// `vmin`
    Vmin = "vmin",
    /// `vmin2`
    Vmin2 = "vmin2",
    /// `vmin4`
    Vmin4 = "vmin4",
    /// `vote`
    Vote = "vote",
    /// `vset`
    Vset = "vset",
    /// `vset2`
    Vset2 = "vset2",
    /// `vset4`
    Vset4 = "vset4",
    /// `vshl`
    Vshl = "vshl",
    /// `vshr`
    Vshr = "vshr",
    /// `vsub`
    Vsub = "vsub",
    /// `vsub2`
    Vsub2 = "vsub2",
    /// `vsub4`
    Vsub4 = "vsub4",
    /// `wgmma`
    Wgmma = "wgmma",
    /// `wmma`
    Wmma = "wmma",
    /// `xor`
    Xor = "xor",
}
