//! Random mutations of accepted kernels. Two properties, fixed seed:
//! - the verifier never panics, whatever the text;
//! - moving any global access by whole elements past its index (`[%rd]` → `[%rd+k·w]`) is
//!   always unsafe for the last thread (index n − 1), so it must be rejected.
//!
//! Not yet here: running accepted mutants on the emulator with memory checking.

mod common;

use jitseam_ptx::verify::verify_entry;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Scalar-ABI kernels of the synthesizer (cheap to verify) and the scalar NVRTC fixtures.
fn kernels() -> Vec<(String, String, jitseam_ptx::verify::EntryContract)> {
    let mut out = Vec::new();
    for a in common::synth_matrix::artifacts() {
        if a.abi.abi == jitseam::AbiKind::Scalar {
            let text = String::from_utf8(a.bytes.clone()).unwrap_or_default();
            out.push((text, a.link.entry_point.clone(), a.abi.contract()));
        }
    }
    for f in common::fixtures::all() {
        if f.spec.abi == jitseam::AbiKind::Scalar && f.file != "two_entries.ptx" {
            out.push((f.ptx.to_owned(), f.entry.to_owned(), f.spec.contract()));
        }
    }
    out
}

/// Byte offsets of the `]` of every global access (`ld.global`, `st.global`).
fn access_brackets(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if (t.starts_with("ld.global") || t.starts_with("st.global"))
            && let Some(close) = line.find(']')
        {
            out.push(at + close);
        }
        at += line.len();
    }
    out
}

#[test]
fn displaced_accesses_are_rejected() {
    let kernels = kernels();
    assert!(!kernels.is_empty());
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (0..kernels.len(), any::<prop::sample::Index>(), 1i64..64);
    runner
        .run(&strategy, |(k, which, elems)| {
            let (text, entry, contract) = &kernels[k];
            let brackets = access_brackets(text);
            prop_assume!(!brackets.is_empty());
            let at = brackets[which.index(brackets.len())];
            // Element size of the operand: 2, 4 or 8 bytes; k·8 is whole elements for all.
            let mutated = format!("{}+{}{}", &text[..at], elems * 8, &text[at..]);
            let result = verify_entry(&mutated, entry, contract);
            prop_assert!(result.is_err(), "{entry}: displaced access accepted");
            Ok(())
        })
        .unwrap();
}

#[test]
fn arbitrary_edits_never_panic() {
    let kernels = kernels();
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let tokens = prop::sample::select(vec![
        "",
        "1",
        "-1",
        "%rd1",
        "%r1",
        "4294967296",
        "-4294967296",
        ".lt",
        ".le",
        "@%p1 ",
        "ret;",
        "bra $L__BB0_1;",
        "}",
        "{",
        "[",
        "]",
        "+",
        ",",
        ";",
        "%tid.x",
        "ld.global.u32 %r1, [0];",
    ]);
    let strategy = (
        0..kernels.len(),
        any::<prop::sample::Index>(),
        0usize..12,
        tokens,
    );
    runner
        .run(&strategy, |(k, at, cut, token)| {
            let (text, entry, contract) = &kernels[k];
            let mut pos = at.index(text.len().max(1));
            while !text.is_char_boundary(pos) {
                pos -= 1;
            }
            let end = (pos + cut).min(text.len());
            let end = (end..=text.len())
                .find(|&e| text.is_char_boundary(e))
                .unwrap_or(text.len());
            let mutated = format!("{}{}{}", &text[..pos], token, &text[end..]);
            let _ = verify_entry(&mutated, entry, contract);
            Ok(())
        })
        .unwrap();
}
