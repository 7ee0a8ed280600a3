//! Least-recently-used eviction by modification time, and the reads that mark entries used.

use std::fs;
use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The bytes of the entry at `path`, marking it just used when its mark is older than
/// `touch_after` (best effort: a failure only makes it look older).
///
/// Only a regular file of at most `max_len` bytes is read: a FIFO, device or oversized file
/// planted in an entry's place is an error, never a blocked or unbounded read (the open does
/// not block, and its descriptor's own metadata is checked).
pub(crate) fn read(path: &Path, max_len: u64, touch_after: Duration) -> io::Result<Vec<u8>> {
    let mut options = fs::File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let mut file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > max_len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is not a regular file of at most {max_len} bytes",
                path.display()
            ),
        ));
    }
    // Exactly the length the descriptor reported, with no probe for more: a file that changed
    // meanwhile is a torn entry, which its reader refuses.
    let len =
        usize::try_from(meta.len()).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes)?;
    let now = SystemTime::now();
    let old = touch_after.is_zero()
        || match meta.modified() {
            Ok(mark) => now.duration_since(mark).is_ok_and(|age| age >= touch_after),
            Err(_) => true,
        };
    if old {
        let _ = file.set_modified(now);
    }
    Ok(bytes)
}

/// Deletes the least recently used entries (the files whose names end in `suffix`) until they
/// total at most `max_bytes`, sparing `keep` (the entry just written). Best effort: entries another process
/// removes first are simply gone, which is what eviction wanted.
pub(crate) fn enforce(dir: &Path, suffix: &str, max_bytes: u64, keep: &Path) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(SystemTime, u64, std::path::PathBuf)> = listing
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(suffix))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    if total <= max_bytes {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= max_bytes {
            break;
        }
        if path == keep {
            continue;
        }
        if fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}
