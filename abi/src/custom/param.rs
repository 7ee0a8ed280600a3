//! One parameter of a custom-ABI kernel: its name and whether it is a pointer (in or out) or a
//! by-value scalar.

use std::borrow::Cow;

use crate::ElementKind;

/// What one parameter of a custom kernel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CustomKind {
    /// A pointer the kernel only reads: `const T*`.
    In(ElementKind),
    /// A pointer the kernel writes (and may read): `T*`.
    Out(ElementKind),
    /// A scalar passed by value.
    Value(ElementKind),
}

impl CustomKind {
    /// The element (pointers) or value (scalars) type.
    pub const fn dtype(self) -> ElementKind {
        match self {
            Self::In(d) | Self::Out(d) | Self::Value(d) => d,
        }
    }

    /// Whether the parameter is a pointer.
    pub const fn is_pointer(self) -> bool {
        !matches!(self, Self::Value(_))
    }
}

/// One parameter of a custom kernel, in the kernel's order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CustomParam {
    /// The declared name (what extents and messages call it).
    pub name: Cow<'static, str>,
    /// Pointer or scalar, and its type.
    pub kind: CustomKind,
    /// Elements per vector of a pointer to vectors (`f32x4`: 4); 1 for scalars.
    pub lanes: u8,
}

impl CustomParam {
    /// A parameter with a static name, for `const` tables.
    pub const fn new(name: &'static str, kind: CustomKind) -> Self {
        Self::vector(name, kind, 1)
    }

    /// A pointer to vectors of `lanes` elements (`f32x4`), with a static name.
    pub const fn vector(name: &'static str, kind: CustomKind, lanes: u8) -> Self {
        Self {
            name: Cow::Borrowed(name),
            kind,
            lanes,
        }
    }

    /// Bytes of one element the extent counts: a vector of [`Self::lanes`] elements for a
    /// pointer to vectors, which is also the alignment its base needs.
    pub const fn elem_bytes(&self) -> usize {
        self.kind.dtype().size() * self.lanes as usize
    }

    /// The element type as the signature text spells it: `f32`, `f32x4`.
    pub fn type_name(&self) -> String {
        if self.lanes > 1 {
            format!("{}x{}", self.kind.dtype(), self.lanes)
        } else {
            self.kind.dtype().name().to_owned()
        }
    }
}

/// Reads a vector element type's spelling, `f32x4`: an element kind and a lane count of 2, 4,
/// 8 or 16 that makes a vector of at most 16 bytes (the widest access a thread makes).
pub fn vector_type(word: &str) -> Option<(ElementKind, u8)> {
    let (kind, lanes) = word.rsplit_once('x')?;
    let kind = ElementKind::from_name(kind)?;
    let lanes: u8 = lanes.parse().ok()?;
    (matches!(lanes, 2 | 4 | 8 | 16) && kind.size() * usize::from(lanes) <= 16)
        .then_some((kind, lanes))
}
