//! The on-disk layout of flushed telemetry: the files of one flush form a set, and a reader sees
//! one whole set or another, never a new file of one flush next to an old file of another.
//!
//! ```text
//! dir/
//!   current.json            {"layout":2,"generation":"gen-…","files":["dispatches.jsonl",…]}
//!   gen-<pid>-<nanos>-<seq>/  dispatches.jsonl, misses.jsonl, declines.jsonl, faults.jsonl,
//!                             overflow.json
//! ```
//!
//! A flush writes its files into a hidden staging directory, makes them durable, renames the
//! directory to its generation name, and only then replaces the manifest (`current.json`,
//! atomically: temporary file, rename). Until that rename, readers follow the old manifest to
//! the old, untouched generation; after it, to the new one. Generation directories are never
//! changed once named.
//!
//! Cleanup: after its manifest is in place, a flush removes every generation the manifest no
//! longer names, and every staging directory and temporary manifest, that this process or a
//! process that no longer runs left — so a writer killed mid-flush leaves garbage only until
//! the next flush. Flushes within one process take turns, so none of them is ever half-way
//! while another cleans; what writers in other running processes leave is theirs to remove. A
//! reader that finds its generation removed under it (a flush replaced it meanwhile) reads the
//! manifest again.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::atomic_write::{self, Durability};

/// The manifest that names the current generation of a telemetry directory.
pub const MANIFEST_FILE: &str = "current.json";

/// The version of the directory layout the manifest describes (the records inside keep their
/// own `schema`). Layout 1 had no manifest: the files lay directly in the directory.
pub const TELEMETRY_LAYOUT: u32 = 2;

const GENERATION_PREFIX: &str = "gen-";
const STAGING_SUFFIX: &str = ".tmp";

/// Where a writer whose process cannot be asked about is presumed gone.
#[cfg(not(target_os = "linux"))]
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// The content of [`MANIFEST_FILE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// [`TELEMETRY_LAYOUT`].
    pub(crate) layout: u32,
    /// The current generation directory's name.
    pub(crate) generation: String,
    /// The files the generation holds.
    pub(crate) files: Vec<String>,
}

/// One file of a set: its name and what writes it.
pub(crate) type SetFile<'a> = (&'a str, &'a dyn Fn(&mut BufWriter<File>) -> io::Result<()>);

/// Writes `files` as a new generation of `dir` (created if needed) and makes it current.
/// On error, the current set is untouched.
pub(crate) fn write_set(
    dir: &Path,
    durability: Durability,
    files: &[SetFile<'_>],
) -> io::Result<()> {
    // One flush at a time in this process: the cleanup below may then remove whatever of this
    // process the manifest does not name. A panic cannot leave a flush half-way under the lock
    // that matters here (the files are on disk, not in the guarded value).
    static FLUSHES: Mutex<()> = Mutex::new(());
    let _turn = FLUSHES.lock().unwrap_or_else(PoisonError::into_inner);
    fs::create_dir_all(dir)?;
    // Refuse early, before a generation is written that no manifest could name.
    if fs::symlink_metadata(dir.join(MANIFEST_FILE)).is_ok_and(|meta| meta.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", dir.join(MANIFEST_FILE).display()),
        ));
    }
    let generation = generation_name();
    let staging = dir.join(format!(".{generation}{STAGING_SUFFIX}"));
    let target = dir.join(&generation);
    let written = write_generation(&staging, &target, durability, files);
    if let Err(error) = written {
        // Best effort: a leftover is garbage that the next flush removes, not damage.
        let _ = fs::remove_dir_all(&staging);
        let _ = fs::remove_dir_all(&target);
        return Err(error);
    }
    let manifest = Manifest {
        layout: TELEMETRY_LAYOUT,
        generation: generation.clone(),
        files: files.iter().map(|(name, _)| (*name).to_owned()).collect(),
    };
    let committed = atomic_write::stage(&dir.join(MANIFEST_FILE), durability, |out| {
        serde_json::to_writer(&mut *out, &manifest).map_err(io::Error::other)?;
        out.write_all(b"\n")
    })
    .and_then(|staged| atomic_write::commit(dir, vec![staged], durability));
    if let Err(error) = committed {
        let _ = fs::remove_dir_all(&target);
        return Err(error);
    }
    remove_stale(dir, &generation);
    Ok(())
}

fn write_generation(
    staging: &Path,
    target: &Path,
    durability: Durability,
    files: &[SetFile<'_>],
) -> io::Result<()> {
    fs::create_dir(staging)?;
    for (name, write) in files {
        let mut out = BufWriter::with_capacity(256 * 1024, File::create_new(staging.join(name))?);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        if durability == Durability::Fsync {
            file.sync_all()?;
        }
    }
    if durability == Durability::Fsync {
        atomic_write::sync_dir(staging)?;
    }
    fs::rename(staging, target)
}

/// A generation name no other flush, of this process or another, has used: the process id (to
/// tell a dead writer's leftovers), the time and a per-process sequence number.
fn generation_name() -> String {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{GENERATION_PREFIX}{}-{nanos}-{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    )
}

/// Removes every leftover of this process or of a writer that no longer runs; never
/// `current`. Best effort: what cannot be removed now is tried again by the next flush.
fn remove_stale(dir: &Path, current: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if name == current {
            continue;
        }
        let Some(pid) = writer_of(name) else {
            continue;
        };
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        if pid != std::process::id() && !writer_gone(pid, modified) {
            continue;
        }
        let path = entry.path();
        let _ = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
    }
}

/// The process that wrote `name`, for the names a flush makes: a generation (`gen-<pid>-…`), its
/// staging directory (`.gen-<pid>-….tmp`) and a temporary file of `atomic_write`
/// (`.<file>.<pid>.<seq>.tmp`, also what a layout-1 writer left behind).
fn writer_of(name: &str) -> Option<u32> {
    if let Some(rest) = name.strip_prefix(GENERATION_PREFIX) {
        return rest.split('-').next()?.parse().ok();
    }
    let hidden = name.strip_prefix('.')?.strip_suffix(STAGING_SUFFIX)?;
    if let Some(rest) = hidden.strip_prefix(GENERATION_PREFIX) {
        return rest.split('-').next()?.parse().ok();
    }
    let mut parts = hidden.rsplit('.');
    let _sequence: u64 = parts.next()?.parse().ok()?;
    parts.next()?.parse().ok()
}

/// Whether the process `pid` no longer runs (so what it left is garbage).
#[cfg(target_os = "linux")]
fn writer_gone(pid: u32, _modified: Option<SystemTime>) -> bool {
    !Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether the writer is presumed gone: without a cheap liveness query, by age.
#[cfg(not(target_os = "linux"))]
fn writer_gone(_pid: u32, modified: Option<SystemTime>) -> bool {
    modified
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER)
}

/// The manifest of `dir` from its bytes, and the generation directory it names.
pub(crate) fn parse_manifest(dir: &Path, bytes: &[u8]) -> io::Result<(Manifest, PathBuf)> {
    let manifest: Manifest = serde_json::from_slice(bytes).map_err(|error| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("malformed manifest: {error}"),
        )
    })?;
    if manifest.layout != TELEMETRY_LAYOUT {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "unsupported telemetry layout {}, this reader knows {TELEMETRY_LAYOUT}",
                manifest.layout
            ),
        ));
    }
    // A manifest names a directory of its own: nothing outside `dir`.
    if manifest.generation.contains(['/', '\\'])
        || !manifest.generation.starts_with(GENERATION_PREFIX)
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("manifest names `{}`, not a generation", manifest.generation),
        ));
    }
    let path = dir.join(&manifest.generation);
    Ok((manifest, path))
}

/// How often a reader follows a manifest again when its generation vanished under it.
pub(crate) const READ_ATTEMPTS: usize = 16;

/// A pause between attempts, so that a flush in progress can finish.
pub(crate) const READ_RETRY: Duration = Duration::from_millis(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tell_their_writer() {
        assert_eq!(writer_of("gen-42-1700000000-3"), Some(42));
        assert_eq!(writer_of(".gen-42-1700000000-3.tmp"), Some(42));
        assert_eq!(writer_of(".current.json.42.7.tmp"), Some(42));
        assert_eq!(writer_of(".dispatches.jsonl.42.0.tmp"), Some(42));
        assert_eq!(writer_of("current.json"), None);
        assert_eq!(writer_of("dispatches.jsonl"), None);
        assert_eq!(writer_of("notes.txt"), None);
    }
}
