//! Guards of every width and in the thread's own frame, as the verifier places them: a
//! `float4` access of an `f32` custom pointer at a loaded index is guarded in 16-byte slots of
//! the declared extent (and its operand's base alignment checked at launch), a load of a
//! `.local` array at a loaded index against the frame's size. A guard weakened by hand is
//! declined by the rewrite's re-proof; a local access through its generic address has no guard
//! and is declined. Their launches (in bounds, out of range, misaligned) are the guard suite's
//! `wide_gather_slots` and `local_frame_lookup` (tests/common/guard_suite.rs).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::AbiSpec;
use jitseam::abi::AbiContract;
use jitseam_verify::{
    AccessKind, ClaimTarget, EntryContract, ParamContract, Proof, RejectKind, verify_entry,
    verify_guarded_entry,
};

/// `out[4i..4i+4] = x[idx[i]..idx[i]+4]` as one 16-byte load and one 16-byte store, for
/// `i < n`: the store is proven (`16·i` with `i < n`, inside `4·n` elements), the load guarded.
const WIDE: &str = ".version 8.0
.target sm_80
.address_size 64

.visible .entry wide_pick(
	.param .u64 wide_pick_param_0,
	.param .u64 wide_pick_param_1,
	.param .u64 wide_pick_param_2,
	.param .u32 wide_pick_param_3,
	.param .u32 wide_pick_param_4
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<5>;
	.reg .b32 	%r<7>;
	.reg .b64 	%rd<13>;

	ld.param.u64 	%rd1, [wide_pick_param_0];
	ld.param.u64 	%rd2, [wide_pick_param_1];
	ld.param.u64 	%rd3, [wide_pick_param_2];
	ld.param.u32 	%r1, [wide_pick_param_3];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.s32 	%p1, %r5, %r1;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd3;
	mul.wide.s32 	%rd5, %r5, 4;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.u32 	%r6, [%rd6];
	cvta.to.global.u64 	%rd7, %rd2;
	mul.wide.s32 	%rd8, %r6, 4;
	add.s64 	%rd9, %rd7, %rd8;
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd9];
	cvta.to.global.u64 	%rd10, %rd1;
	mul.wide.s32 	%rd11, %r5, 16;
	add.s64 	%rd12, %rd10, %rd11;
	st.global.v4.f32 	[%rd12], {%f1, %f2, %f3, %f4};

$L__BB0_2:
	ret;

}
";

/// The line of [`WIDE`]'s 16-byte load.
const WIDE_LINE: u32 = 36;

const WIDE_SIGNATURE: &str = "out: out f32[4 * n], x: in f32[m], idx: in i32[n], n: i32, m: i32";

/// `frame[k] = k · x[i]` for the thread's 8-word `.local` frame, then `out[i] = frame[idx[i]]`:
/// the frame's stores are at fixed offsets (proven), its load at a loaded index (guarded).
const FRAME: &str = ".version 8.0
.target sm_80
.address_size 64

.visible .entry frame_pick(
	.param .u64 frame_pick_param_0,
	.param .u64 frame_pick_param_1,
	.param .u64 frame_pick_param_2,
	.param .u32 frame_pick_param_3
)
{
	.local .align 4 .b8 	frame[32];
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<7>;
	.reg .b64 	%rd<16>;

	mov.u64 	%rd15, frame;
	ld.param.u64 	%rd1, [frame_pick_param_0];
	ld.param.u64 	%rd2, [frame_pick_param_1];
	ld.param.u64 	%rd3, [frame_pick_param_2];
	ld.param.u32 	%r1, [frame_pick_param_3];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.s32 	%p1, %r5, %r1;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.s32 	%rd5, %r5, 4;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.f32 	%f1, [%rd6];
	st.local.f32 	[%rd15], 0f00000000;
	st.local.f32 	[%rd15+4], %f1;
	add.f32 	%f2, %f1, %f1;
	st.local.f32 	[%rd15+8], %f2;
	add.f32 	%f2, %f2, %f1;
	st.local.f32 	[%rd15+12], %f2;
	add.f32 	%f2, %f2, %f1;
	st.local.f32 	[%rd15+16], %f2;
	add.f32 	%f2, %f2, %f1;
	st.local.f32 	[%rd15+20], %f2;
	add.f32 	%f2, %f2, %f1;
	st.local.f32 	[%rd15+24], %f2;
	add.f32 	%f2, %f2, %f1;
	st.local.f32 	[%rd15+28], %f2;
	cvta.to.global.u64 	%rd7, %rd3;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.u32 	%r6, [%rd8];
	mul.wide.s32 	%rd9, %r6, 4;
	add.s64 	%rd10, %rd15, %rd9;
	ld.local.f32 	%f3, [%rd10];
	cvta.to.global.u64 	%rd11, %rd1;
	add.s64 	%rd12, %rd11, %rd5;
	st.global.f32 	[%rd12], %f3;

$L__BB0_2:
	ret;

}
";

/// The line of [`FRAME`]'s load from the frame.
const FRAME_LINE: u32 = 53;

const FRAME_SIGNATURE: &str = "out: out f32[n], x: in f32[n], idx: in i32[n], n: i32";

/// The guarded proof of `entry` in `text` under `signature`, and the contract of its rewrite
/// (the declared parameters, then the hidden ones).
fn guarded_proof(text: &str, entry: &str, signature: &str) -> (Proof, EntryContract) {
    let contract = AbiSpec::parse_custom(signature, None).unwrap().contract();
    let proof = verify_guarded_entry(text, entry, &contract).unwrap_or_else(|r| panic!("{r}"));
    let mut hidden = contract.clone();
    hidden.params.extend(
        proof
            .guarded()
            .expect("guarded")
            .params
            .iter()
            .cloned()
            .map(ParamContract::Guard),
    );
    (proof, hidden)
}

/// `entry` of `text` under `signature`: declined strictly as a data-dependent index at
/// `line`, and guarded there alone — each guard's line, target, kind and width.
fn guarded_alone(
    text: &str,
    entry: &str,
    signature: &str,
    line: u32,
) -> (Proof, Vec<(u32, ClaimTarget, AccessKind, u32)>) {
    let contract = AbiSpec::parse_custom(signature, None).unwrap().contract();
    let strict = verify_entry(text, entry, &contract).unwrap_err();
    assert_eq!(
        (strict.kind, strict.line),
        (RejectKind::DataDependentIndex, line)
    );
    let (proof, _) = guarded_proof(text, entry, signature);
    let guards = proof
        .guards()
        .iter()
        .map(|g| (g.line, g.target.clone(), g.kind, g.bytes))
        .collect();
    (proof, guards)
}

#[test]
fn a_wide_load_at_a_loaded_index_is_guarded_in_slots_of_its_width() {
    let (proof, guards) = guarded_alone(WIDE, "wide_pick", WIDE_SIGNATURE, WIDE_LINE);
    assert_eq!(
        guards,
        [(WIDE_LINE, ClaimTarget::Param(1), AccessKind::Load, 16)]
    );
    // The x operand's base must be 16-byte aligned at launch: the proof's summary says so.
    let x = proof.accesses.iter().find(|a| a.param == 1).unwrap();
    assert_eq!(x.align, 16);
}

#[test]
fn a_frame_load_at_a_loaded_index_is_guarded_against_the_frame() {
    let (_, guards) = guarded_alone(FRAME, "frame_pick", FRAME_SIGNATURE, FRAME_LINE);
    assert_eq!(
        guards,
        [(
            FRAME_LINE,
            ClaimTarget::Local("frame".to_owned()),
            AccessKind::Load,
            4
        )]
    );
}

/// One weakening of a guard: what it is, the rewrite's text, what replaces it.
type Break = (&'static str, &'static str, &'static str);

/// A rewriter bug is a decline, not a hole: each guard weakened by hand is rejected by the
/// re-proof at the guard's line, while the rewrite as made is proven.
#[test]
fn a_weakened_width_or_frame_guard_is_declined_by_the_re_proof() {
    let cases: [(&str, &str, &str, u32, [Break; 2]); 2] = [
        (
            WIDE,
            "wide_pick",
            WIDE_SIGNATURE,
            WIDE_LINE,
            [
                (
                    "slots of 8 bytes for a 16-byte access",
                    "shr.u64 %__jsgr2, %__jsgr1, 4; and.b64 %__jsgr2, %__jsgr2, 6917529027641081855; shl.b64 %__jsgr3, %__jsgr2, 4;",
                    "shr.u64 %__jsgr2, %__jsgr1, 3; and.b64 %__jsgr2, %__jsgr2, 6917529027641081855; shl.b64 %__jsgr3, %__jsgr2, 3;",
                ),
                (
                    "the access at its original address",
                    "ld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%__jsgr3];",
                    "ld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd9];",
                ),
            ],
        ),
        (
            FRAME,
            "frame_pick",
            FRAME_SIGNATURE,
            FRAME_LINE,
            [
                (
                    "a limit one past the frame",
                    "mov.u64 %__jsgr4, 8;",
                    "mov.u64 %__jsgr4, 9;",
                ),
                // (At its original address the access is proven: the guard's test that the
                // recomputed offset equals the original one makes the two addresses one, now
                // that the loaded index is a number the analysis follows.)
                (
                    "the access one slot past the checked address",
                    "ld.local.f32 \t%f3, [%__jsgr3];",
                    "ld.local.f32 \t%f3, [%rd10+4];",
                ),
            ],
        ),
    ];
    for (text, entry, signature, line, breaks) in cases {
        let (proof, contract) = guarded_proof(text, entry, signature);
        let rewrite = &proof.guarded().expect("guarded").ptx;
        assert!(verify_entry(rewrite, entry, &contract).is_ok());
        for (what, from, to) in breaks {
            assert!(
                rewrite.contains(from),
                "{entry}, {what}: `{from}` not in the rewrite:\n{rewrite}"
            );
            let broken = rewrite.replacen(from, to, 1);
            match verify_entry(&broken, entry, &contract) {
                Err(r) => assert_eq!(r.line, line, "{entry}, {what}: {r}"),
                Ok(_) => panic!("{entry}, {what}: the broken guard was proven:\n{broken}"),
            }
        }
    }
}

/// The generic address of a local variable reads the frame through the generic window, where
/// an offset from the frame's local address says nothing: no guard, the load is declined.
#[test]
fn a_frame_load_through_its_generic_address_is_declined() {
    let text = FRAME
        .replace(
            "mov.u64 \t%rd15, frame;",
            "mov.u64 \t%rd14, frame; cvta.local.u64 \t%rd15, %rd14;",
        )
        .replace("st.local.f32", "st.f32")
        .replace("ld.local.f32", "ld.f32");
    let contract = AbiSpec::parse_custom(FRAME_SIGNATURE, None)
        .unwrap()
        .contract();
    // The stores at fixed offsets are proven through the generic address.
    let strict = verify_entry(&text, "frame_pick", &contract).unwrap_err();
    assert_eq!(strict.line, FRAME_LINE, "{strict}");
    let r = verify_guarded_entry(&text, "frame_pick", &contract).unwrap_err();
    assert_eq!(
        (r.kind, r.line),
        (RejectKind::DataDependentIndex, FRAME_LINE),
        "{r}"
    );
}
