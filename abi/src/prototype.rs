//! The CUDA C declaration of a kernel that follows an [`AbiSpec`]: what to write so that `load()`
//! accepts the kernel, printed next to a parameter-list mismatch.

use std::fmt::Write as _;

use crate::{AbiKind, AbiSpec, CustomKind, ElementKind, ParamRole};

impl AbiSpec {
    /// An `extern "C" __global__` declaration of `name` whose parameter list is exactly the one
    /// this spec implies, e.g. `extern "C" __global__ void k(const float* __restrict__ in0,
    /// float* __restrict__ out0, long long n);`. Packed half vectors get the struct they need on
    /// the line before.
    pub fn cuda_prototype(&self, name: &str) -> String {
        if let AbiKind::Custom(custom) = &self.abi {
            let params: Vec<String> = custom
                .params
                .iter()
                .map(|param| match param.kind {
                    CustomKind::In(d) => {
                        format!(
                            "const {}* __restrict__ {}",
                            element(d, param.lanes),
                            param.name
                        )
                    }
                    CustomKind::Out(d) => {
                        format!("{}* __restrict__ {}", element(d, param.lanes), param.name)
                    }
                    CustomKind::Value(d) => format!("{} {}", scalar(d), param.name),
                })
                .collect();
            return format!(
                "extern \"C\" __global__ void {name}({});",
                params.join(", ")
            );
        }
        let mut out = String::new();
        let width = self.abi.width();
        let mut structs: Vec<ElementKind> = Vec::new();
        let mut params = Vec::new();
        for param in self.expected_params() {
            let declared = match param.role {
                ParamRole::Input(k) => {
                    let kind = self.inputs.get(k as usize).copied();
                    pointer(kind, width, name, &mut structs, true, param.role)
                }
                ParamRole::Output(m) => {
                    let kind = self.outputs.get(m as usize).copied();
                    pointer(kind, width, name, &mut structs, false, param.role)
                }
                ParamRole::Param(p) => {
                    let kind = self.params.get(p as usize).copied();
                    format!("{} {}", kind.map_or("?", scalar), param.role.short_name())
                }
                role => {
                    let comment = match (&self.abi, role) {
                        (AbiKind::Vectorized { width }, ParamRole::Count) => {
                            format!(" /* vectors: elements / {width} */")
                        }
                        (AbiKind::Strided { .. }, ParamRole::Count) => {
                            " /* product of the shape */".to_owned()
                        }
                        _ => String::new(),
                    };
                    format!("long long {}{comment}", role.short_name())
                }
            };
            params.push(declared);
        }
        for kind in structs {
            let pair = if kind == ElementKind::BF16 {
                "__nv_bfloat162"
            } else {
                "__half2"
            };
            let fields: Vec<String> = (0..width / 2).map(|i| format!("f{i}")).collect();
            let _ = writeln!(
                out,
                "struct __align__({}) {name}_{}x{width} {{ {pair} {}; }};",
                width * 2,
                kind.name(),
                fields.join(", ")
            );
        }
        let _ = write!(
            out,
            "extern \"C\" __global__ void {name}({});",
            params.join(", ")
        );
        out
    }
}

/// One operand pointer: `const float* __restrict__ in0`, `float4* __restrict__ out0`, …
fn pointer(
    kind: Option<ElementKind>,
    width: usize,
    name: &str,
    structs: &mut Vec<ElementKind>,
    input: bool,
    role: ParamRole,
) -> String {
    let Some(kind) = kind else {
        return format!("void* {}", role.short_name());
    };
    let pointee = match (kind, width) {
        (_, 1) => scalar(kind).to_owned(),
        (ElementKind::F32, 2 | 4) => format!("float{width}"),
        (ElementKind::F64, 2) => "double2".to_owned(),
        (ElementKind::F16 | ElementKind::BF16, _) => {
            if !structs.contains(&kind) {
                structs.push(kind);
            }
            format!("{name}_{}x{width}", kind.name())
        }
        _ => format!("/* {width} x {} */ void", scalar(kind)),
    };
    let constness = if input { "const " } else { "" };
    format!("{constness}{pointee}* __restrict__ {}", role.short_name())
}

/// The CUDA C spelling of one element or param type.
/// A custom pointer's element: the scalar, or CUDA's vector type of it (`float4`, `uint2`);
/// a vector CUDA has no type for is the scalar with the vector named beside it.
fn element(kind: ElementKind, lanes: u8) -> String {
    let base = match kind {
        ElementKind::F32 => "float",
        ElementKind::F64 => "double",
        ElementKind::I8 => "char",
        ElementKind::U8 => "uchar",
        ElementKind::I16 => "short",
        ElementKind::U16 => "ushort",
        ElementKind::I32 => "int",
        ElementKind::U32 => "uint",
        ElementKind::I64 => "longlong",
        ElementKind::U64 => "ulonglong",
        ElementKind::F16 | ElementKind::BF16 => "",
    };
    match lanes {
        1 => scalar(kind).to_owned(),
        2 | 4 if !base.is_empty() => format!("{base}{lanes}"),
        _ => format!("{} /* {kind}x{lanes} */", scalar(kind)),
    }
}

fn scalar(kind: ElementKind) -> &'static str {
    match kind {
        ElementKind::F32 => "float",
        ElementKind::F64 => "double",
        ElementKind::F16 => "__half",
        ElementKind::BF16 => "__nv_bfloat16",
        ElementKind::I8 => "signed char",
        ElementKind::U8 => "unsigned char",
        ElementKind::I16 => "short",
        ElementKind::U16 => "unsigned short",
        ElementKind::I32 => "int",
        ElementKind::U32 => "unsigned",
        ElementKind::I64 => "long long",
        ElementKind::U64 => "unsigned long long",
    }
}

#[cfg(test)]
mod tests {
    use crate::ElementKind::*;
    use crate::{AbiKind, AbiSpec};

    #[test]
    fn every_abi_spells_its_parameter_list() {
        let scalar = AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[F32]);
        assert_eq!(
            scalar.cuda_prototype("k"),
            "extern \"C\" __global__ void k(const float* __restrict__ in0, \
             const float* __restrict__ in1, float* __restrict__ out0, long long n, float p0);"
        );
        let v4 = AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32], &[F32], &[]);
        assert_eq!(
            v4.cuda_prototype("k"),
            "extern \"C\" __global__ void k(const float4* __restrict__ in0, \
             float4* __restrict__ out0, long long n /* vectors: elements / 4 */);"
        );
        let r2 = AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F64], &[F64], &[F64]);
        assert_eq!(
            r2.cuda_prototype("k"),
            "extern \"C\" __global__ void k(const double* __restrict__ in0, \
             double* __restrict__ out0, long long shape0, long long shape1, long long s0_0, \
             long long s0_1, long long so0_0, long long so0_1, \
             long long n /* product of the shape */, double p0);"
        );
        let h8 = AbiSpec::new(AbiKind::Vectorized { width: 8 }, &[F16], &[F16], &[]);
        assert_eq!(
            h8.cuda_prototype("k"),
            "struct __align__(16) k_f16x8 { __half2 f0, f1, f2, f3; };\n\
             extern \"C\" __global__ void k(const k_f16x8* __restrict__ in0, \
             k_f16x8* __restrict__ out0, long long n /* vectors: elements / 8 */);"
        );
    }
}
