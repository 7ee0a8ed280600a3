//! What jitseam's on-disk caches (the compile cache, the proof cache) share: where they live by
//! default, the per-user secret that tags their entries, and eviction.

pub(crate) mod evict;
pub(crate) mod secret;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use secret::Secret;

/// Creates the cache directory `dir` if missing and opens this user's secret in it (see
/// [`secret::open`]).
pub(crate) fn open_dir(dir: &Path) -> io::Result<Option<Secret>> {
    fs::create_dir_all(dir)?;
    secret::open(dir)
}

/// What a cache handle counts, from when it was opened.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Lookups answered from disk.
    pub(crate) hits: AtomicU64,
    /// Lookups that were not.
    pub(crate) misses: AtomicU64,
    /// Entries refused as damaged, truncated or not this user's.
    pub(crate) corrupt: AtomicU64,
    /// Entries that could not be written.
    pub(crate) store_errors: AtomicU64,
}

impl Counters {
    /// Counts one more on `counter`.
    pub(crate) fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// `[hits, misses, corrupt, store_errors]`.
    pub(crate) fn read(&self) -> [u64; 4] {
        [&self.hits, &self.misses, &self.corrupt, &self.store_errors]
            .map(|c| c.load(Ordering::Relaxed))
    }
}

/// `$XDG_CACHE_HOME/jitseam/<name>`, else `$HOME/.cache/jitseam/<name>`.
pub(crate) fn default_dir(name: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| Path::new(&home).join(".cache"))
        })?;
    Some(base.join("jitseam").join(name))
}

/// [`default_dir`], or the error an `open_default` returns without one.
pub(crate) fn require_default_dir(name: &str) -> io::Result<PathBuf> {
    default_dir(name).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "neither XDG_CACHE_HOME nor HOME is set",
        )
    })
}
