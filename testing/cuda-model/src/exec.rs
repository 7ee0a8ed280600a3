//! What a stream's worker runs: the queued operations, against the context's device memory.
//!
//! A kernel that faults (the interpreter's checked memory refused an access) puts the context
//! in a sticky error state, as on a GPU: the fault is printed to stderr, every operation still
//! queued is skipped, and the context's calls answer `CUDA_ERROR_ILLEGAL_ADDRESS` (or
//! `CUDA_ERROR_MISALIGNED_ADDRESS`) until the context is destroyed.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use jitseam_emu::interp::{self, ExecError, FaultKind, LaunchDims};

use crate::event::Event;
use crate::lock::lock;
use crate::memory::Heap;
use crate::module::Function;
use crate::progress::Progress;
use crate::status::{
    CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS,
    CUDA_SUCCESS, CUresult,
};

/// A host buffer a device-to-host copy writes into. The caller of the copy waits for it to
/// complete (pageable memory, as all host memory is to the model), so the buffer outlives it.
#[derive(Debug)]
pub(crate) struct HostDst(pub(crate) *mut u8);

// SAFETY: the pointer is only written by the worker while the thread that queued the copy
// blocks on its completion, holding the buffer borrowed; nothing else touches it meanwhile.
unsafe impl Send for HostDst {}

/// Page-locked host memory a host-to-device copy reads when it runs. `cuMemFreeHost` waits for
/// every queued operation before it frees it, so it outlives the copy.
#[derive(Debug)]
pub(crate) struct HostSrc(pub(crate) *const u8);

// SAFETY: the pointer is only read by the worker that runs the copy, while the allocation it
// points into stays live (see `HostSrc`); the device model never writes through it.
unsafe impl Send for HostSrc {}

/// One queued operation.
#[derive(Debug)]
pub(crate) enum Op {
    Launch {
        function: Arc<Function>,
        dims: LaunchDims,
        packet: Vec<u8>,
    },
    HostToDevice {
        dst: u64,
        data: Vec<u8>,
    },
    /// From page-locked host memory, read when the copy runs.
    HostToDeviceFromPinned {
        dst: u64,
        src: HostSrc,
        len: usize,
    },
    DeviceToHost {
        src: u64,
        dst: HostDst,
        len: usize,
    },
    DeviceToDevice {
        dst: u64,
        src: u64,
        len: usize,
    },
    Memset {
        dst: u64,
        value: u8,
        len: usize,
    },
    Record {
        event: Arc<Event>,
        generation: u64,
    },
    /// Waits until `ticket` of another stream has completed.
    Wait {
        progress: Arc<Progress>,
        ticket: u64,
    },
}

impl Op {
    /// The device addresses the operation may touch, as far as the model can tell without
    /// device memory: a copy's or memset's ends, and every 8-byte word of a launch's packet
    /// (each pointer parameter is one; a word that only looks like an address costs a false
    /// diagnosis at worst, never a missed one).
    fn addresses(&self) -> Vec<u64> {
        let ends = |at: u64, len: usize| [at, at.saturating_add(len as u64).saturating_sub(1)];
        match self {
            Self::Launch { packet, .. } => packet
                .chunks_exact(8)
                .filter_map(|word| word.try_into().ok().map(u64::from_le_bytes))
                .collect(),
            Self::HostToDevice { dst, data } => ends(*dst, data.len()).to_vec(),
            // The source too: `cuMemFreeHost` reports a free under a queued copy like
            // `cuMemFree` does.
            Self::HostToDeviceFromPinned { dst, src, len } => {
                [ends(*dst, *len), ends(src.0 as u64, *len)].concat()
            }
            Self::DeviceToHost { src, len, .. } => ends(*src, *len).to_vec(),
            Self::DeviceToDevice { dst, src, len } => [ends(*dst, *len), ends(*src, *len)].concat(),
            Self::Memset { dst, len, .. } => ends(*dst, *len).to_vec(),
            Self::Record { .. } | Self::Wait { .. } => Vec::new(),
        }
    }
}

/// What every stream of a context shares with its worker: device memory, the sticky error,
/// and the addresses queued operations may still touch.
#[derive(Debug, Default)]
pub(crate) struct Core {
    pub(crate) heap: Mutex<Heap>,
    sticky: AtomicU32,
    /// How many queued or running operations name each address (see [`Op::addresses`]).
    in_use: Mutex<BTreeMap<u64, usize>>,
}

impl Core {
    /// The sticky error, if the context has one.
    pub(crate) fn sticky(&self) -> Result<(), CUresult> {
        match self.sticky.load(Ordering::Acquire) {
            CUDA_SUCCESS => Ok(()),
            code => Err(code),
        }
    }

    /// Puts the context in error state `code`; the first error stays.
    pub(crate) fn poison(&self, code: CUresult) {
        let _ =
            self.sticky
                .compare_exchange(CUDA_SUCCESS, code, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Notes that `op`, just queued, may touch its addresses until it has run.
    pub(crate) fn queued(&self, op: &Op) {
        let mut in_use = lock(&self.in_use);
        for address in op.addresses() {
            *in_use.entry(address).or_insert(0) += 1;
        }
    }

    /// Whether an operation queued or running may still touch `[base, base + len)`.
    pub(crate) fn in_use(&self, base: u64, len: usize) -> bool {
        let end = base.saturating_add(len as u64);
        lock(&self.in_use).range(base..end).next().is_some()
    }

    /// Runs `op`, unless the context is already in an error state. Its addresses are released
    /// before the stream's progress counts it as done.
    pub(crate) fn execute(&self, op: Op) {
        let addresses = op.addresses();
        self.run_op(op);
        let mut in_use = lock(&self.in_use);
        for address in addresses {
            if let Some(count) = in_use.get_mut(&address) {
                *count -= 1;
                if *count == 0 {
                    in_use.remove(&address);
                }
            }
        }
    }

    fn run_op(&self, op: Op) {
        if let Op::Launch { function, .. } = &op {
            let module = Arc::clone(&function.module);
            if self.sticky().is_ok() {
                self.run_guarded(op);
            }
            module.launch_done();
        } else if self.sticky().is_ok() {
            self.run_guarded(op);
        }
    }

    fn run_guarded(&self, op: Op) {
        if catch_unwind(AssertUnwindSafe(|| self.run(op))).is_err() {
            eprintln!("jitseam-cuda-model: an operation panicked inside the model");
            self.poison(CUDA_ERROR_LAUNCH_FAILED);
        }
    }

    fn run(&self, op: Op) {
        match op {
            Op::Launch {
                function,
                dims,
                packet,
            } => {
                let mut heap = lock(&self.heap);
                let mut memory = heap.regions();
                if let Err(error) = interp::run(&function.program, &packet, dims, &mut memory) {
                    eprintln!("jitseam-cuda-model: kernel fault: {error}");
                    self.poison(match error {
                        ExecError::Fault(fault) if fault.kind == FaultKind::Misaligned => {
                            CUDA_ERROR_MISALIGNED_ADDRESS
                        }
                        ExecError::Fault(_) => CUDA_ERROR_ILLEGAL_ADDRESS,
                        _ => CUDA_ERROR_LAUNCH_FAILED,
                    });
                }
            }
            Op::HostToDevice { dst, data } => {
                let mut heap = lock(&self.heap);
                match heap.bytes_mut(dst, data.len()) {
                    Some(bytes) => bytes.copy_from_slice(&data),
                    None => self.copy_fault("host-to-device", dst, data.len()),
                }
            }
            Op::HostToDeviceFromPinned { dst, src, len } => {
                let mut heap = lock(&self.heap);
                match heap.bytes_mut(dst, len) {
                    // SAFETY: `src` addresses `len` bytes of a page-locked allocation that stays
                    // live until this copy has run (see `HostSrc`); device memory lives in the
                    // heap's own boxes, so the ranges do not overlap.
                    Some(bytes) => unsafe {
                        std::ptr::copy_nonoverlapping(src.0, bytes.as_mut_ptr(), len);
                    },
                    None => self.copy_fault("host-to-device", dst, len),
                }
            }
            Op::DeviceToHost { src, dst, len } => {
                let heap = lock(&self.heap);
                match heap.bytes(src, len) {
                    // SAFETY: `dst` addresses `len` writable bytes that the thread which queued
                    // this copy keeps borrowed until the copy completes (see `HostDst`); device
                    // memory lives in the heap's own boxes, so the ranges do not overlap.
                    Some(bytes) => unsafe {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.0, len);
                    },
                    None => self.copy_fault("device-to-host", src, len),
                }
            }
            Op::DeviceToDevice { dst, src, len } => {
                if lock(&self.heap).copy_within(dst, src, len).is_none() {
                    self.copy_fault("device-to-device", dst, len);
                }
            }
            Op::Memset { dst, value, len } => match lock(&self.heap).bytes_mut(dst, len) {
                Some(bytes) => bytes.fill(value),
                None => self.copy_fault("memset", dst, len),
            },
            Op::Record { event, generation } => event.stamp(generation),
            Op::Wait { progress, ticket } => progress.wait_for(ticket),
        }
    }

    /// A copy whose memory was freed between the call (which checked it) and its turn.
    fn copy_fault(&self, what: &str, address: u64, len: usize) {
        eprintln!(
            "jitseam-cuda-model: {what} copy of {len} bytes at {address:#x}: the memory was freed \
             before the copy ran"
        );
        self.poison(CUDA_ERROR_ILLEGAL_ADDRESS);
    }
}
