//! Replacing files so that a crash at any instant leaves each one either as it was or as it
//! was meant to become.
//!
//! Each new file is written in full to a uniquely named temporary file in the target's own
//! directory (a rename is only atomic within one file system), flushed to disk, and only then
//! renamed over the target; the directory is flushed last so the rename itself survives power
//! loss. Several files are staged before any is renamed, so an error while writing any of them
//! leaves all targets untouched.
//!
//! The temporary name is unique per process and call, so two writers never truncate each
//! other's staging file. A writer killed mid-write leaves its hidden `.*.tmp` file behind; it is
//! never mistaken for a target.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Large enough that a 100 k-line file costs a few hundred write calls, not tens of thousands.
const WRITE_BUFFER: usize = 256 * 1024;

/// Whether staged data is forced to stable storage before it replaces a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// fsync the file before the rename and the directory after it: survives power loss.
    Fsync,
    /// Rename only: survives the process being killed, not the machine losing power. (Chosen
    /// where a lost or torn file is only a miss: telemetry flushes, proof cache entries.)
    RenameOnly,
}

/// A fully written temporary file waiting to replace its target. Dropped uncommitted, it
/// removes itself.
#[derive(Debug)]
pub(crate) struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: a leftover temporary file is garbage, not damage.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

fn tmp_path(target: &Path) -> io::Result<PathBuf> {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has no file name", target.display()),
        )
    })?;
    let mut tmp_name = OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(target.with_file_name(tmp_name))
}

/// Writes a temporary sibling of `target` with `write` and makes it durable as asked.
pub(crate) fn stage(
    target: &Path,
    durability: Durability,
    write: impl FnOnce(&mut BufWriter<fs::File>) -> io::Result<()>,
) -> io::Result<Staged> {
    // Refuse early rather than after a rename of some other file has already happened.
    if fs::symlink_metadata(target).is_ok_and(|meta| meta.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", target.display()),
        ));
    }
    let tmp = tmp_path(target)?;
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    // From here on the temporary file exists; `staged` removes it on every error path.
    let staged = Staged {
        tmp,
        target: target.to_path_buf(),
        committed: false,
    };
    let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
    write(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    if durability == Durability::Fsync {
        file.sync_all()?;
    }
    Ok(staged)
}

/// Renames every staged file over its target, in order, then flushes `dir` if asked.
pub(crate) fn commit(dir: &Path, staged: Vec<Staged>, durability: Durability) -> io::Result<()> {
    for mut file in staged {
        fs::rename(&file.tmp, &file.target)?;
        file.committed = true;
    }
    if durability == Durability::Fsync {
        sync_dir(dir)?;
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    // Directories cannot be opened as files here; the rename is as durable as the OS makes it.
    Ok(())
}
