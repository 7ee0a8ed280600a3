//! Global memory as the interpreter sees it: the [`Memory`] trait, and [`Regions`], the
//! implementation over exactly the byte ranges the owner (jitseam's emulator device) lends for
//! one launch, each read-only or read-write.
//!
//! Blocks run on several threads at once, so memory is shared (`&self`): every access to a
//! read-write range is made of one-byte atomic operations (relaxed ordering, which compiles to
//! plain byte loads and stores), so even a kernel with a data race cannot make the
//! interpreter's own behaviour undefined — not even one whose threads race with accesses of
//! different widths on the same bytes, which Rust's memory model leaves undefined for atomics
//! of different sizes. A read-modify-write atomic takes a lock striped by address, so atomics
//! stay atomic with respect to each other, as on a GPU. Read-only ranges are borrowed shared
//! for the whole launch, so nothing can write them and plain reads suffice.

use std::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use super::fault::{Allocation, FaultKind};

/// Global memory for one launch, shared by every thread that runs a block. Every access goes
/// through here; one that is not wholly inside one mapped range is refused with
/// [`FaultKind::OutOfBounds`], a write into a read-only range with [`FaultKind::WriteToInput`].
///
/// `size` is 1, 2, 4 or 8 and `address` is a multiple of it (the interpreter checks alignment
/// first). `hint` is a per-instruction cache the implementation may use to remember which
/// range the instruction touched last; it starts at 0 and is never interpreted by the caller.
pub trait Memory: Sync {
    /// The `size`-byte little-endian value at `address`, zero-extended.
    fn load(&self, address: u64, size: usize, hint: &mut u32) -> Result<u64, FaultKind>;

    /// Writes the low `size` bytes of `value` at `address`.
    fn store(&self, address: u64, size: usize, value: u64, hint: &mut u32)
    -> Result<(), FaultKind>;

    /// Atomically replaces the value `old` at `address` by `op(old)` (or leaves it when `op`
    /// returns `None`) and returns `old`.
    fn update(
        &self,
        address: u64,
        size: usize,
        hint: &mut u32,
        op: &mut dyn FnMut(u64) -> Option<u64>,
    ) -> Result<u64, FaultKind>;

    /// Loads `out.len()` consecutive `size`-byte elements from `address` (a vector load): all
    /// or none, the whole vector inside one range.
    fn load_many(
        &self,
        address: u64,
        size: usize,
        out: &mut [u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind>;

    /// Stores `values` as consecutive `size`-byte elements at `address` (a vector store): all
    /// or none, the whole vector inside one writable range.
    fn store_many(
        &self,
        address: u64,
        size: usize,
        values: &[u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind>;

    /// The range nearest to `address` (containing it, or the closest by distance), for fault
    /// reports.
    fn nearest(&self, address: u64) -> Option<Allocation>;
}

/// One byte range lent for a launch: read-only (an input) or read-write.
#[derive(Debug)]
pub struct Region<'m> {
    base: u64,
    ptr: *mut u8,
    len: usize,
    writable: bool,
    _borrow: PhantomData<&'m mut [u8]>,
}

// SAFETY: a `Region` is a borrow of its bytes for 'm: a read-write region comes from a
// `&'m mut [u8]` (nobody else touches the bytes for 'm) and is only ever accessed through
// one-byte atomic operations, so concurrent accesses from several threads are data-race free
// and never mix atomic sizes; a
// read-only region comes from a `&'m [u8]`, whose bytes cannot change for 'm, and is only
// read. Sharing or sending the pointer between threads is therefore sound.
unsafe impl Send for Region<'_> {}
// SAFETY: see the `Send` impl: every shared access is atomic or a read of immutable bytes.
unsafe impl Sync for Region<'_> {}

impl<'m> Region<'m> {
    /// An input: loads see these bytes, a store or atomic faults with "write to input".
    pub fn read_only(base: u64, bytes: &'m [u8]) -> Self {
        Self {
            base,
            ptr: bytes.as_ptr().cast_mut(),
            len: bytes.len(),
            writable: false,
            _borrow: PhantomData,
        }
    }

    /// An output (or in-out operand): loads, stores and atomics all allowed.
    pub fn read_write(base: u64, bytes: &'m mut [u8]) -> Self {
        Self {
            base,
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
            writable: true,
            _borrow: PhantomData,
        }
    }

    /// The device address range this region maps.
    pub fn allocation(&self) -> Allocation {
        Allocation {
            base: self.base,
            size: self.len as u64,
        }
    }

    /// Whether stores are allowed.
    pub fn writable(&self) -> bool {
        self.writable
    }

    #[inline(always)]
    fn load(&self, offset: usize, size: usize) -> u64 {
        let p = self.ptr.wrapping_add(offset);
        let size = size.min(8);
        if !self.writable {
            let mut buf = [0u8; 8];
            // SAFETY: `offset + size <= len` (checked by `Regions::find`), so the `size` bytes
            // at `p` lie in the borrowed, immutable slice; `buf` has room for 8.
            unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), size) };
            return u64::from_le_bytes(buf);
        }
        let mut v = 0u64;
        for i in (0..size).rev() {
            // SAFETY: byte `offset + i < len` of the exclusively borrowed slice (`offset + size
            // <= len`, checked by `Regions::find`), valid for reads and writes for 'm; every
            // access to it during 'm is a one-byte atomic (see `Region`), and byte atomics need
            // no alignment.
            let b = unsafe { AtomicU8::from_ptr(p.wrapping_add(i)).load(Ordering::Relaxed) };
            v = (v << 8) | u64::from(b);
        }
        v
    }

    #[inline(always)]
    fn store(&self, offset: usize, size: usize, value: u64) {
        let p = self.ptr.wrapping_add(offset);
        for (i, b) in value.to_le_bytes().iter().take(size).enumerate() {
            // SAFETY: as in `load`: byte `offset + i < len` of the exclusively borrowed slice,
            // accessed only by one-byte atomics.
            unsafe { AtomicU8::from_ptr(p.wrapping_add(i)).store(*b, Ordering::Relaxed) };
        }
    }

    /// A read-modify-write under the lock of the access's 16-byte granule of device memory:
    /// atomic with respect to every other atomic on those bytes (an aligned access of at most
    /// 8 bytes never spans two granules), while its own loads and stores stay byte-wise.
    fn update(&self, offset: usize, size: usize, op: &mut dyn FnMut(u64) -> Option<u64>) -> u64 {
        const STRIPES: usize = 64;
        static LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::new(()) }; STRIPES];
        let granule = (self.base.wrapping_add(offset as u64) >> 4) as usize;
        let _guard = LOCKS[granule % STRIPES]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let old = self.load(offset, size);
        if let Some(new) = op(old) {
            self.store(offset, size, new);
        }
        old
    }
}

/// The byte ranges lent for one launch, sorted by base address.
#[derive(Debug)]
pub struct Regions<'m> {
    regions: Vec<Region<'m>>,
}

impl<'m> Regions<'m> {
    /// Lends these ranges (base address, bytes), all read-write. They need not be sorted.
    pub fn new(regions: Vec<(u64, &'m mut [u8])>) -> Self {
        Self::from_regions(
            regions
                .into_iter()
                .map(|(base, bytes)| Region::read_write(base, bytes))
                .collect(),
        )
    }

    /// Lends exactly these ranges, each read-only or read-write. They need not be sorted; where
    /// two overlap, an access wholly inside either is allowed (the one with the higher base
    /// answers first).
    pub fn from_regions(mut regions: Vec<Region<'m>>) -> Self {
        regions.sort_unstable_by_key(|r| r.base);
        Self { regions }
    }

    /// The mapped ranges, by base address.
    pub fn regions(&self) -> &[Region<'m>] {
        &self.regions
    }

    /// Index of the range holding `[address, address + len)` and the offset in it.
    #[inline(always)]
    fn find(&self, address: u64, len: usize, hint: &mut u32) -> Option<(usize, usize)> {
        if let Some(r) = self.regions.get(*hint as usize) {
            let offset = address.wrapping_sub(r.base) as usize;
            // One comparison covers "below the base" too: the offset then wraps around.
            if offset < r.len && r.len - offset >= len {
                return Some((*hint as usize, offset));
            }
        }
        self.find_slow(address, len, hint)
    }

    #[cold]
    fn find_slow(&self, address: u64, len: usize, hint: &mut u32) -> Option<(usize, usize)> {
        let below = self.regions.partition_point(|r| r.base <= address);
        // The range with the highest base at or below the address first, then (where ranges
        // overlap) the earlier ones.
        for index in (0..below).rev() {
            let Some(r) = self.regions.get(index) else {
                continue;
            };
            let Ok(offset) = usize::try_from(address - r.base) else {
                continue;
            };
            if offset < r.len && r.len - offset >= len {
                *hint = u32::try_from(index).unwrap_or(0);
                return Some((index, offset));
            }
        }
        None
    }
}

impl Memory for Regions<'_> {
    #[inline]
    fn load(&self, address: u64, size: usize, hint: &mut u32) -> Result<u64, FaultKind> {
        let (index, offset) = self
            .find(address, size, hint)
            .ok_or(FaultKind::OutOfBounds)?;
        let r = self.regions.get(index).ok_or(FaultKind::OutOfBounds)?;
        Ok(r.load(offset, size))
    }

    #[inline]
    fn store(
        &self,
        address: u64,
        size: usize,
        value: u64,
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        let (index, offset) = self
            .find(address, size, hint)
            .ok_or(FaultKind::OutOfBounds)?;
        let r = self.regions.get(index).ok_or(FaultKind::OutOfBounds)?;
        if !r.writable {
            return Err(FaultKind::WriteToInput);
        }
        r.store(offset, size, value);
        Ok(())
    }

    fn update(
        &self,
        address: u64,
        size: usize,
        hint: &mut u32,
        op: &mut dyn FnMut(u64) -> Option<u64>,
    ) -> Result<u64, FaultKind> {
        let (index, offset) = self
            .find(address, size, hint)
            .ok_or(FaultKind::OutOfBounds)?;
        let r = self.regions.get(index).ok_or(FaultKind::OutOfBounds)?;
        if !r.writable {
            return Err(FaultKind::WriteToInput);
        }
        Ok(r.update(offset, size, op))
    }

    #[inline]
    fn load_many(
        &self,
        address: u64,
        size: usize,
        out: &mut [u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        let (index, offset) = self
            .find(address, size * out.len(), hint)
            .ok_or(FaultKind::OutOfBounds)?;
        let r = self.regions.get(index).ok_or(FaultKind::OutOfBounds)?;
        for (i, v) in out.iter_mut().enumerate() {
            *v = r.load(offset + i * size, size);
        }
        Ok(())
    }

    #[inline]
    fn store_many(
        &self,
        address: u64,
        size: usize,
        values: &[u64],
        hint: &mut u32,
    ) -> Result<(), FaultKind> {
        let (index, offset) = self
            .find(address, size * values.len(), hint)
            .ok_or(FaultKind::OutOfBounds)?;
        let r = self.regions.get(index).ok_or(FaultKind::OutOfBounds)?;
        if !r.writable {
            return Err(FaultKind::WriteToInput);
        }
        for (i, &v) in values.iter().enumerate() {
            r.store(offset + i * size, size, v);
        }
        Ok(())
    }

    fn nearest(&self, address: u64) -> Option<Allocation> {
        self.regions.iter().map(Region::allocation).min_by_key(|a| {
            if address < a.base {
                a.base - address
            } else {
                address.saturating_sub(a.base.saturating_add(a.size.saturating_sub(1)))
            }
        })
    }
}

/// Merges operand byte ranges `(base, len, writable)` into disjoint ranges, each writable if
/// any range it covers is: what the owner should map when two operands share bytes (an input
/// that is also an output is read-write).
pub fn merge_ranges(mut ranges: Vec<(u64, u64, bool)>) -> Vec<(u64, u64, bool)> {
    ranges.retain(|&(_, len, _)| len > 0);
    ranges.sort_unstable_by_key(|&(base, _, _)| base);
    let mut out: Vec<(u64, u64, bool)> = Vec::with_capacity(ranges.len());
    for (base, len, writable) in ranges {
        let end = base.saturating_add(len);
        if let Some(last) = out.last_mut() {
            let last_end = last.0.saturating_add(last.1);
            if base < last_end {
                last.1 = last_end.max(end) - last.0;
                last.2 |= writable;
                continue;
            }
        }
        out.push((base, len, writable));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads of a racy kernel touch the same bytes with different widths at once: a 4-byte
    /// store, 1- and 2-byte loads, a 2-byte atomic add. Every value seen is one some thread
    /// could have written, and atomics stay atomic. (Under Miri, `cargo +nightly miri test -p
    /// jitseam-emu --lib mixed_widths`, this also shows the accesses are defined: atomics of
    /// the access's own width, as before, are a mixed-size race Miri reports.)
    #[test]
    fn racing_accesses_of_mixed_widths_are_defined_and_atomics_stay_atomic() {
        const ROUNDS: u64 = if cfg!(miri) { 20 } else { 2000 };
        let mut bytes = [0u8; 16];
        let memory = Regions::new(vec![(0x1000, &mut bytes[..])]);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut hint = 0;
                for i in 0..ROUNDS {
                    let word = if i % 2 == 0 { 0x0101_0101 } else { 0 };
                    memory.store(0x1000, 4, word, &mut hint).unwrap();
                }
            });
            s.spawn(|| {
                let mut hint = 0;
                for _ in 0..ROUNDS {
                    let b = memory.load(0x1001, 1, &mut hint).unwrap();
                    assert!(b == 0 || b == 1, "{b:#x}");
                    let h = memory.load(0x1002, 2, &mut hint).unwrap();
                    assert!([0, 1, 0x100, 0x101].contains(&h), "{h:#x}");
                }
            });
            for _ in 0..2 {
                s.spawn(|| {
                    let mut hint = 0;
                    for _ in 0..ROUNDS {
                        memory
                            .update(0x1008, 2, &mut hint, &mut |old| Some(old + 1))
                            .unwrap();
                    }
                });
            }
        });
        let mut hint = 0;
        assert_eq!(memory.load(0x1008, 2, &mut hint).unwrap(), 2 * ROUNDS);
    }
}
