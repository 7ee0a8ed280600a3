//! Where each parameter sits in the argument packet.

use crate::{ExpectedParam, ParamClass, ParamRole};

/// One parameter with its byte offset in the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedParam {
    /// What the slot carries.
    pub role: ParamRole,
    /// Its PTX class (size and alignment).
    pub class: ParamClass,
    /// Offset from the packet's start, a multiple of `class.align()`.
    pub offset: usize,
    /// For a pointer: the alignment in bytes the kernel declares for what it points to
    /// (`.ptr .align N`), which every launch checks against the operand's address; 1 otherwise.
    pub pointee_align: u32,
}

/// The packet layout of one kernel, computed once at `load()` and reused by every launch.
///
/// Offsets follow the C rule (each parameter at the next multiple of its alignment) — the same
/// layout the driver's `cuFuncGetParamInfo` reports, and the one the emulator reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamLayout {
    params: Vec<PlacedParam>,
    size: usize,
    /// Whether any pointer declares a pointee alignment above 1, so launches of the (usual)
    /// kernels that declare none skip the check.
    pointee_aligned: bool,
    /// The pack plan of a dense kernel, found once here so that a launch writes its leading
    /// words without looking at their roles.
    dense: Option<DensePrefix>,
}

/// A layout that starts with the dense ABI's words, in order: one pointer per input, one per
/// output, then the count, each a 64-bit word at the next multiple of 8 bytes from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DensePrefix {
    /// Leading input pointers.
    pub inputs: usize,
    /// Output pointers after them.
    pub outputs: usize,
}

impl DensePrefix {
    /// Parameters the prefix covers: the pointers and the count.
    pub fn len(&self) -> usize {
        self.inputs + self.outputs + 1
    }

    /// Never: the prefix always holds the count.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The prefix of `params`, if they start with one.
    fn of(params: &[PlacedParam]) -> Option<Self> {
        let word = |index: usize| {
            params
                .get(index)
                .filter(|p| p.class == ParamClass::Int64 && p.offset == index * 8)
                .map(|p| p.role)
        };
        let inputs = (0..)
            .take_while(|&k| word(k) == u32::try_from(k).ok().map(ParamRole::Input))
            .count();
        let outputs = (0..)
            .take_while(|&m| word(inputs + m) == u32::try_from(m).ok().map(ParamRole::Output))
            .count();
        (word(inputs + outputs) == Some(ParamRole::Count)).then_some(Self { inputs, outputs })
    }
}

impl ParamLayout {
    /// Places `expected` in order.
    pub fn new(expected: &[ExpectedParam]) -> Self {
        let mut offset = 0usize;
        let params: Vec<PlacedParam> = expected
            .iter()
            .map(|p| {
                let at = offset.next_multiple_of(p.class.align().max(1));
                offset = at + p.class.size();
                PlacedParam {
                    role: p.role,
                    class: p.class,
                    offset: at,
                    pointee_align: 1,
                }
            })
            .collect();
        let dense = DensePrefix::of(&params);
        Self {
            params,
            size: offset,
            pointee_aligned: false,
            dense,
        }
    }

    /// This layout with `words` 64-bit parameters appended, each at the next multiple of 8
    /// bytes: the packet of an entry that takes hidden parameters after its declared ones. The
    /// appended parameters' role is `ParamRole::Param(u32::MAX)`, which names no declared
    /// parameter; whoever appends them writes them.
    pub fn with_hidden_words(&self, words: usize) -> Self {
        let mut out = self.clone();
        for _ in 0..words {
            let at = out.size.next_multiple_of(8);
            out.params.push(PlacedParam {
                role: ParamRole::Param(u32::MAX),
                class: ParamClass::Int64,
                offset: at,
                pointee_align: 1,
            });
            out.size = at + 8;
        }
        out
    }

    /// Records that parameter `index` (a pointer) declares its pointee aligned to `align` bytes,
    /// as its PTX says (`.ptr .align N`): every launch then checks the operand's address.
    pub fn require_pointee_align(&mut self, index: usize, align: u32) {
        if let Some(param) = self.params.get_mut(index) {
            param.pointee_align = align.max(1);
            self.pointee_aligned |= align > 1;
        }
    }

    /// Whether any pointer declares a pointee alignment above 1 (`.ptr .align N`).
    #[inline]
    pub fn declares_pointee_align(&self) -> bool {
        self.pointee_aligned
    }

    /// The pointee alignment parameter `index` declares (1 when none, or past the end).
    #[inline]
    pub fn pointee_align(&self, index: usize) -> u32 {
        if !self.pointee_aligned {
            return 1;
        }
        self.params.get(index).map_or(1, |p| p.pointee_align)
    }

    /// Every parameter, in order.
    pub fn params(&self) -> &[PlacedParam] {
        &self.params
    }

    /// Total packet bytes.
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// The dense pack plan, when the layout starts with the dense ABI's words.
    #[inline]
    pub fn dense_prefix(&self) -> Option<DensePrefix> {
        self.dense
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ElementKind::*;
    use crate::{AbiKind, AbiSpec};

    #[test]
    fn params_after_count_are_aligned() {
        let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[F16, F64, F32, BF16]);
        let layout = ParamLayout::new(&spec.expected_params());
        let offsets: Vec<_> = layout.params().iter().map(|p| p.offset).collect();
        // x, out, n, then f16 at 24, f64 realigned to 32, f32 at 40, bf16 at 44.
        assert_eq!(offsets, [0, 8, 16, 24, 32, 40, 44]);
        assert_eq!(layout.size(), 46);
        assert_eq!(
            layout.dense_prefix(),
            Some(DensePrefix {
                inputs: 1,
                outputs: 1
            })
        );
    }

    #[test]
    fn only_dense_layouts_have_a_dense_prefix() {
        let strided = AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F32], &[F32], &[]);
        let layout = ParamLayout::new(&strided.expected_params());
        assert_eq!(layout.dense_prefix(), None);
        let vectors = AbiSpec::new(AbiKind::Vectorized { width: 4 }, &[F32, F32], &[F32], &[]);
        let layout = ParamLayout::new(&vectors.expected_params());
        assert_eq!(
            layout.dense_prefix(),
            Some(DensePrefix {
                inputs: 2,
                outputs: 1
            })
        );
    }
}
