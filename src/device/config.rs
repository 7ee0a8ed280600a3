//! [`LaunchConfig`], the grid, block and dynamic shared memory of one launch, and
//! [`LaunchLimits`], what a device accepts of them.

/// The launch configuration of one kernel launch: blocks per grid and threads per block along
/// x, y and z, and bytes of dynamic shared memory per block. What every backend receives; the
/// scalar, vectorized and strided ABIs always launch a 1-D grid of 1-D blocks and no dynamic
/// shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// `gridDim.{x, y, z}`.
    pub grid: [u32; 3],
    /// `blockDim.{x, y, z}`.
    pub block: [u32; 3],
    /// Bytes of dynamic (`extern __shared__`) shared memory per block.
    pub dynamic_shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D grid of `grid` blocks of `block` threads, without dynamic shared memory.
    pub const fn linear(grid: u32, block: u32) -> Self {
        Self {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_shared_bytes: 0,
        }
    }

    /// A grid and block along all three axes, without dynamic shared memory.
    pub const fn new(grid: [u32; 3], block: [u32; 3]) -> Self {
        Self {
            grid,
            block,
            dynamic_shared_bytes: 0,
        }
    }

    /// The same configuration with `bytes` of dynamic shared memory per block.
    #[must_use]
    pub const fn dynamic_shared_bytes(mut self, bytes: u32) -> Self {
        self.dynamic_shared_bytes = bytes;
        self
    }

    /// Threads in one block (`x · y · z`), in `u64` where the product cannot overflow.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    /// Blocks in the grid, in `u64`.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }

    /// Threads in the whole launch, in `u128` where the product cannot overflow.
    pub fn threads(&self) -> u128 {
        u128::from(self.blocks()) * u128::from(self.threads_per_block())
    }
}

/// The limits a device puts on a launch configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchLimits {
    /// Most threads in one block (all axes together).
    pub max_threads_per_block: u32,
    /// Largest `blockDim` along x, y and z.
    pub max_block: [u32; 3],
    /// Largest `gridDim` along x, y and z.
    pub max_grid: [u32; 3],
    /// Most shared memory, static and dynamic together, one block may have without opting in
    /// to more (which jitseam never does).
    pub max_shared_bytes_per_block: u32,
}

impl LaunchLimits {
    /// The limits of every CUDA GPU from compute capability 3.0 on: 1024 threads per block,
    /// blocks of at most 1024 × 1024 × 64, grids of at most (2^31 − 1) × 65535 × 65535, and 48 KiB
    /// of shared memory per block by default. The emulator has exactly these, so that a launch
    /// it accepts is one a GPU accepts.
    pub const TYPICAL: Self = Self {
        max_threads_per_block: 1024,
        max_block: jitseam_verify::MAX_BLOCK,
        max_grid: jitseam_verify::MAX_GRID,
        max_shared_bytes_per_block: 48 * 1024,
    };
}

impl Default for LaunchLimits {
    fn default() -> Self {
        Self::TYPICAL
    }
}

/// Everything a launch configuration of one bound kernel must fit: the device's limits and the
/// kernel's own block directives (`.maxntid`, `.reqntid` in its PTX, or what a cubin records
/// of them). Read once at bind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConfigLimits {
    /// The device's limits.
    pub device: LaunchLimits,
    /// `.maxntid x, y, z`: the block may have at most `x · y · z` threads.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`: the block must be exactly this.
    pub reqntid: Option<[u32; 3]>,
    /// The kernel's static shared memory per block: a launch may ask for at most the device's
    /// per-block shared memory less this, dynamically.
    pub static_shared_bytes: u32,
}

impl ConfigLimits {
    /// A typical device's limits and no kernel directives.
    pub const TYPICAL: Self = Self {
        device: LaunchLimits::TYPICAL,
        maxntid: None,
        reqntid: None,
        static_shared_bytes: 0,
    };
}

/// `x[, y[, z]]` as the three extents it declares (missing ones are 1).
pub(crate) fn dims3(dims: &[u32]) -> [u32; 3] {
    let mut out = [1; 3];
    for (to, &from) in out.iter_mut().zip(dims) {
        *to = from;
    }
    out
}
