//! The body verifier accepts every real kernel: the NVRTC fixtures of `tests/fixtures/`, every
//! kernel of the reference synthesizer's op × dtype × ABI matrix, and every `accept` entry of the
//! verification corpus in `tests/fixtures/verify/`.

mod common;

use jitseam::abi::AbiContract;
use jitseam_verify::{Coverage, verify_entry};

#[test]
fn every_nvrtc_fixture_is_proven() {
    let mut failures = Vec::new();
    for fixture in common::fixtures::all() {
        let contract = fixture.spec.contract();
        match verify_entry(fixture.ptx, fixture.entry, &contract) {
            Ok(proof) => {
                assert_eq!(proof.coverage, Coverage::GridStride, "{}", fixture.entry);
                for summary in &proof.accesses {
                    assert!(
                        summary.loads + summary.stores > 0,
                        "{}: param {} is never accessed",
                        fixture.entry,
                        summary.param
                    );
                }
            }
            Err(r) => failures.push(format!("{} ({}): {r}", fixture.entry, fixture.file)),
        }
    }
    assert!(failures.is_empty(), "rejected:\n{}", failures.join("\n"));
}

#[test]
fn every_synthesized_kernel_is_proven() {
    let mut failures = Vec::new();
    let artifacts = common::synth_matrix::artifacts();
    assert!(artifacts.len() > 300, "{} kernels", artifacts.len());
    for artifact in &artifacts {
        let text = std::str::from_utf8(&artifact.bytes).unwrap_or_default();
        let entry = &artifact.link.entry_point;
        match verify_entry(text, entry, &artifact.abi.contract()) {
            Ok(proof) => assert_eq!(proof.coverage, Coverage::GridStride, "{entry}"),
            Err(r) => failures.push(format!("{entry}: {r}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rejected:\n{}",
        failures.len(),
        artifacts.len(),
        failures.join("\n")
    );
}

#[test]
fn every_accept_entry_of_the_corpus_is_proven() {
    let mut failures = Vec::new();
    let mut count = 0;
    for e in common::verify_corpus::entries() {
        if e.expect != common::verify_corpus::Expect::Accept {
            continue;
        }
        count += 1;
        if let Err(r) = verify_entry(&e.ptx, &e.entry, &e.spec.contract()) {
            failures.push(format!("{} ({}): {r}", e.entry, e.file));
        }
    }
    assert!(count >= 30, "{count} accept entries");
    assert!(
        failures.is_empty(),
        "{} of {count} rejected:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
