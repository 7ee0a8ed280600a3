//! Where an access lands: an instruction's state space and address resolved to one window.
//!
//! Global memory is the owner's [`Memory`] plus the emulator's windows in the reserved span
//! (see [`crate::space`]): the module's `.global` and `.const` variables and the kernel's
//! argument packet, all shared by the launch's threads and so served by [`Windows`], itself a
//! [`Memory`]. The thread's `.local` frame is private to a lane of the running group and the
//! block's `.shared` memory to the block, so the run loop resolves both itself with [`load`],
//! [`store`], [`load_many`], [`store_many`] and [`update`], which send everything else on to
//! the launch's memory.

use super::fault::{Allocation, FaultKind};
use super::local::LocalFrames;
use super::memory::{Memory, Regions};
use super::shared::SharedMemory;
use crate::space::{
    CONST_VARS, LOCAL_WINDOW, PARAM_WINDOW, RESERVED, SHARED_WINDOW, Space, WINDOW_BYTES,
};

/// The window an access goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// The memory every thread of the launch sees ([`Windows`]), at this generic address.
    Memory(u64),
    /// The lane's local frame at this offset.
    Local(u64),
    /// The block's shared memory at this offset.
    Shared(u64),
}

const GENERIC: u8 = Space::Generic as u8;
const GLOBAL: u8 = Space::Global as u8;
const LOCAL: u8 = Space::Local as u8;
const SHARED: u8 = Space::Shared as u8;
const CONST: u8 = Space::Const as u8;
const PARAM: u8 = Space::Param as u8;

/// Whether `addr` lies in the window starting at `base`.
#[inline(always)]
fn within(addr: u64, base: u64) -> bool {
    addr.wrapping_sub(base) < WINDOW_BYTES
}

/// Whether `addr` lies in the span the windows are cut from.
#[inline(always)]
fn reserved(addr: u64) -> bool {
    addr.wrapping_sub(RESERVED.start) < RESERVED.end - RESERVED.start
}

/// The window of an access of `space` (an instruction's code) at `addr`, or why there is none.
#[inline(always)]
pub(crate) fn route(space: u8, addr: u64) -> Result<Route, FaultKind> {
    match space {
        // The common case first: one comparison for an address outside every window.
        GENERIC | GLOBAL if !reserved(addr) => Ok(Route::Memory(addr)),
        GENERIC if within(addr, LOCAL_WINDOW) => Ok(Route::Local(addr - LOCAL_WINDOW)),
        GENERIC if within(addr, SHARED_WINDOW) => Ok(Route::Shared(addr - SHARED_WINDOW)),
        GENERIC | GLOBAL => Ok(Route::Memory(addr)),
        LOCAL => Ok(Route::Local(addr)),
        SHARED => Ok(Route::Shared(addr)),
        CONST if within(addr, CONST_VARS) => Ok(Route::Memory(addr)),
        PARAM if within(addr, PARAM_WINDOW) => Ok(Route::Memory(addr)),
        _ => Err(FaultKind::OutOfBounds),
    }
}

/// A load of `size` bytes at `addr` of `space` by `lane`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn load<M: Memory>(
    memory: &M,
    local: &LocalFrames,
    shared: &SharedMemory,
    space: u8,
    lane: usize,
    addr: u64,
    size: usize,
    hint: &mut u32,
) -> Result<u64, FaultKind> {
    match route(space, addr)? {
        Route::Memory(a) => memory.load(a, size, hint),
        Route::Local(offset) => local.load(lane, offset, size),
        Route::Shared(offset) => shared.load(offset, size),
    }
}

/// A store of the low `size` bytes of `value` at `addr` of `space` by `lane`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn store<M: Memory>(
    memory: &M,
    local: &mut LocalFrames,
    shared: &SharedMemory,
    space: u8,
    lane: usize,
    addr: u64,
    size: usize,
    value: u64,
    hint: &mut u32,
) -> Result<(), FaultKind> {
    match route(space, addr)? {
        Route::Memory(a) => memory.store(a, size, value, hint),
        Route::Local(offset) => local.store(lane, offset, size, value),
        Route::Shared(offset) => shared.store(offset, size, value),
    }
}

/// A vector load: `out.len()` elements of `size` bytes from `addr`, all or none.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn load_many<M: Memory>(
    memory: &M,
    local: &LocalFrames,
    shared: &SharedMemory,
    space: u8,
    lane: usize,
    addr: u64,
    size: usize,
    out: &mut [u64],
    hint: &mut u32,
) -> Result<(), FaultKind> {
    match route(space, addr)? {
        Route::Memory(a) => memory.load_many(a, size, out, hint),
        Route::Local(offset) => {
            // The whole vector first, so that a fault loads nothing.
            let total = size * out.len();
            local.check(offset, total)?;
            for (i, v) in out.iter_mut().enumerate() {
                *v = local.load(lane, offset + (i * size) as u64, size)?;
            }
            Ok(())
        }
        Route::Shared(offset) => {
            shared.range(offset, size.saturating_mul(out.len()))?;
            for (i, v) in out.iter_mut().enumerate() {
                *v = shared.load(offset + (i * size) as u64, size)?;
            }
            Ok(())
        }
    }
}

/// A vector store of `values` as `size`-byte elements at `addr`, all or none.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn store_many<M: Memory>(
    memory: &M,
    local: &mut LocalFrames,
    shared: &SharedMemory,
    space: u8,
    lane: usize,
    addr: u64,
    size: usize,
    values: &[u64],
    hint: &mut u32,
) -> Result<(), FaultKind> {
    match route(space, addr)? {
        Route::Memory(a) => memory.store_many(a, size, values, hint),
        Route::Local(offset) => {
            let total = size * values.len();
            local.check(offset, total)?;
            for (i, &v) in values.iter().enumerate() {
                local.store(lane, offset + (i * size) as u64, size, v)?;
            }
            Ok(())
        }
        Route::Shared(offset) => {
            shared.range(offset, size.saturating_mul(values.len()))?;
            for (i, &v) in values.iter().enumerate() {
                shared.store(offset + (i * size) as u64, size, v)?;
            }
            Ok(())
        }
    }
}

/// An atomic read-modify-write of `size` bytes at generic address `addr`: the old value.
#[inline(always)]
pub(crate) fn update<M: Memory>(
    memory: &M,
    shared: &SharedMemory,
    addr: u64,
    size: usize,
    hint: &mut u32,
    op: &mut dyn FnMut(u64) -> Option<u64>,
) -> Result<u64, FaultKind> {
    if within(addr, SHARED_WINDOW) {
        return shared.update(addr - SHARED_WINDOW, size, op);
    }
    memory.update(addr, size, hint, op)
}

/// The range nearest to a faulting access of `space` at `addr`, in the access's own
/// addresses.
pub(crate) fn nearest<M: Memory>(
    memory: &M,
    local: &LocalFrames,
    shared: &SharedMemory,
    space: u8,
    addr: u64,
) -> Option<Allocation> {
    match space {
        LOCAL => Some(local.allocation(0)),
        SHARED => Some(shared.allocation(0)),
        GENERIC if within(addr, LOCAL_WINDOW) => Some(local.allocation(LOCAL_WINDOW)),
        GENERIC if within(addr, SHARED_WINDOW) => Some(shared.allocation(SHARED_WINDOW)),
        _ => memory.nearest(addr),
    }
}

/// The memory every thread of a launch shares: the owner's, and in the reserved span the
/// module's variables and the argument packet (read-only).
pub(crate) struct Windows<'r, M> {
    pub(crate) global: &'r M,
    pub(crate) module: Regions<'r>,
    pub(crate) params: &'r [u8],
}

impl<M: Memory> Windows<'_, M> {
    /// The packet bytes `[addr, addr + len)` if they lie in the argument packet.
    fn packet(&self, addr: u64, len: usize) -> Option<&[u8]> {
        if !within(addr, PARAM_WINDOW) {
            return None;
        }
        let start = usize::try_from(addr - PARAM_WINDOW).ok()?;
        self.params.get(start..start.checked_add(len)?)
    }
}

fn read_le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

impl<M: Memory> Memory for Windows<'_, M> {
    #[inline(always)]
    fn load(&self, address: u64, size: usize, hint: &mut u32) -> Result<u64, FaultKind> {
        if !reserved(address) {
            return self.global.load(address, size, hint);
        }
        match self.packet(address, size) {
            Some(bytes) => Ok(read_le(bytes)),
            None => self.module.load(address, size, hint),
        }
    }

    #[inline(always)]
    fn store(
        &self,
        address: u64,
        size: usize,
        value: u64,
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        if !reserved(address) {
            return self.global.store(address, size, value, hint);
        }
        if self.packet(address, size).is_some() {
            return Err(FaultKind::WriteToInput);
        }
        self.module.store(address, size, value, hint)
    }

    fn update(
        &self,
        address: u64,
        size: usize,
        hint: &mut u32,
        op: &mut dyn FnMut(u64) -> Option<u64>,
    ) -> Result<u64, FaultKind> {
        if !reserved(address) {
            return self.global.update(address, size, hint, op);
        }
        if self.packet(address, size).is_some() {
            return Err(FaultKind::WriteToInput);
        }
        self.module.update(address, size, hint, op)
    }

    #[inline(always)]
    fn load_many(
        &self,
        address: u64,
        size: usize,
        out: &mut [u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        if !reserved(address) {
            return self.global.load_many(address, size, out, hint);
        }
        match self.packet(address, size * out.len()) {
            Some(bytes) => {
                for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(size.max(1))) {
                    *v = read_le(chunk);
                }
                Ok(())
            }
            None => self.module.load_many(address, size, out, hint),
        }
    }

    #[inline(always)]
    fn store_many(
        &self,
        address: u64,
        size: usize,
        values: &[u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        if !reserved(address) {
            return self.global.store_many(address, size, values, hint);
        }
        if self.packet(address, size * values.len()).is_some() {
            return Err(FaultKind::WriteToInput);
        }
        self.module.store_many(address, size, values, hint)
    }

    fn nearest(&self, address: u64) -> Option<Allocation> {
        if !reserved(address) {
            return self.global.nearest(address);
        }
        if within(address, PARAM_WINDOW) {
            return Some(Allocation {
                base: PARAM_WINDOW,
                size: self.params.len() as u64,
            });
        }
        self.module.nearest(address)
    }
}
