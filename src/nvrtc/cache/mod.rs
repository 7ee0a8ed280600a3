//! [`CompileCache`]: NVRTC output kept on disk.
mod entry;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::compiled::Compiled;
use super::options::CompileOptions;
use crate::atomic_write::{self, Durability};
use crate::disk_cache::{self, Counters, evict, secret::Secret};
use crate::error::Error;

/// Default bound on the directory's size.
const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// File name suffix of entries (temporary files are hidden and end in `.tmp`).
const ENTRY_SUFFIX: &str = ".nvrtc";
/// The default directory's name under the user's cache directory.
const DIR_NAME: &str = "nvrtc";

/// [`CompileCache`]: NVRTC output kept on disk, so a second compile of the same kernel — in this
/// process or another — skips NVRTC.
///
/// - **Key**: SHA-256 over the source, every NVRTC argument (the target among them), the program
///   name and the NVRTC version. Another NVRTC version compiles anew.
/// - **Writes** are atomic: the entry is written in full to a temporary file beside it, flushed
///   to disk and renamed over the target, so a reader sees the old entry, the new one, or none;
///   concurrent writers of one key each rename a complete entry.
/// - **Reads** check the entry's tag (below); a damaged, truncated or forged entry is counted,
///   recompiled and overwritten, never trusted.
/// - **Size**: bounded (256 MiB unless set); when a write takes the directory over the bound, the
///   least recently used entries go first (a hit refreshes an entry's modification time).
///
/// # Trust
///
/// A cubin that comes out of the cache reaches the safe path (`load()`) only through the PTX of
/// its compile, which `load()` proves in its place; so an entry must not be able to claim a PTX
/// that is not its cubin's source. The cache therefore trusts only what this user's processes
/// wrote, and tells them apart with a secret no one else can read:
///
/// - the directory holds a per-user secret, `.key-<uid>` (32 random bytes, made on the first
///   [`CompileCache::open`]: created owner-only, `0600`, and linked into place atomically);
///   `open` refuses a key file that is a symbolic link, is not a regular file, belongs to
///   another user, or that others may read or write;
/// - every entry carries an HMAC-SHA256 of its contents under that secret, and is named by an
///   HMAC of its key: an entry whose MAC does not verify — written by another user, or by hand,
///   or damaged — is a miss, whatever it claims. Its origin (a compile this process's NVRTC
///   made, whose cubin is then sealed to its PTX again) is part of what the MAC covers;
/// - where the owner and permissions of a file cannot be checked (outside Unix) there is no
///   secret: entries carry a plain SHA-256, which catches damage but proves nothing about who
///   wrote them, so every hit is read as a compile jitseam did not see come out of NVRTC — its
///   PTX loads as PTX, its cubin only through `Kernel::load_unverified`.
///
/// Someone who can write the directory can still delete or damage entries (each is then
/// compiled again), never make one this user's processes trust. Code running as this user can
/// read the secret, as it can reach `unsafe` code anyway. Give each user their own directory
/// (the default, `$XDG_CACHE_HOME/jitseam/nvrtc`, is); in a shared one each user keeps their own
/// key and entries.
#[derive(Debug)]
pub struct CompileCache {
    dir: PathBuf,
    /// What tags this user's entries; `None` where files cannot be checked (see the type docs).
    secret: Option<Secret>,
    max_bytes: u64,
    counters: Counters,
}

/// What a [`CompileCache`] did so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Compiles answered from disk.
    pub hits: u64,
    /// Compiles that ran NVRTC (including those after a damaged entry).
    pub misses: u64,
    /// Entries refused for a tag that does not verify (damaged, forged, or another user's) or a
    /// truncated body.
    pub corrupt: u64,
    /// Entries that could not be written; the compile itself still succeeded.
    pub store_errors: u64,
}

impl CompileCache {
    /// A cache in `dir`, created if missing, with this user's secret in it (made if missing).
    /// An error, of kind [`io::ErrorKind::PermissionDenied`], when the secret's file is not
    /// this user's alone (see the type docs).
    pub fn open(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        let secret = disk_cache::open_dir(&dir)?;
        Ok(Self {
            dir,
            secret,
            max_bytes: DEFAULT_MAX_BYTES,
            counters: Counters::default(),
        })
    }

    /// A cache in [`CompileCache::default_dir`].
    pub fn open_default() -> io::Result<Self> {
        Self::open(disk_cache::require_default_dir(DIR_NAME)?)
    }

    /// `$XDG_CACHE_HOME/jitseam/nvrtc`, else `$HOME/.cache/jitseam/nvrtc`.
    pub fn default_dir() -> Option<PathBuf> {
        disk_cache::default_dir(DIR_NAME)
    }

    /// Bounds the directory to `bytes` (least recently used entries are evicted past it).
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counters since this handle was opened.
    pub fn stats(&self) -> CacheStats {
        let [hits, misses, corrupt, store_errors] = self.counters.read();
        CacheStats {
            hits,
            misses,
            corrupt,
            store_errors,
        }
    }

    /// Compiles `source` with NVRTC unless an intact entry for the same source, options and
    /// NVRTC version exists.
    pub fn compile(&self, source: &str, options: &CompileOptions) -> Result<Compiled, Error> {
        let version = super::version()?;
        self.compile_with(source, options, version, || super::compile(source, options))
    }

    /// Like [`CompileCache::compile`] with the compiler supplied: `compile` runs only on a miss,
    /// and `nvrtc_version` is part of the key. For callers that wrap NVRTC (to count or time
    /// it) or use another compiler.
    pub fn compile_with(
        &self,
        source: &str,
        options: &CompileOptions,
        nvrtc_version: (u32, u32),
        compile: impl FnOnce() -> Result<Compiled, Error>,
    ) -> Result<Compiled, Error> {
        let path = self.entry_path(source, options, nvrtc_version)?;
        // A missing entry is the normal miss; any other read error is treated the same: the
        // compile below is the truth either way.
        // Every hit marks its entry used (no length bound: an entry may exceed the directory's
        // bound, which spares the entry just written).
        if let Ok(bytes) = evict::read(&path, u64::MAX, Duration::ZERO) {
            if let Some(compiled) = entry::decode(&bytes, self.secret.as_ref()) {
                Counters::add(&self.counters.hits);
                return Ok(compiled);
            }
            Counters::add(&self.counters.corrupt);
        }
        Counters::add(&self.counters.misses);
        let compiled = compile()?;
        if self.store(&path, &compiled).is_err() {
            Counters::add(&self.counters.store_errors);
        }
        Ok(compiled)
    }

    fn entry_path(
        &self,
        source: &str,
        options: &CompileOptions,
        version: (u32, u32),
    ) -> Result<PathBuf, Error> {
        let args = options.to_args()?;
        let mut key = Sha256::new();
        key.update(b"jitseam compile cache v2\0");
        key.update(version.0.to_le_bytes());
        key.update(version.1.to_le_bytes());
        for part in std::iter::once(options.name.as_str())
            .chain(args.iter().map(String::as_str))
            .chain(std::iter::once(source))
        {
            key.update((part.len() as u64).to_le_bytes());
            key.update(part.as_bytes());
        }
        let key: [u8; 32] = key.finalize().into();
        // Each user's entries under their own names, which no one else can compute.
        let name = match &self.secret {
            Some(secret) => crate::seal::hmac(&secret.0, &[b"jitseam compile cache name\0", &key]),
            None => key,
        };
        let name = format!("{}{ENTRY_SUFFIX}", crate::seal::hex(&name));
        Ok(self.dir.join(name))
    }

    fn store(&self, path: &Path, compiled: &Compiled) -> io::Result<()> {
        let bytes = entry::encode(compiled, self.secret.as_ref());
        let staged = atomic_write::stage(path, Durability::Fsync, |out| out.write_all(&bytes))?;
        atomic_write::commit(&self.dir, vec![staged], Durability::Fsync)?;
        evict::enforce(&self.dir, ENTRY_SUFFIX, self.max_bytes, path);
        Ok(())
    }
}
