//! The bytes of one cache entry: a magic, a tag, the body. The tag is the HMAC-SHA256 of the
//! body under the cache's secret, or, in a cache without one, the body's plain SHA-256. A reader
//! trusts an entry only when the tag is the one it would write and the body decodes completely;
//! without a secret, a plain checksum proves nothing about who wrote the entry, so the compile
//! is read as one jitseam did not see come out of NVRTC (its cubin never sealed).

use sha2::{Digest, Sha256};

use jitseam_verify::codec::{Reader, Writer};

use super::super::compiled::{Compiled, Origin};
use crate::disk_cache::secret::Secret;
use crate::seal::{hmac, same_tag};

/// Version 2: keyed tags (version 1 entries are refused, and recompiled).
const MAGIC: &[u8; 8] = b"JSNVRTC2";

/// The tag of `body` in a cache whose secret is `secret`.
fn tag(body: &[u8], secret: Option<&Secret>) -> [u8; 32] {
    match secret {
        Some(secret) => hmac(&secret.0, &[b"jitseam compile cache entry\0", body]),
        None => Sha256::digest(body).into(),
    }
}

/// The entry for `compiled` in a cache whose secret is `secret`.
pub(super) fn encode(compiled: &Compiled, secret: Option<&Secret>) -> Vec<u8> {
    let mut body = Writer(Vec::with_capacity(
        compiled.ptx.len() + compiled.cubin.as_ref().map_or(0, Vec::len) + 256,
    ));
    body.u8(match compiled.origin {
        Origin::Nvrtc => 1,
        Origin::External => 0,
    });
    body.u32(compiled.version.0);
    body.u32(compiled.version.1);
    body.str(&compiled.target);
    body.str(&compiled.ptx);
    body.str(&compiled.log);
    body.str(&compiled.source_sha256);
    match &compiled.cubin {
        Some(cubin) => {
            body.u8(1);
            body.bytes(cubin);
        }
        None => body.u8(0),
    }
    body.len(compiled.options.len());
    for option in &compiled.options {
        body.str(option);
    }
    let body = body.0;
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&tag(&body, secret));
    out.extend_from_slice(&body);
    out
}

/// The compile an entry holds in a cache whose secret is `secret`; `None` for anything
/// damaged, truncated, from another format, or whose tag the secret did not make.
pub(super) fn decode(bytes: &[u8], secret: Option<&Secret>) -> Option<Compiled> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (found, body) = rest.split_at_checked(32)?;
    if !same_tag(&tag(body, secret), found) {
        return None;
    }
    let mut r = Reader(body);
    let origin = match r.u8()? {
        // Only a tag made with the secret says who wrote the entry.
        1 if secret.is_some() => Origin::Nvrtc,
        0 | 1 => Origin::External,
        _ => return None,
    };
    let version = (r.u32()?, r.u32()?);
    let target = r.str()?.to_owned();
    let ptx = r.str()?.to_owned();
    let log = r.str()?.to_owned();
    let source_sha256 = r.str()?.to_owned();
    let cubin = match r.u8()? {
        1 => Some(r.bytes()?.to_vec()),
        0 => None,
        _ => return None,
    };
    let count = r.len()?;
    let mut options = Vec::new();
    for _ in 0..count {
        options.push(r.str()?.to_owned());
    }
    if !r.is_empty() {
        return None;
    }
    Some(Compiled {
        ptx,
        cubin,
        log,
        version,
        target,
        options,
        source_sha256,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_every_damage_is_refused() {
        let mut compiled =
            Compiled::from_parts("ptx", Some(vec![1, 2, 3]), "log", (12, 9), "sm_90");
        compiled.options = vec!["--gpu-architecture=sm_90".into()];
        let secret = Secret([7; 32]);
        for secret in [Some(&secret), None] {
            let bytes = encode(&compiled, secret);
            assert_eq!(decode(&bytes, secret), Some(compiled.clone()));
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut], secret), None, "truncated at {cut}");
            }
            for i in 0..bytes.len() {
                let mut bad = bytes.clone();
                bad[i] ^= 0x40;
                assert_eq!(decode(&bad, secret), None, "flipped byte {i}");
            }
        }
    }

    #[test]
    fn only_the_secret_that_tagged_an_entry_trusts_its_origin() {
        let mut compiled = Compiled::from_parts("ptx", Some(vec![1, 2, 3]), "", (12, 9), "sm_90");
        compiled.origin = Origin::Nvrtc;
        let (mine, theirs) = (Secret([7; 32]), Secret([8; 32]));
        let bytes = encode(&compiled, Some(&mine));
        assert_eq!(
            decode(&bytes, Some(&mine)).map(|c| c.origin),
            Some(Origin::Nvrtc)
        );
        // Another secret, or none, makes another tag: refused.
        assert_eq!(decode(&bytes, Some(&theirs)), None);
        assert_eq!(decode(&bytes, None), None);
        // Without a secret, a plain checksum is all there is: the compile is nobody's.
        let plain = encode(&compiled, None);
        assert_eq!(
            decode(&plain, None).map(|c| c.origin),
            Some(Origin::External)
        );
        assert_eq!(decode(&plain, Some(&mine)), None);
    }
}
