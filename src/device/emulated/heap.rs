//! The emulator's memory: a table of allocations, each behind its own lock, and the lending of
//! exactly a launch's operand ranges to the interpreter.
//!
//! The table's lock is held only to find, add or remove an allocation — never while bytes are
//! copied or a kernel runs — so `alloc`, a copy and a free never wait behind a launch unless
//! they touch the very allocation it uses. A launch locks each allocation its operands reach
//! (shared when it only reads it, exclusive when it writes any part of it) for as long as it
//! runs, in address order, so that two launches never wait for each other in a circle.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use jitseam_emu::interp::{Region, Regions, merge_ranges};

use crate::abi::OperandRange;

/// First allocation address: far from zero, so null and small pointers fault.
const FIRST_BASE: u64 = 0x7f00_0000_0000;
/// Where allocations must end: the addresses above are the interpreter's own windows (the
/// threads' local frames, the module's variables, the argument packet).
const LAST_END: u64 = jitseam_emu::interp::RESERVED.start;
const _: () = assert!(FIRST_BASE < LAST_END);
/// Allocation alignment, as `cuMemAlloc` guarantees.
const ALIGN: u64 = 256;
/// Unmapped bytes between two allocations.
const GUARD: u64 = 4096;

/// A poisoned lock is still consistent here: no critical section in this file panics half-way
/// through an update.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read_lock<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_lock<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// One allocation's bytes. A launch may still hold it after it was freed (the table drops its
/// handle; the bytes go when the launch does).
#[derive(Debug)]
struct Block {
    len: usize,
    bytes: RwLock<Box<[u8]>>,
}

/// Every live allocation, by base address.
#[derive(Debug)]
pub(super) struct Heap {
    table: Mutex<Table>,
}

#[derive(Debug)]
struct Table {
    allocations: BTreeMap<u64, Arc<Block>>,
    next: u64,
}

impl Heap {
    pub(super) fn new() -> Self {
        Self {
            table: Mutex::new(Table {
                allocations: BTreeMap::new(),
                next: FIRST_BASE,
            }),
        }
    }

    /// A new zeroed allocation of `bytes`: its base, or why not. Bases are 256-byte aligned,
    /// never reused, and separated by unmapped guard gaps.
    pub(super) fn alloc(&self, bytes: usize) -> Result<u64, String> {
        let mut data = Vec::new();
        data.try_reserve_exact(bytes)
            .map_err(|e| format!("cannot allocate {bytes} bytes: {e}"))?;
        data.resize(bytes, 0);
        let block = Arc::new(Block {
            len: bytes,
            bytes: RwLock::new(data.into_boxed_slice()),
        });
        let mut table = lock(&self.table);
        let base = table.next;
        let next = (bytes as u64)
            .checked_next_multiple_of(ALIGN)
            .and_then(|s| s.checked_add(GUARD))
            .and_then(|s| base.checked_add(s))
            .filter(|&next| next <= LAST_END)
            .ok_or_else(|| "the emulator's address space is exhausted".to_owned())?;
        table.next = next;
        table.allocations.insert(base, block);
        Ok(base)
    }

    /// Forgets the allocation at `base`; a launch that still uses it keeps its bytes alive.
    pub(super) fn free(&self, base: u64) {
        let block = lock(&self.table).allocations.remove(&base);
        // Dropped here, with the table unlocked: freeing a large buffer takes a while.
        drop(block);
    }

    /// The allocation holding all of `[address, address + len)`, and the offset of `address`
    /// in it.
    fn find(&self, address: u64, len: usize) -> Option<(Arc<Block>, usize)> {
        let table = lock(&self.table);
        let (&base, block) = table.allocations.range(..=address).next_back()?;
        let start = usize::try_from(address - base).ok()?;
        let end = start.checked_add(len)?;
        (end <= block.len).then(|| (Arc::clone(block), start))
    }

    /// Whether `[address, address + len)` lies inside one allocation.
    pub(super) fn contains(&self, address: u64, len: usize) -> bool {
        self.find(address, len).is_some()
    }

    /// Copies `src` to `address`; false (nothing copied) when it fits no allocation.
    pub(super) fn write(&self, address: u64, src: &[u8]) -> bool {
        let Some((block, start)) = self.find(address, src.len()) else {
            return false;
        };
        let mut bytes = write_lock(&block.bytes);
        match bytes.get_mut(start..start + src.len()) {
            Some(dst) => {
                dst.copy_from_slice(src);
                true
            }
            None => false,
        }
    }

    /// Copies from `address` into `dst`; false (nothing copied) when it fits no allocation.
    pub(super) fn read(&self, address: u64, dst: &mut [u8]) -> bool {
        let Some((block, start)) = self.find(address, dst.len()) else {
            return false;
        };
        let bytes = read_lock(&block.bytes);
        match bytes.get(start..start + dst.len()) {
            Some(src) => {
                dst.copy_from_slice(src);
                true
            }
            None => false,
        }
    }

    /// Sets the `len` bytes at `address` to `value`; false (nothing written) when they fit no
    /// allocation.
    pub(super) fn fill(&self, address: u64, len: usize, value: u8) -> bool {
        let Some((block, start)) = self.find(address, len) else {
            return false;
        };
        let mut bytes = write_lock(&block.bytes);
        match bytes.get_mut(start..start + len) {
            Some(dst) => {
                dst.fill(value);
                true
            }
            None => false,
        }
    }

    /// Copies the `len` bytes at `src` to `dst`, which do not overlap; false (nothing copied)
    /// when either fits no allocation. Two allocations are locked in address order, as a
    /// launch locks them, so a copy and a launch never wait for each other in a circle.
    pub(super) fn copy(&self, src: u64, dst: u64, len: usize) -> bool {
        let (Some((from, from_start)), Some((to, to_start))) =
            (self.find(src, len), self.find(dst, len))
        else {
            return false;
        };
        if Arc::ptr_eq(&from, &to) {
            let mut bytes = write_lock(&to.bytes);
            if from_start.max(to_start) + len > bytes.len() {
                return false;
            }
            bytes.copy_within(from_start..from_start + len, to_start);
            return true;
        }
        let copy = |source: &[u8], target: &mut [u8]| match (
            source.get(from_start..from_start + len),
            target.get_mut(to_start..to_start + len),
        ) {
            (Some(source), Some(target)) => {
                target.copy_from_slice(source);
                true
            }
            _ => false,
        };
        if src < dst {
            let source = read_lock(&from.bytes);
            copy(&source, &mut write_lock(&to.bytes))
        } else {
            let mut target = write_lock(&to.bytes);
            copy(&read_lock(&from.bytes), &mut target)
        }
    }

    /// What a launch whose operands reach `ranges` may touch: each range (merged where operands
    /// share bytes, writable where any of them is an output) clipped to the live allocations,
    /// so that bytes an operand claims beyond its allocation stay unmapped and fault.
    pub(super) fn lend(&self, ranges: &[OperandRange]) -> Lent {
        let merged = merge_ranges(ranges.iter().map(|r| (r.base, r.len, r.writable)).collect());
        let table = lock(&self.table);
        let mut groups: Vec<Group> = Vec::new();
        for (base, len, writable) in merged {
            let end = base.saturating_add(len);
            // The allocation at or below `base`, then every one that starts before `end`.
            let first = table
                .allocations
                .range(..=base)
                .next_back()
                .map_or(base, |(&b, _)| b);
            for (&alloc_base, block) in table.allocations.range(first..end) {
                let alloc_end = alloc_base.saturating_add(block.len as u64);
                let (lo, hi) = (base.max(alloc_base), end.min(alloc_end));
                let (Ok(offset), Ok(len)) = (
                    usize::try_from(lo.wrapping_sub(alloc_base)),
                    usize::try_from(hi.wrapping_sub(lo)),
                ) else {
                    continue;
                };
                if lo >= hi {
                    continue;
                }
                let piece = Piece {
                    offset,
                    len,
                    writable,
                };
                // Ranges and allocations both ascend, so a piece belongs to the last group or
                // to a new one.
                match groups.last_mut() {
                    Some(group) if group.base == alloc_base => group.pieces.push(piece),
                    _ => groups.push(Group {
                        block: Arc::clone(block),
                        base: alloc_base,
                        pieces: vec![piece],
                    }),
                }
            }
        }
        Lent { groups }
    }
}

/// A disjoint part of one allocation lent to a launch.
#[derive(Debug, Clone, Copy)]
struct Piece {
    offset: usize,
    len: usize,
    writable: bool,
}

/// The parts of one allocation a launch may touch, in ascending order.
#[derive(Debug)]
struct Group {
    block: Arc<Block>,
    base: u64,
    pieces: Vec<Piece>,
}

/// A launch's operand bytes, grouped by allocation in address order (see [`Heap::lend`]).
#[derive(Debug)]
pub(super) struct Lent {
    groups: Vec<Group>,
}

/// One allocation locked for a launch.
enum Held<'b> {
    Read(RwLockReadGuard<'b, Box<[u8]>>),
    Write(RwLockWriteGuard<'b, Box<[u8]>>),
}

impl Lent {
    /// Locks every lent allocation, in address order, and runs `f` on exactly the lent bytes:
    /// inputs read-only, outputs read-write.
    pub(super) fn with_regions<R>(&self, f: impl FnOnce(&Regions<'_>) -> R) -> R {
        let mut held: Vec<Held<'_>> = self
            .groups
            .iter()
            .map(|group| {
                if group.pieces.iter().any(|p| p.writable) {
                    Held::Write(write_lock(&group.block.bytes))
                } else {
                    Held::Read(read_lock(&group.block.bytes))
                }
            })
            .collect();
        let mut regions = Vec::with_capacity(self.groups.iter().map(|g| g.pieces.len()).sum());
        for (held, group) in held.iter_mut().zip(&self.groups) {
            match held {
                Held::Read(bytes) => {
                    for piece in &group.pieces {
                        if let Some(lent) = bytes.get(piece.offset..piece.offset + piece.len) {
                            regions.push(Region::read_only(group.base + piece.offset as u64, lent));
                        }
                    }
                }
                Held::Write(bytes) => carve(group, &mut bytes[..], &mut regions),
            }
        }
        f(&Regions::from_regions(regions))
    }
}

/// Splits one exclusively locked allocation into the group's disjoint, ascending pieces.
fn carve<'b>(group: &Group, bytes: &'b mut [u8], regions: &mut Vec<Region<'b>>) {
    let mut rest = bytes;
    // Offset of `rest[0]` in the allocation.
    let mut at = 0usize;
    for piece in &group.pieces {
        let Some(skip) = piece.offset.checked_sub(at) else {
            continue;
        };
        let Some((_, tail)) = std::mem::take(&mut rest).split_at_mut_checked(skip) else {
            return;
        };
        let Some((lent, tail)) = tail.split_at_mut_checked(piece.len) else {
            return;
        };
        rest = tail;
        at = piece.offset + piece.len;
        let address = group.base + piece.offset as u64;
        regions.push(if piece.writable {
            Region::read_write(address, lent)
        } else {
            Region::read_only(address, lent)
        });
    }
}
