//! The body verifier on small hand-written kernels, one idiom each: loop-head joins, guard
//! refinement (signed and unsigned), `div`/`rem` and NVRTC's `x − (x / d)·d` remainder with
//! the 32-bit fast path of a 64-bit division, and unrolled loops with tails. Each asserts a
//! proof or the exact rejection kind, and for a rejection the line (marked `// bad`).

use jitseam_verify::{
    Coverage, EntryContract, Extent, LaunchCondition, OperandRef, ParamContract, Proof, RejectKind,
    Rejection, verify_entry,
};

#[path = "support/scalar_kernel.rs"]
mod scalar_kernel;
use scalar_kernel::{scalar_contract, scalar_kernel};

fn scalar(body: &str) -> Result<Proof, Rejection> {
    verify_entry(&scalar_kernel(body), "k", &scalar_contract())
}

/// `out[j] = x[j]` for the index in `%rd{reg}` (scratch: `%rd40..%rd42`, `%f1`).
fn copy_at(reg: u32) -> String {
    format!(
        "	shl.b64 	%rd40, %rd{reg}, 2;
	add.s64 	%rd41, %rd1, %rd40;
	ld.global.f32 	%f1, [%rd41];
	add.s64 	%rd42, %rd2, %rd40;
	st.global.f32 	[%rd42], %f1;
"
    )
}

/// A load of `x[j]` for the index in `%rd{reg}`, marked as the expected rejection.
fn bad_load_at(reg: u32) -> String {
    format!(
        "	shl.b64 	%rd43, %rd{reg}, 2;
	add.s64 	%rd44, %rd1, %rd43;
	ld.global.f32 	%f2, [%rd44]; // bad
"
    )
}

#[track_caller]
fn accepted(result: Result<Proof, Rejection>) -> Proof {
    match result {
        Ok(proof) => proof,
        Err(r) => panic!("rejected: {r}"),
    }
}

#[track_caller]
fn rejected(result: Result<Proof, Rejection>, kind: RejectKind) {
    match result {
        Ok(proof) => panic!("accepted: {proof:?}"),
        Err(r) => {
            assert_eq!(r.kind, kind, "{r}");
            assert!(r.instruction.ends_with("// bad"), "wrong line: {r}");
        }
    }
}

fn limits(proof: &Proof) -> Vec<u64> {
    proof
        .conditions
        .iter()
        .filter_map(|c| match c {
            LaunchCondition::CountPlusThreadsAtMost { limit } => Some(*limit),
            _ => None,
        })
        .collect()
}

const LIMIT_63: u64 = (1 << 63) - 1;
const LIMIT_62: u64 = (1 << 62) - 1;
const LIMIT_32: u64 = (1 << 32) - 1;
const LIMIT_31: u64 = (1 << 31) - 1;

// ---- loop-head join and widening ----

/// `for (i = I0; i < n; i += S)`: the head joins `I0` with `I0 + S·(k + 1)`.
#[test]
fn grid_stride_loop_is_proven() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
LOOP:
{}	add.s64 	%rd6, %rd6, %rd7;
	setp.lt.s64 	%p2, %rd6, %rd3;
	@%p2 bra 	LOOP;
",
        copy_at(6)
    );
    let proof = accepted(scalar(&body));
    assert_eq!(proof.coverage, Coverage::GridStride);
    assert!(limits(&proof).iter().all(|&l| l == LIMIT_63), "{proof:?}");
}

/// `for (i = I0; i < n; i++)`: an induction variable with a step other than the grid's.
#[test]
fn unit_step_loop_is_proven_one_thread_per_element() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
LOOP:
{}	add.s64 	%rd6, %rd6, 1;
	setp.lt.s64 	%p2, %rd6, %rd3;
	@%p2 bra 	LOOP;
",
        copy_at(6)
    );
    let proof = accepted(scalar(&body));
    assert_eq!(proof.coverage, Coverage::OneThreadPerElement);
}

/// The loop is bounded by a counter, not by `n`: after the first trip `i` may be past `n`.
#[test]
fn loop_bounded_by_another_counter_is_out_of_bounds() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	mov.u64 	%rd20, 0;
LOOP:
{}	add.s64 	%rd6, %rd6, %rd7;
	add.s64 	%rd20, %rd20, 1;
	setp.lt.s64 	%p2, %rd20, 4;
	@%p2 bra 	LOOP;
",
        bad_load_at(6)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// The step is loaded data: the head's join widens the index to data.
#[test]
fn loop_stepping_by_loaded_data_is_data_dependent() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	mov.u64 	%rd21, 0;
LOOP:
	setp.ge.s64 	%p3, %rd21, %rd3;
	@%p3 bra 	DONE;
{}	cvt.rzi.s64.f32 	%rd22, %f2;
	add.s64 	%rd21, %rd21, %rd22;
	bra.uni 	LOOP;
",
        bad_load_at(21)
    );
    // The first trip reads x[0]; a later one reads x[data], rejected at the same load.
    rejected(scalar(&body), RejectKind::DataDependentIndex);
}

/// `i = I0 + S` where `I0 + S < n`, else `I0` unguarded: the join keeps `I0 + S·m`, but only
/// the bounds on `m` that both paths prove, and `m ≤ q` holds on one only.
#[test]
fn join_keeps_only_bounds_both_paths_prove() {
    let body = format!(
        "	add.s64 	%rd8, %rd6, %rd7;
	setp.ge.s64 	%p1, %rd8, %rd3;
	@%p1 bra 	JOIN;
	mov.u64 	%rd6, %rd8;
JOIN:
{}",
        bad_load_at(6)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// Both paths guarded: the joined index is proven.
#[test]
fn join_of_two_guarded_grid_indices_is_proven() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	add.s64 	%rd8, %rd6, %rd7;
	setp.ge.s64 	%p2, %rd8, %rd3;
	@%p2 bra 	JOIN;
	mov.u64 	%rd6, %rd8;
JOIN:
{}",
        copy_at(6)
    );
    accepted(scalar(&body));
}

// ---- guard refinement ----

#[test]
fn signed_guard_is_proven() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
{}",
        copy_at(6)
    );
    let proof = accepted(scalar(&body));
    assert_eq!(proof.coverage, Coverage::OneThreadPerElement);
}

#[test]
fn unsigned_guard_is_proven() {
    let body = format!(
        "	setp.ge.u64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
{}",
        copy_at(6)
    );
    accepted(scalar(&body));
}

/// `if (i < n)` as `@%p bra` over the access, the other polarity.
#[test]
fn predicated_branch_around_the_access_is_proven() {
    let body = format!(
        "	setp.lt.s64 	%p1, %rd6, %rd3;
	@!%p1 bra 	DONE;
{}",
        copy_at(6)
    );
    accepted(scalar(&body));
}

/// A guard on a 32-bit `int` index reads exactly only while `n + threads ≤ 2^31 − 1`.
#[test]
fn int_index_guard_needs_the_31_bit_condition() {
    let body = format!(
        "	mad.lo.s32 	%r10, %r1, %r2, %r3;
	cvt.s64.s32 	%rd20, %r10;
	setp.ge.s64 	%p1, %rd20, %rd3;
	@%p1 bra 	DONE;
{}",
        copy_at(20)
    );
    let proof = accepted(scalar(&body));
    assert_eq!(limits(&proof), vec![LIMIT_31], "{proof:?}");
}

/// `(unsigned)(i − 1) < n` with the wrap zero-extended: whatever the wrap gives, the unsigned
/// guard keeps the index below `n`.
#[test]
fn unsigned_guard_bounds_a_wrapped_32_bit_index() {
    let body = format!(
        "	mad.lo.s32 	%r10, %r1, %r2, %r3;
	add.s32 	%r11, %r10, -1;
	cvt.u64.u32 	%rd20, %r11;
	setp.ge.u64 	%p1, %rd20, %rd3;
	@%p1 bra 	DONE;
{}",
        copy_at(20)
    );
    accepted(scalar(&body));
}

/// The branch inverted: only threads with `i ≥ n` reach the access.
#[test]
fn inverted_guard_is_out_of_bounds() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@!%p1 bra 	DONE;
{}",
        bad_load_at(6)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// The same with an `int` index: out of bounds, not a wrap (a launch condition rules that out).
#[test]
fn inverted_guard_on_an_int_index_is_out_of_bounds() {
    let body = format!(
        "	mad.lo.s32 	%r10, %r1, %r2, %r3;
	cvt.s64.s32 	%rd20, %r10;
	setp.ge.s64 	%p1, %rd20, %rd3;
	@!%p1 bra 	DONE;
{}",
        bad_load_at(20)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

#[test]
fn less_or_equal_guard_is_out_of_bounds() {
    let body = format!(
        "	setp.gt.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
{}",
        bad_load_at(6)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// `x[i − 1]` behind a signed `i − 1 < n`: thread 0 reads `x[−1]`.
#[test]
fn signed_guard_does_not_bound_below() {
    let body = format!(
        "	add.s64 	%rd20, %rd6, -1;
	setp.ge.s64 	%p1, %rd20, %rd3;
	@%p1 bra 	DONE;
{}",
        bad_load_at(20)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// `x[(unsigned)i − 1u]` behind `i < n`: the 32-bit subtraction wraps for thread 0 whatever
/// the launch.
#[test]
fn unsigned_wrap_below_zero_may_wrap() {
    let body = format!(
        "	mad.lo.s32 	%r10, %r1, %r2, %r3;
	cvt.u64.u32 	%rd20, %r10;
	setp.ge.u64 	%p1, %rd20, %rd3;
	@%p1 bra 	DONE;
	add.s32 	%r11, %r10, -1;
	cvt.u64.u32 	%rd21, %r11;
{}",
        bad_load_at(21)
    );
    rejected(scalar(&body), RejectKind::MayWrap);
}

// ---- div and rem ----

/// `out[i / 3] = x[i >> 1]` behind `i < n`: quotients of a nonnegative index stay below it.
#[test]
fn quotients_of_a_guarded_index_are_proven() {
    let body = "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	shr.u64 	%rd20, %rd6, 1;
	shl.b64 	%rd21, %rd20, 2;
	add.s64 	%rd22, %rd1, %rd21;
	ld.global.f32 	%f1, [%rd22];
	div.u64 	%rd23, %rd6, 3;
	shl.b64 	%rd24, %rd23, 2;
	add.s64 	%rd25, %rd2, %rd24;
	st.global.f32 	[%rd25], %f1;
";
    accepted(scalar(body));
}

/// `if (i < n / 4)` as NVRTC emits a signed division by 4 (`(n + (n >> 63 >>> 62)) >> 2`).
#[test]
fn signed_division_by_a_power_of_two_is_proven() {
    let body = format!(
        "	shr.s64 	%rd20, %rd3, 63;
	shr.u64 	%rd21, %rd20, 62;
	add.s64 	%rd22, %rd3, %rd21;
	shr.s64 	%rd23, %rd22, 2;
	setp.ge.s64 	%p1, %rd6, %rd23;
	@%p1 bra 	DONE;
{}",
        copy_at(6)
    );
    accepted(scalar(&body));
}

/// `x[i % 4]` behind `i < n` is in bounds (`i % 4 ≤ i`).
#[test]
fn remainder_of_a_guarded_index_is_proven() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	rem.u64 	%rd20, %rd6, 4;
{}",
        copy_at(20)
    );
    accepted(scalar(&body));
}

/// `x[(i + 1) % 4]`: for `n = 1` thread 0 reads `x[1]`.
#[test]
fn remainder_by_a_constant_is_out_of_bounds() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	add.s64 	%rd19, %rd6, 1;
	rem.u64 	%rd20, %rd19, 4;
{}",
        bad_load_at(20)
    );
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// `k(const float* a, float* out, shape0, shape1, sa0, sa1, so0, so1, n)`; `%rd6 = I0`, then
/// `body`, which leaves the input's element offset in `%rd30` and the output's in `%rd31`.
fn strided_kernel(body: &str) -> String {
    format!(
        ".version 8.0
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1,
	.param .u64 k_param_2,
	.param .u64 k_param_3,
	.param .u64 k_param_4,
	.param .u64 k_param_5,
	.param .u64 k_param_6,
	.param .u64 k_param_7,
	.param .u64 k_param_8
)
{{
	.reg .pred 	%p<16>;
	.reg .f32 	%f<16>;
	.reg .b32 	%r<32>;
	.reg .b64 	%rd<64>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u64 	%rd2, [k_param_1];
	ld.param.u64 	%rd10, [k_param_2];
	ld.param.u64 	%rd11, [k_param_3];
	ld.param.u64 	%rd12, [k_param_4];
	ld.param.u64 	%rd13, [k_param_5];
	ld.param.u64 	%rd14, [k_param_6];
	ld.param.u64 	%rd15, [k_param_7];
	ld.param.u64 	%rd3, [k_param_8];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mul.wide.u32 	%rd4, %r1, %r2;
	cvt.u64.u32 	%rd5, %r3;
	add.s64 	%rd6, %rd4, %rd5;
	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
{body}
	shl.b64 	%rd40, %rd30, 2;
	add.s64 	%rd41, %rd1, %rd40;
	ld.global.f32 	%f1, [%rd41]; // bad
	shl.b64 	%rd42, %rd31, 2;
	add.s64 	%rd43, %rd2, %rd42;
	st.global.f32 	[%rd43], %f1;
DONE:
	ret;
}}
"
    )
}

fn strided_contract() -> EntryContract {
    let ptr = |operand| ParamContract::Pointer {
        operand,
        access_bytes: 4,
        elem_bytes: 4,
        extent: Extent::Strided { rank: 2 },
    };
    let (a, o) = (OperandRef::Input(0), OperandRef::Output(0));
    EntryContract {
        params: vec![
            ptr(a),
            ptr(o),
            ParamContract::Shape { axis: 0 },
            ParamContract::Shape { axis: 1 },
            ParamContract::Stride {
                operand: a,
                axis: 0,
            },
            ParamContract::Stride {
                operand: a,
                axis: 1,
            },
            ParamContract::Stride {
                operand: o,
                axis: 0,
            },
            ParamContract::Stride {
                operand: o,
                axis: 1,
            },
            ParamContract::Count,
        ],
        block: None,
        dynamic_shared: None,
    }
}

/// `c0 = i / shape1` (`%rd20`) with the 32-bit fast path NVRTC emits for a 64-bit division,
/// then `c1 = i − c0·shape1` (`%rd21`).
const UNRAVEL: &str = "	or.b64  	%rd16, %rd6, %rd11;
	and.b64  	%rd17, %rd16, -4294967296;
	setp.eq.s64 	%p2, %rd17, 0;
	@%p2 bra 	FAST;
	div.u64 	%rd20, %rd6, %rd11;
	bra.uni 	JOIN;
FAST:
	cvt.u32.u64 	%r10, %rd11;
	cvt.u32.u64 	%r11, %rd6;
	div.u32 	%r12, %r11, %r10;
	cvt.u64.u32 	%rd20, %r12;
JOIN:
	mul.lo.s64 	%rd18, %rd20, %rd11;
	sub.s64 	%rd21, %rd6, %rd18;
";

#[test]
fn remainder_as_x_minus_quotient_times_divisor_is_proven() {
    let body = format!(
        "{UNRAVEL}	mul.lo.s64 	%rd22, %rd20, %rd12;
	mad.lo.s64 	%rd30, %rd21, %rd13, %rd22;
	mul.lo.s64 	%rd23, %rd20, %rd14;
	mad.lo.s64 	%rd31, %rd21, %rd15, %rd23;
"
    );
    let text = strided_kernel(&body);
    accepted(verify_entry(&text, "k", &strided_contract()));
}

/// `rem.u64` for the last coordinate instead of `x − (x / d)·d`.
#[test]
fn rem_instruction_coordinate_is_proven() {
    let body = "	div.u64 	%rd20, %rd6, %rd11;
	rem.u64 	%rd21, %rd6, %rd11;
	mul.lo.s64 	%rd22, %rd20, %rd12;
	mad.lo.s64 	%rd30, %rd21, %rd13, %rd22;
	mul.lo.s64 	%rd23, %rd20, %rd14;
	mad.lo.s64 	%rd31, %rd21, %rd15, %rd23;
";
    let text = strided_kernel(body);
    accepted(verify_entry(&text, "k", &strided_contract()));
}

/// The input's strides swapped between the axes.
#[test]
fn coordinates_on_each_others_strides_are_crossed() {
    let body = format!(
        "{UNRAVEL}	mul.lo.s64 	%rd22, %rd20, %rd13;
	mad.lo.s64 	%rd30, %rd21, %rd12, %rd22;
	mul.lo.s64 	%rd23, %rd20, %rd14;
	mad.lo.s64 	%rd31, %rd21, %rd15, %rd23;
"
    );
    let text = strided_kernel(&body);
    let result = verify_entry(&text, "k", &strided_contract());
    match result {
        Ok(proof) => panic!("accepted: {proof:?}"),
        Err(r) => {
            assert_eq!(r.kind, RejectKind::CrossedStride, "{r}");
            assert!(r.instruction.ends_with("// bad"), "wrong line: {r}");
        }
    }
}

/// The last coordinate taken as `i` itself, not `i mod shape1`.
#[test]
fn coordinate_without_the_remainder_is_out_of_bounds() {
    let body = format!(
        "{UNRAVEL}	mul.lo.s64 	%rd22, %rd20, %rd12;
	mad.lo.s64 	%rd30, %rd6, %rd13, %rd22;
	mul.lo.s64 	%rd23, %rd20, %rd14;
	mad.lo.s64 	%rd31, %rd21, %rd15, %rd23;
"
    );
    let text = strided_kernel(&body);
    rejected(
        verify_entry(&text, "k", &strided_contract()),
        RejectKind::OutOfBounds,
    );
}

// ---- unrolled loops with tails ----

/// `for (; i + S < n; i += 2S) { i; i + S }` then `for (; i < n; i += S)`, compared `cmp`
/// (`s64` or `u64`); `main` and `tail` are the accesses (at `%rd6`, `%rd8 = i + S`).
fn unrolled(cmp: &str, main: &str, tail: &str, tail_guard: &str) -> String {
    format!(
        "	add.s64 	%rd8, %rd6, %rd7;
	setp.ge.{cmp} 	%p1, %rd8, %rd3;
	@%p1 bra 	TAIL;
	shl.b64 	%rd9, %rd7, 1;
MAIN:
{main}	add.s64 	%rd6, %rd6, %rd9;
	add.s64 	%rd8, %rd6, %rd7;
	setp.lt.{cmp} 	%p2, %rd8, %rd3;
	@%p2 bra 	MAIN;
TAIL:
	setp.{tail_guard}.{cmp} 	%p3, %rd6, %rd3;
	@%p3 bra 	DONE;
LOOP:
{tail}	add.s64 	%rd6, %rd6, %rd7;
	setp.lt.{cmp} 	%p4, %rd6, %rd3;
	@%p4 bra 	LOOP;
"
    )
}

/// A signed 64-bit index: `i + S` recomputed after `i += 2S` reaches `n + 2·threads`, so the
/// proof asks for `n + threads ≤ 2^62 − 1` (not the 32-bit limits).
#[test]
fn unrolled_signed_loop_with_tail_is_proven_below_2_62() {
    let main = format!("{}{}", copy_at(6), copy_at(8));
    let body = unrolled("s64", &main, &copy_at(6), "ge");
    let proof = accepted(scalar(&body));
    assert_eq!(proof.coverage, Coverage::GridStride);
    let limits = limits(&proof);
    assert!(limits.contains(&LIMIT_62), "{proof:?}");
    assert!(
        !limits.contains(&LIMIT_32) && !limits.contains(&LIMIT_31),
        "{proof:?}"
    );
}

/// Unsigned (`size_t`): `n + 2·threads` does not reach `2^64`. (`n < 2^63` and
/// `threads < 2^42` already keep it below `2^64`, so a proof may need no condition at all; the
/// prover's scaled facts find one that does not.)
#[test]
fn unrolled_unsigned_loop_with_tail_is_proven() {
    let main = format!("{}{}", copy_at(6), copy_at(8));
    let body = unrolled("u64", &main, &copy_at(6), "ge");
    let proof = accepted(scalar(&body));
    assert!(limits(&proof).iter().all(|&l| l == LIMIT_63), "{proof:?}");
}

/// The tail guarded by `i ≤ n`.
#[test]
fn unrolled_loop_with_an_overreading_tail_is_out_of_bounds() {
    let main = format!("{}{}", copy_at(6), copy_at(8));
    let body = unrolled("s64", &main, &bad_load_at(6), "gt");
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// The main loop reads `x[i + 2S]`, one stride past what its guard covers.
#[test]
fn unrolled_loop_reading_past_its_guard_is_out_of_bounds() {
    let main = format!(
        "{}	add.s64 	%rd10, %rd8, %rd7;
{}",
        copy_at(6),
        bad_load_at(10)
    );
    let body = unrolled("u64", &main, &copy_at(6), "ge");
    rejected(scalar(&body), RejectKind::OutOfBounds);
}

/// `__umul24(blockIdx.x, blockDim.x) + threadIdx.x` as NVRTC writes it (masked operands, a
/// 32-bit `mad.lo` that may wrap) tested `i < m` unsigned: whatever number the register holds,
/// the test bounds it, so the unsigned read below is in bounds (`m = min(n, 1000)`). Tested
/// signed, the number may be negative, and its unsigned read is not bounded.
#[test]
fn a_wrapped_index_tested_unsigned_is_bounded_by_the_test() {
    let body = |cmp: &str, tail: &str| {
        format!(
            "	and.b32 	%r10, %r1, 16777215;
	and.b32 	%r11, %r2, 16777215;
	mad.lo.s32 	%r12, %r11, %r10, %r3;
	min.u64 	%rd11, %rd3, 1000;
	cvt.u32.u64 	%r13, %rd11;
	setp.ge.{cmp} 	%p1, %r12, %r13;
	@%p1 bra 	DONE;
	cvt.u64.u32 	%rd12, %r12;
{tail}"
        )
    };
    accepted(scalar(&body("u32", &copy_at(12))));
    rejected(scalar(&body("s32", &bad_load_at(12))), RejectKind::MayWrap);
}
