//! A bounded, sharded table of aggregation cells, safe to share between threads.
//!
//! The hot path is "this cell already exists, add to its counter": a read lock on one of
//! [`SHARDS`] shards and one atomic add, so threads recording different cells rarely meet and
//! threads recording the same cell only share the counter's cache line. Creating a cell takes
//! the shard's write lock, and is refused once the table holds its maximum number of cells:
//! memory stays bounded however many distinct keys a run produces.
//!
//! Beside the shards, every cell is filed once more in key order. Creating a cell pays for that
//! (a few comparisons, on a path that runs once per distinct key); a flush then walks cells in
//! output order instead of sorting 100 k scattered keys each time.

use std::cmp::Ordering as KeyOrder;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use hashbrown::HashTable;

/// Number of independently locked shards (a power of two).
const SHARDS: usize = 16;

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

/// See the module docs.
#[derive(Debug)]
pub(crate) struct CellTable<C> {
    shards: [RwLock<HashTable<Arc<C>>>; SHARDS],
    // Taken after a shard lock, never before: lock order is shard, then index.
    ordered: Mutex<BTreeSet<ByKey<C>>>,
    len: AtomicUsize,
    max: usize,
}

impl<C: Cell> CellTable<C> {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            shards: std::array::from_fn(|_| RwLock::new(HashTable::new())),
            ordered: Mutex::new(BTreeSet::new()),
            len: AtomicUsize::new(0),
            max,
        }
    }

    fn shard(&self, hash: u64) -> &RwLock<HashTable<Arc<C>>> {
        // Bits 32.. pick the shard: the table's bucket index uses the low bits and its tag the
        // top seven, so this choice leaves both with their full entropy.
        &self.shards[((hash >> 32) as usize) & (SHARDS - 1)]
    }

    /// Runs `f` on the existing cell that `eq` accepts, if there is one.
    pub(crate) fn with_existing<R>(
        &self,
        hash: u64,
        eq: impl Fn(&C) -> bool,
        f: impl FnOnce(&C) -> R,
    ) -> Option<R> {
        let shard = self
            .shard(hash)
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        shard.find(hash, |cell| eq(cell)).map(|cell| f(cell))
    }

    /// The existing cell that `eq` accepts, if there is one (under the shard's read lock only).
    pub(crate) fn get(&self, hash: u64, eq: impl Fn(&C) -> bool) -> Option<Arc<C>> {
        let shard = self
            .shard(hash)
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        shard.find(hash, |cell| eq(cell)).map(Arc::clone)
    }

    /// The cell `eq` accepts, created with `make` if absent; `None` when it is absent and the
    /// table is full.
    pub(crate) fn get_or_insert(
        &self,
        hash: u64,
        eq: impl Fn(&C) -> bool,
        make: impl FnOnce() -> C,
    ) -> Option<Arc<C>> {
        let mut shard = self
            .shard(hash)
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        // Another thread may have created it between the caller's read and this write lock.
        if let Some(cell) = shard.find(hash, |cell| eq(cell)) {
            return Some(Arc::clone(cell));
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
        shard.insert_unique(hash, Arc::clone(&cell), |held| held.hash());
        self.ordered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(ByKey(Arc::clone(&cell)));
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
