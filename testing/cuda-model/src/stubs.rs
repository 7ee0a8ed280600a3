//! Entry points cudarc's safe and result layers may resolve that the model does not implement.
//!
//! cudarc resolves each driver symbol on first use and panics when one is missing, so every
//! name it can ask for is exported; these answer `CUDA_ERROR_NOT_SUPPORTED` and touch none of
//! their arguments. They are declared without parameters: under the C calling convention the
//! caller places and removes the arguments, so a callee that ignores them is sound whatever
//! the real signature.

use crate::status::{CUDA_ERROR_NOT_SUPPORTED, CUresult};

macro_rules! not_supported {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc = concat!("`", stringify!($name), "`: not modelled, answers `CUDA_ERROR_NOT_SUPPORTED`.")]
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub extern "C" fn $name() -> CUresult {
                CUDA_ERROR_NOT_SUPPORTED
            }
        )*

        /// Every stub, by name.
        pub const STUBS: &[&str] = &[$(stringify!($name)),*];
    };
}

not_supported! {
    cuCtxCreate_v3,
    cuCtxCreate_v4,
    cuCtxDestroy_v2,
    cuCtxGetCacheConfig,
    cuCtxGetLimit,
    cuCtxSetCacheConfig,
    cuCtxSetFlags,
    cuCtxSetLimit,
    cuDestroyExternalMemory,
    cuDeviceGetDefaultMemPool,
    cuDeviceGetMemPool,
    cuDeviceSetMemPool,
    cuExternalMemoryGetMappedBuffer,
    cuFuncSetAttribute,
    cuFuncSetCacheConfig,
    cuGraphDestroy,
    cuGraphExecDestroy,
    cuGraphInstantiateWithFlags,
    cuGraphLaunch,
    cuGraphUpload,
    cuImportExternalMemory,
    cuLaunchCooperativeKernel,
    cuLaunchHostFunc,
    cuMemAdvise_v2,
    cuMemAllocAsync,
    cuMemAllocFromPoolAsync,
    cuMemAllocManaged,
    cuMemFreeAsync,
    cuMemPoolCreate,
    cuMemPoolDestroy,
    cuMemPoolGetAttribute,
    cuMemPoolSetAttribute,
    cuMemPoolTrimTo,
    cuMemPrefetchAsync_v2,
    cuMemcpyPeerAsync,
    cuModuleGetGlobal_v2,
    cuModuleLoad,
    cuOccupancyAvailableDynamicSMemPerBlock,
    cuOccupancyMaxActiveBlocksPerMultiprocessor,
    cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
    cuOccupancyMaxActiveClusters,
    cuOccupancyMaxPotentialBlockSize,
    cuOccupancyMaxPotentialBlockSizeWithFlags,
    cuOccupancyMaxPotentialClusterSize,
    cuProfilerStart,
    cuProfilerStop,
    cuStreamAttachMemAsync,
    cuStreamBeginCapture_v2,
    cuStreamEndCapture,
    cuGetProcAddress,
    cuGetProcAddress_v2,
}
