//! Loaded integers are numbers the analysis follows: PyTorch's `index_select` asserts
//! `0 <= srcIndex && srcIndex < srcSelectDimSize` of the index it loads before it reads
//! `src[srcIndex * innerSize + elementInSlice]`, so the read is proven (NVRTC 12.9's PTX,
//! `tests/fixtures/real/`). With either test weakened by one or removed, the read is
//! data-dependent: declined by strict verification, guarded by `load()`.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam_verify::RejectKind;

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

const PTX: &str = include_str!("fixtures/real/torch_index_select.ptx");
const ENTRY: &str = "torch_index_select_large_index";
const SIG: &str = "dst: out f32[totalSize], src: in f32[srcSelectDimSize * innerSize], \
     indices: in i64[div_ceil(totalSize, innerSize)], totalSize: u32, innerSize: u32, \
     srcSelectDimSize: i64";

#[test]
fn a_loaded_index_the_kernel_asserts_in_range_is_proven() {
    let proof = verify(PTX, ENTRY, SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
}

/// `text`'s read of `src` is declined as data-dependent.
fn data_dependent(text: &str) {
    rejects(
        text,
        ENTRY,
        SIG,
        RejectKind::DataDependentIndex,
        "ld.global.f32",
    );
}

#[test]
fn a_loaded_index_tested_one_too_loosely_is_data_dependent() {
    for (from, to) in [
        // `srcIndex <= srcSelectDimSize`: one row past the source.
        (
            "setp.lt.s64 	%p3, %rd5, %rd9;",
            "setp.le.s64 	%p3, %rd5, %rd9;",
        ),
        // `srcIndex >= -1`: one row before it.
        ("setp.gt.s64 	%p2, %rd5, -1;", "setp.gt.s64 	%p2, %rd5, -2;"),
        // No lower bound at all.
        ("and.pred  	%p4, %p2, %p3;", "and.pred  	%p4, %p3, %p3;"),
    ] {
        data_dependent(&mutate(PTX, ENTRY, from, to));
    }
}

#[test]
fn a_loaded_index_never_tested_is_data_dependent() {
    // The assert's test gone: the branch always skips the trap.
    let text = mutate(PTX, ENTRY, "@%p4 bra 	$L__BB0_4;", "bra.uni 	$L__BB0_4;");
    data_dependent(&text);
}
