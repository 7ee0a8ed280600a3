//! A body decline in the user's words: the parameter by its declared name (`bias`, not
//! `bias_add_param_1`), the PTX line and instruction, and what to change.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::error::RejectKind;
use jitseam::{AbiSpec, Artifact, Error, Kernel};

/// `out[i] = x[i] + bias[i]` for `i < n`, one thread per element.
const BIAS_ADD: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry bias_add(
	.param .u64 bias_add_param_0,
	.param .u64 bias_add_param_1,
	.param .u64 bias_add_param_2,
	.param .u32 bias_add_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [bias_add_param_0];
	ld.param.u64 	%rd2, [bias_add_param_1];
	ld.param.u64 	%rd3, [bias_add_param_2];
	ld.param.u32 	%r2, [bias_add_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.f32 	%f1, [%rd6];
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f2, [%rd8];
	add.f32 	%f3, %f1, %f2;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;
$L__BB0_2:
	ret;
}
"#;

const SIG: &str = "x: in f32[n], bias: in f32[n], out: out f32[n], n: i32";

fn decline(text: &str, signature: &str) -> (String, RejectKind, u32, Option<String>) {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    let described = Kernel::describe(Artifact::ptx(text, "bias_add", spec)).unwrap();
    // Every access proven or declined: `load()` would guard a bounds violation instead.
    match described.load_proven().map(|_| ()).map_err(|t| t.error) {
        Err(err @ Error::BodyRejected { .. }) => {
            let message = err.to_string();
            let Error::BodyRejected { rejection, fix, .. } = err else {
                unreachable!()
            };
            (message, rejection.kind, rejection.line, fix)
        }
        other => panic!("expected a body decline, got {other:?}"),
    }
}

fn line_of(text: &str, needle: &str) -> u32 {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "`{needle}`");
    lines[0] as u32
}

#[test]
fn the_safe_kernel_loads() {
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    Kernel::describe(Artifact::ptx(BIAS_ADD, "bias_add", spec))
        .unwrap()
        .load()
        .unwrap();
}

#[test]
fn a_read_past_the_extent_names_the_declared_parameter_the_line_and_a_fix() {
    // `bias[i + 1]`.
    let text = BIAS_ADD.replace(
        "ld.global.f32 	%f2, [%rd8];",
        "ld.global.f32 	%f2, [%rd8+4];",
    );
    let (message, kind, line, fix) = decline(&text, SIG);
    assert_eq!(kind, RejectKind::OutOfBounds);
    assert_eq!(line, line_of(&text, "[%rd8+4]"));
    assert!(message.contains("`bias`"), "{message}");
    assert!(!message.contains("bias_add_param_1"), "{message}");
    assert!(
        message.contains(&format!("line {line} `ld.global.f32")),
        "{message}"
    );
    let fix = fix.unwrap();
    assert!(fix.contains("`bias`") && fix.contains("extent"), "{fix}");
    assert!(message.ends_with(&format!("; fix: {fix}")), "{message}");
}

#[test]
fn a_store_through_an_input_says_to_declare_it_out() {
    let text = BIAS_ADD.replace("add.s64 	%rd10, %rd9, %rd5;", "add.s64 	%rd10, %rd7, %rd5;");
    let (message, kind, _, fix) = decline(&text, SIG);
    assert_eq!(kind, RejectKind::StoreThroughInput);
    assert!(message.contains("`bias`"), "{message}");
    assert_eq!(fix.as_deref(), Some("declare `bias` as `out`"), "{message}");
}

#[test]
fn a_scalar_abi_decline_names_the_role() {
    // The same body under the scalar ABI: `in0`, `in1`, `out0`, `n` (the last a 64-bit count,
    // so the entry's 32-bit fourth param is refused first): a body decline names roles.
    let text = BIAS_ADD
        .replace(
            ".param .u32 bias_add_param_3",
            ".param .u64 bias_add_param_3",
        )
        .replace(
            "ld.param.u32 	%r2, [bias_add_param_3];",
            "ld.param.u64 	%rd11, [bias_add_param_3];\n\tcvt.u32.u64 	%r2, %rd11;",
        )
        .replace(
            "ld.global.f32 	%f2, [%rd8];",
            "ld.global.f32 	%f2, [%rd8+4];",
        );
    let f32 = jitseam::ElementKind::F32;
    let spec = AbiSpec::owned(jitseam::AbiKind::Scalar, vec![f32; 2], vec![f32], vec![]);
    let described = Kernel::describe(Artifact::ptx(&text, "bias_add", spec)).unwrap();
    let err = described.load_proven().map(|_| ()).unwrap_err().error;
    let message = err.to_string();
    assert!(matches!(err, Error::BodyRejected { .. }), "{message}");
    assert!(!message.contains("bias_add_param_"), "{message}");
    assert!(message.contains("`in1`"), "{message}");
}
