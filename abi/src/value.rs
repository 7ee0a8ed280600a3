//! [`ParamValue`]: a runtime scalar param with its exact type, and its bytes in a packet.

use crate::ElementKind;

/// A runtime scalar param, with its exact type (params are never narrowed or widened).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// `half::f16`.
    F16(half::f16),
    /// `half::bf16`.
    BF16(half::bf16),
    /// `i8`.
    I8(i8),
    /// `u8`.
    U8(u8),
    /// `i16`.
    I16(i16),
    /// `u16`.
    U16(u16),
    /// `i32`.
    I32(i32),
    /// `i64`.
    I64(i64),
    /// `u32`.
    U32(u32),
    /// `u64`.
    U64(u64),
}

macro_rules! param_values {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        impl ParamValue {
            /// The value's element kind.
            pub const fn kind(&self) -> ElementKind {
                match self { $(Self::$variant(_) => ElementKind::$variant,)* }
            }

            /// Writes the value little-endian into its packet slot (see [`copy_le`]).
            #[inline]
            pub fn write_slot(&self, out: &mut [u8]) {
                match self { $(Self::$variant(v) => copy_le(out, v.to_le_bytes()),)* }
            }
        }
        $(impl From<$ty> for ParamValue {
            fn from(value: $ty) -> Self { Self::$variant(value) }
        })*
    };
}

param_values! {
    F32(f32), F64(f64), F16(half::f16), BF16(half::bf16), I8(i8), U8(u8), I16(i16), U16(u16),
    I32(i32), I64(i64), U32(u32), U64(u64),
}

/// Writes `value` (little-endian bytes) into a packet `slot`. The verified layout gives every
/// slot exactly its value's size, so this is one fixed-size store; a mismatched slot gets the
/// common prefix, never a panic.
#[inline]
pub fn copy_le<const N: usize>(slot: &mut [u8], value: [u8; N]) {
    match <&mut [u8; N]>::try_from(&mut *slot) {
        Ok(slot) => *slot = value,
        Err(_) => {
            for (to, from) in slot.iter_mut().zip(value) {
                *to = from;
            }
        }
    }
}
