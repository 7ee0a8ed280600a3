//! The seal that links a cubin to the PTX of the same NVRTC program, and the keyed MAC it and
//! the compile cache's entries are made with.
//!
//! An [`Artifact`](crate::Artifact) is plain data with public fields, so its claim "this PTX
//! came from the same compile as this cubin" could be written by anyone. jitseam makes that
//! claim only where it saw both come out of one NVRTC program, and seals it: an HMAC-SHA256,
//! under a per-process random key, of the PTX and the cubin. `load()` trusts the link only when
//! the seal verifies, so a hand-made or deserialized link can never put an unproven cubin on the
//! safe path.
//!
//! The key lives only in this process: an artifact carried to another process loses its seal
//! there (its cubin then needs `Kernel::load_unverified`, or a compile). A compile-cache hit is
//! sealed again only when its entry's MAC verifies under the cache's per-user secret, which
//! only this user's processes can read (see [`CompileCache`](crate::nvrtc::CompileCache)). The
//! seal guards against mistakes and against other users, not against code in the same process,
//! which can reach the unsafe path anyway.

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
    hex(&hmac(
        key(),
        &[
            b"jitseam cubin-ptx link\0",
            &(ptx.len() as u64).to_le_bytes(),
            ptx.as_bytes(),
            &(cubin.len() as u64).to_le_bytes(),
            cubin,
        ],
    ))
}

/// HMAC-SHA256 (RFC 2104) under `key` of `parts`, one after the other.
pub(crate) fn hmac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut padded = [0u8; BLOCK];
    padded[..key.len()].copy_from_slice(key);
    let mut inner = Sha256::new();
    inner.update(padded.map(|b| b ^ 0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(padded.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Whether `a` and `b` are equal, in time that does not depend on where they first differ.
pub(crate) fn same_tag(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The seal of a (PTX, cubin) pair that came out of one NVRTC program.
#[cfg(any(test, feature = "nvrtc"))]
pub(crate) fn seal(ptx: &str, cubin: &[u8]) -> String {
    digest(ptx, cubin)
}

/// Whether `seal` was made by [`seal`] in this process for exactly this pair.
pub(crate) fn verify(ptx: &str, cubin: &[u8], seal: &str) -> bool {
    same_tag(digest(ptx, cubin).as_bytes(), seal.as_bytes())
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
    fn hmac_matches_rfc_4231() {
        // Test case 1 of RFC 4231, its 20-byte key zero-padded to the 32 bytes jitseam's keys
        // have (HMAC pads every key shorter than a block with zeros, so this is the same MAC).
        let mut key = [0u8; 32];
        key[..20].fill(0x0b);
        assert_eq!(
            hex(&hmac(&key, &[b"Hi ", b"There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        // Test case 2: key "Jefe".
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            hex(&hmac(&key, &[b"what do ya want for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(same_tag(b"abc", b"abc"));
        assert!(!same_tag(b"abc", b"abd") && !same_tag(b"abc", b"ab"));
    }

    #[test]
    fn a_seal_verifies_only_its_own_pair() {
        let s = seal("ptx", b"cubin");
        assert!(verify("ptx", b"cubin", &s));
        assert!(!verify("ptx ", b"cubin", &s));
        assert!(!verify("ptx", b"cubin!", &s));
        assert!(!verify("ptx", b"cubin", "00"));
    }
}
