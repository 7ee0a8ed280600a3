//! Element types: the runtime [`ElementKind`] (from `jitseam-abi`, where the ABI model lives) and
//! the sealed compile-time [`Element`] trait. The seal stays here, next to the byte views whose
//! soundness rests on it.

pub use jitseam_abi::ElementKind;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can live in a device buffer or travel as a kernel parameter.
///
/// Sealed: the set of kinds is closed, because every kind needs a PTX spelling and an emulator
/// implementation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a jitseam element type",
    label = "not an element type",
    note = "supported element types: f32, f64, half::f16, half::bf16, i8, u8, i16, u16, i32, i64, u32, u64"
)]
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The runtime kind of this type.
    const KIND: ElementKind;

    /// Appends the little-endian bytes of `self` (the device byte order).
    fn write_le(self, out: &mut Vec<u8>);

    /// Reads a value back from exactly `size_of::<Self>()` little-endian bytes.
    fn read_le(bytes: &[u8]) -> Option<Self>;
}

macro_rules! impl_element {
    ($($ty:ty => $kind:ident),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl Element for $ty {
            const KIND: ElementKind = ElementKind::$kind;

            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn read_le(bytes: &[u8]) -> Option<Self> {
                Some(<$ty>::from_le_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}

impl_element! {
    f32 => F32,
    f64 => F64,
    half::f16 => F16,
    half::bf16 => BF16,
    i8 => I8,
    u8 => U8,
    i16 => I16,
    u16 => U16,
    i32 => I32,
    i64 => I64,
    u32 => U32,
    u64 => U64,
}

/// The bytes of `values` in the device's byte order (little-endian), without copying.
#[cfg(target_endian = "little")]
pub(crate) fn le_bytes<T: Element>(values: &[T]) -> &[u8] {
    // SAFETY: every `Element` (the trait is sealed) is a plain integer or float type, or
    // `half`'s `f16`/`bf16` (`repr(transparent)` over `u16`): no padding, no invalid bit
    // pattern, stored little-endian on this host; the byte slice covers exactly the same
    // memory, borrowed for the same lifetime, and `u8` has alignment 1.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}

/// The bytes of `values` in the device's byte order, for writing, without copying.
#[cfg(target_endian = "little")]
pub(crate) fn le_bytes_mut<T: Element>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: as for `le_bytes`; and since every bit pattern is a valid `T`, any bytes written
    // through the slice leave valid values. The exclusive borrow is moved into the result.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), size_of_val(values)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_rust_types() {
        assert_eq!(<f32 as Element>::KIND.size(), size_of::<f32>());
        assert_eq!(
            <half::bf16 as Element>::KIND.size(),
            size_of::<half::bf16>()
        );
        assert_eq!(<u64 as Element>::KIND.size(), size_of::<u64>());
        assert_eq!(<i8 as Element>::KIND.size(), size_of::<i8>());
    }

    #[test]
    fn le_round_trip() {
        let mut bytes = Vec::new();
        half::bf16::from_f32(1.5).write_le(&mut bytes);
        (-3i64).write_le(&mut bytes);
        assert_eq!(
            half::bf16::read_le(&bytes[..2]),
            Some(half::bf16::from_f32(1.5))
        );
        assert_eq!(i64::read_le(&bytes[2..]), Some(-3));
        assert_eq!(i64::read_le(&bytes[..3]), None);
    }
}
