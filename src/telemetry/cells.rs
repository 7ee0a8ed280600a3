//! A bounded, sharded table of aggregation cells, safe to share between threads.
//!
//! The hot path is "this cell already exists, add to its counter", and it takes no lock and
//! writes nothing but the counter: each of [`SHARDS`] shards has an open-addressed index of
//! `(hash, cell)` entries that readers probe with plain atomic loads. Creating a cell takes its
//! shard's writer lock, and is refused once the table holds its maximum number of cells: memory
//! stays bounded however many distinct keys a run produces. A full index is not resized in
//! place; the writer builds one twice as large, publishes it, and keeps the old one (a reader
//! may still be probing it) untouched until the table is dropped — not freed, and not claimed
//! back as a `Box` either, which would assert unique access readers still share: the old ones
//! together are smaller than the current one, so the bound holds.
//!
//! Beside the shards, every cell is filed once more in key order. Creating a cell pays for that
//! (a few comparisons, on a path that runs once per distinct key); a flush then walks cells in
//! output order instead of sorting 100 k scattered keys each time. No cell is removed while the
//! table lives: a shard's writer side owns its cells, and its indexes point at them.

use std::cmp::Ordering as KeyOrder;
use std::collections::BTreeSet;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Number of independently locked shards (a power of two).
const SHARDS: usize = 16;

/// Entries of a shard's first index (a power of two).
const FIRST_INDEX: usize = 16;

/// A saturating event counter. Saturates rather than wraps so that merging hostile or corrupt
/// pre-aggregated counts can never make a busy cell look idle.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        let before = self.0.fetch_add(n, Ordering::Relaxed);
        if before.checked_add(n).is_none() {
            // Wrapped: pin at the ceiling. A racing add in between is lost, but the cell already
            // stands for more events than a u64 can count.
            self.0.store(u64::MAX, Ordering::Relaxed);
        }
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What a table needs from the cells it holds.
pub(crate) trait Cell {
    /// The hash the cell was filed under; stored so that table growth never rehashes keys.
    fn hash(&self) -> u64;
    /// Output order; distinct cells never compare equal.
    fn cmp_key(&self, other: &Self) -> KeyOrder;
}

/// A cell ordered by its key, for the ordered index.
#[derive(Debug)]
struct ByKey<C>(Arc<C>);

impl<C: Cell> PartialEq for ByKey<C> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == KeyOrder::Equal
    }
}

impl<C: Cell> Eq for ByKey<C> {}

impl<C: Cell> PartialOrd for ByKey<C> {
    fn partial_cmp(&self, other: &Self) -> Option<KeyOrder> {
        Some(self.cmp(other))
    }
}

impl<C: Cell> Ord for ByKey<C> {
    fn cmp(&self, other: &Self) -> KeyOrder {
        self.0.cmp_key(&other.0)
    }
}

/// One index entry: the cell's hash beside a pointer to it, so that a probe compares hashes
/// without touching the cells it passes. Null while free; set once, never cleared.
#[derive(Debug)]
struct Entry<C> {
    hash: AtomicU64,
    cell: AtomicPtr<C>,
}

/// An open-addressed, linearly probed index, at most half full (so every probe ends).
#[derive(Debug)]
struct Index<C> {
    mask: usize,
    entries: Box<[Entry<C>]>,
}

impl<C> Index<C> {
    fn with_capacity(capacity: usize) -> Box<Self> {
        Box::new(Self {
            mask: capacity - 1,
            entries: (0..capacity)
                .map(|_| Entry {
                    hash: AtomicU64::new(0),
                    cell: AtomicPtr::new(ptr::null_mut()),
                })
                .collect(),
        })
    }

    /// The cell `eq` accepts, if the index holds it.
    #[inline]
    fn find(&self, hash: u64, eq: impl Fn(&C) -> bool) -> Option<*mut C> {
        let mut at = hash as usize;
        loop {
            let entry = self.entries.get(at & self.mask)?;
            // `Acquire` pairs with the `Release` store in `put`: the hash and the cell behind
            // the pointer are visible once the pointer is.
            let cell = entry.cell.load(Ordering::Acquire);
            if cell.is_null() {
                return None;
            }
            // SAFETY: a non-null entry points to a cell its shard's writer owns until the
            // shard is dropped, and the index is borrowed from the shard.
            if entry.hash.load(Ordering::Relaxed) == hash && eq(unsafe { &*cell }) {
                return Some(cell);
            }
            at = at.wrapping_add(1);
        }
    }

    /// Files `cell` under `hash` in the first free entry of its probe sequence; the caller
    /// holds the shard's writer lock and leaves a free entry.
    fn put(&self, hash: u64, cell: *mut C) {
        let mut at = hash as usize;
        while let Some(entry) = self.entries.get(at & self.mask) {
            if entry.cell.load(Ordering::Relaxed).is_null() {
                entry.hash.store(hash, Ordering::Relaxed);
                entry.cell.store(cell, Ordering::Release);
                return;
            }
            at = at.wrapping_add(1);
        }
    }

    fn capacity(&self) -> usize {
        self.entries.len()
    }
}

/// One shard: its current index, read without a lock, and what its writers share.
#[derive(Debug)]
struct Shard<C> {
    /// The current index (a leaked `Box`), null until the shard's first cell.
    index: AtomicPtr<Index<C>>,
    writer: Mutex<Writer<C>>,
}

/// A shard's writer side: the cells its index points to (which it owns), and the indexes it
/// outgrew.
#[derive(Debug)]
struct Writer<C> {
    cells: Vec<Arc<C>>,
    /// Outgrown indexes, each still the leaked `Box` it was published as: readers may still be
    /// probing one through a shared borrow, so it is neither freed nor taken back into a `Box`
    /// (which would claim it uniquely) before the shard is dropped, when no reader can be left.
    retired: Vec<*mut Index<C>>,
}

impl<C> Shard<C> {
    fn new() -> Self {
        Self {
            index: AtomicPtr::new(ptr::null_mut()),
            writer: Mutex::new(Writer {
                cells: Vec::new(),
                retired: Vec::new(),
            }),
        }
    }

    #[inline]
    fn find(&self, hash: u64, eq: impl Fn(&C) -> bool) -> Option<*mut C> {
        // SAFETY: an index, once published, is freed only when the shard is dropped (an
        // outgrown one is kept in `retired`), and `&self` outlives this call.
        let index = unsafe { self.index.load(Ordering::Acquire).as_ref() }?;
        index.find(hash, eq)
    }
}

impl<C: Cell> Shard<C> {
    /// Files `cell` (the caller holds `writer`), growing the index first when it would be
    /// more than half full.
    fn put(&self, writer: &mut Writer<C>, cell: Arc<C>) {
        let hash = cell.hash();
        // SAFETY: only writers, serialized by `writer`, replace the index; see `find`.
        let current = unsafe { self.index.load(Ordering::Relaxed).as_ref() };
        let index = match current {
            Some(index) if (writer.cells.len() + 1) * 2 <= index.capacity() => index,
            _ => {
                let capacity = current.map_or(FIRST_INDEX, |index| index.capacity() * 2);
                let grown = Index::with_capacity(capacity);
                if let Some(old) = current {
                    for entry in old.entries.iter() {
                        let held = entry.cell.load(Ordering::Relaxed);
                        if !held.is_null() {
                            grown.put(entry.hash.load(Ordering::Relaxed), held);
                        }
                    }
                }
                let grown = Box::into_raw(grown);
                // `Release`: a reader that loads the new index sees its entries.
                let old = self.index.swap(grown, Ordering::AcqRel);
                if !old.is_null() {
                    // Unlinked, but readers may still probe it: kept as it is until the drop.
                    writer.retired.push(old);
                }
                // SAFETY: just published; freed only by the shard's drop.
                unsafe { &*grown }
            }
        };
        // The writer owns the cell before any reader can find it, for the shard's life.
        index.put(hash, Arc::as_ptr(&cell).cast_mut());
        writer.cells.push(cell);
    }
}

impl<C> Drop for Shard<C> {
    fn drop(&mut self) {
        let current = *self.index.get_mut();
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let indexes = writer.retired.drain(..).chain(Some(current));
        for index in indexes.filter(|index| !index.is_null()) {
            // SAFETY: every index came from `Box::into_raw` in `put` and is freed here, once
            // (the current one is not among the retired). `&mut self`: no reader borrows the
            // shard, so none is probing any index any more.
            drop(unsafe { Box::from_raw(index) });
        }
    }
}

// SAFETY: the raw pointers in a shard point to cells it shares as `Arc<C>` (which needs
// `C: Send + Sync` to cross threads) and to indexes it owns (the current one and the retired
// ones, freed only by its drop).
unsafe impl<C: Send + Sync> Send for Shard<C> {}
// SAFETY: as above; every shared access goes through atomics or the writer lock.
unsafe impl<C: Send + Sync> Sync for Shard<C> {}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct CellTable<C> {
    shards: [Shard<C>; SHARDS],
    // Taken after a shard's writer lock, never before: lock order is shard, then index.
    ordered: Mutex<BTreeSet<ByKey<C>>>,
    len: AtomicUsize,
    max: usize,
}

impl<C: Cell> CellTable<C> {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            shards: std::array::from_fn(|_| Shard::new()),
            ordered: Mutex::new(BTreeSet::new()),
            len: AtomicUsize::new(0),
            max,
        }
    }

    fn shard(&self, hash: u64) -> &Shard<C> {
        // Bits 32.. pick the shard: the index uses the low bits, so this choice leaves it
        // their full entropy.
        &self.shards[((hash >> 32) as usize) & (SHARDS - 1)]
    }

    /// Runs `f` on the existing cell that `eq` accepts, if there is one. Takes no lock.
    #[inline]
    pub(crate) fn with_existing<R>(
        &self,
        hash: u64,
        eq: impl Fn(&C) -> bool,
        f: impl FnOnce(&C) -> R,
    ) -> Option<R> {
        let cell = self.shard(hash).find(hash, eq)?;
        // SAFETY: cells are owned by their shard until the table drops, and `&self` outlives
        // this borrow.
        Some(f(unsafe { &*cell }))
    }

    /// The existing cell that `eq` accepts, if there is one. Takes no lock.
    pub(crate) fn get(&self, hash: u64, eq: impl Fn(&C) -> bool) -> Option<Arc<C>> {
        let cell = self.shard(hash).find(hash, eq)?;
        Some(Self::share(cell))
    }

    /// A new strong handle to a cell an index points to.
    fn share(cell: *mut C) -> Arc<C> {
        // SAFETY: index entries are `Arc::as_ptr` of cells that their shard's writer holds a
        // strong handle to for the table's life, so the count is at least one while we add ours.
        unsafe {
            Arc::increment_strong_count(cell);
            Arc::from_raw(cell)
        }
    }

    /// The cell `eq` accepts, created with `make` if absent; `None` when it is absent and the
    /// table is full.
    pub(crate) fn get_or_insert(
        &self,
        hash: u64,
        eq: impl Fn(&C) -> bool,
        make: impl FnOnce() -> C,
    ) -> Option<Arc<C>> {
        let shard = self.shard(hash);
        let mut writer = shard.writer.lock().unwrap_or_else(PoisonError::into_inner);
        // Another thread may have created it since the caller looked.
        if let Some(cell) = shard.find(hash, &eq) {
            return Some(Self::share(cell));
        }
        let reserved = self
            .len
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |len| {
                (len < self.max).then_some(len + 1)
            })
            .is_ok();
        if !reserved {
            return None;
        }
        let cell = Arc::new(make());
        self.ordered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(ByKey(Arc::clone(&cell)));
        shard.put(&mut writer, Arc::clone(&cell));
        Some(cell)
    }
    /// Every cell, in key order.
    pub(crate) fn snapshot(&self) -> Vec<Arc<C>> {
        let ordered = self.ordered.lock().unwrap_or_else(PoisonError::into_inner);
        ordered.iter().map(|cell| Arc::clone(&cell.0)).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell as Flag;

    use super::*;

    /// A cell filed under `hash`, told apart from others of the same hash by `id`.
    #[derive(Debug)]
    struct Key {
        hash: u64,
        id: u64,
    }

    impl Cell for Key {
        fn hash(&self) -> u64 {
            self.hash
        }
        fn cmp_key(&self, other: &Self) -> KeyOrder {
            (self.hash, self.id).cmp(&(other.hash, other.id))
        }
    }

    fn insert(table: &CellTable<Key>, hash: u64, id: u64) {
        table
            .get_or_insert(hash, |c| c.id == id, || Key { hash, id })
            .unwrap();
    }

    /// A reader still probing an index while a writer outgrows it: the probe's `eq`, run for a
    /// cell of the same hash met before the one it looks for, fills the shard until its index
    /// has been replaced twice, and the probe goes on through the index it started in.
    /// Deterministic, so that Miri (`cargo +nightly miri test -p jitseam --lib
    /// telemetry::cells`) checks that index stays valid for the reader: under Stacked Borrows,
    /// taking it back into a `Box` while the reader's shared borrow of it lives is undefined
    /// behaviour.
    #[test]
    fn a_probe_outlives_the_index_it_started_in() {
        let table = CellTable::new(1 << 10);
        // Shard 0 (bits 32.. clear); the second cell sits right after the first.
        let hash = 1;
        insert(&table, hash, 1);
        insert(&table, hash, 2);
        let grown = Flag::new(false);
        let found = table.with_existing(
            hash,
            |c| {
                if !grown.get() {
                    grown.set(true);
                    for id in 0..(2 * FIRST_INDEX as u64) {
                        insert(&table, 100 + id, id);
                    }
                }
                c.id == 2
            },
            |c| c.id,
        );
        assert!(
            grown.get(),
            "the probe met the first cell before the second"
        );
        assert_eq!(found, Some(2));
        assert_eq!(table.len(), 2 + 2 * FIRST_INDEX);
    }
}
