//! Cell identities and the interner that lets cells share them.
//!
//! A long run has many cells but few distinct hardware stamps and implementations, so a cell
//! holds `Arc`s handed out by an [`Interner`] instead of its own copies of the strings. A key is
//! copied once, when its first cell is created; every later record only hashes and compares.
//!
//! An interned value also keeps its JSON, made once when it is interned: every flush rewrites
//! the whole histogram, and copying bytes is cheaper than re-escaping the same strings each time.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hash, Hasher};
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

/// `(major, minor)` in one word, distinct from every real pair when absent.
#[inline]
fn compute_capability_word(hw: &HwStamp) -> u64 {
    match hw.compute_capability {
        Some((major, minor)) => u64::from(major) << 32 | u64::from(minor),
        None => u64::MAX >> 1,
    }
}

/// `a == b` for the short strings keys are made of: inline word compares, where a slice
/// comparison would call `memcmp` once per string (a key holds about ten).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if let (Some(a_last), Some(b_last)) = (a.last_chunk::<8>(), b.last_chunk::<8>()) {
        // Whole words, then the last eight bytes (overlapping the words when the length is
        // not a multiple of eight).
        let (a_words, _) = a.as_chunks::<8>();
        let (b_words, _) = b.as_chunks::<8>();
        return a_last == b_last && a_words.iter().zip(b_words).all(|(x, y)| x == y);
    }
    if let (Some(a_first), Some(b_first), Some(a_last), Some(b_last)) = (
        a.first_chunk::<4>(),
        b.first_chunk::<4>(),
        a.last_chunk::<4>(),
        b.last_chunk::<4>(),
    ) {
        // 4 to 7 bytes: two overlapping halves.
        return a_first == b_first && a_last == b_last;
    }
    // 0 to 3 bytes: the first, middle and last byte are all of them.
    let middle = a.len() / 2;
    a.first() == b.first() && a.get(middle) == b.get(middle) && a.last() == b.last()
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
    #[inline]
    pub(crate) fn hash_with(&self, hasher: &CellHasher) -> u64 {
        // One hasher over the whole key, fed the raw bytes of the discriminating strings and
        // the numbers packed into two words (foldhash buffers those; each byte write mixes the
        // length in, so no separators are needed). See `Discriminating` for what is left out.
        let mut state = hasher.build_hasher();
        if let Some(structure_key) = self.structure_key {
            state.write(structure_key.0.as_bytes());
        }
        state.write(self.chosen.kernel_source.as_bytes());
        state.write(self.chosen.op.as_bytes());
        state.write_u64(self.chosen.kernel_revision_hash);
        state.write_u64(
            u64::from(self.structure_key.is_some()) << 63 ^ compute_capability_word(self.hw),
        );
        state.finish()
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

/// A dispatch key laid out for comparing against borrowed keys with few memory indirections:
/// the numbers in three words and every string, length-prefixed, in one buffer. Each dispatch
/// cell holds one beside its interned parts (which the flush writes), and every record is
/// compared against it.
#[derive(Debug, Default)]
pub(crate) struct FlatDispatchKey {
    words: [u64; 3],
    text: Vec<u8>,
}

impl DispatchKeyRef<'_> {
    /// The key's numbers: the revision hash, the compute capability, and whether there is a
    /// structure key beside how many dtypes (which together say which strings follow).
    #[inline]
    fn words(&self) -> [u64; 3] {
        let dtypes = self.chosen.dtypes.len() as u64;
        [
            self.chosen.kernel_revision_hash,
            compute_capability_word(self.hw),
            dtypes << 1 | u64::from(self.structure_key.is_some()),
        ]
    }

    /// Makes `flat` this key, reusing its buffer.
    pub(crate) fn flatten_into(&self, flat: &mut FlatDispatchKey) {
        flat.words = self.words();
        flat.text.clear();
        self.each_string(|string| {
            flat.text
                .extend_from_slice(&(string.len() as u64).to_le_bytes());
            flat.text.extend_from_slice(string.as_bytes());
            true
        });
    }

    /// Calls `f` on each of the key's strings in the order [`FlatDispatchKey`] holds them
    /// (most discriminating first) until it returns false; returns whether none did.
    #[inline(always)]
    fn each_string(&self, mut f: impl FnMut(&str) -> bool) -> bool {
        let chosen = self.chosen;
        self.structure_key.is_none_or(|key| f(key.as_str()))
            && f(&chosen.op)
            && f(&chosen.kernel_source)
            && chosen.dtypes.iter().all(|dtype| f(dtype))
            && f(&chosen.backend)
            && f(&self.hw.hardware_sku)
            && f(&self.hw.driver_version)
    }

    /// Whether this is the key `flat` was made from.
    #[inline]
    pub(crate) fn matches_flat(&self, flat: &FlatDispatchKey) -> bool {
        // Word by word: comparing the arrays whole spills them and reloads them wider, which
        // stalls store forwarding.
        let [revision, capability, shape] = self.words();
        if flat.words[0] != revision || flat.words[1] != capability || flat.words[2] != shape {
            return false;
        }
        // Spelled out rather than through `each_string`: the closure would not be inlined.
        let mut rest: &[u8] = &flat.text;
        let chosen = self.chosen;
        self.structure_key
            .is_none_or(|key| take_str(&mut rest, key.as_str()))
            && take_str(&mut rest, &chosen.op)
            && take_str(&mut rest, &chosen.kernel_source)
            && chosen.dtypes.iter().all(|dtype| take_str(&mut rest, dtype))
            && take_str(&mut rest, &chosen.backend)
            && take_str(&mut rest, &self.hw.hardware_sku)
            && take_str(&mut rest, &self.hw.driver_version)
            && rest.is_empty()
    }
}

/// Whether `flat` starts with `text` as [`DispatchKeyRef::flatten_into`] wrote it; if so, moves
/// `flat` past it.
#[inline(always)]
fn take_str(flat: &mut &[u8], text: &str) -> bool {
    let Some((len, tail)) = flat.split_first_chunk::<8>() else {
        return false;
    };
    if u64::from_le_bytes(*len) != text.len() as u64 {
        return false;
    }
    let Some((bytes, tail)) = tail.split_at_checked(text.len()) else {
        return false;
    };
    *flat = tail;
    same_bytes(bytes, text.as_bytes())
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
