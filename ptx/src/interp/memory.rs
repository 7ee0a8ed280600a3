//! Global memory as the interpreter sees it: the [`Memory`] trait, and [`Regions`], the
//! implementation over a set of allocations that the owner (jitseam's emulator device) lends for
//! one launch.

/// One allocation: where it starts and how many bytes it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Allocation {
    /// Device address of the first byte.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
}

/// Global memory for one launch. Every access goes through here, and an access that is not
/// wholly inside one allocation gets `None`, which the interpreter turns into a fault.
///
/// `hint` is a per-instruction cache the implementation may use to remember which allocation
/// the instruction touched last; it starts at 0 and is never interpreted by the caller.
pub trait Memory {
    /// The `len` bytes at `address`, if they all lie in one allocation.
    fn bytes(&self, address: u64, len: usize, hint: &mut u32) -> Option<&[u8]>;

    /// The `len` bytes at `address` for writing, if they all lie in one allocation.
    fn bytes_mut(&mut self, address: u64, len: usize, hint: &mut u32) -> Option<&mut [u8]>;

    /// The allocation nearest to `address` (containing it, or the closest by distance), for
    /// fault reports.
    fn nearest(&self, address: u64) -> Option<Allocation>;
}

/// Allocations lent for one launch, sorted by base address.
#[derive(Debug)]
pub struct Regions<'m> {
    regions: Vec<(u64, &'m mut [u8])>,
}

impl<'m> Regions<'m> {
    /// Lends these allocations (base address, bytes) to the interpreter. They need not be
    /// sorted; overlapping ones make lookups pick one of them.
    pub fn new(mut regions: Vec<(u64, &'m mut [u8])>) -> Self {
        regions.sort_unstable_by_key(|(base, _)| *base);
        Self { regions }
    }

    /// Index of the allocation holding `[address, address + len)` and the offset in it.
    #[inline(always)]
    fn find(&self, address: u64, len: usize, hint: &mut u32) -> Option<(usize, usize)> {
        if let Some((base, data)) = self.regions.get(*hint as usize) {
            let offset = address.wrapping_sub(*base) as usize;
            // One comparison covers "below the base" too: the offset then wraps around.
            if offset < data.len() && data.len() - offset >= len {
                return Some((*hint as usize, offset));
            }
        }
        self.find_slow(address, len, hint)
    }

    #[cold]
    fn find_slow(&self, address: u64, len: usize, hint: &mut u32) -> Option<(usize, usize)> {
        let index = self
            .regions
            .partition_point(|(base, _)| *base <= address)
            .checked_sub(1)?;
        let (base, data) = self.regions.get(index)?;
        let offset = usize::try_from(address - base).ok()?;
        if offset <= data.len() && data.len() - offset >= len {
            *hint = u32::try_from(index).unwrap_or(0);
            Some((index, offset))
        } else {
            None
        }
    }
}

impl Memory for Regions<'_> {
    #[inline]
    fn bytes(&self, address: u64, len: usize, hint: &mut u32) -> Option<&[u8]> {
        let (index, start) = self.find(address, len, hint)?;
        self.regions.get(index)?.1.get(start..start + len)
    }

    #[inline]
    fn bytes_mut(&mut self, address: u64, len: usize, hint: &mut u32) -> Option<&mut [u8]> {
        let (index, start) = self.find(address, len, hint)?;
        self.regions.get_mut(index)?.1.get_mut(start..start + len)
    }

    fn nearest(&self, address: u64) -> Option<Allocation> {
        self.regions
            .iter()
            .map(|(base, data)| Allocation {
                base: *base,
                size: data.len() as u64,
            })
            .min_by_key(|a| {
                if address < a.base {
                    a.base - address
                } else {
                    address.saturating_sub(a.base.saturating_add(a.size.saturating_sub(1)))
                }
            })
    }
}
