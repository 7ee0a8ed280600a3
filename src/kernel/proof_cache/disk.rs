//! [`DiskProofCache`]: proofs kept on disk, so that a process proves only what no earlier
//! process of this user proved with this build of the verifier.

use std::hash::Hasher;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jitseam_verify::codec::{Reader, Writer};
use jitseam_verify::{EntryContract, Proof, VERIFIER_ID, WordHasher};

use super::key::key_hash;
use crate::atomic_write::{self, Durability};
use crate::disk_cache::{self, Counters, evict, secret::Secret};
use crate::seal::{hmac, same_tag};

/// Version 1 of the entry format (see [`DiskProofCache`]).
const MAGIC: &[u8; 8] = b"JSPROOF1";
/// File name suffix of entries (temporary files are hidden and end in `.tmp`).
const ENTRY_SUFFIX: &str = ".proof";
/// The default directory's name under the user's cache directory.
const DIR_NAME: &str = "proofs";
/// Default bound on the directory's size.
const DEFAULT_MAX_BYTES: u64 = 64 << 20;
/// A hit marks its entry used (for eviction) only when the mark is older than this: a write
/// per hit would cost more than the read.
const TOUCH_AFTER: Duration = Duration::from_secs(60);

/// Proofs kept on disk, beside the compile cache: a process that loads a kernel some earlier
/// process proved takes the proof from there instead of proving it again.
///
/// Attach one to the process-wide cache `load()` consults, which then reads it on a miss in
/// memory and writes every proof it makes to it:
///
/// ```no_run
/// use jitseam::kernel::proof_cache::{DiskProofCache, ProofCache};
///
/// # fn main() -> std::io::Result<()> {
/// // $XDG_CACHE_HOME/jitseam/proofs, else $HOME/.cache/jitseam/proofs
/// ProofCache::global().set_disk(Some(DiskProofCache::open_default()?));
/// # Ok(())
/// # }
/// ```
///
/// - **Key**: the PTX text, the entry, the contract the ABI implies and the verifier's build
///   ([`jitseam_verify::VERIFIER_ID`]: its version and a hash of its sources). An entry stores
///   all of it and a read compares all of it with the lookup's, so a file that holds another
///   key — a collision of the file names, another build's entry, another entry's file renamed
///   into place — is a miss, never another kernel's proof.
/// - **Writes** are atomic: the entry is written in full to a temporary file beside it and
///   renamed over the target, so a reader sees the old entry, the new one, or none; concurrent
///   writers of one key each rename a complete entry. (No `fsync`: an entry torn by a power
///   loss fails its tag and is a miss.)
/// - **Reads** check the entry's tag (below) and decode the whole proof; a damaged, truncated
///   or forged entry is counted, proven again and overwritten, never trusted.
/// - **Errors** of the disk never fail a `load()`: a directory that cannot be read is a miss,
///   one that cannot be written keeps nothing ([`DiskStats`] counts both; `tracing` at debug
///   level says why).
/// - **Size**: bounded (64 MiB unless set); when a write takes the directory over the bound,
///   the least recently used entries go first.
///
/// # Trust
///
/// A proof from disk stands in for the verifier: `load()` launches the body under it with no
/// guard where it has none. So, as in the compile cache (`jitseam::nvrtc::CompileCache`), the
/// directory holds a per-user secret, `.key-<uid>` (32 random bytes, owner-only `0600`, made on
/// the first [`DiskProofCache::open`], which refuses a key file that is a symbolic link, not a
/// regular file, another user's, or readable or writable by others), and every entry carries
/// an HMAC-SHA256 of its contents under it: an entry this user's processes did not write is a
/// miss, whatever it claims. Where a file's owner and permissions cannot be checked (outside
/// Unix) there is no secret, and since a plain checksum would let anyone who can write the
/// directory forge a proof, `open` fails there with [`io::ErrorKind::Unsupported`].
///
/// # Entry format
///
/// `JSPROOF1`, the 32-byte tag, then the body: the verifier's build, the entry, the contract
/// ([`EntryContract::encode`]), the PTX text and the proof ([`Proof::encode`]), each behind
/// its `u64` length. Files are named by a hash of the key and this user's secret.
#[derive(Debug)]
pub struct DiskProofCache {
    dir: PathBuf,
    secret: Secret,
    /// The build whose proofs this handle reads and writes.
    verifier: Box<str>,
    max_bytes: u64,
    counters: Counters,
}

/// What a [`DiskProofCache`] did so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiskStats {
    /// Lookups answered from disk.
    pub hits: u64,
    /// Lookups that found no entry of their key (none, an unreadable one, or one of another
    /// key), including those after a refused entry.
    pub misses: u64,
    /// Entries refused for a tag that does not verify (damaged, forged, another user's), a
    /// truncated body or a proof that does not decode.
    pub corrupt: u64,
    /// Proofs that could not be written (the load itself succeeded).
    pub store_errors: u64,
}

/// What one entry's file holds, against a lookup's key.
#[derive(Debug, PartialEq)]
enum Found {
    /// The proof of that very key.
    Proof(Proof),
    /// This user's intact entry, of another key.
    Foreign,
    /// Not an intact entry of this user.
    Corrupt,
}

impl DiskProofCache {
    /// A cache in `dir`, created if missing, with this user's secret in it (made if missing).
    /// An error, of kind [`io::ErrorKind::PermissionDenied`], when the secret's file is not
    /// this user's alone; of kind [`io::ErrorKind::Unsupported`] where it cannot be checked
    /// (see the type docs).
    pub fn open(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        let secret = disk_cache::open_dir(&dir)?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "the proof cache needs a key file whose owner and permissions can be checked, \
                 which this platform does not offer",
            )
        })?;
        Ok(Self {
            dir,
            secret,
            verifier: VERIFIER_ID.into(),
            max_bytes: DEFAULT_MAX_BYTES,
            counters: Counters::default(),
        })
    }

    /// A cache in [`DiskProofCache::default_dir`].
    pub fn open_default() -> io::Result<Self> {
        Self::open(disk_cache::require_default_dir(DIR_NAME)?)
    }

    /// `$XDG_CACHE_HOME/jitseam/proofs`, else `$HOME/.cache/jitseam/proofs` (beside the compile
    /// cache's `…/jitseam/nvrtc`).
    pub fn default_dir() -> Option<PathBuf> {
        disk_cache::default_dir(DIR_NAME)
    }

    /// Bounds the directory to `bytes` (least recently used entries are evicted past it).
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Reads and writes the entries of another verifier build, as that build would: for tests
    /// of what a build makes of another build's entries.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn with_verifier_id(mut self, id: &str) -> Self {
        self.verifier = id.into();
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counters since this handle was opened.
    pub fn stats(&self) -> DiskStats {
        let [hits, misses, corrupt, store_errors] = self.counters.read();
        DiskStats {
            hits,
            misses,
            corrupt,
            store_errors,
        }
    }

    /// The file that holds (or would hold) the proof of entry `entry` of `text` under
    /// `contract`.
    pub fn entry_path(&self, text: &str, entry: &str, contract: &EntryContract) -> PathBuf {
        self.path(key_hash(text, entry, contract))
    }

    /// The proof of entry `entry` of `text` under `contract`, if an intact entry of this user
    /// and this verifier build holds it.
    pub fn get(&self, text: &str, entry: &str, contract: &EntryContract) -> Option<Proof> {
        self.get_hashed(key_hash(text, entry, contract), text, entry, contract)
    }

    /// Keeps `proof` as the proof of entry `entry` of `text` under `contract`. Best effort: a
    /// failure is counted in [`DiskStats::store_errors`], never returned.
    pub fn insert(&self, text: &str, entry: &str, contract: &EntryContract, proof: &Proof) {
        self.insert_hashed(
            key_hash(text, entry, contract),
            text,
            entry,
            contract,
            proof,
        );
    }

    /// [`DiskProofCache::get`] with the key's hash already taken.
    pub(super) fn get_hashed(
        &self,
        hash: u64,
        text: &str,
        entry: &str,
        contract: &EntryContract,
    ) -> Option<Proof> {
        let path = self.path(hash);
        let found = match evict::read(&path, self.max_bytes, TOUCH_AFTER) {
            Ok(bytes) => self.decode(&bytes, text, entry, contract),
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    tracing::debug!(target: "jitseam", path = %path.display(), error = %e,
                        "proof cache entry unreadable: a miss");
                }
                Found::Foreign
            }
        };
        match found {
            Found::Proof(proof) => {
                Counters::add(&self.counters.hits);
                Some(proof)
            }
            Found::Corrupt => {
                tracing::debug!(target: "jitseam", path = %path.display(),
                    "proof cache entry refused (damaged, truncated or not this user's): a miss");
                Counters::add(&self.counters.corrupt);
                Counters::add(&self.counters.misses);
                None
            }
            Found::Foreign => {
                Counters::add(&self.counters.misses);
                None
            }
        }
    }

    /// [`DiskProofCache::insert`] with the key's hash already taken.
    pub(super) fn insert_hashed(
        &self,
        hash: u64,
        text: &str,
        entry: &str,
        contract: &EntryContract,
        proof: &Proof,
    ) {
        let path = self.path(hash);
        let bytes = self.encode(text, entry, contract, proof);
        if bytes.len() as u64 > self.max_bytes {
            return;
        }
        let stored =
            atomic_write::stage(&path, Durability::RenameOnly, |out| out.write_all(&bytes))
                .and_then(|staged| {
                    atomic_write::commit(&self.dir, vec![staged], Durability::RenameOnly)
                });
        match stored {
            Ok(()) => evict::enforce(&self.dir, ENTRY_SUFFIX, self.max_bytes, &path),
            Err(e) => {
                tracing::debug!(target: "jitseam", path = %path.display(), error = %e,
                    "proof cache entry not written");
                Counters::add(&self.counters.store_errors);
            }
        }
    }

    /// Named by the key's hash mixed with the verifier build and this user's secret: another
    /// build's entries, and another user's in a shared directory, keep their own names.
    fn path(&self, hash: u64) -> PathBuf {
        let mut h = WordHasher::default();
        h.write(&self.secret.0);
        h.write(self.verifier.as_bytes());
        h.write_u64(hash);
        self.dir.join(format!("{:016x}{ENTRY_SUFFIX}", h.finish()))
    }

    fn tag(&self, body: &[u8]) -> [u8; 32] {
        hmac(&self.secret.0, &[b"jitseam proof cache entry\0", body])
    }

    fn encode(&self, text: &str, entry: &str, contract: &EntryContract, proof: &Proof) -> Vec<u8> {
        let proof = proof.encode();
        let mut body = Writer(Vec::with_capacity(text.len() + proof.len() + 256));
        body.str(&self.verifier);
        body.str(entry);
        body.bytes(&contract.encode());
        body.str(text);
        body.bytes(&proof);
        let body = body.0;
        let mut out = Vec::with_capacity(MAGIC.len() + 32 + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.tag(&body));
        out.extend_from_slice(&body);
        out
    }

    fn decode(&self, bytes: &[u8], text: &str, entry: &str, contract: &EntryContract) -> Found {
        let Some((found, body)) = bytes
            .strip_prefix(MAGIC.as_slice())
            .and_then(|rest| rest.split_at_checked(32))
        else {
            return Found::Corrupt;
        };
        if !same_tag(&self.tag(body), found) {
            return Found::Corrupt;
        }
        let mut r = Reader(body);
        let (Some(verifier), Some(stored_entry), Some(stored_contract), Some(stored_text)) =
            (r.str(), r.str(), r.bytes(), r.str())
        else {
            return Found::Corrupt;
        };
        let Some(proof) = r.bytes() else {
            return Found::Corrupt;
        };
        if !r.is_empty() {
            return Found::Corrupt;
        }
        // The whole key, the text last (the longest): only the proof of this very key is
        // decoded.
        if verifier != &*self.verifier
            || stored_entry != entry
            || stored_contract != contract.encode().as_slice()
            || stored_text != text
        {
            return Found::Foreign;
        }
        Proof::decode(proof).map_or(Found::Corrupt, Found::Proof)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitseam_verify::{EntryContract, ParamContract};

    const TEXT: &str = r#".version 8.8
.target sm_80
.address_size 64
.visible .entry e(.param .u64 e_param_0)
{
	ret;
}
"#;

    fn contract() -> EntryContract {
        EntryContract {
            params: vec![ParamContract::Value],
            block: None,
            dynamic_shared: None,
        }
    }

    #[test]
    fn an_entry_reads_back_only_under_its_own_key_and_secret() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskProofCache::open(dir.path()).unwrap();
        let proof = jitseam_verify::verify_entry(TEXT, "e", &contract()).unwrap();
        let bytes = cache.encode(TEXT, "e", &contract(), &proof);
        assert_eq!(
            cache.decode(&bytes, TEXT, "e", &contract()),
            Found::Proof(proof.clone())
        );
        assert_eq!(cache.decode(&bytes, TEXT, "f", &contract()), Found::Foreign);
        let other = EntryContract {
            block: Some([32, 1, 1]),
            ..contract()
        };
        assert_eq!(cache.decode(&bytes, TEXT, "e", &other), Found::Foreign);
        let edited = TEXT.replace("ret;", "ret; ");
        assert_eq!(
            cache.decode(&bytes, &edited, "e", &contract()),
            Found::Foreign
        );
        for cut in 0..bytes.len() {
            assert_eq!(
                cache.decode(&bytes[..cut], TEXT, "e", &contract()),
                Found::Corrupt,
                "truncated at {cut}"
            );
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            if let Some(b) = bad.get_mut(i) {
                *b ^= 0x20;
            }
            assert_eq!(
                cache.decode(&bad, TEXT, "e", &contract()),
                Found::Corrupt,
                "flipped byte {i}"
            );
        }
        // Another user's secret (another directory's) makes another tag.
        let elsewhere = tempfile::tempdir().unwrap();
        let theirs = DiskProofCache::open(elsewhere.path()).unwrap();
        assert_eq!(
            theirs.decode(&bytes, TEXT, "e", &contract()),
            Found::Corrupt
        );
    }
}
