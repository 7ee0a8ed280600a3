//! Bit manipulation, small-integer arithmetic, `copysign`, `testp`, special registers, `trap`,
//! `ld.param.v2/.v4` and the no-effect instructions, each checked against values worked out
//! from the PTX ISA's definitions (not from the emulator's output).

use jitseam_emu::decode;
use jitseam_emu::interp::{ExecError, LaunchDims, Regions, RunOptions, run_with};
use jitseam_ptx::parse_module;

#[path = "support/in_out.rs"]
mod in_out;

/// Runs `body` once per row of `inputs`: `%x0..%x3` (`.b64`) and `%r0..%r3` (their low 32
/// bits) hold the row; the body leaves its result in `%out` (`.b64`).
fn run_rows(decls: &str, body: &str, inputs: &[[u64; 4]]) -> Vec<u64> {
    let ptx = format!(
        "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b64 %x<4>;
    .reg .b32 %r<4>;
    .reg .b64 %out;
    .reg .b32 %q;
    .reg .pred %p;
    .reg .b64 %a<8>;
    .reg .b32 %t;
    {decls}
    ld.param.u64 %a1, [k_in];
    ld.param.u64 %a2, [k_out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %a3, %t, 32;
    add.s64 %a4, %a1, %a3;
    ld.global.v2.u64 {{%x0, %x1}}, [%a4];
    ld.global.v2.u64 {{%x2, %x3}}, [%a4+16];
    cvt.u32.u64 %r0, %x0;
    cvt.u32.u64 %r1, %x1;
    cvt.u32.u64 %r2, %x2;
    cvt.u32.u64 %r3, %x3;
    mov.u64 %out, 0;
    {body}
    mul.wide.u32 %a5, %t, 8;
    add.s64 %a6, %a2, %a5;
    st.global.u64 [%a6], %out;
}}
"
    );
    let program = in_out::program(&ptx);
    let dims = LaunchDims::linear(1, inputs.len() as u32);
    in_out::run_in_out(&program, in_out::row_bytes(inputs), dims, 0).unwrap()
}

/// A 32-bit result in `%q`.
fn run32(body: &str, inputs: &[[u64; 4]]) -> Vec<u64> {
    run_rows("", &format!("{body}\n    cvt.u64.u32 %out, %q;"), inputs)
}

#[test]
fn bfe_extracts_and_sign_extends() {
    let rows = [
        [0x0000_0ff0, 4, 8, 0],
        [0x0000_0f70, 4, 4, 0],
        [0x8000_0000, 31, 1, 0],
        [0x8000_0000, 31, 8, 0], // field runs past bit 31: the msb is replicated
        [0x1234_5678, 0, 0, 0],  // len 0
        [0x1234_5678, 300, 8, 0], // pos 300 & 0xff = 44 > 31: all sign bits
        [0x1234_5678, 8, 300, 0], // len 300 & 0xff = 44: to the msb
    ];
    let u = run32("bfe.u32 %q, %r0, %r1, %r2;", &rows);
    assert_eq!(u, vec![0xff, 0x7, 1, 1, 0, 0, 0x12_3456]);
    let s = run32("bfe.s32 %q, %r0, %r1, %r2;", &rows);
    assert_eq!(
        s,
        vec![0xffff_ffff, 0x7, 0xffff_ffff, 0xffff_ffff, 0, 0, 0x12_3456]
    );
    let s64 = run_rows("", "bfe.s64 %out, %x0, %r1, %r2;", &[[0xf0, 4, 4, 0]]);
    assert_eq!(s64, vec![u64::MAX]);
}

#[test]
fn bfi_inserts() {
    let rows = [
        [0xf, 0xffff_0000, 4, 4],
        [0xff, 0, 28, 8], // clipped at bit 31
        [0xff, 0x1234, 0, 0],
    ];
    assert_eq!(
        run32("bfi.b32 %q, %r0, %r1, %r2, %r3;", &rows),
        vec![0xffff_00f0, 0xf000_0000, 0x1234]
    );
}

#[test]
fn prmt_picks_bytes() {
    // a = 0x33221100 (bytes 0..3), b = 0x77665544 (bytes 4..7).
    let rows = [
        [0x3322_1100, 0x7766_5544, 0x3210, 0],
        [0x3322_1100, 0x7766_5544, 0x7654, 0],
        [0x3322_1100, 0x7766_5544, 0x0123, 0],
        [0x8022_1100, 0x7766_5544, 0xb3a0, 0], // sign replication of byte 3 (0x80) and 2
    ];
    assert_eq!(
        run32("prmt.b32 %q, %r0, %r1, %r2;", &rows),
        vec![0x3322_1100, 0x7766_5544, 0x0011_2233, 0xff80_0000]
    );
}

#[test]
fn shf_funnel_shifts() {
    let rows = [
        [0x8000_0001, 0x0000_0003, 4, 0],
        [0x8000_0001, 0x0000_0003, 36, 0], // wrap: 36 & 31 = 4; clamp: 32
        [0x8000_0001, 0x0000_0003, 0, 0],
    ];
    assert_eq!(
        run32("shf.l.wrap.b32 %q, %r0, %r1, %r2;", &rows),
        vec![0x0000_0038, 0x0000_0038, 0x0000_0003]
    );
    assert_eq!(
        run32("shf.l.clamp.b32 %q, %r0, %r1, %r2;", &rows),
        vec![0x0000_0038, 0x8000_0001, 0x0000_0003]
    );
    assert_eq!(
        run32("shf.r.wrap.b32 %q, %r0, %r1, %r2;", &rows),
        vec![0x3800_0000, 0x3800_0000, 0x8000_0001]
    );
    assert_eq!(
        run32("shf.r.clamp.b32 %q, %r0, %r1, %r2;", &rows),
        vec![0x3800_0000, 0x0000_0003, 0x8000_0001]
    );
}

#[test]
fn counting_and_reversal() {
    let rows = [
        [0, 0, 0, 0],
        [1, 0, 0, 0],
        [0x8000_0000, 0, 0, 0],
        [0xf0f0, 0, 0, 0],
    ];
    assert_eq!(run32("clz.b32 %q, %r0;", &rows), vec![32, 31, 0, 16]);
    assert_eq!(run32("popc.b32 %q, %r0;", &rows), vec![0, 1, 1, 8]);
    assert_eq!(
        run32("brev.b32 %q, %r0;", &rows),
        vec![0, 0x8000_0000, 1, 0x0f0f_0000]
    );
    assert_eq!(
        run32("bfind.u32 %q, %r0;", &rows),
        vec![0xffff_ffff, 0, 31, 15]
    );
    assert_eq!(
        run32("bfind.shiftamt.u32 %q, %r0;", &rows),
        vec![0xffff_ffff, 31, 0, 16]
    );
    // Signed: the first bit that differs from the sign.
    let neg = [
        [0xffff_ffff, 0, 0, 0],
        [0xffff_fff0, 0, 0, 0],
        [0x7fff_ffff, 0, 0, 0],
    ];
    assert_eq!(run32("bfind.s32 %q, %r0;", &neg), vec![0xffff_ffff, 3, 30]);
    assert_eq!(
        run_rows(
            "",
            "clz.b64 %q, %x0;\n cvt.u64.u32 %out, %q;",
            &[[1, 0, 0, 0]]
        ),
        vec![63]
    );
    assert_eq!(
        run_rows(
            "",
            "popc.b64 %q, %x0;\n cvt.u64.u32 %out, %q;",
            &[[u64::MAX, 0, 0, 0]]
        ),
        vec![64]
    );
}

#[test]
fn mul24_mad24_sad() {
    // 0xffffff * 0xffffff = 0xfffffe000001 (48 bits).
    let rows = [[0xff_ffff, 0xff_ffff, 5, 0], [0x7f_ffff, 2, 1, 0]];
    assert_eq!(
        run32("mul24.lo.u32 %q, %r0, %r1;", &rows),
        vec![0xfe00_0001, 0xff_fffe]
    );
    assert_eq!(
        run32("mul24.hi.u32 %q, %r0, %r1;", &rows),
        vec![0xffff_fe00, 0xff]
    );
    // Signed: 0xffffff is -1 in 24 bits.
    assert_eq!(
        run32("mul24.lo.s32 %q, %r0, %r1;", &rows),
        vec![1, 0xff_fffe]
    );
    assert_eq!(
        run32("mad24.lo.u32 %q, %r0, %r1, %r2;", &rows),
        vec![0xfe00_0006, 0xff_ffff]
    );
    let sad = [[3, 10, 100, 0], [10, 3, 100, 0], [0xffff_ffff, 1, 0, 0]];
    assert_eq!(
        run32("sad.u32 %q, %r0, %r1, %r2;", &sad),
        vec![107, 107, 0xffff_fffe]
    );
    assert_eq!(run32("sad.s32 %q, %r0, %r1, %r2;", &sad), vec![107, 107, 2]);
}

#[test]
fn dot_products() {
    // a bytes (1, 2, 3, 0xff), b bytes (4, 5, 6, 2), c = 10.
    let rows = [[0xff03_0201, 0x0206_0504, 10, 0]];
    // Unsigned: 4 + 10 + 18 + 510 + 10.
    assert_eq!(run32("dp4a.u32.u32 %q, %r0, %r1, %r2;", &rows), vec![552]);
    // Signed a: 0xff is -1: 4 + 10 + 18 - 2 + 10.
    assert_eq!(run32("dp4a.s32.u32 %q, %r0, %r1, %r2;", &rows), vec![40]);
    // dp2a: a halves (0x0201, 0xff03); .lo uses b bytes 0, 1; .hi bytes 2, 3.
    let lo = 0x0201 * 4 + 0xff03 * 5 + 10;
    let hi = 0x0201 * 6 + 0xff03 * 2 + 10;
    assert_eq!(run32("dp2a.lo.u32.u32 %q, %r0, %r1, %r2;", &rows), vec![lo]);
    assert_eq!(run32("dp2a.hi.u32.u32 %q, %r0, %r1, %r2;", &rows), vec![hi]);
    let slo = (0x0201i64 * 4 - 0xfd * 5 + 10) as u64 & 0xffff_ffff;
    assert_eq!(
        run32("dp2a.lo.s32.s32 %q, %r0, %r1, %r2;", &rows),
        vec![slo]
    );
}

#[test]
fn copysign_and_testp() {
    let (one, neg_zero, nan) = (1.0f32.to_bits(), (-0.0f32).to_bits(), f32::NAN.to_bits());
    let rows = [
        [u64::from(neg_zero), u64::from(one), 0, 0],
        [u64::from(one), u64::from((-2.0f32).to_bits()), 0, 0],
        [u64::from((-1.0f32).to_bits()), u64::from(nan), 0, 0],
    ];
    assert_eq!(
        run32(
            ".reg .f32 %f<3>;\n mov.b32 %f0, %r0;\n mov.b32 %f1, %r1;\n copysign.f32 %f2, %f0, %f1;\n mov.b32 %q, %f2;",
            &rows
        ),
        vec![
            u64::from((-1.0f32).to_bits()),
            u64::from(2.0f32.to_bits()),
            u64::from(nan | 0x8000_0000)
        ]
    );
    let values = [
        0.0f32,
        1.0,
        f32::INFINITY,
        f32::NAN,
        f32::from_bits(1),
        -f32::MIN_POSITIVE,
    ];
    let rows: Vec<[u64; 4]> = values
        .iter()
        .map(|v| [u64::from(v.to_bits()), 0, 0, 0])
        .collect();
    let test = |t: &str| {
        run_rows(
            ".reg .f32 %f;",
            &format!("mov.b32 %f, %r0;\n testp.{t}.f32 %p, %f;\n selp.u64 %out, 1, 0, %p;"),
            &rows,
        )
    };
    assert_eq!(test("finite"), vec![1, 1, 0, 0, 1, 1]);
    assert_eq!(test("infinite"), vec![0, 0, 1, 0, 0, 0]);
    assert_eq!(test("number"), vec![1, 1, 1, 0, 1, 1]);
    assert_eq!(test("notanumber"), vec![0, 0, 0, 1, 0, 0]);
    assert_eq!(test("normal"), vec![0, 1, 0, 0, 0, 1]);
    assert_eq!(test("subnormal"), vec![0, 0, 0, 0, 1, 0]);
}

#[test]
fn special_registers_of_32_lane_warps() {
    let rows: Vec<[u64; 4]> = (0..70).map(|_| [0; 4]).collect();
    let lane = run32("mov.u32 %q, %laneid;", &rows);
    let warp = run32("mov.u32 %q, %warpid;", &rows);
    let lt = run32("mov.u32 %q, %lanemask_lt;", &rows);
    let ge = run32("mov.u32 %q, %lanemask_ge;", &rows);
    let warp_sz = run32("mov.u32 %q, WARP_SZ;", &rows);
    for i in 0..70u64 {
        let l = i % 32;
        assert_eq!(lane[i as usize], l);
        assert_eq!(warp[i as usize], i / 32);
        assert_eq!(lt[i as usize], (1u64 << l) - 1);
        assert_eq!(ge[i as usize], !((1u64 << l) - 1) & 0xffff_ffff);
        assert_eq!(warp_sz[i as usize], 32);
    }
    let clock = run_rows(
        ".reg .b64 %c<2>;",
        "mov.u64 %c0, %clock64;\n membar.gl;\n fence.sc.gpu;\n nanosleep.u32 100;\n mov.u64 %c1, %clock64;\n sub.s64 %out, %c1, %c0;",
        &rows[..2],
    );
    assert!(clock.iter().all(|&d| (d as i64) >= 0));
}

#[test]
fn trap_is_a_typed_error() {
    let ptx = "
.version 8.0
.target sm_90
.visible .entry k()
{
    .reg .b32 %r;
    .reg .pred %p;
    mov.u32 %r, %tid.x;
    setp.eq.u32 %p, %r, 37;
    @%p trap;
    ret;
}
";
    let module = parse_module(ptx).unwrap();
    let program = decode(ptx, &module, "k").unwrap();
    let memory = Regions::new(Vec::new());
    let err = run_with(
        &program,
        &[],
        LaunchDims::linear(2, 64),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    let ExecError::Trap { at } = &err else {
        panic!("{err}")
    };
    assert_eq!((at.block[0], at.thread[0], at.line), (0, 37, 10));
    assert!(err.to_string().contains("trap"), "{err}");
}

/// CUDA's `assert` as NVRTC compiles it: a call of the driver's `__assertfail` with the
/// assertion's text, file, line and function. The launch ends there, naming all four and the
/// thread, as a trap does.
#[test]
fn assertfail_ends_the_launch_with_the_assertion() {
    let ptx = r#"
.version 8.0
.target sm_90
.address_size 64
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0,
    .param .b64 __assertfail_param_1,
    .param .b32 __assertfail_param_2,
    .param .b64 __assertfail_param_3,
    .param .b64 __assertfail_param_4
)
;
.global .align 1 .b8 $msg[6] = {105, 32, 60, 32, 57, 0};
.global .align 1 .b8 $file[5] = {107, 46, 99, 117, 0};
.global .align 1 .b8 $func[2] = {107, 0};
.visible .entry k()
{
    .reg .b32 %r;
    .reg .pred %p;
    .reg .b64 %rd<4>;
    mov.u32 %r, %tid.x;
    setp.ne.u32 %p, %r, 37;
    @%p bra $ok;
    mov.u64 %rd1, $msg;
    cvta.global.u64 %rd1, %rd1;
    mov.u64 %rd2, $file;
    cvta.global.u64 %rd2, %rd2;
    mov.u64 %rd3, $func;
    cvta.global.u64 %rd3, %rd3;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd1;
    .param .b64 param1;
    st.param.b64 [param1+0], %rd2;
    .param .b32 param2;
    st.param.b32 [param2+0], 27;
    .param .b64 param3;
    st.param.b64 [param3+0], %rd3;
    .param .b64 param4;
    st.param.b64 [param4+0], 1;
    call.uni __assertfail, (param0, param1, param2, param3, param4);
    }
$ok:
    ret;
}
"#;
    let module = parse_module(ptx).unwrap();
    let program = decode(ptx, &module, "k").unwrap();
    let memory = Regions::new(Vec::new());
    let err = run_with(
        &program,
        &[],
        LaunchDims::linear(2, 64),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    let ExecError::AssertFailed(failure) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        (
            failure.message.as_str(),
            failure.file.as_str(),
            failure.line
        ),
        ("i < 9", "k.cu", 27)
    );
    assert_eq!(failure.function, "k");
    assert_eq!((failure.at.block[0], failure.at.thread[0]), (0, 37));
    assert_eq!(failure.at.line, 42, "{err}");
    assert!(
        err.to_string()
            .contains("assertion `i < 9` failed at k.cu:27"),
        "{err}"
    );
}

#[test]
fn vector_parameter_loads() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_out, .param .align 16 .b8 k_v[16])
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [k_out];
    ld.param.v4.u32 {%r0, %r1, %r2, %r3}, [k_v];
    st.global.v4.u32 [%rd1], {%r3, %r2, %r1, %r0};
    ld.param.v2.s16 {%r0, %r1}, [k_v+4];
    st.global.v2.u32 [%rd1+16], {%r0, %r1};
}
";
    let module = parse_module(ptx).unwrap();
    let program = decode(ptx, &module, "k").unwrap();
    let mut out = [0u8; 24];
    {
        let memory = Regions::new(vec![(0x1000, &mut out[..])]);
        let mut params = 0x1000u64.to_le_bytes().to_vec();
        params.extend_from_slice(&[0; 8]);
        for v in [1u32, 0xffff_8002, 3, 4] {
            params.extend_from_slice(&v.to_le_bytes());
        }
        run_with(
            &program,
            &params,
            LaunchDims::linear(1, 1),
            &memory,
            &RunOptions::default(),
        )
        .unwrap();
    }
    let words: Vec<u32> = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // v2.s16 at +4: 0x8002 sign-extends, 0xffff sign-extends to -1.
    assert_eq!(words, vec![4, 3, 0xffff_8002, 1, 0xffff_8002, 0xffff_ffff]);
}

#[test]
fn integer_min_and_max_with_relu_clamp_at_zero() {
    let n = |v: i32| u64::from(v as u32);
    let rows = [
        [n(-5), n(3), 0, 0],
        [n(5), n(3), 0, 0],
        [n(-5), n(-3), 0, 0],
        [n(7), n(-9), 0, 0],
    ];
    // min.relu: max(min(a, b), 0); max.relu: max(max(a, b), 0).
    assert_eq!(run32("min.relu.s32 %q, %r0, %r1;", &rows), [0, 3, 0, 0]);
    assert_eq!(run32("max.relu.s32 %q, %r0, %r1;", &rows), [3, 5, 0, 7]);
}
