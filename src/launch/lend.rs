//! What a checked launch's operands reach, for the backends that ask (see [`OperandReach`]).

use super::CheckedLaunch;
use super::reach::{byte_range_of_reach, reach};
use crate::abi::{OperandRange, OperandReach};
use crate::device::{AsViewDesc, ViewDesc};

impl<I: AsViewDesc, O: AsViewDesc> OperandReach for CheckedLaunch<'_, I, O> {
    /// Each operand's whole reach, from its lowest to its highest reachable element: for the
    /// dense views of the scalar and vectorized ABIs exactly their `n` elements, for strided
    /// views everything in between too (the gaps of a strided view are not its elements, but
    /// lending them costs nothing, and a kernel of the strided ABI that strays into one is still
    /// inside the operand's span). `check` proved every range lies inside its allocation.
    fn for_each_range(&self, each: &mut dyn FnMut(OperandRange)) {
        let mut lend = |view: &ViewDesc, writable: bool| {
            let Some((start, end)) = reach(view).and_then(|r| byte_range_of_reach(view, r)) else {
                return;
            };
            if let (Ok(base), Ok(len)) = (u64::try_from(start), u64::try_from(end - start)) {
                each(OperandRange {
                    base,
                    len,
                    writable,
                });
            }
        };
        for operand in self.inputs {
            lend(operand.view_desc(), false);
        }
        for operand in self.outputs {
            lend(operand.view_desc(), true);
        }
    }
}
