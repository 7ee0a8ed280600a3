//! State spaces and addressing, checked against the PTX ISA's definitions: `.local` frames
//! (declared variables and `__local_depot` arrays as nvcc emits them), addresses of variables
//! and kernel parameters (`mov`, `cvta`, `cvta.to`), generic accesses that land in each
//! window, and module `.global`/`.const` variables with their initializers.

use jitseam_emu::interp::{
    Access, ExecError, FaultKind, LaunchDims, RESERVED, Regions, RunOptions, run_in_module,
    run_with,
};
use jitseam_emu::{DecodeError, Program, decode};
use jitseam_ptx::parse_module;

const OUT: u64 = 0x80_0000;

fn program(ptx: &str) -> Result<Program, DecodeError> {
    let module = parse_module(ptx).unwrap_or_else(|e| panic!("{e}"));
    decode(ptx, &module, "k")
}

/// Runs entry `k` of `ptx` with the packet `[OUT]` followed by `extra`, on an output buffer of
/// `out_words` u64 words; returns the words.
fn run(ptx: &str, extra: &[u8], threads: u32, out_words: usize) -> Result<Vec<u64>, ExecError> {
    let p = program(ptx).unwrap_or_else(|e| panic!("{e}"));
    let mut out = vec![0u8; 8 * out_words];
    let mut params = OUT.to_le_bytes().to_vec();
    params.extend_from_slice(extra);
    {
        let memory = Regions::new(vec![(OUT, &mut out[..])]);
        let options = RunOptions {
            workers: 2,
            ..RunOptions::default()
        };
        run_with(
            &p,
            &params,
            LaunchDims::linear(1, threads),
            &memory,
            &options,
        )?;
    }
    Ok(words(&out))
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A kernel `k(.param .u64 k_out, …)` whose body stores `%out` at `out[%tid.x]`.
fn kernel(globals: &str, params: &str, body: &str) -> String {
    format!(
        "
.version 8.0
.target sm_80
.address_size 64
{globals}
.visible .entry k(.param .u64 k_out{params})
{{
    .reg .pred %p<4>;
    .reg .b16 %h<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .b64 %out;
    .reg .f32 %f<4>;
    mov.u32 %r0, %tid.x;
    mov.u64 %out, 0;
    {body}
    ld.param.u64 %rd15, [k_out];
    mul.wide.u32 %rd14, %r0, 8;
    add.s64 %rd15, %rd15, %rd14;
    st.global.u64 [%rd15], %out;
}}
"
    )
}

#[test]
fn local_depot_as_nvcc_emits_it_is_private_per_thread() {
    // Every thread fills its own 8-word depot through `.local` addresses and reads it back
    // through the generic addresses `cvta.local` makes of them.
    let ptx = kernel(
        "",
        "",
        "
    .local .align 8 .b8 __local_depot0[64];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
    mov.u32 %r1, 0;
FILL:
    mul.wide.u32 %rd1, %r1, 8;
    add.s64 %rd2, %SPL, %rd1;
    mad.lo.u32 %r2, %r0, 100, %r1;
    cvt.u64.u32 %rd3, %r2;
    st.local.u64 [%rd2], %rd3;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra FILL;
    add.s64 %rd4, %SP, 0;
    ld.u64 %rd5, [%rd4+56];
    ld.u64 %rd6, [%rd4];
    add.s64 %out, %rd5, %rd6;
    ",
    );
    let out = run(&ptx, &[], 100, 100).unwrap();
    for (t, &v) in out.iter().enumerate() {
        let t = t as u64;
        assert_eq!(v, (t * 100 + 7) + (t * 100), "thread {t}");
    }
}

#[test]
fn local_variables_of_functions_have_their_own_frames() {
    let ptx = "
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) twice(.param .b32 a)
{
    .local .align 4 .b8 buf[8];
    .reg .b32 %x<4>;
    ld.param.b32 %x1, [a];
    st.local.u32 [buf], %x1;
    st.local.u32 [buf+4], %x1;
    ld.local.u32 %x2, [buf];
    ld.local.u32 %x3, [buf+4];
    add.u32 %x2, %x2, %x3;
    st.param.b32 [r], %x2;
    ret;
}
.visible .entry k(.param .u64 k_out)
{
    .local .u32 mine;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r0, %tid.x;
    st.local.u32 [mine], %r0;
    {
    .param .b32 a0;
    .param .b32 r0;
    st.param.b32 [a0], %r0;
    call (r0), twice, (a0);
    ld.param.b32 %r1, [r0];
    }
    ld.local.u32 %r2, [mine];
    add.u32 %r1, %r1, %r2;
    ld.param.u64 %rd1, [k_out];
    mul.wide.u32 %rd2, %r0, 8;
    add.s64 %rd1, %rd1, %rd2;
    cvt.u64.u32 %rd3, %r1;
    st.global.u64 [%rd1], %rd3;
}
";
    let p = program(ptx).unwrap();
    // `mine` (4 bytes) and `buf` (8 bytes) are both in the frame.
    assert_eq!(p.local_frame_bytes(), 12);
    let out = run(ptx, &[], 70, 70).unwrap();
    for (t, &v) in out.iter().enumerate() {
        assert_eq!(v, 3 * t as u64);
    }
}

#[test]
fn local_access_outside_the_frame_faults() {
    for (body, address, base) in [
        // One past the last byte, in the local space.
        ("mov.u64 %rd1, 16; ld.local.u32 %r1, [%rd1];", 16u64, 0u64),
        // The same byte through the generic window.
        (
            "mov.u64 %rd1, buf; cvta.local.u64 %rd2, %rd1; st.u32 [%rd2+16], %r0;",
            RESERVED.start + 0x10,
            RESERVED.start,
        ),
        // Below the frame.
        (
            "mov.u64 %rd1, buf; ld.local.u32 %r1, [%rd1+-4];",
            u64::MAX - 3,
            0,
        ),
    ] {
        let ptx = kernel("", "", &format!(".local .align 8 .b8 buf[16];\n{body}"));
        let err = run(&ptx, &[], 1, 1).unwrap_err();
        let ExecError::Fault(fault) = err else {
            panic!("{body}: {err:?}")
        };
        assert_eq!(fault.kind, FaultKind::OutOfBounds, "{body}");
        assert_eq!(fault.address, address, "{body}");
        let nearest = fault.nearest.unwrap();
        assert_eq!((nearest.base, nearest.size), (base, 16), "{body}");
    }
}

#[test]
fn cvta_to_local_inverts_cvta_local() {
    let ptx = kernel(
        "",
        "",
        "
    .local .align 8 .b8 a[8];
    .local .align 8 .b8 b[8];
    mov.u64 %rd1, b;
    cvta.local.u64 %rd2, %rd1;
    cvta.local.u64 %rd5, b;
    cvta.to.local.u64 %rd3, %rd2;
    setp.eq.u64 %p1, %rd3, %rd1;
    setp.eq.u64 %p2, %rd5, %rd2;
    and.pred %p1, %p1, %p2;
    selp.u64 %out, 1, 0, %p1;
    st.local.u64 [%rd3], 42;
    ld.u64 %rd4, [%rd2];
    add.u64 %out, %out, %rd4;
    ",
    );
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [43]);
}

#[test]
fn kernel_parameter_addresses_read_the_packet() {
    // The PTX ISA: "the address of a kernel parameter may be moved into a register using mov;
    // the resulting address is in the .param state space".
    let ptx = kernel(
        "",
        ", .param .align 8 .b8 k_s[16]",
        "
    mov.u64 %rd1, k_s;
    ld.param.u32 %r1, [%rd1+4];
    ld.param.v2.u32 {%r2, %r3}, [%rd1+8];
    ld.param.v2.u32 {%r4, %r5}, [k_s];
    add.u32 %r1, %r1, %r2;
    add.u32 %r1, %r1, %r3;
    add.u32 %r1, %r1, %r4;
    add.u32 %r1, %r1, %r5;
    cvt.u64.u32 %out, %r1;
    ",
    );
    let mut s = Vec::new();
    for w in [1u32, 20, 300, 4000] {
        s.extend_from_slice(&w.to_le_bytes());
    }
    assert_eq!(run(&ptx, &s, 1, 1).unwrap(), [20 + 300 + 4000 + 1 + 20]);
    // Reading past the packet through an address faults.
    let ptx = kernel(
        "",
        ", .param .u32 k_n",
        "mov.u64 %rd1, k_n; ld.param.u32 %r1, [%rd1+4];",
    );
    let err = run(&ptx, &7u32.to_le_bytes(), 1, 1).unwrap_err();
    assert!(
        matches!(&err, ExecError::Fault(f) if f.kind == FaultKind::OutOfBounds),
        "{err:?}"
    );
    // A store through a kernel parameter's address is refused at decode.
    let ptx = kernel(
        "",
        ", .param .u32 k_n",
        "mov.u64 %rd1, k_n; st.param.u32 [%rd1], 1;",
    );
    assert!(matches!(
        program(&ptx),
        Err(DecodeError::Unsupported { .. })
    ));
}

const VARS: &str = "
.global .u32 counter = 5;
.global .align 8 .b8 bytes[8] = {1, 2, 3, 4, 5, 6, 7, 255};
.const .align 4 .f32 table[4] = {1.0, 2.5, -3.0, 0f40800000};
.global .s32 offs[][2] = {{-1, 0}, {0, -1}, {1}};
.const .v4 .u16 quad = {1, 2, 3, 4};
.global .u64 zeroed[3];
.visible .global .f64 half_ = 0.5;
";

#[test]
fn module_variables_start_with_their_initializers() {
    let ptx = kernel(
        VARS,
        "",
        "
    ld.global.u32 %r1, [counter];
    cvt.u64.u32 %out, %r1;
    ld.global.u8 %r2, [bytes+7];
    cvt.u64.u32 %rd1, %r2;
    add.u64 %out, %out, %rd1;
    mov.u64 %rd2, table;
    mul.wide.u32 %rd3, %r0, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.const.f32 %f1, [%rd2];
    cvt.rzi.s64.f32 %rd4, %f1;
    add.u64 %out, %out, %rd4;
    ld.global.s32 %r3, [offs+16];
    ld.global.s32 %r4, [offs+20];
    cvt.s64.s32 %rd5, %r3;
    add.u64 %out, %out, %rd5;
    cvt.s64.s32 %rd5, %r4;
    add.u64 %out, %out, %rd5;
    ld.const.v4.u16 {%h0, %h1, %h2, %h3}, [quad];
    cvt.u64.u16 %rd6, %h3;
    add.u64 %out, %out, %rd6;
    ld.global.u64 %rd7, [zeroed+16];
    add.u64 %out, %out, %rd7;
    ",
    );
    let out = run(&ptx, &[], 4, 4).unwrap();
    // counter 5, bytes[7] 255, table[t] truncated (1, 2, -3, 4), offs[2] = {1, 0}, quad.w 4.
    let table = [1i64, 2, -3, 4];
    for (t, &v) in out.iter().enumerate() {
        assert_eq!(v as i64, 5 + 255 + table[t] + 1 + 4, "thread {t}");
    }
    let p = program(&ptx).unwrap();
    let bytes = p.module_memory();
    assert_eq!(bytes.bytes()[..4], 5u32.to_le_bytes());
}

#[test]
fn module_globals_persist_across_launches_in_one_module_memory() {
    let ptx = kernel(
        VARS,
        "",
        "
    atom.global.add.u32 %r1, [counter], 1;
    mov.u64 %rd1, counter;
    ld.global.u32 %r2, [%rd1];
    cvt.u64.u32 %out, %r1;
    ",
    );
    let p = program(&ptx).unwrap();
    assert!(p.has_module_globals());
    let mut module = p.module_memory();
    let mut out = vec![0u8; 8 * 64];
    for launch in 0..3u32 {
        let memory = Regions::new(vec![(OUT, &mut out[..])]);
        run_in_module(
            &p,
            &OUT.to_le_bytes(),
            LaunchDims::linear(1, 64),
            &memory,
            &mut module,
            &RunOptions::default(),
        )
        .unwrap();
        drop(memory);
        assert_eq!(module.bytes()[..4], (5 + 64 * (launch + 1)).to_le_bytes());
    }
    // `run_with` starts every launch from the initializers.
    let memory = Regions::new(vec![(OUT, &mut out[..])]);
    run_with(
        &p,
        &OUT.to_le_bytes(),
        LaunchDims::linear(1, 1),
        &memory,
        &RunOptions::default(),
    )
    .unwrap();
    drop(memory);
    assert_eq!(words(&out)[0], 5);
    // Module memory of another program is refused.
    let other = program(&kernel("", "", "")).unwrap();
    let mut wrong = other.module_memory();
    let memory = Regions::new(vec![(OUT, &mut out[..])]);
    let err = run_in_module(
        &p,
        &OUT.to_le_bytes(),
        LaunchDims::linear(1, 1),
        &memory,
        &mut wrong,
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ExecError::ModuleMismatch { .. }));
}

#[test]
fn generic_addresses_of_module_variables_resolve_to_them() {
    let ptx = kernel(
        VARS,
        "",
        "
    cvta.global.u64 %rd1, counter;
    st.u32 [%rd1], 77;
    ld.global.u32 %r1, [counter];
    cvta.const.u64 %rd2, table;
    ld.f32 %f1, [%rd2+4];
    cvt.rzi.u32.f32 %r2, %f1;
    add.u32 %r1, %r1, %r2;
    ld.f64 %rd3, [half_];
    cvt.u64.u32 %out, %r1;
    add.u64 %out, %out, %rd3;
    ",
    );
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [79 + 0.5f64.to_bits()]);
}

#[test]
fn constant_variables_are_read_only() {
    // A generic store into a `.const` variable faults; `st.const` is not PTX.
    let ptx = kernel(
        VARS,
        "",
        "cvta.const.u64 %rd1, table; st.f32 [%rd1], 0f00000000;",
    );
    let err = run(&ptx, &[], 1, 1).unwrap_err();
    let ExecError::Fault(fault) = err else {
        panic!("{err:?}")
    };
    assert_eq!(fault.kind, FaultKind::WriteToInput);
    assert_eq!(fault.access, Access::Store);
    let ptx = kernel(VARS, "", "st.const.f32 [table], 0f00000000;");
    assert!(matches!(program(&ptx), Err(DecodeError::Parse(_))));
    // `ld.const` of an address outside the constant variables faults.
    let ptx = kernel(VARS, "", "mov.u64 %rd1, counter; ld.const.u32 %r1, [%rd1];");
    let err = run(&ptx, &[], 1, 1).unwrap_err();
    assert!(
        matches!(&err, ExecError::Fault(f) if f.kind == FaultKind::OutOfBounds),
        "{err:?}"
    );
}

#[test]
fn variables_the_emulator_cannot_hold_refuse_only_their_users() {
    for (decl, name, reason) in [
        (
            ".global .u32 p = counter;",
            "p",
            "addresses in variables of this type",
        ),
        (
            ".global .u64 q = counter * 2;",
            "q",
            "initializers that are expressions",
        ),
        (".global .u64 r = missing;", "r", "addresses of variables"),
        (
            ".extern .global .u32 elsewhere;",
            "elsewhere",
            "variables defined in another module",
        ),
        (
            ".global .u8 big = 256;",
            "big",
            "an initializer too large for its type",
        ),
        (
            ".global .u32 two[2] = {1, 2, 3};",
            "two",
            "more initializers",
        ),
        (".global .f16 h = 1.0;", "h", "initializers of this type"),
    ] {
        let globals = format!(".global .u32 counter = 1;\n{decl}");
        // An entry that does not use it runs.
        let unused = kernel(&globals, "", "ld.global.u32 %r1, [counter];");
        assert!(program(&unused).is_ok(), "{decl}");
        let used = kernel(&globals, "", &format!("mov.u64 %rd1, {name};"));
        match program(&used) {
            Err(DecodeError::Unsupported { reason: r, .. }) => {
                assert!(r.starts_with(reason), "{decl}: {r}")
            }
            other => panic!("{decl}: {other:?}"),
        }
    }
}

#[test]
fn local_and_module_misuse_is_refused_at_decode() {
    for (body, unsupported) in [
        (".local .u32 x = 1;", true),
        (".global .u32 inner;", true),
        (".local .u32 x; ld.global.u32 %r1, [x];", false),
        (".local .b8 big[600000];", true),
        ("ld.u32 %r1, [nowhere];", false),
        ("mov.u64 %rd1, k_out; mov.u32 %r1, k_out;", false),
    ] {
        let ptx = kernel("", "", body);
        match program(&ptx) {
            Err(DecodeError::Unsupported { .. }) if unsupported => {}
            Err(DecodeError::Parse(_)) if !unsupported => {}
            Err(DecodeError::Unsupported { reason, .. }) if !unsupported => {
                assert_eq!(reason, "32-bit addresses", "{body}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}

/// A struct of two u32 and a u64, passed by value to a `.func` in a `.param .b8` array and
/// returned the same way, as nvcc emits for a by-value struct.
const BYVAL: &str = "
.version 8.0
.target sm_80
.address_size 64
.func (.param .align 8 .b8 ret[16]) swap(.param .align 8 .b8 s[16], .reg .b32 bump)
{
    .reg .b32 %a<3>;
    .reg .b64 %b<2>;
    ld.param.v2.u32 {%a0, %a1}, [s];
    ld.param.u64 %b0, [s+8];
    add.u32 %a0, %a0, bump;
    st.param.u32 [ret], %a1;
    st.param.u32 [ret+4], %a0;
    add.u64 %b0, %b0, 1;
    st.param.b64 [ret+8], %b0;
    ret;
}
.func (.reg .b32 out) plus(.reg .b32 x, .reg .pred neg)
{
    @neg sub.u32 out, 0, x;
    @!neg mov.u32 out, x;
    ret;
}
.visible .entry k(.param .u64 k_out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    mov.u32 %r0, %tid.x;
    {
    .param .align 8 .b8 arg[16];
    .param .align 8 .b8 res[16];
    st.param.v2.u32 [arg], {%r0, 7};
    cvt.u64.u32 %rd1, %r0;
    st.param.u64 [arg+8], %rd1;
    call (res), swap, (arg, 100);
    ld.param.u32 %r1, [res];
    ld.param.u32 %r2, [res+4];
    ld.param.u64 %rd2, [res+8];
    }
    setp.ne.u32 %p1, %r0, 0;
    call (%r3), plus, (%r2, %p1);
    mul.lo.u32 %r1, %r1, 1000;
    add.u32 %r1, %r1, %r3;
    cvt.u64.u32 %rd3, %r1;
    shl.b64 %rd2, %rd2, 32;
    add.u64 %rd3, %rd3, %rd2;
    ld.param.u64 %rd4, [k_out];
    mul.wide.u32 %rd5, %r0, 8;
    add.s64 %rd4, %rd4, %rd5;
    st.global.u64 [%rd4], %rd3;
}
";

#[test]
fn param_arrays_pass_structs_by_value_and_reg_params_pass_registers() {
    let out = run(BYVAL, &[], 5, 5).unwrap();
    for (t, &v) in out.iter().enumerate() {
        let t = t as u64;
        // swap returns {7, t + 100, t + 1}; `plus` negates t + 100 unless t is 0.
        let plus = if t == 0 {
            100u32
        } else {
            (t as u32 + 100).wrapping_neg()
        };
        let low = (7u32 * 1000).wrapping_add(plus);
        assert_eq!(v, u64::from(low) + ((t + 1) << 32), "thread {t}");
    }
}

#[test]
fn param_array_misuse_is_refused() {
    for (sig, body, call) in [
        // An unsized array parameter (variadic arguments): parsed, refused.
        (
            ".func f(.param .b8 p[])",
            "ld.param.u8 %x, [p];",
            "{ .param .b8 a[4]; call f, (a); }",
        ),
        // An access past the end of the array.
        (
            ".func f(.param .b8 p[4])",
            "ld.param.u32 %x, [p+2];",
            "{ .param .b8 a[4]; call f, (a); }",
        ),
        // An argument of another size.
        (
            ".func f(.param .b8 p[4])",
            "ld.param.u32 %x, [p];",
            "{ .param .b8 a[8]; call f, (a); }",
        ),
    ] {
        let ptx = format!(
            "{HEADER}{sig}\n{{\n.reg .b32 %x;\n{body}\nret;\n}}\n\
             .visible .entry k(.param .u64 k_out)\n{{\n{call}\nret;\n}}\n"
        );
        assert!(program(&ptx).is_err(), "{sig} {body} {call}");
    }
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn narrow_signed_values_extend_to_the_register_width() {
    // The PTX ISA: a destination register wider than the instruction type is sign-extended
    // for signed types and zero-extended otherwise (`ld`, `cvt`).
    let ptx = kernel(
        "",
        ", .param .s8 k_s8, .param .align 2 .b8 k_h[2]",
        "
    .local .align 4 .b8 buf[4];
    .reg .b32 %w<8>;
    st.local.u8 [buf], 0xF0;
    ld.local.s8 %w1, [buf];
    ld.local.u8 %w2, [buf];
    ld.param.s8 %w3, [k_s8];
    ld.param.s16 %w4, [k_h];
    cvt.s16.s8 %w5, %w2;
    cvt.u16.u8 %w6, %w2;
    ld.local.s8 %rd1, [buf];
    xor.b32 %w7, %w1, %w3;
    xor.b32 %w7, %w7, %w4;
    xor.b32 %w7, %w7, %w5;
    xor.b32 %w7, %w7, %w6;
    cvt.u64.u32 %out, %w7;
    xor.b64 %out, %out, %rd1;
    ",
    );
    let mut extra = vec![0x80u8, 0];
    extra.extend_from_slice(&0x8001u16.to_le_bytes());
    let out = run(&ptx, &extra, 1, 1).unwrap();
    let w = 0xFFFF_FFF0u32 ^ 0xFFFF_FF80 ^ 0xFFFF_8001 ^ 0xFFFF_FFF0 ^ 0xF0;
    assert_eq!(out[0], u64::from(w) ^ 0xFFFF_FFFF_FFFF_FFF0);
}

#[test]
fn operand_forms_parse() {
    // `WARP_SZ`, `[reg+imm]` as a vector access's address, and a texture operand (parsed,
    // refused by name).
    let ptx = kernel(
        ".global .align 16 .b8 words[32] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5};",
        "",
        "
    mov.u64 %rd1, words;
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16];
    ld.global.v2.u32 {%r5, _}, [words+8];
    add.u32 %r1, %r1, WARP_SZ;
    add.u32 %r1, %r1, %r5;
    cvt.u64.u32 %out, %r1;
    ",
    );
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [5 + 32 + 3]);
    let ptx = kernel(
        ".global .texref tex;",
        "",
        ".reg .f32 %t<4>;\ntex.2d.v4.f32.s32 {%t0, %t1, %t2, %t3}, [tex, {%r1, %r2}];",
    );
    match program(&ptx) {
        Err(DecodeError::Unsupported { instruction, .. }) => {
            assert_eq!(instruction, "tex.2d.v4.f32.s32")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn function_signatures_in_reg_space_and_unsized_arrays_parse() {
    let ptx = format!(
        "{HEADER}.func (.reg .b32 r) f(.reg .pred p, .param .align 4 .b8 rest[])\n{{\nret;\n}}\n"
    );
    let module = parse_module(&ptx).unwrap();
    let f = &module.functions[0];
    assert!(f.returns[0].reg && f.params[0].reg && !f.params[1].reg);
    assert_eq!(f.params[0].ty, jitseam_ptx::ScalarType::Pred);
    assert_eq!(f.params[1].array_len, Some(0));
}

#[test]
fn vector_registers_and_their_components() {
    // The PTX ISA: `.v4` registers, components `.x .y .z .w` (or `.r .g .b .a`), whole
    // vectors as the operands of vector loads, stores and moves.
    let ptx = kernel(
        ".global .align 16 .b8 src[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};\n\
         .global .align 16 .b8 dst[16];",
        "",
        "
    .reg .v4 .u32 %v;
    .reg .v2 .u32 %p2;
    ld.global.v4.u32 %v, [src];
    add.u32 %v.w, %v.w, 10;
    mov.u32 %v.r, %v.a;
    st.global.v4.u32 [dst], %v;
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [dst];
    mov.b64 %rd1, {%r1, %r2};
    mov.b64 {%p2.x, %p2.y}, %rd1;
    add.u32 %r5, %p2.x, %p2.g;
    add.u32 %r5, %r5, %r3;
    add.u32 %r5, %r5, %v.z;
    cvt.u64.u32 %out, %r5;
    ",
    );
    // v = {14, 2, 3, 14}: 14 + 2 + 3 + 3.
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [22]);
    let bad = kernel("", "", ".reg .v2 .u32 %q;\nmov.u32 %r1, %q.z;");
    assert!(matches!(program(&bad), Err(DecodeError::Parse(_))));
    let bad = kernel("", "", "mov.u32 %r1, %tid.w;");
    assert!(matches!(program(&bad), Err(DecodeError::Parse(_))));
}

#[test]
fn ranges_of_vector_registers_name_one_vector_each() {
    // `.reg .v2 .u32 %w<3>` declares the vectors `%w0`, `%w1`, `%w2`, each with its components.
    let ptx = kernel(
        ".global .align 8 .b8 src[8] = {1, 0, 0, 0, 2, 0, 0, 0};",
        "",
        "
    .reg .v2 .u32 %w<3>;
    ld.global.v2.u32 %w2, [src];
    mov.u32 %w0.y, 5;
    mov.u32 %w1.x, 100;
    add.u32 %r5, %w2.x, %w2.y;
    add.u32 %r5, %r5, %w0.y;
    cvt.u64.u32 %out, %r5;
    ",
    );
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [1 + 2 + 5]);
    let bad = kernel(
        "",
        "",
        ".reg .v2 .u32 %w<3>;
mov.u32 %r1, %w3.x;",
    );
    assert!(matches!(program(&bad), Err(DecodeError::Parse(_))));
}

#[test]
fn address_initializers_hold_the_variables_addresses() {
    // `.global .u64 p = generic(x);` as nvcc emits for `__device__ int *p = &x;`, and an
    // array of addresses with offsets, naming variables declared before and after.
    let ptx = kernel(
        "
.global .align 8 .u64 ptrs[2] = {generic(second), first+4};
.global .u32 first[2] = {10, 20};
.const .u32 second = 300;
",
        "",
        "
    ld.global.u64 %rd1, [ptrs];
    ld.u32 %r1, [%rd1];
    ld.global.u64 %rd2, [ptrs+8];
    ld.u32 %r2, [%rd2];
    add.u32 %r1, %r1, %r2;
    cvt.u64.u32 %out, %r1;
    ",
    );
    assert_eq!(run(&ptx, &[], 1, 1).unwrap(), [320]);
}

#[test]
fn isspacep_tells_the_window_of_a_generic_address() {
    // Each row: a generic address, then isspacep for .global .local .shared .const .param,
    // packed as bits 0..5 of the result.
    let ptx = kernel(
        ".global .u32 g;\n.const .u32 c = 1;",
        ", .param .u32 k_n",
        "
    .local .u32 l;
    .reg .pred %q<5>;
    setp.eq.u32 %p1, %r0, 0;
    setp.eq.u32 %p2, %r0, 1;
    setp.eq.u32 %p3, %r0, 2;
    ld.param.u64 %rd1, [k_out];
    @%p1 cvta.global.u64 %rd1, g;
    @%p2 cvta.local.u64 %rd1, l;
    @%p3 cvta.const.u64 %rd1, c;
    setp.eq.u32 %p1, %r0, 3;
    @%p1 mov.u64 %rd1, k_n;
    isspacep.global %q0, %rd1;
    isspacep.local %q1, %rd1;
    isspacep.shared %q2, %rd1;
    isspacep.const %q3, %rd1;
    isspacep.param %q4, %rd1;
    selp.u64 %rd2, 1, 0, %q0;
    selp.u64 %rd3, 2, 0, %q1;
    or.b64 %rd2, %rd2, %rd3;
    selp.u64 %rd3, 4, 0, %q2;
    or.b64 %rd2, %rd2, %rd3;
    selp.u64 %rd3, 8, 0, %q3;
    or.b64 %rd2, %rd2, %rd3;
    selp.u64 %rd3, 16, 0, %q4;
    or.b64 %out, %rd2, %rd3;
    ",
    );
    // g, l, c, k_n, then the output buffer (a global address).
    assert_eq!(
        run(&ptx, &7u32.to_le_bytes(), 5, 5).unwrap(),
        [1, 2, 8, 16, 1]
    );
}
