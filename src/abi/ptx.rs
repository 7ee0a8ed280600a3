//! The class of a parameter as the PTX parser read it: where the ABI model meets PTX syntax.

use super::ParamClass;

/// Maps a parsed PTX parameter to its class; `None` for types that cannot be a kernel parameter
/// of any jitseam ABI (`.pred`).
pub fn ptx_param_class(param: &jitseam_ptx::Param) -> Option<ParamClass> {
    use jitseam_ptx::ScalarType as T;
    if param.array_len.is_some() {
        let size = u32::try_from(param.size_bytes()).ok()?;
        let align = param.align.unwrap_or(param.ty.bytes());
        return Some(ParamClass::Bytes { size, align });
    }
    Some(match param.ty {
        T::B8 | T::U8 | T::S8 => ParamClass::Int8,
        T::B16 | T::U16 | T::S16 => ParamClass::Int16,
        T::B32 | T::U32 | T::S32 => ParamClass::Int32,
        T::B64 | T::U64 | T::S64 => ParamClass::Int64,
        T::F32 => ParamClass::F32,
        T::F64 => ParamClass::F64,
        // A half or packed pair by value is bit-identical to the byte array NVRTC emits.
        T::F16 | T::BF16 | T::F16x2 | T::BF16x2 | T::B128 => ParamClass::Bytes {
            size: param.ty.bytes(),
            align: param.align.unwrap_or(param.ty.bytes()),
        },
        T::Pred => return None,
    })
}
