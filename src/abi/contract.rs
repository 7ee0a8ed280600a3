//! The verifier's view of an ABI: the role of every `.param`, for proving a kernel body.

use jitseam_ptx::verify::{EntryContract, Extent, OperandRef, ParamContract};

use super::{AbiKind, AbiSpec, ParamRole};

impl AbiSpec {
    /// What each parameter of [`AbiSpec::expected_params`] is, for the body verifier:
    /// pointers with their access width and extent, `n`, shapes, strides, runtime values.
    ///
    /// The verifier has no form for a custom ABI's declared extents yet, so a custom spec's
    /// contract calls every parameter a runtime value: no address may derive from one, and any
    /// body that touches memory through a pointer is rejected rather than judged against the
    /// wrong bounds.
    pub fn contract(&self) -> EntryContract {
        let width = self.abi.width();
        let extent = match self.abi {
            AbiKind::Strided { rank } => Extent::Strided { rank },
            AbiKind::Scalar | AbiKind::Vectorized { .. } => Extent::Dense,
            AbiKind::Custom => {
                return EntryContract {
                    params: vec![ParamContract::Value; self.expected_params().len()],
                };
            }
        };
        let pointer = |operand, elem: usize| {
            let elem_bytes = u32::try_from(elem).unwrap_or(u32::MAX);
            ParamContract::Pointer {
                operand,
                access_bytes: elem_bytes.saturating_mul(u32::try_from(width).unwrap_or(1)),
                elem_bytes,
                extent,
            }
        };
        let axis = |a: u32| u8::try_from(a).unwrap_or(u8::MAX);
        let params = self
            .expected_params()
            .into_iter()
            .map(|p| match p.role {
                ParamRole::Input(k) => pointer(
                    OperandRef::Input(k),
                    self.inputs.get(k as usize).map_or(1, |d| d.size()),
                ),
                ParamRole::Output(m) => pointer(
                    OperandRef::Output(m),
                    self.outputs.get(m as usize).map_or(1, |d| d.size()),
                ),
                ParamRole::Shape(d) => ParamContract::Shape { axis: axis(d) },
                ParamRole::InputStride { input, axis: a } => ParamContract::Stride {
                    operand: OperandRef::Input(input),
                    axis: axis(a),
                },
                ParamRole::OutputStride { output, axis: a } => ParamContract::Stride {
                    operand: OperandRef::Output(output),
                    axis: axis(a),
                },
                ParamRole::Count => ParamContract::Count,
                ParamRole::Param(_) => ParamContract::Value,
            })
            .collect();
        EntryContract { params }
    }
}
