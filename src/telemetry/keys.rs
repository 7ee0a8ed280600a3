//! Cell identities and the interner that lets cells share them.
//!
//! A long run has many cells but few distinct hardware stamps and implementations, so a cell
//! holds `Arc`s handed out by an [`Interner`] instead of its own copies of the strings. A key is
//! copied once, when its first cell is created; every later record only hashes and compares.
//!
//! An interned value also keeps its JSON, made once when it is interned: every flush rewrites
//! the whole histogram, and copying bytes is cheaper than re-escaping the same strings each time.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex, PoisonError};

use hashbrown::HashTable;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::record::{HwStamp, ImplId, StructureKey};

/// The hasher for cell tables: fast, and seeded per process so a crafted key set cannot force
/// collisions across runs.
pub(crate) type CellHasher = foldhash::fast::RandomState;

/// A shared key component and its JSON encoding. Compares, orders and serializes as the value.
#[derive(Debug)]
pub(crate) struct Interned<T> {
    pub(crate) value: T,
    // `None` only if serialization failed, which plain data cannot; then the value is
    // serialized afresh each time instead.
    json: Option<Box<RawValue>>,
}

impl<T: Serialize> Interned<T> {
    fn new(value: T) -> Self {
        let json = serde_json::value::to_raw_value(&value).ok();
        Self { value, json }
    }
}

impl<T: Serialize> Serialize for Interned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.json {
            Some(json) => json.serialize(serializer),
            None => self.value.serialize(serializer),
        }
    }
}

impl<T: PartialEq> PartialEq for Interned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Interned<T> {}

impl<T: Ord> PartialOrd for Interned<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Ord> Ord for Interned<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}

/// Deduplicates values into shared `Arc`s. Touched only when a new cell is created, so a plain
/// mutex is enough; the per-record path never reaches it.
#[derive(Debug)]
pub(crate) struct Interner<T> {
    table: Mutex<HashTable<Arc<Interned<T>>>>,
}

// Derived `Default` would demand `T: Default`.
impl<T> Default for Interner<T> {
    fn default() -> Self {
        Self {
            table: Mutex::new(HashTable::new()),
        }
    }
}

impl<T: Eq + Hash + Clone + Serialize> Interner<T> {
    /// The shared copy of `value`, cloning it only if this is the first time it is seen.
    pub(crate) fn intern(&self, hasher: &CellHasher, value: &T) -> Arc<Interned<T>> {
        let hash = hasher.hash_one(value);
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = table.entry(
            hash,
            |held| held.value == *value,
            |held| hasher.hash_one(&held.value),
        );
        Arc::clone(
            entry
                .or_insert_with(|| Arc::new(Interned::new(value.clone())))
                .get(),
        )
    }
}

/// One interner per key component.
#[derive(Debug, Default)]
pub(crate) struct Interners {
    pub(crate) structure_keys: Interner<StructureKey>,
    pub(crate) impls: Interner<ImplId>,
    pub(crate) hws: Interner<HwStamp>,
}

/// Hashes the fields of an [`ImplId`] that tell implementations apart in practice, leaving out
/// those that rarely differ between cells of one process (backend, dtypes; likewise the cell
/// hashes leave out the SKU and driver strings). Lookups still compare every field, so this only
/// trades a rare extra comparison for hashing about half the bytes on every record.
struct Discriminating<'a>(&'a ImplId);

impl Hash for Discriminating<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.kernel_revision_hash.hash(state);
        self.0.kernel_source.hash(state);
        self.0.op.hash(state);
    }
}

/// Identity of a dispatch cell: `(structure_key, chosen, hw)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DispatchKey {
    pub(crate) structure_key: Option<Arc<Interned<StructureKey>>>,
    pub(crate) chosen: Arc<Interned<ImplId>>,
    pub(crate) hw: Arc<Interned<HwStamp>>,
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
        hasher.hash_one((
            self.structure_key,
            Discriminating(self.chosen),
            self.hw.compute_capability,
        ))
    }

    pub(crate) fn matches(&self, key: &DispatchKey) -> bool {
        // Cheap fields first: the chosen impl differs between most neighbouring cells.
        key.chosen.value == *self.chosen
            && key.structure_key.as_ref().map(|k| &k.value) == self.structure_key
            && key.hw.value == *self.hw
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
    pub(crate) wanted: Arc<Interned<StructureKey>>,
    pub(crate) fallback: Arc<Interned<ImplId>>,
    pub(crate) hw: Arc<Interned<HwStamp>>,
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
        hasher.hash_one((
            self.wanted,
            Discriminating(self.fallback),
            self.hw.compute_capability,
        ))
    }

    pub(crate) fn matches(&self, key: &MissKey) -> bool {
        key.wanted.value == *self.wanted
            && key.fallback.value == *self.fallback
            && key.hw.value == *self.hw
    }

    pub(crate) fn intern(&self, hasher: &CellHasher, interners: &Interners) -> MissKey {
        MissKey {
            wanted: interners.structure_keys.intern(hasher, self.wanted),
            fallback: interners.impls.intern(hasher, self.fallback),
            hw: interners.hws.intern(hasher, self.hw),
        }
    }
}
