//! The parsed module: owned, plain data that outlives the source text.

use std::ops::Range;

/// A parsed PTX module header with its entries and functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// `.version MAJOR.MINOR`.
    pub version: Version,
    /// `.target …`.
    pub target: Target,
    /// `.address_size 32|64`; `None` when absent (PTX then defaults to 32).
    pub address_size: Option<u32>,
    /// Every `.entry`, in source order.
    pub entries: Vec<Entry>,
    /// Every `.func` (definitions, declarations and `.extern` prototypes), in source order.
    pub functions: Vec<Function>,
}

impl Module {
    /// The entry named `name`, if the module has one.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.name == name)
    }

    /// The entry names, in source order.
    pub fn entry_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.name.as_str())
    }
}

/// The PTX ISA version of a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version (`8` in `.version 8.8`).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// The `.target` directive: one architecture and its modifiers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// The architecture as written, e.g. `sm_90a`, `compute_80`.
    pub arch: String,
    /// The other list items, e.g. `debug`, `texmode_independent`, `map_f64_to_f32`.
    pub modifiers: Vec<String>,
}

impl Target {
    /// The architecture's numeric compute capability: `sm_90a` → 90, `compute_80` → 80,
    /// `sm_100f` → 100.
    pub fn sm(&self) -> Option<u32> {
        let digits = self.arch_digits()?;
        digits.parse().ok()
    }

    /// The feature-set suffix of the architecture: `'a'` for `sm_90a`, `'f'` for `sm_100f`,
    /// `None` for `sm_80`.
    pub fn arch_suffix(&self) -> Option<char> {
        let digits = self.arch_digits()?;
        let rest = self.arch_number()?.get(digits.len()..)?;
        let mut chars = rest.chars();
        match (chars.next(), chars.next()) {
            (Some(suffix), None) if suffix.is_ascii_alphabetic() => Some(suffix),
            _ => None,
        }
    }

    /// Whether this target carries the `debug` modifier.
    pub fn is_debug(&self) -> bool {
        self.modifiers.iter().any(|m| m == "debug")
    }

    fn arch_number(&self) -> Option<&str> {
        self.arch
            .strip_prefix("sm_")
            .or_else(|| self.arch.strip_prefix("compute_"))
    }

    fn arch_digits(&self) -> Option<&str> {
        let number = self.arch_number()?;
        let len = number.bytes().take_while(u8::is_ascii_digit).count();
        number.get(..len).filter(|digits| !digits.is_empty())
    }
}

/// Linkage written before `.entry`/`.func`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Linkage {
    /// No linkage directive: visible only inside the module.
    #[default]
    Default,
    /// `.visible`.
    Visible,
    /// `.weak`.
    Weak,
    /// `.extern`.
    Extern,
}

/// A kernel (`.entry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry point name (also its symbol).
    pub name: String,
    /// Its linkage.
    pub linkage: Linkage,
    /// The `.param` list, in order.
    pub params: Vec<Param>,
    /// Performance directives between the parameter list and the body.
    pub directives: Vec<PerfDirective>,
    /// Byte range of the body's contents, between (excluding) its `{` and `}`; `None` for a
    /// prototype. Lex it with [`crate::Lexer::with_range`] to keep offsets absolute.
    pub body: Option<Range<usize>>,
    /// Byte offset of the `.entry` directive.
    pub offset: usize,
}

/// A device function (`.func`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The function name.
    pub name: String,
    /// Its linkage.
    pub linkage: Linkage,
    /// The return parameter list (`( .param .b32 retval )`); empty when the function returns
    /// nothing.
    pub returns: Vec<Param>,
    /// The parameter list, in order.
    pub params: Vec<Param>,
    /// Byte range of the body's contents, excluding the braces; `None` for a declaration.
    pub body: Option<Range<usize>>,
    /// Byte offset of the `.func` directive.
    pub offset: usize,
}

impl Function {
    /// Whether this is the declaration of CUDA's `assert` failure handler as NVRTC and NVCC
    /// emit it: `.extern .func __assertfail(.param .b64 message, .param .b64 file, .param .b32
    /// line, .param .b64 function, .param .b64 char_size)`, with no body and no return value.
    /// The driver supplies it: it reports the message and traps, so a call never returns.
    pub fn is_assert_fail(&self) -> bool {
        const SIZES: [u64; 5] = [8, 8, 4, 8, 8];
        self.name == "__assertfail"
            && self.linkage == Linkage::Extern
            && self.body.is_none()
            && self.returns.is_empty()
            && self.params.len() == SIZES.len()
            && self
                .params
                .iter()
                .zip(SIZES)
                .all(|(p, size)| p.array_len.is_none() && p.size_bytes() == size)
    }
}

/// One `.param` of an entry or function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The parameter name.
    pub name: String,
    /// Element type (`.b8` for byte arrays).
    pub ty: ScalarType,
    /// `.align N` written before the type.
    pub align: Option<u32>,
    /// `N` of `name[N]`; `None` for a scalar, `Some(0)` for an unsized `name[]` too.
    pub array_len: Option<u32>,
    /// The `.ptr` attribute, if any.
    pub ptr: Option<PtrAttr>,
    /// Declared in the `.reg` space instead of `.param` (a `.func` parameter or return value
    /// passed in a register).
    pub reg: bool,
    /// Byte offset of the `.param` directive.
    pub offset: usize,
}

impl Param {
    /// Size in bytes: element size times array length (1 for a scalar).
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.ty.bytes()) * u64::from(self.array_len.unwrap_or(1))
    }
}

/// `.ptr [.space] [.align N]` on a kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PtrAttr {
    /// State space the pointer points into; `None` means generic.
    pub space: Option<StateSpace>,
    /// Alignment of the pointee.
    pub align: Option<u32>,
}

/// State spaces a `.ptr` parameter may point into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// `.global`.
    Global,
    /// `.const`.
    Const,
    /// `.local`.
    Local,
    /// `.shared`.
    Shared,
}

impl StateSpace {
    /// `".global"` → `Global`, …
    pub fn from_directive(directive: &str) -> Option<Self> {
        Some(match directive {
            ".global" => Self::Global,
            ".const" => Self::Const,
            ".local" => Self::Local,
            ".shared" => Self::Shared,
            _ => return None,
        })
    }
}

/// PTX fundamental types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `.b8`
    B8,
    /// `.b16`
    B16,
    /// `.b32`
    B32,
    /// `.b64`
    B64,
    /// `.b128`
    B128,
    /// `.u8`
    U8,
    /// `.u16`
    U16,
    /// `.u32`
    U32,
    /// `.u64`
    U64,
    /// `.s8`
    S8,
    /// `.s16`
    S16,
    /// `.s32`
    S32,
    /// `.s64`
    S64,
    /// `.f16`
    F16,
    /// `.f16x2`
    F16x2,
    /// `.bf16`
    BF16,
    /// `.bf16x2`
    BF16x2,
    /// `.f32`
    F32,
    /// `.f64`
    F64,
    /// `.pred` (registers only; never a parameter type).
    Pred,
}

impl ScalarType {
    /// Size in bytes. `.pred` has no memory representation and reports 1.
    pub fn bytes(self) -> u32 {
        match self {
            Self::B8 | Self::U8 | Self::S8 | Self::Pred => 1,
            Self::B16 | Self::U16 | Self::S16 | Self::F16 | Self::BF16 => 2,
            Self::B32 | Self::U32 | Self::S32 | Self::F32 | Self::F16x2 | Self::BF16x2 => 4,
            Self::B64 | Self::U64 | Self::S64 | Self::F64 => 8,
            Self::B128 => 16,
        }
    }

    /// `".u64"` → `U64`; `None` for anything that is not a type directive.
    pub fn from_directive(directive: &str) -> Option<Self> {
        directive.strip_prefix('.').and_then(Self::from_name)
    }

    /// `"u64"` → `U64` (the name without the dot).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "b8" => Self::B8,
            "b16" => Self::B16,
            "b32" => Self::B32,
            "b64" => Self::B64,
            "b128" => Self::B128,
            "u8" => Self::U8,
            "u16" => Self::U16,
            "u32" => Self::U32,
            "u64" => Self::U64,
            "s8" => Self::S8,
            "s16" => Self::S16,
            "s32" => Self::S32,
            "s64" => Self::S64,
            "f16" => Self::F16,
            "f16x2" => Self::F16x2,
            "bf16" => Self::BF16,
            "bf16x2" => Self::BF16x2,
            "f32" => Self::F32,
            "f64" => Self::F64,
            "pred" => Self::Pred,
            _ => return None,
        })
    }

    /// The PTX name without the dot: `U64` → `"u64"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::B8 => "b8",
            Self::B16 => "b16",
            Self::B32 => "b32",
            Self::B64 => "b64",
            Self::B128 => "b128",
            Self::U8 => "u8",
            Self::U16 => "u16",
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::S8 => "s8",
            Self::S16 => "s16",
            Self::S32 => "s32",
            Self::S64 => "s64",
            Self::F16 => "f16",
            Self::F16x2 => "f16x2",
            Self::BF16 => "bf16",
            Self::BF16x2 => "bf16x2",
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::Pred => "pred",
        }
    }
}

/// Performance-tuning directives of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PerfDirective {
    /// `.maxntid x[, y[, z]]`.
    MaxNtid(Vec<u32>),
    /// `.reqntid x[, y[, z]]`.
    ReqNtid(Vec<u32>),
    /// `.minnctapersm n`.
    MinNctaPerSm(u32),
    /// `.maxnreg n`.
    MaxNreg(u32),
}
