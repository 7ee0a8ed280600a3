//! A loop over an unsigned index that may wrap, tested before each use: the CUDA samples'
//! `reduce7`, `for (unsigned i = blockIdx.x * 512 + threadIdx.x; i < n; i += gridSize)`, whose
//! `512 · blockIdx.x` and `i + gridSize` wrap on large grids. Each value the index holds is
//! tested `< n` before it is read (on entry and before every back edge), which is what bounds
//! it at the loop's header; unsafe variants (a test that lets `n` through, an entry that
//! skips its test, a second read whose test is dropped) are declined at the read that leaves
//! the input, and an index read signed asks for an input below `2^31`.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

/// NVRTC 12.9's PTX of the corpus kernel `samples_reduce7`
/// (`tests/fixtures/real/samples_reduce_scan.cu`): two reads a step, at `i` and `i + 256`,
/// each behind its own unsigned test.
const PTX: &str = include_str!("fixtures/real/samples_reduce_scan.ptx");
const ENTRY: &str = "samples_reduce7";
const SIG: &str = "g_idata: in f32[n], g_odata: out f32[grid.x], n: u32";
/// The first read of a step, at `i`.
const FIRST: &str = "ld.global.f32 	%f15, [%rd5];";

#[test]
fn an_index_tested_before_each_use_is_proven_however_it_wraps() {
    let proof = verify(PTX, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
}

#[test]
fn a_back_edge_that_lets_n_through_is_declined() {
    // `i <= n` before the back edge: the next step reads `g_idata[n]`.
    let text = mutate(
        PTX,
        ENTRY,
        "setp.lt.u32 	%p3, %r34, %r16;",
        "setp.le.u32 	%p3, %r34, %r16;",
    );
    rejects(&text, ENTRY, SIG, RejectKind::OutOfBounds, FIRST);
}

#[test]
fn an_entry_that_skips_its_test_is_declined() {
    // The first `i` tested against `n + 1`, the back edge still against `n`.
    let text = mutate(
        PTX,
        ENTRY,
        "setp.ge.u32 	%p1, %r34, %r16;",
        "add.s32 	%r16, %r16, 1;\n\tsetp.ge.u32 	%p1, %r34, %r16;\n\tadd.s32 	%r16, %r16, -1;",
    );
    rejects(&text, ENTRY, SIG, RejectKind::MayWrap, FIRST);
}

#[test]
fn an_index_read_signed_asks_for_an_input_below_2_pow_31() {
    // Below `n ≤ 2^32 − 1`, unsigned: read signed, past `2^31` it would be negative, so the
    // proof asks that `n` (the input's extent) be at most `2^31 − 1`.
    let text = mutate(
        PTX,
        ENTRY,
        "mul.wide.u32 	%rd4, %r34, 4;",
        "mul.wide.s32 	%rd4, %r34, 4;",
    );
    let proof = verify(&text, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
    let below = LaunchCondition::ExtentsAtMost {
        limit: (1 << 31) - 1,
    };
    assert!(proof.conditions.contains(&below), "{:?}", proof.conditions);
    assert!(!verify(PTX, ENTRY, SIG).unwrap().conditions.contains(&below));
}

#[test]
fn a_second_read_without_its_test_is_declined() {
    // `i + 256` read whatever it is: past `n` near the end of the input.
    let text = mutate(
        PTX,
        ENTRY,
        "setp.ge.u32 	%p2, %r6, %r16;",
        "setp.ge.u32 	%p2, %r34, %r16;",
    );
    rejects(
        &text,
        ENTRY,
        SIG,
        RejectKind::OutOfBounds,
        "ld.global.f32 	%f16, [%rd7];",
    );
}
