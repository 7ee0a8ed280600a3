//! One kernel parameter as an ABI expects it: its role and its PTX class.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ElementKind;

/// How a parameter appears in a PTX `.param` list, compared by class and size only.
///
/// PTX keeps no signedness and does not tell a pointer from a 64-bit integer, so those are one
/// class: a pointer and `n` are both [`ParamClass::Int64`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamClass {
    /// `.u8`, `.s8`, `.b8`.
    Int8,
    /// `.u16`, `.s16`, `.b16`.
    Int16,
    /// `.u32`, `.s32`, `.b32`.
    Int32,
    /// `.u64`, `.s64`, `.b64`: 64-bit integers and device pointers.
    Int64,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
    /// `.align A .b8 name[N]`: a struct, vector or half passed by value.
    Bytes {
        /// `N`.
        size: u32,
        /// `A`.
        align: u32,
    },
}

impl ParamClass {
    /// How a by-value parameter of element kind `kind` appears in a PTX `.param` list.
    ///
    /// Signedness is not part of the class: PTX keeps only widths for integers. Halves travel as
    /// a two-byte aligned byte array because that is what NVRTC emits for `__half` by value.
    pub const fn of(kind: ElementKind) -> Self {
        match kind {
            ElementKind::F32 => Self::F32,
            ElementKind::F64 => Self::F64,
            ElementKind::F16 | ElementKind::BF16 => Self::Bytes { size: 2, align: 2 },
            ElementKind::I8 | ElementKind::U8 => Self::Int8,
            ElementKind::I16 | ElementKind::U16 => Self::Int16,
            ElementKind::I32 | ElementKind::U32 => Self::Int32,
            ElementKind::I64 | ElementKind::U64 => Self::Int64,
        }
    }

    /// The class as a `.param` declaration spells it: `.u64`, `.f32`, `.align 2 .b8 [2]`.
    pub fn ptx_spelling(self) -> String {
        match self {
            Self::Int8 => ".u8".to_owned(),
            Self::Int16 => ".u16".to_owned(),
            Self::Int32 => ".u32".to_owned(),
            Self::Int64 => ".u64".to_owned(),
            Self::F32 => ".f32".to_owned(),
            Self::F64 => ".f64".to_owned(),
            Self::Bytes { size, align } => format!(".align {align} .b8 [{size}]"),
        }
    }

    /// Bytes the parameter occupies in the argument packet.
    pub const fn size(self) -> usize {
        match self {
            Self::Int8 => 1,
            Self::Int16 => 2,
            Self::Int32 | Self::F32 => 4,
            Self::Int64 | Self::F64 => 8,
            Self::Bytes { size, .. } => size as usize,
        }
    }

    /// Alignment of the parameter in the argument packet.
    pub const fn align(self) -> usize {
        match self {
            Self::Bytes { align, .. } => align as usize,
            other => other.size(),
        }
    }
}

impl fmt::Display for ParamClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int8 => f.write_str("8-bit integer"),
            Self::Int16 => f.write_str("16-bit integer"),
            Self::Int32 => f.write_str("32-bit integer"),
            Self::Int64 => f.write_str("64-bit integer or pointer"),
            Self::F32 => f.write_str(".f32"),
            Self::F64 => f.write_str(".f64"),
            Self::Bytes { size, align } => write!(f, ".align {align} .b8 [{size}]"),
        }
    }
}

/// What a parameter slot means to the launcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamRole {
    /// Device pointer of input `k`.
    Input(u32),
    /// Device pointer of output `m`.
    Output(u32),
    /// Extent of axis `d` (strided ABI).
    Shape(u32),
    /// Stride of input `input` along `axis`, in elements (strided ABI).
    InputStride {
        /// Which input.
        input: u32,
        /// Which axis.
        axis: u32,
    },
    /// Stride of output `output` along `axis`, in elements (strided ABI).
    OutputStride {
        /// Which output.
        output: u32,
        /// Which axis.
        axis: u32,
    },
    /// `n`: elements (scalar, strided) or vectors (vectorized).
    Count,
    /// Runtime scalar parameter `p`.
    Param(u32),
}

impl ParamRole {
    /// The parameter's name in the ABI's templates: `in0`, `out0`, `shape1`, `s0_1` (input 0's
    /// stride on axis 1), `so0_1`, `n`, `p0`.
    pub fn short_name(self) -> String {
        match self {
            Self::Input(k) => format!("in{k}"),
            Self::Output(m) => format!("out{m}"),
            Self::Shape(d) => format!("shape{d}"),
            Self::InputStride { input, axis } => format!("s{input}_{axis}"),
            Self::OutputStride { output, axis } => format!("so{output}_{axis}"),
            Self::Count => "n".to_owned(),
            Self::Param(p) => format!("p{p}"),
        }
    }
}

impl fmt::Display for ParamRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(k) => write!(f, "pointer of input {k}"),
            Self::Output(m) => write!(f, "pointer of output {m}"),
            Self::Shape(d) => write!(f, "extent of axis {d}"),
            Self::InputStride { input, axis } => {
                write!(f, "stride of input {input} on axis {axis}")
            }
            Self::OutputStride { output, axis } => {
                write!(f, "stride of output {output} on axis {axis}")
            }
            Self::Count => f.write_str("count n"),
            Self::Param(p) => write!(f, "runtime param {p}"),
        }
    }
}

/// One slot of the exact ordered parameter list an ABI implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExpectedParam {
    /// What the slot carries.
    pub role: ParamRole,
    /// How it must appear in PTX.
    pub class: ParamClass,
}
