//! A cache directory's per-user secret: the key of the MAC every entry carries (see the trust
//! model in the docs of `CompileCache` and `DiskProofCache`).
//!
//! On Unix it is 32 random bytes in `.key-<uid>` inside the cache directory, where `<uid>` is
//! the process's effective user id. It is made once, atomically: written in full to a fresh
//! temporary file created owner-only (`0600`, exclusively, so no one else's file or link is
//! written through), flushed, then hard-linked into place — a link never replaces an existing
//! key, so two processes making one at once agree on the first (on a file system without hard
//! links it is renamed into place instead). It is read through a descriptor opened without
//! following a final symbolic link, and taken only if that file is a regular file owned by this
//! user, readable and writable by no one else, and exactly 32 bytes long; anything else is
//! refused with an error, never repaired or used.
//!
//! Elsewhere jitseam cannot check a file's owner and permissions, so there is no secret: the
//! compile cache then reads every entry as a compile jitseam did not see come out of NVRTC, and
//! the proof cache does not open.

use std::io;
use std::path::Path;
#[cfg(unix)]
use std::{
    fs::{self, File, OpenOptions},
    io::{Read, Write},
    os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt},
    path::PathBuf,
};

#[cfg(unix)]
use rustix::fs::{Mode, OFlags};

/// The bytes of a secret.
const SECRET_LEN: usize = 32;

/// A cache's secret key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) [u8; SECRET_LEN]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The secret of the cache in `dir` for this user, made if there is none yet; `None` where
/// files' owners and permissions cannot be checked. An error for a key file that is not this
/// user's alone.
#[cfg(unix)]
pub(crate) fn open(dir: &Path) -> io::Result<Option<Secret>> {
    let uid = rustix::process::geteuid().as_raw();
    let path = dir.join(format!(".key-{uid}"));
    match read(&path, uid) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        read => return read.map(Some),
    }
    make(dir, &path, uid)?;
    read(&path, uid).map(Some)
}

/// See the Unix `open`: without a way to check the key file, there is no secret.
#[cfg(not(unix))]
pub(crate) fn open(_dir: &Path) -> io::Result<Option<Secret>> {
    Ok(None)
}

/// The key at `path`, if it is `uid`'s alone.
#[cfg(unix)]
fn read(path: &Path, uid: u32) -> io::Result<Secret> {
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the cache's key {} {why}; remove it to have a new one made",
                path.display()
            ),
        )
    };
    // No `O_NOFOLLOW` through std: a link planted in the key's place would be followed.
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            refuse("is a symbolic link".to_owned())
        } else {
            io::Error::from(e)
        }
    })?;
    let mut file = File::from(fd);
    // The descriptor's own metadata: the file read below, whatever the path names by then.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse("is not a regular file".to_owned()));
    }
    if meta.uid() != uid {
        return Err(refuse(format!(
            "belongs to user {}, not to this process's user {uid}",
            meta.uid()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(refuse(format!(
            "has mode {mode:04o}: others than its owner may read or write it (0600 expected)"
        )));
    }
    if meta.len() != SECRET_LEN as u64 {
        return Err(refuse(format!(
            "holds {} bytes, not {SECRET_LEN}",
            meta.len()
        )));
    }
    let mut key = [0u8; SECRET_LEN];
    file.read_exact(&mut key)?;
    Ok(Secret(key))
}

/// Makes a key at `path` unless another process makes one first.
#[cfg(unix)]
fn make(dir: &Path, path: &Path, uid: u32) -> io::Result<()> {
    let mut key = [0u8; SECRET_LEN];
    File::open("/dev/urandom")?.read_exact(&mut key)?;
    let mut nonce = [0u8; 8];
    File::open("/dev/urandom")?.read_exact(&mut nonce)?;
    let tmp: PathBuf = dir.join(format!(
        ".key-{uid}.{}.{}.tmp",
        std::process::id(),
        u64::from_le_bytes(nonce)
    ));
    // Owner-only from the start (the umask can only take bits away), and created here:
    // `create_new` refuses an existing file or link of that name.
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = file.write_all(&key).and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| match fs::hard_link(&tmp, path) {
        // Another process made one meanwhile: its key is the one.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        // A file system without hard links: renamed instead, which could replace a key
        // another process made a moment ago (whose entries then miss, and are compiled
        // again): slower, never unsafe.
        Err(_) => fs::rename(&tmp, path),
        Ok(()) => Ok(()),
    });
    // Best effort: a leftover temporary key is garbage, never read.
    let _ = fs::remove_file(&tmp);
    linked?;
    // The link's directory entry survives power loss too.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}
