//! The hash both layers of the proof cache file a key under.

use std::hash::{Hash, Hasher};

use jitseam_verify::{EntryContract, WordHasher};

/// The key's hash: word-at-a-time multiply-rotate over the text (which dominates), then the
/// entry and the contract. Not collision-resistant, and it need not be: a lookup compares the
/// whole key.
pub(super) fn key_hash(text: &str, entry: &str, contract: &EntryContract) -> u64 {
    let mut h = WordHasher::default();
    h.write(text.as_bytes());
    entry.hash(&mut h);
    contract.hash(&mut h);
    h.finish()
}
