//! Names this build of the verifier: `JITSEAM_VERIFY_SOURCE_HASH` is a hash of the verifier's
//! sources (and of the PTX parser's, inside the workspace), so a proof kept on disk by one build
//! is never taken by another — between releases the crate version alone would not change.

use std::fs;
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: stable across toolchains, which `DefaultHasher` does not promise.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    for entry in listing.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut dirs = vec![root.join("src")];
    // The parser decides what the verifier reads; outside the workspace its exact version pin
    // names it instead.
    let parser = root.join("..").join("ptx").join("src");
    if parser.is_dir() {
        dirs.push(parser);
    }
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for dir in &dirs {
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files = Vec::new();
        walk(dir, &mut files);
        files.sort();
        for file in files {
            let Ok(bytes) = fs::read(&file) else {
                continue;
            };
            let name = file.strip_prefix(dir).unwrap_or(&file);
            fnv(&mut hash, name.to_string_lossy().as_bytes());
            fnv(&mut hash, &(bytes.len() as u64).to_le_bytes());
            fnv(&mut hash, &bytes);
        }
    }
    println!("cargo:rustc-env=JITSEAM_VERIFY_SOURCE_HASH={hash:016x}");
}
