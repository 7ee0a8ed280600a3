//! [`OperandReach`]: the device byte ranges a launch's operands can reach, which travel with its
//! [`ArgPacket`](super::ArgPacket) so that a backend that runs the kernel itself (the emulator)
//! can lend it exactly those bytes, and nothing else.

use std::fmt;

/// The bytes one operand's view can reach: for a dense view its elements `[offset, offset + n)`,
/// for a strided view everything between its lowest and its highest reachable element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandRange {
    /// Device address of the first byte.
    pub base: u64,
    /// Bytes from `base`; never 0 (an operand that reaches nothing has no range).
    pub len: u64,
    /// Whether the kernel may store there: true for outputs, false for inputs.
    pub writable: bool,
}

/// What a checked launch's operands reach, computed only when a backend asks: a backend that
/// checks nothing itself (CUDA) never pays for it.
pub trait OperandReach: fmt::Debug {
    /// Calls `each` with the range of every operand that reaches at least one byte: inputs,
    /// then outputs, in order.
    fn for_each_range(&self, each: &mut dyn FnMut(OperandRange));
}
