//! Loaded integers are numbers the analysis follows: PyTorch's `index_select` asserts
//! `0 <= srcIndex && srcIndex < srcSelectDimSize` of the index it loads before it reads
//! `src[srcIndex * innerSize + elementInSlice]`, so the read is proven (NVRTC 12.9's PTX,
//! `tests/fixtures/real/`). With either test weakened by one or removed, the read is
//! data-dependent: declined by strict verification, guarded by `load()`. The CUDA samples'
//! `histogram256` bins the bytes of the words it loads, each below 256 by its mask.
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

/// The CUDA samples' `histogram256` (`tests/fixtures/real/`): each warp of a (192, 1, 1) block
/// counts the four bytes of each loaded word into its own 256 bins of a 6,144-byte shared
/// array, at `4·((data >> 8k) & 255) + 1024·warp`. The byte's bound and the warp's together
/// are proven; a block of 224 threads (a seventh warp), a 9-bit bin or a histogram one bin
/// short reaches past the array.
const HISTOGRAM: &str = include_str!("fixtures/real/samples_reduce_scan.ptx");
const HISTOGRAM_SIG: &str = "d_PartialHistograms: out u32[grid.x * 256], d_Data: in u32[dataCount], dataCount: u32; \
     block = (192, 1, 1)";

#[test]
fn bins_of_loaded_bytes_in_a_warps_histogram_are_proven() {
    let proof = verify(HISTOGRAM, "samples_histogram256", HISTOGRAM_SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
}

#[test]
fn bins_past_a_warps_histogram_are_declined() {
    let entry = "samples_histogram256";
    let past = |text: &str, signature: &str, at: &str| {
        let err = verify(text, entry, signature).unwrap_err();
        assert!(
            matches!(
                err.kind,
                RejectKind::OutOfBounds | RejectKind::DataDependentIndex
            ),
            "{err}"
        );
        assert_eq!(err.line, custom_verify::line_of(text, entry, at), "{err}");
    };
    let first_bin = "atom.shared.add.u32 	%r20, [%rd18], 1;";
    // A seventh warp: its zeroing of the bins (`s_Hist[tid + 1344]`) is the first store past.
    past(
        HISTOGRAM,
        &HISTOGRAM_SIG.replace("(192, 1, 1)", "(224, 1, 1)"),
        "st.shared.u32 	[%rd33+5376], %r14;",
    );
    let nine_bits = mutate(
        HISTOGRAM,
        entry,
        "and.b32  	%r19, %r18, 255;",
        "and.b32  	%r19, %r18, 511;",
    );
    past(&nine_bits, HISTOGRAM_SIG, first_bin);
    let short = HISTOGRAM.replace(
        ".shared .align 4 .b8 _ZZ20samples_histogram256E6s_Hist[6144];",
        ".shared .align 4 .b8 _ZZ20samples_histogram256E6s_Hist[6140];",
    );
    let err = verify(&short, entry, HISTOGRAM_SIG).unwrap_err();
    assert_eq!(err.kind, RejectKind::OutOfBounds, "{err}");
}

/// One thread gathers four elements through four loaded indices, testing each before its read.
/// Each iteration's index is a number of its own: a test made in one iteration says nothing of
/// the next one's.
const LOOP: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry loop_gather(
	.param .u64 out,
	.param .u64 src,
	.param .u64 idx,
	.param .u32 n
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<4>;
	.reg .f32 	%f<2>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [out];
	ld.param.u64 	%rd2, [src];
	ld.param.u64 	%rd3, [idx];
	ld.param.u32 	%r1, [n];
	cvta.to.global.u64 	%rd4, %rd1;
	cvta.to.global.u64 	%rd5, %rd2;
	cvta.to.global.u64 	%rd6, %rd3;
	mov.u32 	%r2, 0;
$L__BB0_1:
	mul.wide.u32 	%rd7, %r2, 4;
	add.s64 	%rd8, %rd6, %rd7;
	ld.global.u32 	%r3, [%rd8];
	mov.f32 	%f1, 0f00000000;
	setp.ge.u32 	%p2, %r3, %r1;
	@%p2 bra 	$L__BB0_3;
	mul.wide.u32 	%rd9, %r3, 4;
	add.s64 	%rd10, %rd5, %rd9;
	ld.global.f32 	%f1, [%rd10];
$L__BB0_3:
	add.s64 	%rd11, %rd4, %rd7;
	st.global.f32 	[%rd11], %f1;
	add.s32 	%r2, %r2, 1;
	setp.lt.u32 	%p3, %r2, 4;
	@%p3 bra 	$L__BB0_1;
	ret;
}
"#;
const LOOP_SIG: &str = "out: out f32[4], src: in f32[n], idx: in u32[4], n: u32; block = (1, 1, 1)";

#[test]
fn an_index_tested_in_every_iteration_is_proven() {
    let proof = verify(LOOP, "loop_gather", LOOP_SIG).unwrap();
    assert!(proof.guards().is_empty(), "{:?}", proof.guards());
}

#[test]
fn an_index_tested_in_the_first_iteration_only_is_data_dependent() {
    // From the second iteration on the branch skips the test: its index is a new number, which
    // the first iteration's test does not bound.
    let text = mutate(
        LOOP,
        "loop_gather",
        "\tsetp.ge.u32 \t%p2, %r3, %r1;\n\t@%p2 bra \t$L__BB0_3;\n",
        "\tsetp.ne.s32 \t%p1, %r2, 0;\n\t@%p1 bra \t$L__BB0_2;\n\tsetp.ge.u32 \t%p2, %r3, %r1;\n\t@%p2 bra \t$L__BB0_3;\n$L__BB0_2:\n",
    );
    rejects(
        &text,
        "loop_gather",
        LOOP_SIG,
        RejectKind::DataDependentIndex,
        "ld.global.f32",
    );
}
