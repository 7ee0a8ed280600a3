//! The bytes of one cache entry: a magic, the SHA-256 of the body, the body. A reader
//! trusts an entry only when the checksum matches and the body decodes completely.

use sha2::{Digest, Sha256};

use super::super::compiled::{Compiled, Origin};

const MAGIC: &[u8; 8] = b"JSNVRTC1";

/// The entry for `compiled`.
pub(super) fn encode(compiled: &Compiled) -> Vec<u8> {
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
    out.extend_from_slice(&Sha256::digest(&body));
    out.extend_from_slice(&body);
    out
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The compile an entry holds; `None` for anything damaged, truncated or from another format.
pub(super) fn decode(bytes: &[u8]) -> Option<Compiled> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (checksum, body) = rest.split_at_checked(32)?;
    if Sha256::digest(body).as_slice() != checksum {
        return None;
    }
    let mut r = Reader(body);
    let origin = match r.byte()? {
        1 => Origin::Nvrtc,
        0 => Origin::External,
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
        let bytes = encode(&compiled);
        assert_eq!(decode(&bytes), Some(compiled));
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "truncated at {cut}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(&bad), None, "flipped byte {i}");
        }
    }
}
