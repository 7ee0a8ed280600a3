//! Least-recently-used eviction by modification time.

use std::fs;
use std::path::Path;
use std::time::SystemTime;

/// Marks an entry as just used. Best effort: a failure only makes it look older.
pub(crate) fn touch(path: &Path) {
    if let Ok(file) = fs::File::options().append(true).open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
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
