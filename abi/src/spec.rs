//! [`AbiSpec`]: a kernel's ABI, operand dtypes and params as runtime data.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::{
    AbiKind, CustomAbi, CustomKind, ElementKind, ExpectedParam, ParamClass, ParamRole, SpecProblem,
};

/// Largest argument packet, in bytes, a kernel may take (the CUDA limit for `__global__`
/// parameters on the architectures jitseam targets).
pub const MAX_PARAM_BYTES: usize = 4096;

/// A kernel's calling convention as runtime data: the ABI, then operand and param dtypes in
/// order. Equal to the `SPEC` a typed signature declares.
///
/// The lists are `Cow` so a signature can build its spec in a `const` and a deserialized
/// artifact can own its own. In JSON the ABI is its word (`"vectorized:4"`), and a custom
/// ABI's table travels beside it as `"custom": {"signature": …, "covers": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "SpecText", into = "SpecText")]
pub struct AbiSpec {
    /// Which ABI the kernel follows; for the custom ABI, with its parameter table (order,
    /// names, extents). `inputs`, `outputs` and `params` then list its pointers and by-value
    /// params by kind, in order.
    pub abi: AbiKind,
    /// Element type of each input, in parameter order.
    pub inputs: Cow<'static, [ElementKind]>,
    /// Element type of each output, in parameter order (at least one).
    pub outputs: Cow<'static, [ElementKind]>,
    /// Type of each runtime scalar param, in parameter order.
    pub params: Cow<'static, [ElementKind]>,
}

impl AbiSpec {
    /// A spec over static lists, usable in `const` items.
    pub const fn new(
        abi: AbiKind,
        inputs: &'static [ElementKind],
        outputs: &'static [ElementKind],
        params: &'static [ElementKind],
    ) -> Self {
        Self {
            abi,
            inputs: Cow::Borrowed(inputs),
            outputs: Cow::Borrowed(outputs),
            params: Cow::Borrowed(params),
        }
    }

    /// A custom-ABI spec over static lists, usable in `const` items: `inputs`, `outputs` and
    /// `params` must list `custom`'s pointers and by-value params by kind, in order
    /// ([`AbiSpec::validate`] checks it).
    pub const fn new_custom(
        custom: CustomAbi,
        inputs: &'static [ElementKind],
        outputs: &'static [ElementKind],
        params: &'static [ElementKind],
    ) -> Self {
        Self::new(AbiKind::Custom(custom), inputs, outputs, params)
    }

    /// A custom-ABI spec from its table, with the kind lists derived from it.
    pub fn custom(custom: CustomAbi) -> Self {
        Self {
            inputs: Cow::Owned(custom.inputs()),
            outputs: Cow::Owned(custom.outputs()),
            params: Cow::Owned(custom.values()),
            abi: AbiKind::Custom(custom),
        }
    }

    /// A custom-ABI spec from text: see [`CustomAbi::parse`].
    pub fn parse_custom(
        signature: &str,
        covers: Option<&str>,
    ) -> Result<Self, crate::SignatureError> {
        CustomAbi::parse(signature, covers).map(Self::custom)
    }

    /// A spec over owned lists, for specs assembled at run time.
    pub fn owned(
        abi: AbiKind,
        inputs: Vec<ElementKind>,
        outputs: Vec<ElementKind>,
        params: Vec<ElementKind>,
    ) -> Self {
        Self {
            abi,
            inputs: Cow::Owned(inputs),
            outputs: Cow::Owned(outputs),
            params: Cow::Owned(params),
        }
    }

    /// Every operand's dtype: inputs, then outputs.
    pub fn operands(&self) -> impl Iterator<Item = ElementKind> + '_ {
        self.inputs.iter().chain(self.outputs.iter()).copied()
    }

    /// Refuses a spec no kernel can have: a vector width other than 2, 4 or 8, a vector wider
    /// than 16 bytes, a rank outside 1..=8, a custom table that is malformed or disagrees with
    /// the kind lists, no output, or a packet over [`MAX_PARAM_BYTES`].
    pub fn validate(&self) -> Result<(), SpecProblem> {
        self.abi.validate()?;
        for dtype in self.operands() {
            self.abi.validate_operand(dtype)?;
        }
        if let AbiKind::Custom(custom) = &self.abi {
            agree("inputs", &self.inputs, custom.inputs())?;
            agree("outputs", &self.outputs, custom.outputs())?;
            agree("params", &self.params, custom.values())?;
        }
        if self.outputs.is_empty() {
            return Err(SpecProblem::NoOutput);
        }
        let bytes = self.param_layout_bytes();
        if bytes > MAX_PARAM_BYTES {
            return Err(SpecProblem::TooManyParamBytes {
                bytes,
                limit: MAX_PARAM_BYTES,
            });
        }
        Ok(())
    }

    /// The exact ordered parameter list the ABI implies: pointers, shape and strides, `n`,
    /// params; for the custom ABI, its own order (pointers as 64-bit words, by-value params by
    /// their class).
    pub fn expected_params(&self) -> Vec<ExpectedParam> {
        if let AbiKind::Custom(custom) = &self.abi {
            let (mut k, mut m, mut p) = (0usize, 0usize, 0usize);
            let next = |counter: &mut usize| {
                let i = index(*counter);
                *counter += 1;
                i
            };
            return custom
                .params
                .iter()
                .map(|param| match param.kind {
                    CustomKind::In(_) => ExpectedParam {
                        role: ParamRole::Input(next(&mut k)),
                        class: ParamClass::Int64,
                    },
                    CustomKind::Out(_) => ExpectedParam {
                        role: ParamRole::Output(next(&mut m)),
                        class: ParamClass::Int64,
                    },
                    CustomKind::Value(dtype) => ExpectedParam {
                        role: ParamRole::Param(next(&mut p)),
                        class: ParamClass::of(dtype),
                    },
                })
                .collect();
        }
        let rank = self.abi.rank();
        let inputs = self.inputs.len();
        let outputs = self.outputs.len();
        let mut list = Vec::with_capacity(
            inputs + outputs + rank * (1 + inputs + outputs) + 1 + self.params.len(),
        );
        let int64 = |role| ExpectedParam {
            role,
            class: ParamClass::Int64,
        };
        list.extend((0..inputs).map(|k| int64(ParamRole::Input(index(k)))));
        list.extend((0..outputs).map(|m| int64(ParamRole::Output(index(m)))));
        if rank > 0 {
            list.extend((0..rank).map(|d| int64(ParamRole::Shape(index(d)))));
            for input in 0..inputs {
                list.extend((0..rank).map(|axis| {
                    int64(ParamRole::InputStride {
                        input: index(input),
                        axis: index(axis),
                    })
                }));
            }
            for output in 0..outputs {
                list.extend((0..rank).map(|axis| {
                    int64(ParamRole::OutputStride {
                        output: index(output),
                        axis: index(axis),
                    })
                }));
            }
        }
        list.push(int64(ParamRole::Count));
        list.extend(
            self.params
                .iter()
                .enumerate()
                .map(|(p, dtype)| ExpectedParam {
                    role: ParamRole::Param(index(p)),
                    class: ParamClass::of(*dtype),
                }),
        );
        list
    }

    /// Packet size with every param at its natural alignment, computed without building the
    /// list so a huge deserialized spec is refused cheaply.
    fn param_layout_bytes(&self) -> usize {
        if self.abi.is_custom() {
            let mut bytes = 0usize;
            for class in self.expected_params().iter().map(|p| p.class) {
                bytes = bytes
                    .next_multiple_of(class.align())
                    .saturating_add(class.size());
            }
            return bytes;
        }
        let rank = self.abi.rank();
        let operands = self.inputs.len().saturating_add(self.outputs.len());
        let int64_slots = operands
            .saturating_add(rank.saturating_mul(operands.saturating_add(1)))
            .saturating_add(1);
        let mut bytes = int64_slots.saturating_mul(8);
        for dtype in self.params.iter() {
            let class = ParamClass::of(*dtype);
            bytes = bytes
                .next_multiple_of(class.align())
                .saturating_add(class.size());
        }
        bytes
    }
}

/// A custom spec's kind list agrees with its table.
fn agree(what: &str, listed: &[ElementKind], table: Vec<ElementKind>) -> Result<(), SpecProblem> {
    if listed == table.as_slice() {
        Ok(())
    } else {
        Err(SpecProblem::Custom {
            reason: format!("the spec lists {what} {listed:?}, its parameter table {table:?}"),
        })
    }
}

/// The serde form of an [`AbiSpec`]: the ABI by its word, and a custom ABI's table beside it.
#[derive(Serialize, Deserialize)]
struct SpecText {
    abi: String,
    inputs: Vec<ElementKind>,
    outputs: Vec<ElementKind>,
    #[serde(default)]
    params: Vec<ElementKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    custom: Option<CustomAbi>,
}

impl TryFrom<SpecText> for AbiSpec {
    type Error = String;
    fn try_from(text: SpecText) -> Result<Self, Self::Error> {
        let abi = match (text.abi.as_str(), text.custom) {
            ("custom", Some(custom)) => AbiKind::Custom(custom),
            ("custom", None) => {
                return Err("the `custom` abi needs its parameter table (`custom`)".to_owned());
            }
            (word, None) => word.parse()?,
            (word, Some(_)) => {
                return Err(format!("a `{word}` spec carries a custom parameter table"));
            }
        };
        Ok(Self::owned(abi, text.inputs, text.outputs, text.params))
    }
}

impl From<AbiSpec> for SpecText {
    fn from(spec: AbiSpec) -> Self {
        let abi = spec.abi.to_string();
        Self {
            abi,
            inputs: spec.inputs.into_owned(),
            outputs: spec.outputs.into_owned(),
            params: spec.params.into_owned(),
            custom: match spec.abi {
                AbiKind::Custom(custom) => Some(custom),
                AbiKind::Scalar | AbiKind::Vectorized { .. } | AbiKind::Strided { .. } => None,
            },
        }
    }
}

/// Parameter indices fit `u32` because a valid spec has at most 4096 bytes of parameters; an
/// invalid one never reaches a launcher, so saturating is only for totality.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementKind::*;

    #[test]
    fn strided_list_follows_design_order() {
        let spec = AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F32, F32], &[F32], &[F64]);
        let roles: Vec<_> = spec.expected_params().iter().map(|p| p.role).collect();
        use ParamRole::*;
        assert_eq!(
            roles,
            [
                Input(0),
                Input(1),
                Output(0),
                Shape(0),
                Shape(1),
                InputStride { input: 0, axis: 0 },
                InputStride { input: 0, axis: 1 },
                InputStride { input: 1, axis: 0 },
                InputStride { input: 1, axis: 1 },
                OutputStride { output: 0, axis: 0 },
                OutputStride { output: 0, axis: 1 },
                Count,
                Param(0),
            ]
        );
        assert_eq!(spec.expected_params()[12].class, ParamClass::F64);
    }

    #[test]
    fn validate_refuses_each_problem() {
        let v = |w, d: &'static [ElementKind]| {
            AbiSpec::new(AbiKind::Vectorized { width: w }, d, d, &[])
        };
        assert_eq!(
            v(3, &[F32]).validate(),
            Err(SpecProblem::VectorWidth { width: 3 })
        );
        assert_eq!(
            v(4, &[F64]).validate(),
            Err(SpecProblem::VectorTooWide {
                width: 4,
                dtype: F64,
                bytes: 32
            })
        );
        assert_eq!(v(8, &[F16]).validate(), Ok(()));
        let s = |r| AbiSpec::new(AbiKind::Strided { rank: r }, &[F32], &[F32], &[]);
        assert_eq!(s(0).validate(), Err(SpecProblem::Rank { rank: 0 }));
        assert_eq!(s(9).validate(), Err(SpecProblem::Rank { rank: 9 }));
        assert_eq!(s(8).validate(), Ok(()));
        assert_eq!(
            AbiSpec::new(AbiKind::Scalar, &[F32], &[], &[]).validate(),
            Err(SpecProblem::NoOutput)
        );
        let many = AbiSpec::owned(AbiKind::Scalar, vec![F32; 600], vec![F32], vec![]);
        assert_eq!(
            many.validate(),
            Err(SpecProblem::TooManyParamBytes {
                bytes: 4816,
                limit: MAX_PARAM_BYTES
            })
        );
    }

    #[test]
    fn serde_spelling_is_stable() {
        let spec = AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32], &[F32], &[]);
        let json = serde_json::to_string(&spec).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"abi":"vectorized:4","inputs":["f32"],"outputs":["f32"],"params":[]}"#
        );
        let back: Result<AbiSpec, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(spec));
    }
}
