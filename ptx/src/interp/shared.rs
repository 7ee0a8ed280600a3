//! A block's shared memory and the generic window that maps it.
//!
//! Each block has its own shared memory, sized by the program's static variables plus the
//! launch's dynamic bytes, and alive only while the block runs. Shared-space address `s` is
//! generic address [`SHARED_WINDOW`] + `s`; the window reserves 2^32 generic addresses, of
//! which the block's size is mapped, and an access to the rest faults with
//! [`FaultKind::OutsideShared`]. Generic accesses of a block-scoped program go through
//! [`Windowed`], which sends the window to the block's memory and everything else to the
//! launch's global [`Memory`].
//!
//! Uninitialized shared memory: on the GPU a block's shared memory starts with whatever an
//! earlier block left there, so no value the emulator could pick is the GPU's. Every byte
//! therefore starts unwritten, and a load or atomic that touches an unwritten byte faults with
//! [`FaultKind::UninitializedShared`]: a kernel that reads shared memory before writing it is
//! refused rather than given an answer the GPU would not give.
//!
//! Only the worker running the block touches its shared memory; the bytes are atomics (relaxed,
//! plain loads and stores) so that the window can sit behind the `Sync` [`Memory`] interface.

use std::sync::atomic::{AtomicU8, Ordering};

use super::fault::{Access, Allocation, ExecError, Fault, FaultKind};
use super::memory::Memory;
use super::meter::LaneId;
use crate::decode::{Inst, Program, SHARED_WINDOW};

/// Generic addresses the window reserves.
pub(crate) const WINDOW_SPAN: u64 = 1 << 32;

/// One block's shared memory.
#[derive(Debug, Default)]
pub(crate) struct SharedMemory {
    bytes: Vec<AtomicU8>,
    /// 1 for every byte a thread of the block has written.
    written: Vec<AtomicU8>,
    len: usize,
}

impl SharedMemory {
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

    /// The size in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len as u64
    }

    /// The byte range of an access of `size` bytes at offset `offset`, if it is inside.
    fn range(&self, offset: u64, size: usize) -> Result<std::ops::Range<usize>, FaultKind> {
        let start = usize::try_from(offset).map_err(|_| FaultKind::OutsideShared)?;
        let end = start.checked_add(size).ok_or(FaultKind::OutsideShared)?;
        if end > self.len {
            return Err(FaultKind::OutsideShared);
        }
        Ok(start..end)
    }

    fn load(&self, offset: u64, size: usize) -> Result<u64, FaultKind> {
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

    fn store(&self, offset: u64, size: usize, value: u64) -> Result<(), FaultKind> {
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
}

/// The shared-space offset of a generic address, if the address is in the window.
#[inline(always)]
fn in_window(address: u64) -> Option<u64> {
    let offset = address.wrapping_sub(SHARED_WINDOW);
    (offset < WINDOW_SPAN).then_some(offset)
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

/// The launch's global memory with the block's shared memory in the window.
pub(crate) struct Windowed<'m, M> {
    pub(crate) global: &'m M,
    pub(crate) shared: &'m SharedMemory,
}

impl<M: Memory> Memory for Windowed<'_, M> {
    #[inline]
    fn load(&self, address: u64, size: usize, hint: &mut u32) -> Result<u64, FaultKind> {
        match in_window(address) {
            Some(offset) => self.shared.load(offset, size),
            None => self.global.load(address, size, hint),
        }
    }

    #[inline]
    fn store(
        &self,
        address: u64,
        size: usize,
        value: u64,
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        match in_window(address) {
            Some(offset) => self.shared.store(offset, size, value),
            None => self.global.store(address, size, value, hint),
        }
    }

    fn update(
        &self,
        address: u64,
        size: usize,
        hint: &mut u32,
        op: &mut dyn FnMut(u64) -> Option<u64>,
    ) -> Result<u64, FaultKind> {
        match in_window(address) {
            // One worker runs the block: nothing comes between the load and the store.
            Some(offset) => {
                let old = self.shared.load(offset, size)?;
                if let Some(new) = op(old) {
                    self.shared.store(offset, size, new)?;
                }
                Ok(old)
            }
            None => self.global.update(address, size, hint, op),
        }
    }

    fn load_many(
        &self,
        address: u64,
        size: usize,
        out: &mut [u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        let Some(offset) = in_window(address) else {
            return self.global.load_many(address, size, out, hint);
        };
        self.shared.range(offset, size.saturating_mul(out.len()))?;
        let mut at = offset;
        for o in out.iter_mut() {
            *o = self.shared.load(at, size)?;
            at += size as u64;
        }
        Ok(())
    }

    fn store_many(
        &self,
        address: u64,
        size: usize,
        values: &[u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        let Some(offset) = in_window(address) else {
            return self.global.store_many(address, size, values, hint);
        };
        self.shared
            .range(offset, size.saturating_mul(values.len()))?;
        let mut at = offset;
        for &v in values {
            self.shared.store(at, size, v)?;
            at += size as u64;
        }
        Ok(())
    }

    fn nearest(&self, address: u64) -> Option<Allocation> {
        match in_window(address) {
            Some(_) => Some(Allocation {
                base: SHARED_WINDOW,
                size: self.shared.len(),
            }),
            None => self.global.nearest(address),
        }
    }
}
