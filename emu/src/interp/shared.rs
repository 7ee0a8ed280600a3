//! A block's shared memory.
//!
//! Each block has its own shared memory, sized by the program's static variables plus the
//! launch's dynamic bytes, and alive only while the block runs. Shared-space address `s` is
//! generic address [`SHARED_WINDOW`] + `s` (one window of the reserved span, see
//! [`crate::space`]); the window spans 2^32 generic addresses, of which the block's size is
//! mapped, and an access to the rest faults with [`FaultKind::OutsideShared`]. `spaces` routes
//! every access of the shared space, and every generic one in the window, here.
//!
//! Uninitialized shared memory: on the GPU a block's shared memory starts with whatever an
//! earlier block left there, so no value the emulator could pick is the GPU's. Every byte
//! therefore starts unwritten, and a load or atomic that touches an unwritten byte faults with
//! [`FaultKind::UninitializedShared`]: a kernel that reads shared memory before writing it is
//! refused rather than given an answer the GPU would not give.
//!
//! Only the worker running the block touches its shared memory; the bytes are atomics (relaxed,
//! plain loads and stores) so that the memory can be shared (`&`) like the rest of the
//! launch's memory.

use std::sync::atomic::{AtomicU8, Ordering};

use super::fault::{Access, Allocation, ExecError, Fault, FaultKind};
use super::meter::LaneId;
use crate::decode::{Inst, Program};
use crate::space::SHARED_WINDOW;

/// One block's shared memory.
#[derive(Debug, Default)]
pub(crate) struct SharedMemory {
    bytes: Vec<AtomicU8>,
    /// 1 for every byte a thread of the block has written.
    written: Vec<AtomicU8>,
    len: usize,
}

impl SharedMemory {
    /// No bytes.
    pub(crate) const EMPTY: Self = Self {
        bytes: Vec::new(),
        written: Vec::new(),
        len: 0,
    };

    /// Makes the memory `len` bytes, none of them written (a new block begins).
    pub(crate) fn reset(&mut self, len: usize) {
        if self.bytes.len() < len {
            self.bytes.resize_with(len, AtomicU8::default);
            self.written.resize_with(len, AtomicU8::default);
        }
        for w in self.written.iter_mut().take(len) {
            *w.get_mut() = 0;
        }
        self.len = len;
    }

    /// The memory as an allocation whose first byte is at `base`, for fault reports.
    pub(crate) fn allocation(&self, base: u64) -> Allocation {
        Allocation {
            base,
            size: self.len as u64,
        }
    }

    /// The byte range of an access of `size` bytes at offset `offset`, if it is inside.
    pub(crate) fn range(
        &self,
        offset: u64,
        size: usize,
    ) -> Result<std::ops::Range<usize>, FaultKind> {
        let start = usize::try_from(offset).map_err(|_| FaultKind::OutsideShared)?;
        let end = start.checked_add(size).ok_or(FaultKind::OutsideShared)?;
        if end > self.len {
            return Err(FaultKind::OutsideShared);
        }
        Ok(start..end)
    }

    pub(crate) fn load(&self, offset: u64, size: usize) -> Result<u64, FaultKind> {
        let range = self.range(offset, size)?;
        let (Some(bytes), Some(written)) = (
            self.bytes.get(range.clone()),
            self.written.get(range.clone()),
        ) else {
            return Err(FaultKind::OutsideShared);
        };
        if written.iter().any(|w| w.load(Ordering::Relaxed) == 0) {
            return Err(FaultKind::UninitializedShared);
        }
        Ok(bytes.iter().rev().fold(0u64, |acc, b| {
            (acc << 8) | u64::from(b.load(Ordering::Relaxed))
        }))
    }

    pub(crate) fn store(&self, offset: u64, size: usize, value: u64) -> Result<(), FaultKind> {
        let range = self.range(offset, size)?;
        let (Some(bytes), Some(written)) = (
            self.bytes.get(range.clone()),
            self.written.get(range.clone()),
        ) else {
            return Err(FaultKind::OutsideShared);
        };
        for (i, (b, w)) in bytes.iter().zip(written).enumerate() {
            b.store((value >> (8 * i)) as u8, Ordering::Relaxed);
            w.store(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// An atomic read-modify-write: the old value; `op` gives the new one, if any. One worker
    /// runs the block, so nothing comes between the load and the store.
    pub(crate) fn update(
        &self,
        offset: u64,
        size: usize,
        op: &mut dyn FnMut(u64) -> Option<u64>,
    ) -> Result<u64, FaultKind> {
        let old = self.load(offset, size)?;
        if let Some(new) = op(old) {
            self.store(offset, size, new)?;
        }
        Ok(old)
    }
}

/// The generic address of shared-space address `s` for an access of `size` bytes, checked
/// against a window of `len` bytes (alignment first, as for every access).
#[inline]
pub(crate) fn to_generic(s: u64, size: u8, len: u64) -> Result<u64, FaultKind> {
    let size = u64::from(size.max(1));
    if s & (size - 1) != 0 {
        return Err(FaultKind::Misaligned);
    }
    match s.checked_add(size) {
        Some(end) if end <= len => Ok(SHARED_WINDOW + s),
        _ => Err(FaultKind::OutsideShared),
    }
}

/// The fault of the shared-space access at `s` that the `ToShared` instruction
/// `inst`, at `pc`, checks for thread `lane`, in a window of `len` bytes.
#[cold]
pub(crate) fn shared_fault(
    program: &Program,
    pc: usize,
    (block, thread): LaneId,
    s: u64,
    inst: &Inst,
    len: u64,
    kind: FaultKind,
) -> ExecError {
    let site = program.sites.get(pc);
    ExecError::Fault(Box::new(Fault {
        entry: program.entry.clone(),
        block,
        thread,
        instruction: site.map(|s| s.text.clone()).unwrap_or_default(),
        line: site.map_or(0, |s| s.line),
        address: s,
        size: u32::from(inst.w),
        access: if inst.k != 0 {
            Access::Store
        } else {
            Access::Load
        },
        kind,
        nearest: Some(Allocation { base: 0, size: len }),
    }))
}
