//! The one modelled device: its name, its limits and the attributes the driver reports.
//!
//! The numbers describe a compute-capability 9.0 part, which is what the fixtures' PTX targets
//! can run on; they are the limits the model enforces at launch, not a promise about speed.

use crate::status::{CUDA_ERROR_INVALID_VALUE, CUresult};

/// The name `cuDeviceGetName` reports.
pub(crate) const NAME: &str = "jitseam-cuda-model (sm_90, PTX interpreter)";

/// What `cuDriverGetVersion` reports: CUDA 12.9.
pub(crate) const DRIVER_VERSION: i32 = 12_090;

/// Nominal device memory: allocations beyond it fail with `CUDA_ERROR_OUT_OF_MEMORY`.
pub(crate) const TOTAL_MEMORY: u64 = 8 << 30;

/// Per-dimension block limits and the per-block thread limit.
pub(crate) const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
pub(crate) const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Per-dimension grid limits.
pub(crate) const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];
/// Static plus dynamic shared memory a launch may ask for.
pub(crate) const MAX_SHARED_PER_BLOCK: u32 = 48 * 1024;

/// The value of device attribute `attribute` (a `CUdevice_attribute`).
///
/// Attributes of features the model does not have (memory pools, managed memory, cooperative
/// launch, …) read 0, so callers take their fallback paths; a number past the last attribute
/// of CUDA 12.9 (`CU_DEVICE_ATTRIBUTE_MAX` = 144) is `CUDA_ERROR_INVALID_VALUE`, as on the
/// driver.
pub(crate) fn attribute(attribute: u32) -> Result<i32, CUresult> {
    let as_int = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    Ok(match attribute {
        1 => as_int(MAX_THREADS_PER_BLOCK),
        2 => as_int(MAX_BLOCK[0]),
        3 => as_int(MAX_BLOCK[1]),
        4 => as_int(MAX_BLOCK[2]),
        5 => as_int(MAX_GRID[0]),
        6 => as_int(MAX_GRID[1]),
        7 => as_int(MAX_GRID[2]),
        8 => as_int(MAX_SHARED_PER_BLOCK),
        9 => 64 * 1024,                     // total constant memory
        10 => 32,                           // warp size
        11 => i32::MAX,                     // max pitch
        12 => 64 * 1024,                    // registers per block
        13 => 1_980_000,                    // clock rate, kHz
        14 => 512,                          // texture alignment
        15 => 1,                            // gpu overlap
        16 => 4,                            // multiprocessors
        17..=19 => 0,                       // kernel timeout, integrated, map host memory
        20 => 0,                            // compute mode: default
        31 => 1,                            // concurrent kernels
        32 => 0,                            // ecc
        33..=35 => 0,                       // pci bus, device, tcc
        36 => 2_619_000,                    // memory clock, kHz
        37 => 5120,                         // memory bus width
        38 => 50 << 20,                     // l2 cache
        39 => 2048,                         // threads per multiprocessor
        40 => 2,                            // async engines
        41 => 1,                            // unified addressing
        75 => 9,                            // compute capability major
        76 => 0,                            // compute capability minor
        78 => 0,                            // stream priorities
        81 => 228 * 1024,                   // shared memory per multiprocessor
        82 => 64 * 1024,                    // registers per multiprocessor
        97 => as_int(MAX_SHARED_PER_BLOCK), // opt-in shared memory per block
        106 => 32,                          // blocks per multiprocessor
        115 => 0,                           // memory pools: no cuMemAllocAsync
        0 | 144.. => return Err(CUDA_ERROR_INVALID_VALUE),
        _ => 0,
    })
}
