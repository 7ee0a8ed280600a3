//! Device memory: a table of allocations, lent whole to the interpreter for each launch.
//!
//! Addresses are 256-byte aligned (what `cuMemAlloc` guarantees), start far from zero (a null
//! or small pointer faults), are never reused (a stale pointer to freed memory faults), and are
//! separated by unmapped gaps (an overrun faults instead of reading a neighbour). Fresh memory
//! is filled with `0xff` bytes — NaN for every float type — because device memory starts
//! uninitialized and a read of it should not look like a plausible zero.

use std::collections::BTreeMap;

use jitseam_emu::interp::Regions;

use crate::device::TOTAL_MEMORY;
use crate::status::{CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUresult};

/// First allocation address.
const FIRST_BASE: u64 = 0x7e00_0000_0000;
/// Allocation alignment.
const ALIGN: u64 = 256;
/// Unmapped bytes between two allocations.
const GUARD: u64 = 64 * 1024;
/// What fresh allocations hold.
const UNINITIALIZED: u8 = 0xff;

/// Every live allocation of one context.
#[derive(Debug)]
pub(crate) struct Heap {
    allocations: BTreeMap<u64, Box<[u8]>>,
    next: u64,
    used: u64,
}

impl Default for Heap {
    fn default() -> Self {
        Self {
            allocations: BTreeMap::new(),
            next: FIRST_BASE,
            used: 0,
        }
    }
}

impl Heap {
    /// `cuMemAlloc`: a new allocation of `bytes` bytes.
    pub(crate) fn alloc(&mut self, bytes: usize) -> Result<u64, CUresult> {
        if bytes == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let size = bytes as u64;
        if size > TOTAL_MEMORY - self.used {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        let base = self.next;
        let next = size
            .checked_next_multiple_of(ALIGN)
            .and_then(|s| s.checked_add(GUARD))
            .and_then(|s| base.checked_add(s))
            .ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
        let mut data = Vec::new();
        data.try_reserve_exact(bytes)
            .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
        data.resize(bytes, UNINITIALIZED);
        self.next = next;
        self.used += size;
        self.allocations.insert(base, data.into_boxed_slice());
        Ok(base)
    }

    /// `cuMemFree`: only the base of a live allocation may be freed.
    pub(crate) fn free(&mut self, address: u64) -> Result<(), CUresult> {
        let data = self
            .allocations
            .remove(&address)
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        self.used -= data.len() as u64;
        Ok(())
    }

    /// Bytes in use, for `cuMemGetInfo`.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// The size of the allocation that starts at `base`, if one does.
    pub(crate) fn size_at(&self, base: u64) -> Option<usize> {
        self.allocations.get(&base).map(|data| data.len())
    }

    /// Whether `[address, address + len)` lies inside one allocation.
    pub(crate) fn contains(&self, address: u64, len: usize) -> bool {
        self.find(address, len).is_some()
    }

    /// The `len` bytes at `address`, if they lie inside one allocation.
    pub(crate) fn bytes(&self, address: u64, len: usize) -> Option<&[u8]> {
        let (base, start, end) = self.find(address, len)?;
        self.allocations.get(&base)?.get(start..end)
    }

    /// The `len` bytes at `address` for writing, if they lie inside one allocation.
    pub(crate) fn bytes_mut(&mut self, address: u64, len: usize) -> Option<&mut [u8]> {
        let (base, start, end) = self.find(address, len)?;
        self.allocations.get_mut(&base)?.get_mut(start..end)
    }

    /// Copies `len` bytes from `src` to `dst`; both ranges must each lie inside an allocation
    /// (they may overlap, as `memmove` allows).
    pub(crate) fn copy_within(&mut self, dst: u64, src: u64, len: usize) -> Option<()> {
        let data = self.bytes(src, len)?.to_vec();
        self.bytes_mut(dst, len)?.copy_from_slice(&data);
        Some(())
    }

    /// Every allocation, lent to the interpreter for one launch.
    pub(crate) fn regions(&mut self) -> Regions<'_> {
        Regions::new(
            self.allocations
                .iter_mut()
                .map(|(&base, bytes)| (base, &mut bytes[..]))
                .collect(),
        )
    }

    /// `(base, start, end)`: the allocation holding the range and the range's offsets in it.
    fn find(&self, address: u64, len: usize) -> Option<(u64, usize, usize)> {
        let (&base, data) = self.allocations.range(..=address).next_back()?;
        let start = usize::try_from(address - base).ok()?;
        let end = start.checked_add(len)?;
        (end <= data.len()).then_some((base, start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_apart_and_never_reused() {
        let mut heap = Heap::default();
        let a = heap.alloc(10).unwrap();
        let b = heap.alloc(1).unwrap();
        assert_eq!(a % ALIGN, 0);
        assert_eq!(b % ALIGN, 0);
        assert!(b >= a + 10 + GUARD);
        assert!(heap.contains(a, 10));
        assert!(!heap.contains(a, 11), "an overrun reaches no neighbour");
        assert!(!heap.contains(a + 10, 1));
        heap.free(a).unwrap();
        assert!(!heap.contains(a, 1));
        assert!(heap.alloc(10).unwrap() > b);
    }

    #[test]
    fn only_live_bases_free() {
        let mut heap = Heap::default();
        let a = heap.alloc(64).unwrap();
        assert_eq!(heap.free(a + 8), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(heap.free(0), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(heap.used(), 64);
        heap.free(a).unwrap();
        assert_eq!(heap.free(a), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(heap.used(), 0);
    }

    #[test]
    fn zero_and_oversized_requests_are_refused() {
        let mut heap = Heap::default();
        assert_eq!(heap.alloc(0), Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(
            heap.alloc(usize::try_from(TOTAL_MEMORY).unwrap() + 1),
            Err(CUDA_ERROR_OUT_OF_MEMORY)
        );
    }

    #[test]
    fn fresh_memory_reads_as_nan() {
        let mut heap = Heap::default();
        let a = heap.alloc(4).unwrap();
        let bytes: [u8; 4] = heap.bytes(a, 4).unwrap().try_into().unwrap();
        assert!(f32::from_ne_bytes(bytes).is_nan());
    }
}
