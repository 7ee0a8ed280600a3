//! The body verifier and barriers: `bar.sync` changes no register, `bar.red` writes its
//! destination, so an index it overwrites is no longer proven in bounds.

use jitseam_verify::{EntryContract, Extent, OperandRef, ParamContract, verify_entry};

fn kernel(barrier: &str) -> String {
    format!(
        "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_out, .param .u64 k_n)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [k_out];
    ld.param.u64 %rd2, [k_n];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    cvt.u64.u32 %rd3, %r4;
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 bra END;
    {barrier}
    cvt.u64.u32 %rd3, %r4;
    cvta.to.global.u64 %rd6, %rd1;
    shl.b64 %rd4, %rd3, 2;
    add.s64 %rd5, %rd6, %rd4;
    st.global.u32 [%rd5], 0;
END:
    ret;
}}
"
    )
}

fn contract() -> EntryContract {
    EntryContract {
        params: vec![
            ParamContract::Pointer {
                operand: OperandRef::Output(0),
                access_bytes: 4,
                elem_bytes: 4,
                extent: Extent::Dense,
            },
            ParamContract::Count,
        ],
        block: None,
        dynamic_shared: None,
    }
}

#[test]
fn bar_sync_keeps_the_proof() {
    let proof = verify_entry(&kernel("bar.sync 0;"), "k", &contract());
    assert!(proof.is_ok(), "{proof:?}");
}

#[test]
fn bar_red_overwrites_its_destination() {
    let rejected = verify_entry(&kernel("bar.red.popc.u32 %r4, 0, %p1;"), "k", &contract());
    assert!(rejected.is_err(), "{rejected:?}");
}
