//! The proof cache. In memory: a second `load()` of the same text under the same contract
//! reuses the proof; any other text, entry or contract is a miss and is proven (or declined) on
//! its own; the cache stays within its bounds. On disk: a later process (here: the in-memory
//! cache cleared and a fresh handle on the directory) takes the proof an earlier one wrote and
//! launches the same; an entry that is damaged, truncated, from another verifier build or another
//! key's is a miss, never a wrong proof, and the body is proven again; concurrent writers leave
//! intact entries; a directory that cannot be read or written is only a miss.
//!
//! The wrong-proof cases plant the proof of a safe body under the key of an unsafe one (which
//! `load_proven()` declines): were the planted entry taken, the unsafe body would load. A
//! control case shows an intact planted entry is indeed read (the user's own process wrote it,
//! so it is trusted), so each case can fail.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/guard_suite.rs"]
mod guard_suite;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use jitseam::abi::AbiContract;
use jitseam::kernel::proof_cache::{DiskProofCache, DiskStats, MAX_ENTRIES, ProofCache};
use jitseam::{AbiSpec, Artifact, Device, Error, Kernel, Signature};
use jitseam_verify::{EntryContract, Proof, verify_entry};

/// The tests share the one cache of the process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `out[i] = x[i]` for `i < n`; `{DISP}` is the load's displacement (0 is safe).
const COPY: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry copy(
	.param .u64 copy_param_0,
	.param .u64 copy_param_1,
	.param .u32 copy_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [copy_param_0];
	ld.param.u64 	%rd2, [copy_param_1];
	ld.param.u32 	%r2, [copy_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd1, %rd5;
	ld.global.f32 	%f1, [%rd6+{DISP}];
	add.s64 	%rd7, %rd2, %rd5;
	st.global.f32 	[%rd7], %f1;
$L__BB0_2:
	ret;
}
"#;

const SIG: &str = "x: in f32[n], out: out f32[n], n: i32";

fn text(disp: i32) -> String {
    COPY.replace("{DISP}", &disp.to_string())
}

/// `load_proven()` of `copy` in `text` under `signature`: its proof, or the error. Every access
/// proven, so an unsafe text is a decline (`load()` would guard it); it reads and fills the same
/// cache.
fn load(text: &str, signature: &str) -> Result<Proof, Error> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    Kernel::describe(Artifact::ptx(text, "copy", spec))?
        .load_proven()
        .map(|k| k.loaded().proof().unwrap().clone())
        .map_err(|t| t.error)
}

fn contract() -> EntryContract {
    AbiSpec::parse_custom(SIG, None).unwrap().contract()
}

/// The cache in memory alone, emptied.
fn memory_only() -> &'static ProofCache {
    let cache = ProofCache::global();
    cache.set_disk(None);
    cache.clear();
    cache
}

#[test]
fn a_second_load_of_the_same_body_reuses_its_proof() {
    let _serial = serial();
    let cache = memory_only();
    let safe = text(0);
    load(&safe, SIG).unwrap();
    let first = cache.stats();
    assert_eq!((first.hits, first.misses, first.entries), (0, 1, 1));
    load(&safe, SIG).unwrap();
    let second = cache.stats();
    assert_eq!((second.hits, second.misses, second.entries), (1, 1, 1));
    // The proof kept is the verifier's own.
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    let contract = spec.contract();
    let kept = cache.get(&safe, "copy", &contract).unwrap();
    assert_eq!(
        kept,
        jitseam_verify::verify_entry(&safe, "copy", &contract).unwrap()
    );
}

#[test]
fn another_text_or_contract_is_a_miss_and_is_verified_on_its_own() {
    let _serial = serial();
    let cache = memory_only();
    load(&text(0), SIG).unwrap();
    // The same text reading one element past `x`: not the proven text, so it is declined.
    match load(&text(4), SIG) {
        Err(Error::BodyRejected { .. }) => {}
        other => panic!("expected a decline, got {other:?}"),
    }
    // The proven text under a tighter contract (`x` holds `n - 1`): its proof does not carry
    // over, and this contract's verdict is a decline.
    match load(&text(0), "x: in f32[n - 1], out: out f32[n], n: i32") {
        Err(Error::BodyRejected { .. }) => {}
        other => panic!("expected a decline, got {other:?}"),
    }
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    assert!(cache.get(&text(0), "other", &spec.contract()).is_none());
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.entries), (0, 1), "{stats:?}");
}

#[test]
fn the_cache_is_bounded() {
    let _serial = serial();
    let cache = memory_only();
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    let contract = spec.contract();
    let proof = jitseam_verify::verify_entry(&text(0), "copy", &contract).unwrap();
    for k in 0..MAX_ENTRIES + 10 {
        // Distinct texts: a comment makes each its own key.
        let t = format!("{}// {k}\n", text(0));
        cache.insert(&t, "copy", &contract, proof.clone());
    }
    let stats = cache.stats();
    assert_eq!(stats.entries, MAX_ENTRIES);
    // The oldest went first.
    assert!(
        cache
            .get(&format!("{}// 0\n", text(0)), "copy", &contract)
            .is_none()
    );
    let last = format!("{}// {}\n", text(0), MAX_ENTRIES + 9);
    assert!(cache.get(&last, "copy", &contract).is_some());
    cache.clear();
}

/// What a new process sees: nothing in memory, a fresh handle on `dir` behind the cache.
fn new_process(dir: &Path) -> std::sync::Arc<DiskProofCache> {
    let cache = ProofCache::global();
    cache.clear();
    cache.set_disk(Some(DiskProofCache::open(dir).unwrap()));
    cache.disk().unwrap()
}

fn detach() {
    memory_only();
}

#[test]
fn a_later_process_takes_the_proof_from_disk_and_launches_the_same() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // A body proven with guards (the embedding lookup of the guard suite) and one proven as
    // written.
    let guarded_proof = || {
        Kernel::<guard_suite::Embedding, _>::describe_typed(guard_suite::Embedding::ptx_artifact(
            guard_suite::PTX,
        ))
        .unwrap()
        .load()
        .unwrap()
        .loaded()
        .proof()
        .unwrap()
        .clone()
    };
    let disk = new_process(dir.path());
    let first = guarded_proof();
    let first_copy = load(&text(0), SIG).unwrap();
    assert!(!first.guards().is_empty() && first.guarded().is_some());
    assert!(first_copy.guards().is_empty());
    let written = disk.stats();
    assert_eq!(
        (written.hits, written.misses, written.store_errors),
        (0, 2, 0)
    );
    assert!(disk.entry_path(&text(0), "copy", &contract()).is_file());

    let disk = new_process(dir.path());
    let second = guarded_proof();
    let second_copy = load(&text(0), SIG).unwrap();
    let read = disk.stats();
    assert_eq!(
        (read.hits, read.misses, read.corrupt),
        (2, 0, 0),
        "{read:?}"
    );
    // The same proof: coverage, conditions, summaries, claims, guards, the guarded PTX.
    assert_eq!(second, first);
    assert_eq!(second.guards(), first.guards());
    assert_eq!(second.guarded(), first.guarded());
    assert_eq!(second.conditions, first.conditions);
    assert_eq!(second_copy, first_copy);

    // And the launches behave the same: the guard suite's lookups, in-range and faulting,
    // with the proof from disk (a third process, so that its first load reads the disk).
    let disk = new_process(dir.path());
    guard_suite::embedding_lookup(&Device::emulator());
    assert!(disk.stats().hits >= 1, "{:?}", disk.stats());
    assert_eq!(disk.stats().misses, 0, "{:?}", disk.stats());
    detach();
}

/// Plants the proof of the safe body under the unsafe body's key, damages it with `damage`
/// (given the entry's path and the directory), and loads the unsafe body in a new process.
fn planted(damage: impl FnOnce(&Path, &Path)) -> (Result<Proof, Error>, DiskStats) {
    let dir = tempfile::tempdir().unwrap();
    let safe = load(&text(0), SIG).unwrap();
    let unsafe_text = text(4);
    let writer = DiskProofCache::open(dir.path()).unwrap();
    writer.insert(&unsafe_text, "copy", &contract(), &safe);
    let path = writer.entry_path(&unsafe_text, "copy", &contract());
    assert!(path.is_file());
    damage(&path, dir.path());
    let disk = new_process(dir.path());
    let result = load(&unsafe_text, SIG);
    let stats = disk.stats();
    detach();
    (result, stats)
}

#[track_caller]
fn declined(result: Result<Proof, Error>) {
    match result {
        Err(Error::BodyRejected { .. }) => {}
        other => panic!("expected the unsafe body declined, got {other:?}"),
    }
}

#[test]
fn an_intact_entry_is_taken_as_written() {
    let _serial = serial();
    // The control: the planted entry, undamaged, is read (and trusted: this user wrote it).
    let (result, stats) = planted(|_, _| {});
    assert!(result.is_ok(), "{result:?}");
    assert_eq!((stats.hits, stats.corrupt), (1, 0));
}

#[test]
fn a_damaged_or_truncated_entry_is_a_miss() {
    let _serial = serial();
    let flip = |at: fn(usize) -> usize| {
        move |path: &Path, _: &Path| {
            let mut bytes = std::fs::read(path).unwrap();
            let i = at(bytes.len());
            bytes[i] ^= 0x01;
            std::fs::write(path, bytes).unwrap();
        }
    };
    let cut = |to: fn(usize) -> usize| {
        move |path: &Path, _: &Path| {
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, &bytes[..to(bytes.len())]).unwrap();
        }
    };
    for (what, (result, stats)) in [
        ("a flipped magic byte", planted(flip(|_| 0))),
        ("a flipped tag byte", planted(flip(|_| 8))),
        ("a flipped byte of the text", planted(flip(|n| n / 2))),
        ("a flipped last byte", planted(flip(|n| n - 1))),
        ("half the file", planted(cut(|n| n / 2))),
        ("all but the last byte", planted(cut(|n| n - 1))),
        ("an empty file", planted(cut(|_| 0))),
    ] {
        match result {
            Err(Error::BodyRejected { .. }) => {}
            other => panic!("{what}: expected the unsafe body declined, got {other:?}"),
        }
        assert_eq!(
            (stats.hits, stats.misses, stats.corrupt),
            (0, 1, 1),
            "{what}: {stats:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_in_an_entrys_place_is_a_miss_not_a_blocked_load() {
    let _serial = serial();
    let mut made = true;
    let (result, stats) = planted(|path, _| {
        std::fs::remove_file(path).unwrap();
        made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
    });
    if made {
        declined(result);
        assert_eq!((stats.hits, stats.misses), (0, 1), "{stats:?}");
    }
}

/// A damage that puts in the entry's place the entry `write` makes with a handle on the
/// directory (it returns that entry's path).
fn renamed_into_place(write: impl FnOnce(DiskProofCache) -> PathBuf) -> impl FnOnce(&Path, &Path) {
    move |path, dir| {
        let from = write(DiskProofCache::open(dir).unwrap());
        assert_ne!(from, path, "another key's entry has its own name");
        std::fs::rename(from, path).unwrap();
    }
}

#[test]
fn another_builds_or_another_keys_entry_is_a_miss() {
    let _serial = serial();
    let safe = || verify_entry(&text(0), "copy", &contract()).unwrap();
    for (what, (result, stats)) in [
        (
            "the same planted proof, written by another build of the verifier",
            planted(renamed_into_place(|disk| {
                let other = disk.with_verifier_id("0.0.0+another-build");
                other.insert(&text(4), "copy", &contract(), &safe());
                other.entry_path(&text(4), "copy", &contract())
            })),
        ),
        (
            "the safe body's own entry",
            planted(renamed_into_place(|disk| {
                disk.insert(&text(0), "copy", &contract(), &safe());
                disk.entry_path(&text(0), "copy", &contract())
            })),
        ),
        (
            // `x` holds `n + 1`: under it the text reading one past is safe.
            "another contract's entry over the same text",
            planted(renamed_into_place(|disk| {
                let tight =
                    AbiSpec::parse_custom("x: in f32[n + 1], out: out f32[n], n: i32", None)
                        .unwrap()
                        .contract();
                let proof = verify_entry(&text(4), "copy", &tight).unwrap();
                disk.insert(&text(4), "copy", &tight, &proof);
                disk.entry_path(&text(4), "copy", &tight)
            })),
        ),
    ] {
        match result {
            Err(Error::BodyRejected { .. }) => {}
            other => panic!("{what}: expected the unsafe body declined, got {other:?}"),
        }
        assert_eq!(
            (stats.hits, stats.misses, stats.corrupt),
            (0, 1, 0),
            "{what}: {stats:?}"
        );
    }
}

#[test]
fn a_miss_is_proven_again_and_rewritten() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let safe = text(0);
    let disk = new_process(dir.path());
    let proof = load(&safe, SIG).unwrap();
    let path = disk.entry_path(&safe, "copy", &contract());
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x80;
    std::fs::write(&path, &bytes).unwrap();

    let disk = new_process(dir.path());
    assert_eq!(load(&safe, SIG).unwrap(), proof);
    let stats = disk.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.corrupt),
        (0, 1, 1),
        "{stats:?}"
    );
    // The damaged entry was replaced by an intact one.
    let fresh = DiskProofCache::open(dir.path()).unwrap();
    assert_eq!(fresh.get(&safe, "copy", &contract()), Some(proof));
    assert_eq!(fresh.stats().hits, 1);
    detach();
}

#[test]
fn concurrent_writers_leave_intact_entries() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let contract = contract();
    let texts: Vec<String> = (0..4).map(|k| format!("{}// {k}\n", text(0))).collect();
    let proofs: Vec<Proof> = texts
        .iter()
        .map(|t| verify_entry(t, "copy", &contract).unwrap())
        .collect();
    let stats: Vec<_> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|w| {
                let (dir, texts, proofs, contract) = (dir.path(), &texts, &proofs, &contract);
                s.spawn(move || {
                    // Each writer its own handle, as each process has.
                    let disk = DiskProofCache::open(dir).unwrap();
                    for round in 0..40 {
                        let k = (w + round) % texts.len();
                        disk.insert(&texts[k], "copy", contract, &proofs[k]);
                        // Whoever renamed last, the entry is a whole one of this key.
                        assert_eq!(
                            disk.get(&texts[k], "copy", contract).as_ref(),
                            Some(&proofs[k])
                        );
                    }
                    disk.stats()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for s in &stats {
        assert_eq!((s.corrupt, s.store_errors, s.misses), (0, 0, 0), "{s:?}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let disk = DiskProofCache::open(dir.path()).unwrap();
    for (t, p) in texts.iter().zip(&proofs) {
        assert_eq!(disk.get(t, "copy", &contract).as_ref(), Some(p));
    }
}

#[test]
fn a_directory_that_cannot_be_read_or_written_is_only_a_miss() {
    let _serial = serial();
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("proofs");
    let disk = new_process(&dir);
    // The directory gone and a file in its place: every read and write of it fails.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, b"not a directory").unwrap();
    let proof = load(&text(0), SIG).unwrap();
    assert_eq!(proof, verify_entry(&text(0), "copy", &contract()).unwrap());
    let stats = disk.stats();
    assert_eq!(
        (stats.hits, stats.misses, stats.store_errors),
        (0, 1, 1),
        "{stats:?}"
    );
    declined(load(&text(4), SIG));

    // A directory without read or write permission (only where permissions bind this
    // process: not for root).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = parent.path().join("locked");
        let disk = new_process(&dir);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::File::create(dir.join("probe")).is_err() {
            assert_eq!(load(&text(0), SIG).unwrap(), proof);
            let stats = disk.stats();
            assert_eq!(
                (stats.hits, stats.misses, stats.store_errors),
                (0, 1, 1),
                "{stats:?}"
            );
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    detach();
}

/// A hit serves every declaration of its contract: two signatures that differ only in their
/// names share the proof, and each load's guards are named as that load declares them.
#[test]
fn a_hit_names_its_guards_as_the_loading_signature_does() {
    let _serial = serial();
    let cache = memory_only();
    let guarded_names = |signature: &str| {
        let spec = AbiSpec::parse_custom(signature, Some("tokens * dim")).unwrap();
        let loaded = Kernel::describe(Artifact::ptx(guard_suite::PTX, "embedding", spec))
            .unwrap()
            .load()
            .unwrap();
        let proof: Vec<String> = loaded
            .loaded()
            .proof()
            .unwrap()
            .guards()
            .iter()
            .map(|g| format!("{} / {}", g.name, g.why))
            .collect();
        let sites: Vec<String> = loaded
            .loaded()
            .guarded()
            .unwrap()
            .table()
            .sites
            .iter()
            .map(|s| s.operand.clone())
            .collect();
        (proof, sites)
    };
    let first = "table: in f32[vocab * dim], ids: in i32[tokens], out: out f32[tokens * dim], \
                 dim: i32, tokens: i32, vocab: i32";
    let second = first.replace("table", "weights");
    let (proof, sites) = guarded_names(first);
    assert_eq!(sites, ["ids", "table"], "{proof:?}");
    assert!(
        proof[1].starts_with("table / ") && proof[1].contains("`table`"),
        "{proof:?}"
    );
    let (proof, sites) = guarded_names(&second);
    assert_eq!(cache.stats().hits, 1, "the second load is a hit");
    assert_eq!(sites, ["ids", "weights"], "{proof:?}");
    assert!(proof[0].starts_with("ids / "), "{proof:?}");
    assert!(
        proof[1].starts_with("weights / ")
            && proof[1].contains("`weights`")
            && !proof[1].contains("table"),
        "{proof:?}"
    );
}
