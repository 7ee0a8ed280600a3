//! [`ElementKind`]: the element type of a buffer or a by-value param, known at run time.

use serde::{Deserialize, Serialize};

/// The element type of a buffer or a by-value kernel parameter, known at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementKind {
    F32,
    F64,
    F16,
    BF16,
    I8,
    U8,
    I16,
    U16,
    I32,
    I64,
    U32,
    U64,
}

impl ElementKind {
    /// Every kind, in declaration order.
    pub const ALL: [ElementKind; 12] = [
        Self::F32,
        Self::F64,
        Self::F16,
        Self::BF16,
        Self::I8,
        Self::U8,
        Self::I16,
        Self::U16,
        Self::I32,
        Self::I64,
        Self::U32,
        Self::U64,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::F16 | Self::BF16 | Self::I16 | Self::U16 => 2,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 => 8,
        }
    }

    /// Natural alignment of one element in bytes (equal to its size for every supported kind).
    pub const fn align(self) -> usize {
        self.size()
    }

    /// Whether the kind is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F64 | Self::F16 | Self::BF16)
    }

    /// The lowercase name used in specs, the CLI and messages (`f32`, `bf16`, `u64`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::F16 => "f16",
            Self::BF16 => "bf16",
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::I32 => "i32",
            Self::I64 => "i64",
            Self::U32 => "u32",
            Self::U64 => "u64",
        }
    }

    /// Parses a name produced by [`ElementKind::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Every kind's name in [`ElementKind::ALL`]'s order, comma-separated (`f32, f64, …, u64`),
    /// for messages that say what is accepted.
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl std::fmt::Display for ElementKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in ElementKind::ALL {
            assert_eq!(ElementKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(ElementKind::from_name("f128"), None);
    }
}
