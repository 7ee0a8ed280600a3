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

/// How far a pointer parameter's operand reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extent {
    /// `n` accesses of `access_bytes` each, contiguous from the base (`n` = the `Count` param).
    Dense,
    /// A strided view: element `Σ c_k · stride_k` with `0 ≤ c_k < shape_k` for `rank` axes.
    Strided {
        /// Number of axes.
        rank: u8,
    },
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
}

/// The roles of every `.param` of an entry, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EntryContract {
    /// One per `.param`, in order.
    pub params: Vec<ParamContract>,
}
