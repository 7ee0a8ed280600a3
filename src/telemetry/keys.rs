//! Cell identities and the interner that lets cells share them.
//!
//! A long run has many cells but few distinct hardware stamps and implementations, so a cell
//! holds `Arc`s handed out by an [`Interner`] instead of its own copies of the strings. A key is
//! copied once, when its first cell is created; every later record only hashes and compares.

use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex, PoisonError};

use hashbrown::HashTable;

use super::record::{HwStamp, ImplId, StructureKey};

/// The hasher for cell tables: fast, and seeded per process so a crafted key set cannot force
/// collisions across runs.
pub(crate) type CellHasher = foldhash::fast::RandomState;

/// Deduplicates values into shared `Arc`s. Touched only when a new cell is created, so a plain
/// mutex is enough; the per-record path never reaches it.
#[derive(Debug)]
pub(crate) struct Interner<T> {
    table: Mutex<HashTable<Arc<T>>>,
}

// Derived `Default` would demand `T: Default`.
impl<T> Default for Interner<T> {
    fn default() -> Self {
        Self {
            table: Mutex::new(HashTable::new()),
        }
    }
}

impl<T: Eq + Hash + Clone> Interner<T> {
    /// The shared copy of `value`, cloning it only if this is the first time it is seen.
    pub(crate) fn intern(&self, hasher: &CellHasher, value: &T) -> Arc<T> {
        let hash = hasher.hash_one(value);
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = table.entry(
            hash,
            |held| **held == *value,
            |held| hasher.hash_one(&**held),
        );
        Arc::clone(entry.or_insert_with(|| Arc::new(value.clone())).get())
    }
}

/// One interner per key component.
#[derive(Debug, Default)]
pub(crate) struct Interners {
    pub(crate) structure_keys: Interner<StructureKey>,
    pub(crate) impls: Interner<ImplId>,
    pub(crate) hws: Interner<HwStamp>,
}

/// Identity of a dispatch cell: `(structure_key, chosen, hw)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DispatchKey {
    pub(crate) structure_key: Option<Arc<StructureKey>>,
    pub(crate) chosen: Arc<ImplId>,
    pub(crate) hw: Arc<HwStamp>,
}

/// A dispatch cell identity borrowed from a caller's record; what lookups hash and compare.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DispatchKeyRef<'a> {
    pub(crate) structure_key: Option<&'a StructureKey>,
    pub(crate) chosen: &'a ImplId,
    pub(crate) hw: &'a HwStamp,
}

impl DispatchKeyRef<'_> {
    /// The cell hash; computed once from the borrowed key when the cell is created and stored
    /// in the cell, so lookups and table growth never rehash the owned key.
    pub(crate) fn hash_with(&self, hasher: &CellHasher) -> u64 {
        hasher.hash_one((self.structure_key, self.chosen, self.hw))
    }

    pub(crate) fn matches(&self, key: &DispatchKey) -> bool {
        // Cheap fields first: the chosen impl differs between most neighbouring cells.
        *key.chosen == *self.chosen
            && key.structure_key.as_deref() == self.structure_key
            && *key.hw == *self.hw
    }

    pub(crate) fn intern(&self, hasher: &CellHasher, interners: &Interners) -> DispatchKey {
        DispatchKey {
            structure_key: self
                .structure_key
                .map(|key| interners.structure_keys.intern(hasher, key)),
            chosen: interners.impls.intern(hasher, self.chosen),
            hw: interners.hws.intern(hasher, self.hw),
        }
    }
}

/// Identity of a miss cell: `(wanted, fallback, hw)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct MissKey {
    pub(crate) wanted: Arc<StructureKey>,
    pub(crate) fallback: Arc<ImplId>,
    pub(crate) hw: Arc<HwStamp>,
}

/// A miss cell identity borrowed from a caller's record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MissKeyRef<'a> {
    pub(crate) wanted: &'a StructureKey,
    pub(crate) fallback: &'a ImplId,
    pub(crate) hw: &'a HwStamp,
}

impl MissKeyRef<'_> {
    pub(crate) fn hash_with(&self, hasher: &CellHasher) -> u64 {
        hasher.hash_one((self.wanted, self.fallback, self.hw))
    }

    pub(crate) fn matches(&self, key: &MissKey) -> bool {
        *key.wanted == *self.wanted && *key.fallback == *self.fallback && *key.hw == *self.hw
    }

    pub(crate) fn intern(&self, hasher: &CellHasher, interners: &Interners) -> MissKey {
        MissKey {
            wanted: interners.structure_keys.intern(hasher, self.wanted),
            fallback: interners.impls.intern(hasher, self.fallback),
            hw: interners.hws.intern(hasher, self.hw),
        }
    }
}
