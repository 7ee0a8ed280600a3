//! A model of the CUDA driver API for tests: a `libcuda.so` stand-in that runs kernels with the
//! `jitseam-ptx` interpreter, so jitseam's real CUDA backend (through cudarc) executes in CI.
//!
//! **This is a test instrument, not a GPU.** It models the driver's documented contracts that
//! jitseam relies on — asynchronous streams with one worker each, events, the legacy stream's
//! implicit synchronization, checked handles, sticky errors after a memory fault, parameter
//! info from the PTX — and executes kernels with the same interpreter as jitseam's emulator
//! device. It cannot show timing, the JIT's behaviour, hardware numerics beyond what the
//! interpreter models, or any driver bug. Runs on a real GPU remain the ground truth.
//!
//! # Loading it
//! Built as a `cdylib` (`libjitseam_cuda_model.so`). cudarc opens the driver by name
//! (`libcuda.so`, …, `libcuda.so.1`), so a process that should use the model needs a directory
//! holding `libcuda.so` and `libcuda.so.1` links to it at the front of `LD_LIBRARY_PATH` when it
//! starts. jitseam's integration tests do this themselves (tests/common/cuda_model.rs).
//!
//! # What it implements
//! The entry points in [`api::IMPLEMENTED`]; every other symbol cudarc's safe and result layers
//! may resolve is exported as a stub answering `CUDA_ERROR_NOT_SUPPORTED` ([`stubs::STUBS`]).
//! NVRTC, which opens `libcuda.so.1` while it compiles, finds what it looks up (`cuInit`, and
//! `cuGetExportTable`, which answers that the model has no private tables), so a process can
//! compile CUDA C with NVRTC while it runs against the model.
//! One device (ordinal 0, compute capability 9.0) with its primary context; device memory is
//! host memory behind a checked allocation table; only PTX text loads.
//!
//! Page-locked host memory (`cuMemHostAlloc`) is modelled too: a copy from it reads it when the
//! copy runs, as on a GPU, where pageable memory is staged before the call returns.
//!
//! Where the driver leaves behaviour undefined, the model makes misuse loud: unloading a
//! module while launches of it are queued fails the context (`CUDA_ERROR_LAUNCH_FAILED`),
//! freeing memory queued work may still use is reported, and every diagnosis (faults, refused
//! PTX) is printed to stderr.
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod api;
mod context;
pub mod cudarc_symbols;
mod device;
mod driver;
mod event;
mod exec;
mod handle;
mod host;
mod lock;
mod memory;
mod module;
mod progress;
pub mod status;
mod stream;
pub mod stubs;

#[cfg(test)]
mod tests;
