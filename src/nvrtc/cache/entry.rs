//! The bytes of one cache entry: a magic, a tag, the body. The tag is the HMAC-SHA256 of the
//! body under the cache's secret, or, in a cache without one, the body's plain SHA-256. A reader
//! trusts an entry only when the tag is the one it would write and the body decodes completely;
//! without a secret, a plain checksum proves nothing about who wrote the entry, so the compile
//! is read as one jitseam did not see come out of NVRTC (its cubin never sealed).

use sha2::{Digest, Sha256};

use super::super::compiled::{Compiled, Origin};
use super::secret::Secret;
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
    let mut body =
        Vec::with_capacity(compiled.ptx.len() + compiled.cubin.as_ref().map_or(0, Vec::len) + 256);
    body.push(match compiled.origin {
        Origin::Nvrtc => 1,
        Origin::External => 0,
    });
    body.extend_from_slice(&compiled.version.0.to_le_bytes());
    body.extend_from_slice(&compiled.version.1.to_le_bytes());
    put(&mut body, compiled.target.as_bytes());
    put(&mut body, compiled.ptx.as_bytes());
    put(&mut body, compiled.log.as_bytes());
    put(&mut body, compiled.source_sha256.as_bytes());
    match &compiled.cubin {
        Some(cubin) => {
            body.push(1);
            put(&mut body, cubin);
        }
        None => body.push(0),
    }
    body.extend_from_slice(&(compiled.options.len() as u64).to_le_bytes());
    for option in &compiled.options {
        put(&mut body, option.as_bytes());
    }
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&tag(&body, secret));
    out.extend_from_slice(&body);
    out
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
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
    let origin = match r.byte()? {
        // Only a tag made with the secret says who wrote the entry.
        1 if secret.is_some() => Origin::Nvrtc,
        0 | 1 => Origin::External,
        _ => return None,
    };
    let version = (r.u32()?, r.u32()?);
    let target = r.string()?;
    let ptx = r.string()?;
    let log = r.string()?;
    let source_sha256 = r.string()?;
    let cubin = match r.byte()? {
        1 => Some(r.bytes()?.to_vec()),
        0 => None,
        _ => return None,
    };
    let count = r.u64()?;
    let mut options = Vec::new();
    for _ in 0..count {
        options.push(r.string()?);
    }
    if !r.0.is_empty() {
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

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        self.take(len)
    }

    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
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
