//! A fast non-cryptographic hasher for the prover's small keys (monomials, polynomials).
//!
//! The default SipHash costs more than the work a memo lookup saves; the tables it serves are
//! bounded by the prover's budgets, so collision flooding cannot make them grow without end.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing, one machine word at a time (the scheme of rustc's `FxHasher`).
#[derive(Debug, Default, Clone, Copy)]
pub struct WordHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`WordHasher`]s for `HashMap::with_hasher`.
pub(crate) type BuildWordHasher = BuildHasherDefault<WordHasher>;

/// A `HashMap` with [`WordHasher`].
pub(crate) type WordMap<K, V> = std::collections::HashMap<K, V, BuildWordHasher>;
