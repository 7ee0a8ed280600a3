//! A declared launch shape: the exact block a custom kernel's body assumes
//! (`block = (16, 16, 1)`), for bodies written for a fixed tile — `blockIdx.x * TILE +
//! threadIdx.x`, `tile[threadIdx.y][threadIdx.x]` — which are safe only for that block. Every
//! launch of such a kernel must use exactly that block; the body verifier may take it as a
//! fact.

use std::fmt;

/// The largest block extent along x, y and z that any CUDA device accepts.
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];

/// The most threads a block may have on any CUDA device.
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// Why a declared block shape describes no block a kernel can launch with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockError {
    /// An extent of 0.
    #[error("block.{} is 0: every block extent is at least 1", axis_name(*axis))]
    Empty {
        /// The axis: 0 = x, 1 = y, 2 = z.
        axis: u8,
    },
    /// An extent larger than any device's.
    #[error(
        "block.{} = {value} exceeds {limit}, the largest block.{} of a cuda device",
        axis_name(*axis),
        axis_name(*axis)
    )]
    AxisTooLarge {
        /// The axis: 0 = x, 1 = y, 2 = z.
        axis: u8,
        /// The declared extent.
        value: u32,
        /// The limit along that axis.
        limit: u32,
    },
    /// More threads than any device runs in one block.
    #[error(
        "a block of {} has {threads} threads, more than the {limit} a cuda block can have",
        BlockShape(*block)
    )]
    TooManyThreads {
        /// The declared block.
        block: [u32; 3],
        /// `x · y · z`.
        threads: u64,
        /// The limit.
        limit: u64,
    },
    /// A kernel that covers a count with one thread per element launches one-dimensional
    /// blocks: a declared block with `y` or `z` above 1 could never be one of them.
    #[error(
        "a kernel that `covers` a count launches one-dimensional blocks, but the declared block is {}: declare `block = ({}, 1, 1)`",
        BlockShape(*block),
        block[0]
    )]
    CoversTwoDimensional {
        /// The declared block.
        block: [u32; 3],
    },
}

fn axis_name(axis: u8) -> char {
    ['x', 'y', 'z']
        .get(usize::from(axis))
        .copied()
        .unwrap_or('?')
}

/// Refuses a declared block no CUDA device can launch: an extent of 0, one over
/// [`MAX_BLOCK`], or more than [`MAX_BLOCK_THREADS`] threads. The one rule `#[jitseam::kernel]`,
/// the signature text and the runtime all apply.
pub fn validate_block(block: [u32; 3]) -> Result<(), BlockError> {
    for (axis, (&value, &limit)) in (0u8..).zip(block.iter().zip(&MAX_BLOCK)) {
        if value == 0 {
            return Err(BlockError::Empty { axis });
        }
        if value > limit {
            return Err(BlockError::AxisTooLarge { axis, value, limit });
        }
    }
    let threads = block.iter().map(|&d| u64::from(d)).product::<u64>();
    if threads > MAX_BLOCK_THREADS {
        return Err(BlockError::TooManyThreads {
            block,
            threads,
            limit: MAX_BLOCK_THREADS,
        });
    }
    Ok(())
}

/// A block shape as the declaration spells it: `(16, 16, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShape(pub [u32; 3]);

impl fmt::Display for BlockShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "({x}, {y}, {z})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_block_no_device_launches() {
        assert_eq!(validate_block([16, 16, 1]), Ok(()));
        assert_eq!(validate_block([1024, 1, 1]), Ok(()));
        assert_eq!(validate_block([1, 1, 64]), Ok(()));
        assert_eq!(
            validate_block([16, 0, 1]),
            Err(BlockError::Empty { axis: 1 })
        );
        assert_eq!(
            validate_block([1, 1, 65]),
            Err(BlockError::AxisTooLarge {
                axis: 2,
                value: 65,
                limit: 64
            })
        );
        assert_eq!(
            validate_block([2048, 1, 1]),
            Err(BlockError::AxisTooLarge {
                axis: 0,
                value: 2048,
                limit: 1024
            })
        );
        assert_eq!(
            validate_block([32, 64, 1]),
            Err(BlockError::TooManyThreads {
                block: [32, 64, 1],
                threads: 2048,
                limit: 1024
            })
        );
        assert_eq!(
            BlockError::TooManyThreads {
                block: [32, 64, 1],
                threads: 2048,
                limit: 1024
            }
            .to_string(),
            "a block of (32, 64, 1) has 2048 threads, more than the 1024 a cuda block can have"
        );
        assert_eq!(
            BlockError::Empty { axis: 1 }.to_string(),
            "block.y is 0: every block extent is at least 1"
        );
    }
}
