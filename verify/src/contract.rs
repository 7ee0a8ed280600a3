//! What the caller promises about each `.param` of an entry: its role in the ABI.

/// One operand a pointer parameter is the base of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperandRef {
    /// Input `k`: read-only.
    Input(u32),
    /// Output `m`: read and written.
    Output(u32),
}

impl OperandRef {
    /// Whether stores and atomics may go through this operand.
    pub const fn writable(self) -> bool {
        matches!(self, Self::Output(_))
    }
}

impl std::fmt::Display for OperandRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(k) => write!(f, "input {k}"),
            Self::Output(m) => write!(f, "output {m}"),
        }
    }
}

/// One step of a declared extent, in postfix order (see [`Extent::Declared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtentTerm {
    /// Pushes an integer literal.
    Lit(u64),
    /// Pushes the value of `.param` `index`, whose role must be [`ParamContract::Int`].
    Param(u32),
    /// Pushes `%nctaid` along an axis (0 = x, 1 = y, 2 = z).
    Grid(u8),
    /// Pushes `%ntid` along an axis.
    Block(u8),
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `floor(a / b)`.
    Div,
    /// `ceil(a / b)`.
    DivCeil,
}

/// How far a pointer parameter's operand reaches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Extent {
    /// `n` accesses of `access_bytes` each, contiguous from the base (`n` = the `Count` param).
    Dense,
    /// A strided view: element `Σ c_k · stride_k` with `0 ≤ c_k < shape_k` for `rank` axes.
    Strided {
        /// Number of axes.
        rank: u8,
    },
    /// `E` accesses of `access_bytes` each, contiguous from the base, where `E` is the value of
    /// a declared expression (postfix) over integer params, the launch geometry and literals.
    ///
    /// The caller promises that at every launch each such expression, evaluated with exact
    /// (checked, never wrapping) unsigned arithmetic, has a value: every param it names is
    /// `≥ 0`, no step leaves `[0, 2^64)` and no divisor is 0; and that the operand covers
    /// that many accesses. Launches of a contract with a declared extent may be
    /// three-dimensional (see [`EntryContract::three_dimensional`]).
    Declared(Vec<ExtentTerm>),
}

/// The role of one `.param`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ParamContract {
    /// The base address of an operand.
    Pointer {
        /// Which operand.
        operand: OperandRef,
        /// Bytes of one access: element size × vector width.
        access_bytes: u32,
        /// Bytes of one element.
        elem_bytes: u32,
        /// How far it reaches.
        extent: Extent,
    },
    /// `n`: elements (scalar, strided) or vectors (vectorized).
    Count,
    /// The extent of axis `axis` (strided).
    Shape {
        /// The axis.
        axis: u8,
    },
    /// The stride (in elements, signed) of `operand` along `axis` (strided).
    Stride {
        /// Whose stride.
        operand: OperandRef,
        /// The axis.
        axis: u8,
    },
    /// A runtime scalar: data only, never an address ingredient.
    Value,
    /// An integer scalar of `bits` bits (signed or not) whose value is a symbol: guards such
    /// as `i < n` bound an index by it, and declared extents may name it.
    Int {
        /// Two's complement (`true`) or unsigned.
        signed: bool,
        /// Width: 8, 16, 32 or 64.
        bits: u8,
    },
    /// A hidden parameter of a guarded entry (see [`crate::Guarded`]): appended by the guard
    /// rewrite after the declared ones, filled in by the launcher.
    Guard(crate::proof::GuardParam),
}

/// The roles of every `.param` of an entry, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EntryContract {
    /// One per `.param`, in order.
    pub params: Vec<ParamContract>,
    /// The exact block `(x, y, z)` of every launch, when the caller guarantees one (a declared
    /// launch shape, `.reqntid`): the proof takes `%ntid = (x, y, z)` and `%tid < (x, y, z)`
    /// as facts. For a one-dimensional contract only `x` is used (`y` and `z` are 1 there).
    pub block: Option<[u32; 3]>,
    /// The least dynamic shared bytes every launch gives, when the caller guarantees it (a
    /// declared `shared = EXPR`): a program over the params and the geometry like a declared
    /// extent's, which every launch evaluates and checks. The proof takes the launch's dynamic
    /// shared bytes `≥` its value as a fact.
    pub dynamic_shared: Option<Vec<ExtentTerm>>,
}

impl EntryContract {
    /// Whether launches may be three-dimensional: true for a contract with a declared extent or
    /// an integer param (the custom ABI's), whose launches take any grid and block. Otherwise
    /// launches are one-dimensional (`%tid.y = … = 0`, `%ntid.y = … = 1`).
    pub fn three_dimensional(&self) -> bool {
        self.params.iter().any(|p| {
            matches!(
                p,
                ParamContract::Int { .. }
                    | ParamContract::Pointer {
                        extent: Extent::Declared(_),
                        ..
                    }
            )
        })
    }
}
