//! The body verifier rejects every `reject` entry of the corpus in tests/fixtures/verify/ with
//! the manifest's kind, naming the first violating line. No reject is ever accepted.

mod common;

use common::verify_corpus::{Expect, entries};
use jitseam::abi::AbiContract;
use jitseam_verify::verify_entry;

#[test]
fn every_reject_entry_of_the_corpus_is_rejected_at_its_line() {
    let mut failures = Vec::new();
    let mut count = 0;
    for e in entries() {
        let Expect::Reject {
            kind,
            line,
            instruction,
        } = &e.expect
        else {
            continue;
        };
        count += 1;
        match verify_entry(&e.ptx, &e.entry, &e.spec.contract()) {
            Ok(proof) => failures.push(format!("{}: accepted ({proof:?})", e.entry)),
            Err(r) => {
                let exact = r.kind.as_str() == kind
                    && r.line == *line
                    && r.instruction
                        .trim_start_matches('@')
                        .contains(instruction.as_str());
                if !exact {
                    failures.push(format!(
                        "{}: expected {kind} at line {line} (`{instruction}`), got {} at line {} (`{}`): {}",
                        e.entry, r.kind, r.line, r.instruction, r.reason
                    ));
                }
            }
        }
    }
    assert!(count >= 20, "{count} reject entries");
    assert!(
        failures.is_empty(),
        "{} of {count} wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
