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
}

impl CustomParam {
    /// A parameter with a static name, for `const` tables.
    pub const fn new(name: &'static str, kind: CustomKind) -> Self {
        Self {
            name: Cow::Borrowed(name),
            kind,
        }
    }
}
