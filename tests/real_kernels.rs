//! The real-kernel corpus (tests/fixtures/real/): kernels of the kinds ML runtimes and HPC codes
//! launch, written in the idioms of public kernels and compiled by NVRTC 12.9, each declared
//! with its tightest honest custom-ABI signature.
//!
//! On the emulator every kernel loads through `load_unverified`, runs its manifest's launch on
//! buffers exactly as long as its declared extents (outputs sentinel-filled) and matches its
//! Rust reference; a kernel that takes indices runs a second time with one index out of range
//! and must fault. What `load()` says about each kernel today is asserted against
//! tests/fixtures/real/verdicts.json, the one place verifier work updates, and summed up on
//! stderr; the verdict each kernel should reach is the manifest's `target`.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

use std::collections::BTreeMap;
use std::io::Write as _;

use jitseam::{Device, Error, Kernel};
use real_corpus::{Entry, Scalar, manifest, prepare, run};

/// What `load()` says about `e` today: `proven`, `guarded at lines A, B` (proven with run-time
/// guards on those accesses), or `declined KIND at line N`.
fn verdict_today(e: &Entry) -> String {
    let described = Kernel::describe(e.artifact()).unwrap();
    match described.load() {
        Ok(k) => match k.loaded().guarded() {
            None => "proven".to_owned(),
            Some(guarded) => {
                let lines: Vec<String> = guarded
                    .table()
                    .sites
                    .iter()
                    .map(|s| s.line.to_string())
                    .collect();
                format!("guarded at lines {}", lines.join(", "))
            }
        },
        Err(t) => match t.error {
            Error::BodyRejected { rejection, .. } => {
                format!("declined {} at line {}", rejection.kind, rejection.line)
            }
            other => panic!("{}: load() refused before the body: {other}", e.entry),
        },
    }
}

fn recorded_verdicts() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(real_corpus::dir().join("verdicts.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_kernel_matches_its_reference_on_the_emulator() {
    real_corpus::run_all(&Device::emulator(), true);
}

#[test]
fn load_verdicts_are_the_recorded_ones() {
    let entries = manifest();
    let today: BTreeMap<String, String> = entries
        .iter()
        .map(|e| (e.entry.clone(), verdict_today(e)))
        .collect();
    let proven = today.values().filter(|v| *v == "proven").count();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for v in today.values() {
        if let Some(rest) = v.strip_prefix("declined ") {
            *kinds.entry(rest.split(' ').next().unwrap()).or_default() += 1;
        }
    }
    let mut targets: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        *targets
            .entry(e.raw["target"]["verdict"].as_str().unwrap())
            .or_default() += 1;
    }
    let by_count = |m: &BTreeMap<&str, usize>| {
        let mut v: Vec<_> = m.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Straight to the process's stderr: the harness captures `eprintln!` of passing tests.
    let _ = writeln!(
        std::io::stderr(),
        "real-kernel corpus: {proven} / {} proven today; declined: {}; targets: {}",
        today.len(),
        by_count(&kinds),
        by_count(&targets)
    );
    let recorded = recorded_verdicts();
    if today != recorded {
        let mut diff = Vec::new();
        for (entry, verdict) in &today {
            match recorded.get(entry) {
                Some(r) if r == verdict => {}
                Some(r) => diff.push(format!("{entry}: recorded `{r}`, today `{verdict}`")),
                None => diff.push(format!("{entry}: not recorded, today `{verdict}`")),
            }
        }
        for entry in recorded.keys().filter(|k| !today.contains_key(*k)) {
            diff.push(format!("{entry}: recorded, but not in the manifest"));
        }
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-verdicts.json");
        std::fs::write(&path, serde_json::to_string_pretty(&today).unwrap() + "\n").unwrap();
        panic!(
            "load() verdicts changed:\n{}\ntoday's verdicts are in {}; review them and copy the \
             file over tests/fixtures/real/verdicts.json",
            diff.join("\n"),
            path.display()
        );
    }
}

/// Each kernel that takes indices, run once more with one index out of range: the emulator's
/// memory checker stops the access (on a GPU it would read or write someone else's memory).
#[test]
fn an_index_out_of_range_faults_on_the_emulator() {
    let mut checked = 0;
    let mut guarded = 0;
    for e in manifest() {
        let Some(oob) = e.raw.get("oob") else {
            continue;
        };
        let mut case = prepare(&e);
        let pointer = oob["pointer"].as_str().unwrap();
        let element = usize::try_from(oob["element"].as_u64().unwrap()).unwrap();
        let value = Scalar::Int(i128::from(oob["value"].as_i64().unwrap()));
        case.buffers.get_mut(pointer).unwrap().set(element, value);
        // Loaded guarded, the same launch is caught by a guard before it happens.
        match real_corpus::run_guarded(&Device::emulator(), &e, &case) {
            None => {}
            Some(Err(Error::GuardFault(fault))) => {
                assert_eq!(fault.entry, e.entry, "{fault}");
                guarded += 1;
            }
            Some(other) => panic!(
                "{}: guarded, expected a guard fault, got {other:?}",
                e.entry
            ),
        }
        match run(&Device::emulator(), &e, &case) {
            Err(Error::MemoryFault(fault)) => {
                assert_eq!(fault.entry, e.entry, "{fault}");
            }
            Ok(_) => panic!(
                "{}: {pointer}[{element}] = {value:?} did not fault",
                e.entry
            ),
            Err(other) => panic!("{}: expected a memory fault, got {other}", e.entry),
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} kernels take indices");
    assert!(guarded >= 6, "only {guarded} of them guarded");
}

/// Kernels whose manifest records a construct the emulator does not run yet: each is refused
/// with the words the manifest gives. When the emulator learns the construct this fails; then
/// the kernel joins the reference run by dropping its `emulator` note.
#[test]
fn the_emulators_refusals_are_the_recorded_ones() {
    for e in manifest() {
        let Some(refuses) = e.emulator_refuses() else {
            continue;
        };
        let case = prepare(&e);
        match run(&Device::emulator(), &e, &case) {
            Ok(_) => panic!(
                "{}: ran, though the manifest says the emulator refuses it",
                e.entry
            ),
            Err(err) => assert!(
                err.to_string().contains(refuses),
                "{}: refused with `{err}`, not `{refuses}`",
                e.entry
            ),
        }
    }
}

#[test]
fn the_manifest_describes_every_kernel() {
    let entries = manifest();
    assert!(entries.len() >= 60, "{} kernels", entries.len());
    let recorded = recorded_verdicts();
    for e in &entries {
        let model = &e.raw["model"];
        for key in ["repo", "path", "commit", "kernel", "kept"] {
            assert!(
                model[key].as_str().is_some_and(|s| !s.is_empty()),
                "{}: model.{key}",
                e.entry
            );
        }
        let target = e.raw["target"]["verdict"].as_str().unwrap();
        assert!(
            ["proven", "guarded", "declined"].contains(&target),
            "{}: target {target}",
            e.entry
        );
        assert!(
            recorded.contains_key(&e.entry),
            "{}: no verdict recorded",
            e.entry
        );
        // Buffers sized by the extents, launched as the manifest says: every extent has a
        // value for the launch.
        let lens = real_corpus::extents(e);
        assert!(lens.iter().all(|&l| l > 0), "{}: an empty operand", e.entry);
    }
}
