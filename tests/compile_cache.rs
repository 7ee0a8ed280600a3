//! The on-disk compile cache: a hit skips the compiler (counted), also for a second handle on
//! the directory (what a second process sees); a damaged entry is recompiled, never trusted;
//! concurrent writers of one key leave one intact entry; the directory stays within its bound,
//! least recently used first. With NVRTC present, the same with real compiles, and a cached
//! cubin still loads on the safe path.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::nvrtc_env::{self, ready};
use common::{fixtures, launch_suite};
use jitseam::nvrtc::{self, CompileCache, CompileOptions, CompileTarget, Compiled};
use jitseam::{Error, Kernel};

const VERSION: (u32, u32) = (12, 9);

fn options() -> CompileOptions {
    CompileOptions::new(CompileTarget::sm(90))
}

/// A stand-in compiler: counts its calls and returns a recognizable result.
fn fake(calls: &AtomicUsize, source: &str) -> Result<Compiled, Error> {
    calls.fetch_add(1, Ordering::SeqCst);
    Ok(Compiled::from_parts(
        format!("// ptx of {source}\n"),
        Some(source.as_bytes().to_vec()),
        "",
        VERSION,
        "sm_90",
    ))
}

/// Every file in the cache directory but the user's key (`.key-<uid>`): the entries, and any
/// temporary file left behind.
fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !is_key(p))
        .collect();
    all.sort();
    all
}

/// Whether `path` is a cache's key file (temporary keys are not).
fn is_key(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(".key-"))
        .is_some_and(|uid| uid.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn a_second_compile_does_not_call_the_compiler() {
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    let cache = CompileCache::open(dir.path()).unwrap();
    let first = cache
        .compile_with("a", &options(), VERSION, || fake(&calls, "a"))
        .unwrap();
    let second = cache
        .compile_with("a", &options(), VERSION, || fake(&calls, "a"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(first, second);
    assert_eq!(cache.stats().hits, 1);
    assert_eq!(cache.stats().misses, 1);

    // Another handle on the directory — what a second process sees — hits too.
    let other = CompileCache::open(dir.path()).unwrap();
    let third = other
        .compile_with("a", &options(), VERSION, || fake(&calls, "a"))
        .unwrap();
    assert_eq!((calls.load(Ordering::SeqCst), third), (1, first));

    // Source, options and NVRTC version are all in the key.
    cache
        .compile_with("b", &options(), VERSION, || fake(&calls, "b"))
        .unwrap();
    cache
        .compile_with("a", &options().fast_math(), VERSION, || fake(&calls, "a"))
        .unwrap();
    cache
        .compile_with(
            "a",
            &CompileOptions::new(CompileTarget::sm(80)),
            VERSION,
            || fake(&calls, "a"),
        )
        .unwrap();
    cache
        .compile_with("a", &options(), (13, 0), || fake(&calls, "a"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 5);
    assert_eq!(entries(dir.path()).len(), 5);
}

#[test]
fn a_damaged_entry_is_recompiled_never_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    let cache = CompileCache::open(dir.path()).unwrap();
    let good = cache
        .compile_with("k", &options(), VERSION, || fake(&calls, "k"))
        .unwrap();
    let path = entries(dir.path()).pop().unwrap();
    let intact = std::fs::read(&path).unwrap();

    // A flipped byte in the body, a truncation, an empty file, garbage.
    let mut flipped = intact.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for damaged in [
        flipped,
        intact[..intact.len() / 2].to_vec(),
        Vec::new(),
        b"garbage".to_vec(),
    ] {
        std::fs::write(&path, &damaged).unwrap();
        let before = calls.load(Ordering::SeqCst);
        let again = cache
            .compile_with("k", &options(), VERSION, || fake(&calls, "k"))
            .unwrap();
        assert_eq!(again, good);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            before + 1,
            "a damaged entry must recompile"
        );
        // …and the entry was rewritten intact.
        assert_eq!(std::fs::read(&path).unwrap(), intact);
    }
    assert_eq!(cache.stats().corrupt, 4);
}

#[test]
fn concurrent_writers_leave_one_intact_entry() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (dir, calls, barrier) = (dir.path().to_path_buf(), calls.clone(), barrier.clone());
            std::thread::spawn(move || {
                // One handle per thread, as separate processes would have.
                let cache = CompileCache::open(dir).unwrap();
                barrier.wait();
                (0..20)
                    .map(|_| {
                        cache
                            .compile_with("same", &options(), VERSION, || fake(&calls, "same"))
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<Compiled> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    let files = entries(dir.path());
    assert_eq!(
        files.len(),
        1,
        "one entry, no temporary files left: {files:?}"
    );
    // Every writer compiled at most once before it could see an entry.
    assert!(calls.load(Ordering::SeqCst) <= threads);
    let check = CompileCache::open(dir.path()).unwrap();
    let calls_before = calls.load(Ordering::SeqCst);
    check
        .compile_with("same", &options(), VERSION, || fake(&calls, "same"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), calls_before);
}

#[test]
fn the_directory_stays_bounded_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    let probe = CompileCache::open(dir.path()).unwrap();
    probe
        .compile_with("s0", &options(), VERSION, || fake(&calls, "s0"))
        .unwrap();
    let size = std::fs::metadata(entries(dir.path()).pop().unwrap())
        .unwrap()
        .len();
    // Room for three entries of this size.
    let cache = CompileCache::open(dir.path())
        .unwrap()
        .with_max_bytes(3 * size + size / 2);
    let pause = || std::thread::sleep(Duration::from_millis(30));
    for s in ["s1", "s2"] {
        pause();
        cache
            .compile_with(s, &options(), VERSION, || fake(&calls, s))
            .unwrap();
    }
    // Use s0 again: now s1 is the least recently used.
    pause();
    cache
        .compile_with("s0", &options(), VERSION, || fake(&calls, "s0"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    pause();
    cache
        .compile_with("s3", &options(), VERSION, || fake(&calls, "s3"))
        .unwrap();
    assert_eq!(entries(dir.path()).len(), 3);
    let n = calls.load(Ordering::SeqCst);
    for s in ["s0", "s2", "s3"] {
        cache
            .compile_with(s, &options(), VERSION, || fake(&calls, s))
            .unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), n, "s0, s2, s3 stayed");
    cache
        .compile_with("s1", &options(), VERSION, || fake(&calls, "s1"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), n + 1, "s1 was evicted");
}

#[test]
fn a_cubin_made_outside_nvrtc_is_never_sealed_by_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    let cache = CompileCache::open(dir.path()).unwrap();
    let compiled = cache
        .compile_with("x", &options(), VERSION, || fake(&calls, "x"))
        .unwrap();
    let again = cache
        .compile_with("x", &options(), VERSION, || fake(&calls, "x"))
        .unwrap();
    assert!(!compiled.is_from_nvrtc() && !again.is_from_nvrtc());
    let spec = fixtures::by_entry(launch_suite::ADD_F32).spec;
    let artifact = again.cubin_artifact("k", spec).unwrap();
    let err = Kernel::describe(artifact).unwrap().load().unwrap_err();
    // Its bytes are no cubin, but the point is it never reaches the safe path.
    assert!(
        matches!(
            err.error,
            Error::Cubin { .. } | Error::CubinUnverified { .. }
        ),
        "{err}"
    );
}

#[test]
fn real_nvrtc_second_compile_skips_nvrtc_and_stays_safe() {
    if !ready("real_nvrtc_second_compile_skips_nvrtc_and_stays_safe") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixtures::by_entry(launch_suite::AXPB_F32);
    let source = nvrtc_env::source(fixture.file);
    let options = nvrtc_env::options("sm_90");
    let version = nvrtc::version().unwrap();
    let calls = AtomicUsize::new(0);
    let compile = || {
        calls.fetch_add(1, Ordering::SeqCst);
        nvrtc::compile(&source, &options)
    };
    let first = CompileCache::open(dir.path())
        .unwrap()
        .compile_with(&source, &options, version, compile)
        .unwrap();
    let cache = CompileCache::open(dir.path()).unwrap();
    let second = cache
        .compile_with(&source, &options, version, compile)
        .unwrap();
    let third = cache.compile(&source, &options).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(cache.stats().hits, 2);
    assert_eq!(first, second);
    assert_eq!(second, third);
    // The cubin read back from disk is sealed to its PTX again and loads on the safe path.
    assert!(second.is_from_nvrtc());
    let artifact = second
        .cubin_artifact(fixture.entry, fixture.spec.clone())
        .unwrap();
    let loaded = Kernel::describe(artifact).unwrap().load().unwrap();
    assert!(loaded.loaded().body_verified());
}

/// The parts of an entry on disk as anyone can read them: the first 8 bytes (the format's
/// magic), the 32-byte tag, the body (whose first byte says where the compile came from).
fn entry_parts(bytes: &[u8]) -> (&[u8], &[u8]) {
    let (magic, rest) = bytes.split_at(8);
    (magic, &rest[32..])
}

/// An entry as a forger without the cache's secret writes it: the format's magic, the
/// SHA-256 of `body` (the unkeyed checksum anyone can recompute), `body`.
fn forged_entry(magic: &[u8], body: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    [magic, Sha256::digest(body).as_slice(), body].concat()
}

/// A body as the entry format lays it out: where the compile came from (1: NVRTC), the NVRTC
/// version, the target, the PTX, the log, the source's hash, the cubin, no options.
fn forged_body(ptx: &str, cubin: &[u8]) -> Vec<u8> {
    let put = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    let mut body = vec![1];
    body.extend_from_slice(&VERSION.0.to_le_bytes());
    body.extend_from_slice(&VERSION.1.to_le_bytes());
    put(&mut body, b"sm_90");
    put(&mut body, ptx.as_bytes());
    put(&mut body, b"");
    put(&mut body, b"");
    body.push(1);
    put(&mut body, cubin);
    body.extend_from_slice(&0u64.to_le_bytes());
    body
}

/// A kernel with the fixture's entry and parameters that returns at once: proven in no time,
/// and not the source of the fixture's cubin.
fn not_the_cubins_source(entry: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry {entry}(.param .u64 a, .param .u64 b, .param .u64 out, .param .u64 n)\n\
         {{\n\tret;\n}}\n"
    )
}

#[test]
fn a_forged_entry_never_puts_a_cubin_on_the_safe_path() {
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let (cubin, ptx) = nvrtc_env::cubin_fixture(fixture.file, "sm_90");
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    let compile = || {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok(Compiled::from_parts(
            ptx.clone(),
            Some(cubin.clone()),
            "",
            VERSION,
            "sm_90",
        ))
    };
    let cache = CompileCache::open(dir.path()).unwrap();
    // An honest entry of a compile jitseam did not see come out of NVRTC: its cubin is never
    // sealed.
    cache
        .compile_with("k", &options(), VERSION, compile)
        .unwrap();
    let path = entries(dir.path()).pop().unwrap();
    let honest = std::fs::read(&path).unwrap();
    let (magic, body) = entry_parts(&honest);
    let mut origin_flipped = body.to_vec();
    origin_flipped[0] = 1;
    let forgeries = [
        (
            "the origin byte set to nvrtc",
            forged_entry(magic, &origin_flipped),
        ),
        (
            "a ptx that is not the cubin's source",
            forged_entry(
                magic,
                &forged_body(&not_the_cubins_source(fixture.entry), &cubin),
            ),
        ),
    ];
    for (what, forged) in forgeries {
        std::fs::write(&path, &forged).unwrap();
        let before = calls.load(Ordering::SeqCst);
        let got = cache
            .compile_with("k", &options(), VERSION, compile)
            .unwrap();
        let missed = calls.load(Ordering::SeqCst) == before + 1;
        assert!(
            missed || !got.is_from_nvrtc(),
            "{what}: a hit that claims to come from nvrtc"
        );
        let artifact = got
            .cubin_artifact(fixture.entry, fixture.spec.clone())
            .unwrap();
        let err = Kernel::describe(artifact).unwrap().load().unwrap_err();
        assert!(
            matches!(err.error, Error::CubinUnverified { .. }),
            "{what}: {err}"
        );
    }
}

/// The key file of the cache in `dir` for this process's user.
#[cfg(unix)]
fn key_file(dir: &std::path::Path) -> std::path::PathBuf {
    let keys: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| is_key(p))
        .collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    keys.into_iter().next().unwrap()
}

#[cfg(unix)]
#[test]
fn the_key_is_owner_only_and_refused_when_anyone_else_could_use_it() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    let refused = |dir: &std::path::Path, why: &str| {
        let err = CompileCache::open(dir).unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::PermissionDenied,
            "{why}: {err}"
        );
        assert!(err.to_string().contains(".key-"), "{why}: {err}");
    };
    let dir = tempfile::tempdir().unwrap();
    let calls = AtomicUsize::new(0);
    CompileCache::open(dir.path())
        .unwrap()
        .compile_with("k", &options(), VERSION, || fake(&calls, "k"))
        .unwrap();
    let key = key_file(dir.path());
    let meta = std::fs::symlink_metadata(&key).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.len(), 32);
    let secret = std::fs::read(&key).unwrap();
    // A second handle takes the same key: the entry is a hit.
    CompileCache::open(dir.path())
        .unwrap()
        .compile_with("k", &options(), VERSION, || fake(&calls, "k"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(std::fs::read(&key).unwrap(), secret);

    for mode in [0o640, 0o604, 0o620, 0o602] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        refused(dir.path(), &format!("mode {mode:o}"));
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    CompileCache::open(dir.path()).unwrap();

    // A link in the key's place, even to a file of this user's that is owner-only.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("key");
    std::fs::copy(&key, &target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&key).unwrap();
    symlink(&target, &key).unwrap();
    refused(dir.path(), "a symbolic link");
    std::fs::remove_file(&key).unwrap();

    // A key of another length, and a directory in its place.
    std::fs::write(&key, [0u8; 16]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    refused(dir.path(), "16 bytes");
    std::fs::remove_file(&key).unwrap();
    std::fs::create_dir(&key).unwrap();
    refused(dir.path(), "a directory");
    std::fs::remove_dir(&key).unwrap();

    // Gone: a new key is made, and the old entries (tagged with the old one) are misses.
    CompileCache::open(dir.path())
        .unwrap()
        .compile_with("k", &options(), VERSION, || fake(&calls, "k"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_ne!(std::fs::read(&key).unwrap(), secret);

    // Another user's key (only root can give a file away).
    if std::fs::metadata(dir.path()).unwrap().uid() == 0 {
        std::os::unix::fs::chown(&key, Some(65534), None).unwrap();
        refused(dir.path(), "another user's");
    }
}
