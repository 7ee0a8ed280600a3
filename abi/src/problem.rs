//! [`SpecProblem`]: why a spec describes no kernel.

use crate::ElementKind;

/// Why an [`AbiSpec`](crate::AbiSpec) describes no kernel: what
/// [`AbiSpec::validate`](crate::AbiSpec::validate) answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecProblem {
    /// Width not 2, 4 or 8.
    #[error("vector width {width} is not 2, 4 or 8")]
    VectorWidth {
        /// The width.
        width: u8,
    },
    /// A vector of more than 16 bytes.
    #[error("{width} lanes of {dtype} make {bytes} bytes, more than the 16 a vector load can move")]
    VectorTooWide {
        /// The width.
        width: u8,
        /// The widest operand dtype.
        dtype: ElementKind,
        /// `width · size`.
        bytes: usize,
    },
    /// Rank outside 1..=8.
    #[error("rank {rank} is outside 1..=8")]
    Rank {
        /// The rank.
        rank: u8,
    },
    /// No output operand.
    #[error("a kernel needs at least one output")]
    NoOutput,
    /// A custom-ABI spec whose parameter table is malformed or disagrees with its kind lists.
    #[error("invalid custom signature: {reason}")]
    Custom {
        /// What is wrong.
        reason: String,
    },
    /// Too many parameter bytes.
    #[error("the parameters take {bytes} bytes, more than the {limit} a launch can pass")]
    TooManyParamBytes {
        /// Packet bytes.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
}
