//! The launch shape of a typed launch: the extent its operands agree on.
//!
//! A `#[jitseam::kernel]` launcher takes no shape; every operand carries one. Taking it from any
//! one operand would blame the others when that one is wrong ("input 0 has 1000 elements, the
//! launch covers 999" for a short output), so the shape is the extent most operands share, and
//! the operand that differs is the one named. When no extent has a majority (one input and one
//! output that disagree, say), nothing says which is wrong, and the error names both.

use super::Launch;
use crate::abi::{AbiKind, ParamValue};
use crate::device::{Arg, ArgMut, ViewDesc};
use crate::error::{Disagreement, Error, Extent, Operand};

impl Launch<'_> {
    /// Runs a typed launch over the shape its operands agree on: the length of a dense operand
    /// (scalar and vectorized ABIs) or the shape of a strided one, as most operands have it.
    /// `check` then names any operand that differs, with both extents.
    #[doc(hidden)]
    pub fn run_agreed(
        self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        let strided = matches!(self.facts().spec.abi, AbiKind::Strided { .. });
        let descs = || {
            let inputs = inputs
                .iter()
                .enumerate()
                .map(|(k, a)| (Operand::Input(k), &a.desc));
            let outputs = outputs
                .iter()
                .enumerate()
                .map(|(m, a)| (Operand::Output(m), &a.desc));
            inputs.chain(outputs)
        };
        let dense;
        let shape: &[usize] = if strided {
            match agreed(descs(), |d| d.shape()) {
                Agreed::Shape(shape) => shape,
                Agreed::Tie(first, second) => {
                    let error = self.disagree(first, second, |d| Extent::Shape(d.shape().to_vec()));
                    return Err(self.declined(error));
                }
            }
        } else {
            match agreed(descs(), ViewDesc::len) {
                Agreed::Shape(n) => {
                    dense = [n];
                    &dense
                }
                Agreed::Tie(first, second) => {
                    let error = self.disagree(first, second, |d| Extent::Elements(d.len()));
                    return Err(self.declined(error));
                }
            }
        };
        self.run(inputs, outputs, shape, params)
    }

    fn disagree(
        &self,
        (first, first_desc): (Operand, &ViewDesc),
        (second, second_desc): (Operand, &ViewDesc),
        extent: impl Fn(&ViewDesc) -> Extent,
    ) -> Error {
        Error::OperandsDisagree(Box::new(Disagreement {
            entry: self.facts().entry.to_owned(),
            first,
            first_extent: extent(first_desc),
            second,
            second_extent: extent(second_desc),
        }))
    }
}

/// What the operands agree on.
enum Agreed<'d, T> {
    /// The extent of a strict majority of the operands (all of them, nearly always).
    Shape(T),
    /// No strict majority: the first operand and the first that differs from it.
    Tie((Operand, &'d ViewDesc), (Operand, &'d ViewDesc)),
}

/// The extent (`of` each description) a strict majority of the operands share. The common case,
/// every operand alike, is one comparison per operand; counting votes is for the error path.
fn agreed<'d, T: PartialEq + Copy + 'd>(
    descs: impl Iterator<Item = (Operand, &'d ViewDesc)> + Clone,
    of: impl Fn(&'d ViewDesc) -> T,
) -> Agreed<'d, T> {
    let mut all = descs.clone();
    let Some(first) = all.next() else {
        // No operand at all: an empty shape, which `check` refuses with the operand counts.
        return Agreed::Shape(of(&EMPTY));
    };
    let head = of(first.1);
    let Some(differs) = all.find(|&(_, d)| of(d) != head) else {
        return Agreed::Shape(head);
    };
    let total = descs.clone().count();
    let votes = |extent: T| descs.clone().filter(|&(_, d)| of(d) == extent).count();
    match descs
        .clone()
        .map(|(_, d)| of(d))
        .find(|&e| votes(e) * 2 > total)
    {
        Some(majority) => Agreed::Shape(majority),
        None => Agreed::Tie(first, differs),
    }
}

/// What an operand-less launch measures: nothing.
static EMPTY: ViewDesc = ViewDesc::contiguous(
    crate::liveness::DeviceId::NONE,
    crate::dtype::ElementKind::U8,
    0,
    0,
    0,
    0,
);
