//! Finding NVIDIA's assembler for the tests that check PTX with it: `JITSEAM_PTXAS`, else
//! `.venv-ptxas/**/bin/ptxas` (made by `scripts/install-ptxas`), else `.venv-fixtures/**/bin/ptxas`
//! (made by the fixture scripts), else `PATH`.

use std::path::{Path, PathBuf};

/// The ptxas to run, if there is one.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("JITSEAM_PTXAS") {
        return Some(PathBuf::from(path));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for venv in [".venv-ptxas", ".venv-fixtures"] {
        if let Some(found) = find_in(&root.join(venv), 8) {
            return Some(found);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ptxas"))
        .find(|candidate| candidate.is_file())
}

/// Depth-limited search for `bin/ptxas` under `dir`.
fn find_in(dir: &Path, depth: usize) -> Option<PathBuf> {
    let candidate = dir.join("bin").join("ptxas");
    if candidate.is_file() {
        return Some(candidate);
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    entries.into_iter().find_map(|sub| find_in(&sub, depth - 1))
}
