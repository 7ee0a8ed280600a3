//! What jitseam's on-disk caches (the compile cache, the proof cache) share: where they live by
//! default, the per-user secret that tags their entries, and eviction.

pub(crate) mod evict;
pub(crate) mod secret;

use std::io;
use std::path::{Path, PathBuf};

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
