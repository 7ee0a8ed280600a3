//! The seal that links a cubin to the PTX of the same NVRTC program.
//!
//! An [`Artifact`](crate::Artifact) is plain data with public fields, so its claim "this PTX
//! came from the same compile as this cubin" could be written by anyone. jitseam makes that
//! claim only where it saw both come out of one NVRTC program, and seals it: a SHA-256 over a
//! per-process random key, the PTX and the cubin. `load()` trusts the link only when the seal
//! verifies, so a hand-made or deserialized link can never put an unproven cubin on the safe
//! path.
//!
//! The key lives only in this process: an artifact carried to another process loses its seal
//! there (its cubin then needs `Kernel::load_unverified`, or a compile — a compile-cache hit
//! re-seals what it read after checking the entry's checksum). The seal guards against
//! mistakes, not against code in the same process, which can reach the unsafe path anyway.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// 32 bytes from std's per-process random hasher keys (seeded from the operating system).
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut key = [0u8; 32];
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            let word = RandomState::new().hash_one((i, std::process::id()));
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        key
    })
}

fn digest(ptx: &str, cubin: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(key());
    hasher.update(b"jitseam cubin-ptx link\0");
    hasher.update((ptx.len() as u64).to_le_bytes());
    hasher.update(ptx.as_bytes());
    hasher.update((cubin.len() as u64).to_le_bytes());
    hasher.update(cubin);
    hex(&hasher.finalize())
}

/// The seal of a (PTX, cubin) pair that came out of one NVRTC program.
#[cfg(any(test, feature = "nvrtc"))]
pub(crate) fn seal(ptx: &str, cubin: &[u8]) -> String {
    digest(ptx, cubin)
}

/// Whether `seal` was made by [`seal`] in this process for exactly this pair.
pub(crate) fn verify(ptx: &str, cubin: &[u8], seal: &str) -> bool {
    // Not constant-time: the seal guards against mistakes, not a timing attacker in-process.
    digest(ptx, cubin) == seal
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

/// SHA-256 of `bytes`, in hex.
#[cfg(feature = "nvrtc")]
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_verifies_only_its_own_pair() {
        let s = seal("ptx", b"cubin");
        assert!(verify("ptx", b"cubin", &s));
        assert!(!verify("ptx ", b"cubin", &s));
        assert!(!verify("ptx", b"cubin!", &s));
        assert!(!verify("ptx", b"cubin", "00"));
    }
}
