//! The process-wide proof cache: a body proven once is not proven again while the process
//! lives, whatever `Kernel` loads it.
//!
//! A proof is kept under its whole key — the PTX text, the entry, the contract the ABI implies
//! and the verifier's version — and a lookup compares all of it, so a hit is only ever the proof
//! of that very text under that very contract: a hash collision, a one-byte edit of the text or
//! another signature over the same text is a miss, never another kernel's proof. Only proofs are
//! kept: a declined body is verified again (the verdict is the same, and its message is rebuilt
//! from this load's names). The cache is bounded by entries and by the bytes of text it holds;
//! past either bound the oldest entry goes.
//!
//! Optionally the cache is backed by a [`DiskProofCache`] ([`ProofCache::set_disk`]), so that
//! proofs outlive the process: a miss in memory reads the disk, and every proof kept is
//! written there too.

mod disk;
mod key;

pub use disk::{DiskProofCache, DiskStats};

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use jitseam_verify::{EntryContract, Proof, VERIFIER_ID};

use key::key_hash;

/// The verifier the proofs come from: a proof is reused only by the verifier that made it.
const VERIFIER: &str = VERIFIER_ID;

/// Most proofs kept.
pub const MAX_ENTRIES: usize = 1024;

/// Most bytes of PTX text kept (the texts are the keys).
pub const MAX_TEXT_BYTES: usize = 64 << 20;

/// What one cached proof is the proof of.
#[derive(PartialEq, Eq)]
struct Key {
    text: Arc<str>,
    entry: Box<str>,
    contract: EntryContract,
    verifier: &'static str,
}

struct Slot {
    key: Key,
    proof: Proof,
}

#[derive(Default)]
struct Inner {
    /// By the key's hash; a bucket holds every key of that hash (collisions are compared whole).
    slots: HashMap<u64, Vec<Slot>>,
    /// Hashes in insertion order, for eviction.
    order: VecDeque<u64>,
    bytes: usize,
    hits: u64,
    misses: u64,
    /// Read on a miss, written on an insert; kept by [`ProofCache::clear`].
    disk: Option<Arc<DiskProofCache>>,
}

/// How the cache has been used since the process started (or [`ProofCache::clear`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups answered with a proof, from memory or from the disk (see
    /// [`DiskProofCache::stats`] for the disk's own counts).
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Proofs kept now.
    pub entries: usize,
    /// Bytes of PTX text kept now.
    pub text_bytes: usize,
}

/// The process-wide cache of body proofs `load()` consults ([`ProofCache::global`]), or a
/// cache of one's own ([`ProofCache::new`]).
#[derive(Default)]
pub struct ProofCache {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for ProofCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl ProofCache {
    /// The one cache of the process.
    pub fn global() -> &'static ProofCache {
        static CACHE: OnceLock<ProofCache> = OnceLock::new();
        CACHE.get_or_init(ProofCache::new)
    }

    /// A cache of its own, empty and with no disk, apart from [`ProofCache::global`].
    pub fn new() -> ProofCache {
        ProofCache::default()
    }

    /// Backs the cache with `disk` (or with none): later misses in memory read it, later
    /// proofs kept are written to it. Proofs already in memory are not written.
    pub fn set_disk(&self, disk: Option<DiskProofCache>) {
        self.lock().disk = disk.map(Arc::new);
    }

    /// The disk behind the cache, if any.
    pub fn disk(&self) -> Option<Arc<DiskProofCache>> {
        self.lock().disk.clone()
    }

    /// The proof of entry `entry` of `text` under `contract`, if one was kept — in memory, or
    /// on the disk behind the cache (then kept in memory too).
    pub fn get(&self, text: &str, entry: &str, contract: &EntryContract) -> Option<Proof> {
        let hash = key_hash(text, entry, contract);
        let (found, disk) = self.get_in_memory(hash, text, entry, contract);
        if found.is_some() {
            return found;
        }
        // The disk is read without the lock held: other lookups go on meanwhile.
        let from_disk = disk.and_then(|disk| disk.get_hashed(hash, text, entry, contract));
        let mut inner = self.lock();
        match from_disk {
            Some(proof) => {
                inner.hits += 1;
                Self::keep(inner, hash, text, entry, contract, proof.clone());
                Some(proof)
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    /// The proof kept in memory, counting a hit; else the disk to read.
    fn get_in_memory(
        &self,
        hash: u64,
        text: &str,
        entry: &str,
        contract: &EntryContract,
    ) -> (Option<Proof>, Option<Arc<DiskProofCache>>) {
        let mut inner = self.lock();
        let found = inner.slots.get(&hash).and_then(|bucket| {
            bucket
                .iter()
                .find(|s| {
                    s.key.verifier == VERIFIER
                        && *s.key.entry == *entry
                        && s.key.contract == *contract
                        && *s.key.text == *text
                })
                .map(|s| s.proof.clone())
        });
        match found {
            Some(_) => {
                inner.hits += 1;
                (found, None)
            }
            None => (None, inner.disk.clone()),
        }
    }

    /// Keeps `proof` as the proof of entry `entry` of `text` under `contract`, evicting the
    /// oldest proofs past the bounds, and writes it to the disk behind the cache. A text
    /// larger than the whole byte bound is not kept in memory.
    pub fn insert(&self, text: &str, entry: &str, contract: &EntryContract, proof: Proof) {
        let hash = key_hash(text, entry, contract);
        let disk = self.lock().disk.clone();
        if let Some(disk) = disk {
            disk.insert_hashed(hash, text, entry, contract, &proof);
        }
        Self::keep(self.lock(), hash, text, entry, contract, proof);
    }

    /// Keeps `proof` in memory.
    fn keep(
        mut guard: MutexGuard<'_, Inner>,
        hash: u64,
        text: &str,
        entry: &str,
        contract: &EntryContract,
        proof: Proof,
    ) {
        if text.len() > MAX_TEXT_BYTES {
            return;
        }
        let key = Key {
            text: Arc::from(text),
            entry: Box::from(entry),
            contract: contract.clone(),
            verifier: VERIFIER,
        };
        let inner = &mut *guard;
        let bucket = inner.slots.entry(hash).or_default();
        if bucket.iter().any(|s| s.key == key) {
            return;
        }
        bucket.push(Slot { key, proof });
        inner.order.push_back(hash);
        inner.bytes += text.len();
        while inner.order.len() > MAX_ENTRIES || inner.bytes > MAX_TEXT_BYTES {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            // The oldest of that hash was pushed first: it is the bucket's first.
            let emptied = match inner.slots.get_mut(&oldest) {
                Some(bucket) if !bucket.is_empty() => {
                    let gone = bucket.remove(0);
                    inner.bytes = inner.bytes.saturating_sub(gone.key.text.len());
                    bucket.is_empty()
                }
                _ => true,
            };
            if emptied {
                inner.slots.remove(&oldest);
            }
        }
    }

    /// Counts and sizes.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: inner.hits,
            misses: inner.misses,
            entries: inner.order.len(),
            text_bytes: inner.bytes,
        }
    }

    /// Forgets every proof kept in memory and the counts (the disk behind the cache, if any,
    /// stays, with its entries).
    pub fn clear(&self) {
        let mut inner = self.lock();
        let disk = inner.disk.take();
        *inner = Inner {
            disk,
            ..Inner::default()
        };
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held left at worst a proof less or a count off: the map is
        // consistent after every statement that changes it, so the cache stays usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
