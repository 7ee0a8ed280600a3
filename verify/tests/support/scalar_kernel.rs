//! A scalar-ABI kernel skeleton for the verifier's hand-written tests: the grid-stride prologue
//! NVRTC emits, with the body under test spliced in, and the contract it is checked against.

use jitseam_verify::{EntryContract, Extent, OperandRef, ParamContract};

/// `k(const float* x, float* out, long long n)` with `%rd6 = I0` (the global thread index) and
/// `%rd7 = S` (the grid's thread count), then `body`.
pub(crate) fn scalar_kernel(body: &str) -> String {
    format!(
        ".version 8.0
.target sm_80
.address_size 64

.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1,
	.param .u64 k_param_2
)
{{
	.reg .pred 	%p<16>;
	.reg .f32 	%f<16>;
	.reg .b32 	%r<32>;
	.reg .b64 	%rd<64>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u64 	%rd2, [k_param_1];
	ld.param.u64 	%rd3, [k_param_2];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mul.wide.u32 	%rd4, %r1, %r2;
	cvt.u64.u32 	%rd5, %r3;
	add.s64 	%rd6, %rd4, %rd5;
	mov.u32 	%r4, %nctaid.x;
	mul.wide.u32 	%rd7, %r4, %r2;
{body}
DONE:
	ret;
}}
"
    )
}

pub(crate) fn scalar_contract() -> EntryContract {
    let ptr = |operand| ParamContract::Pointer {
        operand,
        access_bytes: 4,
        elem_bytes: 4,
        extent: Extent::Dense,
    };
    EntryContract {
        params: vec![
            ptr(OperandRef::Input(0)),
            ptr(OperandRef::Output(0)),
            ParamContract::Count,
        ],
        block: None,
        dynamic_shared: None,
    }
}
