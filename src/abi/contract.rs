//! The verifier's view of an ABI: the role of every `.param`, for proving a kernel body.

use jitseam_verify::{EntryContract, Extent, ExtentTerm, OperandRef, ParamContract};

use super::{AbiKind, AbiSpec, CustomAbi, CustomKind, ExtentOp, ParamRole};
use crate::dtype::ElementKind;

/// The body verifier's view of a spec. A trait because the spec lives in `jitseam-abi`, which
/// knows nothing of the verifier.
pub trait AbiContract {
    /// What each parameter of [`AbiSpec::expected_params`] is, for the body verifier:
    /// pointers with their access width and extent, `n`, shapes, strides, runtime values; for
    /// a custom ABI, pointers with their declared extents and integer params as symbols.
    fn contract(&self) -> EntryContract;
}

impl AbiContract for AbiSpec {
    fn contract(&self) -> EntryContract {
        let width = self.abi.width();
        let extent = match &self.abi {
            AbiKind::Strided { rank } => Extent::Strided { rank: *rank },
            AbiKind::Scalar | AbiKind::Vectorized { .. } => Extent::Dense,
            AbiKind::Custom(custom) => return custom_contract(custom),
        };
        let pointer = |operand, elem: usize| {
            let elem_bytes = u32::try_from(elem).unwrap_or(u32::MAX);
            ParamContract::Pointer {
                operand,
                access_bytes: elem_bytes.saturating_mul(u32::try_from(width).unwrap_or(1)),
                elem_bytes,
                extent: extent.clone(),
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
        EntryContract {
            params,
            block: None,
            dynamic_shared: None,
        }
    }
}

/// The contract of a custom ABI: every pointer with its declared extent (its program, with each
/// by-value param renamed to its `.param` index), integer params as symbols, float params as
/// runtime values, and the declared block and least dynamic shared bytes (every launch checks
/// both). A pointer whose program is missing gets an extent that names nothing the verifier
/// knows (every access through it is refused).
fn custom_contract(custom: &CustomAbi) -> EntryContract {
    // `.param` index of each by-value param, in order.
    let values: Vec<u32> = custom
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.kind.is_pointer())
        .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    let mut programs = custom.code.split(|op| *op == ExtentOp::End);
    let (mut inputs, mut outputs) = (0u32, 0u32);
    let mut params = Vec::with_capacity(custom.params.len());
    for param in custom.params.iter() {
        let role = match param.kind {
            CustomKind::In(_) | CustomKind::Out(_) => {
                let operand = match param.kind {
                    CustomKind::In(_) => {
                        inputs += 1;
                        OperandRef::Input(inputs - 1)
                    }
                    _ => {
                        outputs += 1;
                        OperandRef::Output(outputs - 1)
                    }
                };
                // A pointer to vectors counts vectors: its element is the whole vector.
                let bytes = u32::try_from(param.elem_bytes()).unwrap_or(u32::MAX);
                let code = programs
                    .next()
                    .map(|ops| ops.iter().map(|&op| term(op, &values)).collect())
                    .unwrap_or_else(|| vec![ExtentTerm::Param(u32::MAX)]);
                ParamContract::Pointer {
                    operand,
                    access_bytes: bytes,
                    elem_bytes: bytes,
                    extent: Extent::Declared(code),
                }
            }
            CustomKind::Value(d) if d.is_float() => ParamContract::Value,
            CustomKind::Value(d) => ParamContract::Int {
                signed: matches!(
                    d,
                    ElementKind::I8 | ElementKind::I16 | ElementKind::I32 | ElementKind::I64
                ),
                bits: u8::try_from(d.size() * 8).unwrap_or(64),
            },
        };
        params.push(role);
    }
    let dynamic_shared = custom.shared_code().map(|code| {
        code.iter()
            .filter(|op| **op != ExtentOp::End)
            .map(|&op| term(op, &values))
            .collect()
    });
    EntryContract {
        params,
        block: custom.block,
        dynamic_shared,
    }
}

/// One step of an extent program as the verifier's term; a by-value param by its `.param`
/// index (one that does not exist becomes an index no param has).
fn term(op: ExtentOp, values: &[u32]) -> ExtentTerm {
    match op {
        ExtentOp::Lit(v) => ExtentTerm::Lit(v),
        ExtentOp::Param(p) => {
            ExtentTerm::Param(values.get(usize::from(p)).copied().unwrap_or(u32::MAX))
        }
        ExtentOp::Grid(axis) => ExtentTerm::Grid(axis),
        ExtentOp::Block(axis) => ExtentTerm::Block(axis),
        ExtentOp::Add => ExtentTerm::Add,
        ExtentOp::Sub => ExtentTerm::Sub,
        ExtentOp::Mul => ExtentTerm::Mul,
        ExtentOp::Div => ExtentTerm::Div,
        ExtentOp::DivCeil => ExtentTerm::DivCeil,
        // `End` separates programs and never reaches here.
        ExtentOp::End => ExtentTerm::Param(u32::MAX),
    }
}
