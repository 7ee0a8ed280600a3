//! Loops whose body creates values anew every iteration: a fact or a closed form the loop
//! analysis carries from one iteration to the next must not pin a value the body recomputes.
//! Each kernel here faults on the interpreter for some `n` with exact-size buffers, so the
//! verifier must reject it.

use jitseam_emu::decode;
use jitseam_emu::interp::{ExecError, FaultKind, LaunchDims, Regions, run};
use jitseam_ptx::parse_module;
use jitseam_verify::{Proof, RejectKind, Rejection, verify_entry};

#[path = "support/scalar_kernel.rs"]
mod scalar_kernel;
use scalar_kernel::{scalar_contract, scalar_kernel};

fn verify(body: &str) -> Result<Proof, Rejection> {
    verify_entry(&scalar_kernel(body), "k", &scalar_contract())
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

/// Runs the kernel on the interpreter with `x` and `out` of exactly `n` floats.
fn emulate(body: &str, n: u64, grid: u32, block: u32) -> Result<(), ExecError> {
    let text = scalar_kernel(body);
    let module = parse_module(&text).unwrap();
    let program = decode(&text, &module, "k").unwrap();
    let bytes = usize::try_from(n).unwrap() * 4;
    let (x_base, out_base) = (0x10_0000u64, 0x20_0000u64);
    let mut x = vec![0u8; bytes];
    let mut out = vec![0u8; bytes];
    let params: Vec<u8> = [x_base, out_base, n]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let mut regions = Regions::new(vec![
        (x_base, x.as_mut_slice()),
        (out_base, out.as_mut_slice()),
    ]);
    run(
        &program,
        &params,
        LaunchDims::linear(grid, block),
        &mut regions,
    )
}

#[track_caller]
fn faults(body: &str, n: u64) {
    match emulate(body, n, 1, 1) {
        Err(ExecError::Fault(f)) => assert_eq!(f.kind, FaultKind::OutOfBounds, "{f}"),
        other => panic!("no fault for n = {n}: {other:?}"),
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

/// `for (j = 0; ; ) { a = (j + 2) & 2; x[a − j]; if (a < ++j) break; }` with `n ≥ 3`.
///
/// The back edge knows `a ≥ j`, i.e. `a ≥ k + 1` for the iteration count `k`; shifted to the
/// head that is `a ≥ k`, which holds on entry for any `a ≥ 0`. But the head's `a` is the last
/// iteration's: the body computes a new one (0 at `j = 2`) and reads `x[−2]`.
#[test]
fn fact_about_a_value_the_body_recomputes_is_not_carried() {
    let body = format!(
        "	setp.lt.s64 	%p1, %rd3, 3;
	@%p1 bra 	DONE;
	mov.u64 	%rd20, 0;
LOOP:
	setp.ge.s64 	%p2, %rd20, %rd3;
	@%p2 bra 	DONE;
	add.s64 	%rd21, %rd20, 2;
	and.b64 	%rd22, %rd21, 2;
	sub.s64 	%rd23, %rd22, %rd20;
{}	add.s64 	%rd20, %rd20, 1;
	setp.ge.s64 	%p3, %rd22, %rd20;
	@%p3 bra 	LOOP;
",
        bad_load_at(23)
    );
    faults(&body, 3);
    faults(&body, 100);
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// The kernel above with `a` computed inside an inner loop (one trip): a value a nested loop
/// makes is just as new in each iteration of the outer one.
#[test]
fn fact_about_a_value_an_inner_loop_recomputes_is_not_carried() {
    let body = format!(
        "	setp.lt.s64 	%p1, %rd3, 3;
	@%p1 bra 	DONE;
	mov.u64 	%rd20, 0;
LOOP:
	setp.ge.s64 	%p2, %rd20, %rd3;
	@%p2 bra 	DONE;
	mov.u64 	%rd25, 0;
INNER:
	add.s64 	%rd21, %rd20, 2;
	and.b64 	%rd22, %rd21, 2;
	add.s64 	%rd25, %rd25, 1;
	setp.lt.s64 	%p4, %rd25, 1;
	@%p4 bra 	INNER;
	sub.s64 	%rd23, %rd22, %rd20;
{}	add.s64 	%rd20, %rd20, 1;
	setp.ge.s64 	%p3, %rd22, %rd20;
	@%p3 bra 	LOOP;
",
        bad_load_at(23)
    );
    faults(&body, 3);
    faults(&body, 100);
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// `for (j = 0, r = 0; j < n; j++) { a = (j + 2) & 2; x[r − j·a]; r = (j + 1)·a; }`.
///
/// The back edge has `r = (k + 1)·a`, so the head's closed form would be `r = k·a` (0 on
/// entry, re-established each trip), making the index 0. But that `a` is the last
/// iteration's: at `j = 2` the new `a` is 0 and the index is `r = 4`; at `j = 4`, −8.
#[test]
fn closed_form_over_a_value_the_body_recomputes_is_not_carried() {
    let body = format!(
        "	mov.u64 	%rd20, 0;
	mov.u64 	%rd21, 0;
LOOP:
	setp.ge.s64 	%p2, %rd20, %rd3;
	@%p2 bra 	DONE;
	add.s64 	%rd22, %rd20, 2;
	and.b64 	%rd23, %rd22, 2;
	mul.lo.s64 	%rd24, %rd20, %rd23;
	sub.s64 	%rd25, %rd21, %rd24;
{}	add.s64 	%rd20, %rd20, 1;
	mul.lo.s64 	%rd21, %rd20, %rd23;
	bra.uni 	LOOP;
",
        bad_load_at(25)
    );
    faults(&body, 3);
    faults(&body, 100);
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// `for (j = 0, i = 0; j < n; j++) { t = i / 2; x[i − j·t − j]; i += t + 1; }`.
///
/// The step of `i` is `t + 1` with `t` computed in the body; taken as a constant, `i = k·(t + 1)`
/// and the index `i − k·t − k` is 0. At `j = 2`, `i = 2`, `t = 1`: the index is −2.
#[test]
fn step_computed_by_the_body_is_not_an_induction_step() {
    let body = format!(
        "	mov.u64 	%rd20, 0;
	mov.u64 	%rd21, 0;
LOOP:
	setp.ge.s64 	%p2, %rd20, %rd3;
	@%p2 bra 	DONE;
	div.s64 	%rd22, %rd21, 2;
	mul.lo.s64 	%rd23, %rd20, %rd22;
	sub.s64 	%rd24, %rd21, %rd23;
	sub.s64 	%rd24, %rd24, %rd20;
{}	add.s64 	%rd21, %rd21, %rd22;
	add.s64 	%rd21, %rd21, 1;
	add.s64 	%rd20, %rd20, 1;
	bra.uni 	LOOP;
",
        bad_load_at(24)
    );
    faults(&body, 3);
    faults(&body, 100);
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// `if (n < 10) t = n / 2; x[4 − n / 2]` with `n ≥ 5`: both quotients are the same value, but
/// only the first is bounded by 4.
#[test]
fn bound_of_a_quotient_under_a_guard_does_not_hold_past_it() {
    let body = format!(
        "	setp.lt.s64 	%p1, %rd3, 5;
	@%p1 bra 	DONE;
	setp.ge.s64 	%p2, %rd3, 10;
	@%p2 bra 	JOIN;
	div.s64 	%rd20, %rd3, 2;
JOIN:
	div.s64 	%rd21, %rd3, 2;
	mov.u64 	%rd22, 4;
	sub.s64 	%rd23, %rd22, %rd21;
{}",
        bad_load_at(23)
    );
    faults(&body, 20);
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// `out[t] = x[t]` for the index in `%rd{reg}`.
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

/// `for (i = I0; i < n; i += S) for (t = i; t < n; t += S) out[t] = x[t]`, both loops rotated
/// as NVRTC emits them. The inner loop's invariant `t ≤ n − 1` speaks of the outer loop's
/// counter, fixed while the inner loop runs: it must survive.
#[test]
fn inner_loop_invariant_over_the_outer_counter_is_proven() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	mov.u64 	%rd20, %rd6;
OUTER:
	mov.u64 	%rd21, %rd20;
INNER:
{}	add.s64 	%rd21, %rd21, %rd7;
	setp.lt.s64 	%p2, %rd21, %rd3;
	@%p2 bra 	INNER;
	add.s64 	%rd20, %rd20, %rd7;
	setp.lt.s64 	%p3, %rd20, %rd3;
	@%p3 bra 	OUTER;
",
        copy_at(21)
    );
    if let Err(r) = verify(&body) {
        panic!("rejected: {r}");
    }
}

/// `if (i − 1 ≥ 0) t = (i − 1) / 2;` then `x[i − 1]` for `i = I0 < n`: the quotient exists
/// only where `i − 1 ≥ 0`, which must not hold past the guard.
#[test]
fn quotient_under_a_guard_does_not_make_its_numerator_nonnegative() {
    let body = format!(
        "	setp.ge.s64 	%p1, %rd6, %rd3;
	@%p1 bra 	DONE;
	sub.s64 	%rd20, %rd6, 1;
	setp.lt.s64 	%p2, %rd20, 0;
	@%p2 bra 	JOIN;
	div.s64 	%rd21, %rd20, 2;
JOIN:
{}",
        bad_load_at(20)
    );
    match emulate(&body, 4, 1, 1) {
        Err(ExecError::Fault(f)) => assert_eq!(f.kind, FaultKind::OutOfBounds, "{f}"),
        other => panic!("no fault: {other:?}"),
    }
    rejected(verify(&body), RejectKind::OutOfBounds);
}

/// `if (n ≥ 1) t = I0 / n;` then `x[0]`: the quotient's divisor is at least 1 only under the
/// guard, and `n = 0` leaves nothing to read.
#[test]
fn quotient_under_a_guard_does_not_make_its_divisor_positive() {
    let body = format!(
        "	setp.lt.s64 	%p2, %rd3, 1;
	@%p2 bra 	JOIN;
	div.s64 	%rd21, %rd6, %rd3;
JOIN:
	mov.u64 	%rd20, 0;
{}",
        bad_load_at(20)
    );
    faults(&body, 0);
    rejected(verify(&body), RejectKind::OutOfBounds);
}
