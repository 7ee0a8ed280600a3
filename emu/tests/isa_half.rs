//! Half precision (f16, bf16, `x2`), the float `min`/`max` variants, `set`/`setp` on halves,
//! `cvt` with `.relu`/`.satfinite`/packing, `.ftz` on f32, and NaN to integer conversions, each
//! checked against values worked out by hand from the PTX ISA's definitions, plus a randomized
//! differential test of f16/bf16 `add`/`sub`/`mul`/`fma` against exact integer arithmetic
//! rounded here (not by the emulator's code).

use jitseam_emu::interp::LaunchDims;
use jitseam_emu::{DecodeError, decode};
use jitseam_ptx::parse_module;

#[path = "support/in_out.rs"]
mod in_out;

fn kernel(decls: &str, body: &str) -> String {
    format!(
        "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b64 %x<4>;
    .reg .b32 %r<4>;
    .reg .b16 %h<4>;
    .reg .f32 %f<4>;
    .reg .f64 %fd<4>;
    .reg .b64 %out;
    .reg .b32 %q;
    .reg .b16 %hq;
    .reg .pred %p<4>;
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
    cvt.u16.u64 %h0, %x0;
    cvt.u16.u64 %h1, %x1;
    cvt.u16.u64 %h2, %x2;
    cvt.u16.u64 %h3, %x3;
    mov.b32 %f0, %r0;
    mov.b32 %f1, %r1;
    mov.b32 %f2, %r2;
    mov.b64 %fd0, %x0;
    mov.u64 %out, 0;
    {body}
    mul.wide.u32 %a5, %t, 8;
    add.s64 %a6, %a2, %a5;
    st.global.u64 [%a6], %out;
}}
"
    )
}

fn try_decode(decls: &str, body: &str) -> Result<jitseam_emu::Program, DecodeError> {
    let ptx = kernel(decls, body);
    let module = parse_module(&ptx).unwrap();
    decode(&ptx, &module, "k")
}

/// Runs `body` once per row: `%x0..%x3` (`.b64`) hold the row, `%r*` their low 32 bits, `%h*`
/// their low 16 bits, `%f0..%f2` the `%r*` as f32, `%fd0` `%x0` as f64; the result is `%out`.
fn run_rows(decls: &str, body: &str, inputs: &[[u64; 4]]) -> Vec<u64> {
    let program = try_decode(decls, body).unwrap_or_else(|e| panic!("{e}\n{body}"));
    let dims = LaunchDims::linear(1, inputs.len() as u32);
    in_out::run_in_out(&program, in_out::row_bytes(inputs), dims, 0).unwrap()
}

/// `op %hq, %h0, %h1[, %h2]` on 16-bit rows; returns the 16-bit results.
fn h16(op: &str, operands: usize, rows: &[[u64; 3]]) -> Vec<u64> {
    let srcs = ["%h0", "%h1", "%h2"][..operands].join(", ");
    let rows: Vec<[u64; 4]> = rows.iter().map(|r| [r[0], r[1], r[2], 0]).collect();
    run_rows(
        "",
        &format!("{op} %hq, {srcs};\n cvt.u64.u16 %out, %hq;"),
        &rows,
    )
}

/// `op %q, %r0, %r1[, %r2]` on 32-bit rows (packed halves or f32 bits).
fn r32(op: &str, operands: usize, rows: &[[u64; 3]]) -> Vec<u64> {
    let srcs = ["%r0", "%r1", "%r2"][..operands].join(", ");
    let rows: Vec<[u64; 4]> = rows.iter().map(|r| [r[0], r[1], r[2], 0]).collect();
    run_rows(
        "",
        &format!("{op} %q, {srcs};\n cvt.u64.u32 %out, %q;"),
        &rows,
    )
}

fn is_nan16(bits: u64, bf16: bool) -> bool {
    let (e, m) = if bf16 {
        (0x7f80, 0x7f)
    } else {
        (0x7c00, 0x3ff)
    };
    bits & e == e && bits & m != 0
}

fn unsupported(decls: &str, body: &str) -> bool {
    matches!(
        try_decode(decls, body),
        Err(DecodeError::Unsupported { .. } | DecodeError::Parse(_))
    )
}

// f16 constants: 1.0, 2.0, 0.5, 0.75, -1, +inf, -inf, max normal, min normal, min subnormal.
const ONE: u64 = 0x3c00;
const TWO: u64 = 0x4000;
const HALF: u64 = 0x3800;
const THREE_QUARTERS: u64 = 0x3a00;
const NEG_ONE: u64 = 0xbc00;
const INF: u64 = 0x7c00;
const NEG_INF: u64 = 0xfc00;
const MAX: u64 = 0x7bff;
const MIN_NORMAL: u64 = 0x0400;
const TINY: u64 = 0x0001;
const NAN: u64 = 0x7e00;
const NEG_ZERO: u64 = 0x8000;

#[test]
fn f16_add_sub_mul_round_overflow_and_flush() {
    let rows = [
        [ONE, TWO, 0],
        // 65504 + 8 = 65512 rounds down to 65504; 65504 + 16 = 65520 is the tie that rounds
        // to even, past the largest finite value: +inf.
        [MAX, 0x4800, 0],
        [MAX, 0x4c00, 0],
        [TINY, TINY, 0],
        // (2^-14 + 2^-24) - 2^-14 = 2^-24: a subnormal result.
        [0x0401, 0x8400, 0],
        [0x8401, MIN_NORMAL, 0],
        [INF, NEG_INF, 0],
        [ONE, NEG_ONE, 0],
    ];
    assert_eq!(
        h16("add.f16", 2, &rows)[..6],
        [0x4200, MAX, INF, 0x0002, 0x0001, 0x8001]
    );
    let plain = h16("add.rn.f16", 2, &rows);
    assert!(is_nan16(plain[6], false));
    assert_eq!(plain[7], 0, "x + -x is +0 when rounding to nearest");
    // .ftz: subnormal inputs and results become zeros of the same sign.
    assert_eq!(
        h16("add.ftz.f16", 2, &rows)[3..6],
        [0x0000, 0x0000, NEG_ZERO]
    );
    // .sat: [0, 1], NaN to +0.
    let sat = h16(
        "add.sat.f16",
        2,
        &[
            [THREE_QUARTERS, HALF, 0],
            [NEG_ONE, HALF, 0],
            [INF, NEG_INF, 0],
            [NEG_ZERO, NEG_ZERO, 0],
        ],
    );
    assert_eq!(sat, [ONE, 0, 0, 0]);
    assert_eq!(
        h16("sub.f16", 2, &[[ONE, TWO, 0], [TINY, TINY, 0]]),
        [NEG_ONE, 0]
    );
    // 1.5 * 1.5 = 2.25; 2^-14 * 2^-1 = 2^-15, a subnormal (0x0200), flushed by .ftz.
    let mul = [[0x3e00, 0x3e00, 0], [MIN_NORMAL, HALF, 0], [INF, 0, 0]];
    let got = h16("mul.f16", 2, &mul);
    assert_eq!(got[..2], [0x4080, 0x0200]);
    assert!(is_nan16(got[2], false));
    assert_eq!(h16("mul.ftz.f16", 2, &mul)[1], 0);
    assert_eq!(h16("mul.sat.f16", 2, &mul)[..2], [ONE, 0x0200]);
}

#[test]
fn f16_fma_rounds_once_with_sat_relu_and_ftz() {
    // (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20 exactly: fused, a subnormal; a separate multiply
    // would round the product to 1 + 2^-9 and give 0.
    let rows = [
        [0x3c01, 0x3c01, 0xbc02],
        [TWO, ONE, 0],
        [NEG_ONE, ONE, 0],
        [INF, 0, ONE],
        // -1 * 0 + 0 = -0 + +0 = +0; with c = -0 the sum is -0.
        [NEG_ONE, 0, 0],
        [NEG_ONE, 0, NEG_ZERO],
    ];
    let got = h16("fma.rn.f16", 3, &rows);
    assert_eq!(got[..3], [0x0010, TWO, NEG_ONE]);
    assert!(is_nan16(got[3], false));
    assert_eq!(got[4..], [0, NEG_ZERO]);
    assert_eq!(h16("fma.rn.ftz.f16", 3, &rows)[0], 0);
    assert_eq!(h16("fma.rn.sat.f16", 3, &rows), [0x0010, ONE, 0, 0, 0, 0]);
    // .relu: negative (sign set) to +0, NaN to the canonical NaN 0x7fff.
    assert_eq!(
        h16("fma.rn.relu.f16", 3, &rows),
        [0x0010, TWO, 0, 0x7fff, 0, 0]
    );
    assert_eq!(h16("fma.rn.ftz.relu.f16", 3, &rows)[..2], [0, TWO]);
    // bf16: 1.0625^2 = 1 + 2^-3 + 2^-8, a tie at bf16 precision that the addend 2^-100
    // breaks upwards (fused) and a zero addend leaves to even.
    let bf = [
        [0x3f88, 0x3f88, 0x0d80],
        [0x3f88, 0x3f88, 0],
        [0xbf80, 0x3f80, 0],
        [0x7f80, 0, 0],
    ];
    assert_eq!(h16("fma.rn.bf16", 3, &bf)[..3], [0x3f91, 0x3f90, 0xbf80]);
    assert_eq!(h16("fma.rn.relu.bf16", 3, &bf), [0x3f91, 0x3f90, 0, 0x7fff]);
    // x2: each half on its own.
    let packed = |lo: u64, hi: u64| lo | (hi << 16);
    assert_eq!(
        r32(
            "fma.rn.f16x2",
            3,
            &[[packed(TWO, NEG_ONE), packed(TWO, ONE), packed(ONE, 0)]]
        ),
        [packed(0x4500, NEG_ONE)]
    );
    assert_eq!(
        r32(
            "fma.rn.relu.bf16x2",
            3,
            &[[packed(0x4000, 0xbf80), packed(0x3f80, 0x3f80), 0]]
        ),
        [packed(0x4000, 0)]
    );
}

#[test]
fn half_modifiers_the_isa_does_not_give_are_refused() {
    for body in [
        "add.ftz.bf16 %hq, %h0, %h1;",
        "add.sat.bf16 %hq, %h0, %h1;",
        "add.rz.f16 %hq, %h0, %h1;",
        "fma.rn.sat.relu.f16 %hq, %h0, %h1, %h2;",
        "fma.rn.sat.bf16 %hq, %h0, %h1, %h2;",
        "fma.rn.oob.f16 %hq, %h0, %h1, %h2;",
        "fma.f16 %hq, %h0, %h1, %h2;",
        "mad.rn.f16 %hq, %h0, %h1, %h2;",
        "div.rn.f16 %hq, %h0, %h1;",
        "min.xorsign.f16 %hq, %h0, %h1;",
        "min.ftz.bf16 %hq, %h0, %h1;",
        "ex2.approx.bf16 %hq, %h0;",
        "ex2.approx.ftz.f16 %hq, %h0;",
        "tanh.f16 %hq, %h0;",
        "add.relu.f32 %f3, %f0, %f1;",
        "min.relu.f32 %f3, %f0, %f1;",
        "cvt.rm.relu.f16.f32 %hq, %f0;",
        "cvt.rn.relu.f16.f64 %hq, %fd0;",
        "cvt.rn.ftz.relu.f16.f32 %hq, %f0;",
        "setp.eq.ftz.bf16 %p1, %h0, %h1;",
        "setp.eq.f16 %p1|%p2, %h0, %h1;",
    ] {
        assert!(unsupported("", body), "{body} was accepted");
    }
}

#[test]
fn half_min_max_zeros_nans_and_xorsign_abs() {
    let rows = [
        [0, NEG_ZERO, 0],
        [NEG_ZERO, 0, 0],
        [NAN, ONE, 0],
        [ONE, NAN, 0],
        [NAN, 0xfe01, 0],
        [TWO, NEG_ONE, 0],
        [0xc000, 0x4200, 0],
        [TINY, 0x8002, 0],
    ];
    assert_eq!(
        h16("min.f16", 2, &rows),
        [
            NEG_ZERO, NEG_ZERO, ONE, ONE, 0x7fff, NEG_ONE, 0xc000, 0x8002
        ]
    );
    assert_eq!(
        h16("max.f16", 2, &rows),
        [0, 0, ONE, ONE, 0x7fff, TWO, 0x4200, TINY]
    );
    assert_eq!(
        h16("max.NaN.f16", 2, &rows)[2..6],
        [0x7fff, 0x7fff, 0x7fff, TWO]
    );
    // .xorsign.abs: magnitude of the min/max of |a|, |b|; sign = sign(a) ^ sign(b).
    // min(|2|, |-1|) = 1, negative; min(|-2|, |3|) = 2, negative; max: 2 and 3, negative.
    assert_eq!(
        h16("min.xorsign.abs.f16", 2, &rows)[5..7],
        [NEG_ONE, 0xc000]
    );
    assert_eq!(h16("max.xorsign.abs.f16", 2, &rows)[5..7], [0xc000, 0xc200]);
    // A NaN result ignores .xorsign.abs; one NaN operand yields the other's magnitude.
    let xs = h16(
        "max.xorsign.abs.f16",
        2,
        &[[NAN, NEG_ONE, 0], [0xfe00, 0xfe00, 0]],
    );
    assert_eq!(xs, [NEG_ONE, 0x7fff]);
    // .ftz: subnormals compare as zeros of their sign.
    assert_eq!(h16("min.ftz.f16", 2, &rows)[7], NEG_ZERO);
    // bf16 and x2.
    assert_eq!(
        h16("min.bf16", 2, &[[0x3f80, 0xbf80, 0], [0x7fc0, 0x3f80, 0]]),
        [0xbf80, 0x3f80]
    );
    assert_eq!(h16("max.NaN.bf16", 2, &[[0x7fc1, 0x3f80, 0]]), [0x7fff]);
    assert_eq!(
        r32("max.f16x2", 2, &[[ONE | (NEG_ZERO << 16), TWO, 0]]),
        [TWO]
    );
    // f32 with .NaN and .xorsign.abs (canonical f32 NaN 0x7fffffff).
    let f = |x: f32| u64::from(x.to_bits());
    let rows32 = [
        [f(f32::NAN), f(1.0), 0],
        [f(-3.0), f(2.0), 0],
        [f(0.0), f(-0.0), 0],
    ];
    assert_eq!(
        r32("min.NaN.f32", 2, &rows32),
        [0x7fff_ffff, f(-3.0), f(-0.0)]
    );
    assert_eq!(
        r32("max.xorsign.abs.f32", 2, &rows32),
        [f(1.0), f(-3.0), f(-0.0)]
    );
    assert_eq!(
        r32("min.ftz.NaN.f32", 2, &[[1, 0x8000_0002, 0]]),
        [0x8000_0000]
    );
}

#[test]
fn half_neg_abs_ex2_tanh() {
    let rows = [[ONE, 0, 0], [NEG_ZERO, 0, 0], [TINY, 0, 0], [NAN, 0, 0]];
    let neg = h16("neg.f16", 1, &rows);
    assert_eq!(neg[..3], [NEG_ONE, 0, 0x8001]);
    assert!(is_nan16(neg[3], false));
    assert_eq!(h16("neg.ftz.f16", 1, &rows)[2], NEG_ZERO);
    assert_eq!(h16("abs.ftz.f16", 1, &[[0x8001, 0, 0]]), [0]);
    assert_eq!(h16("abs.bf16", 1, &[[0xbf80, 0, 0]]), [0x3f80]);
    assert_eq!(
        r32("neg.bf16x2", 1, &[[0x3f80 | (0xc000 << 16), 0, 0]]),
        [0xbf80 | (0x4000 << 16)]
    );
    // ex2 corner cases from the ISA's table: -inf -> +0, ±0 -> 1, +inf -> +inf, NaN -> NaN.
    let ex2 = h16(
        "ex2.approx.f16",
        1,
        &[
            [TWO, 0, 0],
            [NEG_INF, 0, 0],
            [0, 0, 0],
            [NEG_ZERO, 0, 0],
            [INF, 0, 0],
            [NAN, 0, 0],
            [0xc600, 0, 0],
        ],
    );
    assert_eq!(ex2[..5], [0x4400, 0, ONE, ONE, INF]);
    assert!(is_nan16(ex2[5], false));
    assert_eq!(ex2[6], 0x2400, "2^-6");
    // bf16 needs .ftz: a subnormal input is a zero (ex2 = 1), a subnormal result flushes.
    assert_eq!(
        h16(
            "ex2.approx.ftz.bf16",
            1,
            &[
                [0x0001, 0, 0],
                [0x8001, 0, 0],
                [0xc300, 0, 0],
                [0x4000, 0, 0]
            ]
        ),
        [0x3f80, 0x3f80, 0, 0x4080]
    );
    // tanh: -inf -> -1, -0 -> -0, +inf -> 1, NaN -> NaN; otherwise within 2^-10.987.
    let tanh = h16(
        "tanh.approx.f16",
        1,
        &[
            [NEG_INF, 0, 0],
            [NEG_ZERO, 0, 0],
            [INF, 0, 0],
            [NAN, 0, 0],
            [HALF, 0, 0],
        ],
    );
    assert_eq!(tanh[..3], [NEG_ONE, NEG_ZERO, ONE]);
    assert!(is_nan16(tanh[3], false));
    let t = half::f16::from_bits(tanh[4] as u16).to_f64();
    assert!((t - 0.5f64.tanh()).abs() <= 2f64.powf(-10.987), "{t}");
    let tb = r32("tanh.approx.bf16x2", 1, &[[0x3f00 | (0xff80 << 16), 0, 0]]);
    assert_eq!(tb[0] >> 16, 0xbf80);
    let t = half::bf16::from_bits(tb[0] as u16).to_f64();
    assert!((t - 0.5f64.tanh()).abs() <= 2f64.powi(-8), "{t}");
}

#[test]
fn half_setp_and_set() {
    let pred = |body: &str, rows: &[[u64; 3]]| -> Vec<u64> {
        let rows: Vec<[u64; 4]> = rows.iter().map(|r| [r[0], r[1], r[2], 0]).collect();
        run_rows("", &format!("{body}\n selp.u64 %out, 1, 0, %p1;"), &rows)
    };
    let rows = [[ONE, TWO, 0], [NAN, ONE, 0], [TINY, 0, 0], [NEG_ZERO, 0, 0]];
    assert_eq!(pred("setp.lt.f16 %p1, %h0, %h1;", &rows), [1, 0, 0, 0]);
    assert_eq!(pred("setp.ltu.f16 %p1, %h0, %h1;", &rows), [1, 1, 0, 0]);
    assert_eq!(pred("setp.eq.f16 %p1, %h0, %h1;", &rows), [0, 0, 0, 1]);
    assert_eq!(pred("setp.eq.ftz.f16 %p1, %h0, %h1;", &rows), [0, 0, 1, 1]);
    assert_eq!(
        pred(
            "setp.nan.bf16 %p1, %h0, %h1;",
            &[[0x7fc0, 0, 0], [0x3f80, 0, 0]]
        ),
        [1, 0]
    );
    // x2: p from the low halves, q from the high halves, each combined with c.
    let both = |body: &str, rows: &[[u64; 3]]| -> Vec<u64> {
        let rows: Vec<[u64; 4]> = rows.iter().map(|r| [r[0], r[1], r[2], 0]).collect();
        run_rows(
            "",
            &format!(
                "setp.ne.u32 %p3, %r2, 0;\n {body}\n selp.u64 %a7, 1, 0, %p1;\n selp.u64 %out, 2, 0, %p2;\n or.b64 %out, %out, %a7;"
            ),
            &rows,
        )
    };
    let a = ONE | (TWO << 16);
    let b = TWO | (ONE << 16);
    assert_eq!(both("setp.lt.f16x2 %p1|%p2, %r0, %r1;", &[[a, b, 0]]), [1]);
    assert_eq!(both("setp.gt.f16x2 %p1|%p2, %r0, %r1;", &[[a, b, 0]]), [2]);
    assert_eq!(
        both(
            "setp.lt.or.f16x2 %p1|%p2, %r0, %r1, %p3;",
            &[[a, b, 0], [a, b, 1]]
        ),
        [1, 3]
    );
    assert_eq!(
        both(
            "setp.lt.and.bf16x2 %p1|%p2, %r0, %r1, !%p3;",
            &[[0x3f80 | (0x4000 << 16), 0x4000 | (0x3f80 << 16), 0]]
        ),
        [1]
    );
    // The combining predicate may be one of the destinations: both halves read it first.
    assert_eq!(
        run_rows(
            "",
            "setp.ne.u32 %p1, %r2, 0;\n setp.lt.and.f16x2 %p1|%p2, %r0, %r1, %p1;\n selp.u64 %a7, 1, 0, %p1;\n selp.u64 %out, 2, 0, %p2;\n or.b64 %out, %out, %a7;",
            &[[ONE | (ONE << 16), TWO | (TWO << 16), 1, 0]]
        ),
        [3]
    );
    // set: 1.0 in the destination's format, all ones for integers, zero for false.
    assert_eq!(h16("set.lt.f16.f16", 2, &rows), [ONE, 0, 0, 0]);
    assert_eq!(h16("set.lt.bf16.f16", 2, &rows), [0x3f80, 0, 0, 0]);
    assert_eq!(h16("set.ge.u16.f16", 2, &rows), [0, 0, 0xffff, 0xffff]);
    assert_eq!(
        r32("set.gtu.u32.f16", 2, &[[NAN, 0, 0], [0, ONE, 0]]),
        [0xffff_ffff, 0]
    );
    assert_eq!(r32("set.lt.f16x2.f16x2", 2, &[[a, b, 0]]), [ONE]);
    assert_eq!(r32("set.lt.u32.f16x2", 2, &[[a, b, 0]]), [0xffff]);
    assert_eq!(
        r32(
            "set.gt.s32.bf16x2",
            2,
            &[[0x4000 | (0x4000 << 16), 0x3f80 | (0x3f80 << 16), 0]]
        ),
        [0xffff_ffff]
    );
    // The general set: f32 destination 1.0f, integer sources.
    assert_eq!(
        r32(
            "set.lt.f32.s32",
            2,
            &[[u64::from(-1i32 as u32), 0, 0], [0, 0, 0]]
        ),
        [0x3f80_0000, 0]
    );
    assert_eq!(
        r32("set.lo.u32.s32", 2, &[[u64::from(-1i32 as u32), 0, 0]]),
        [0]
    );
    assert_eq!(
        r32(
            "set.gt.u32.f32",
            2,
            &[[u64::from(2.0f32.to_bits()), u64::from(1.0f32.to_bits()), 0]]
        ),
        [0xffff_ffff]
    );
    assert_eq!(
        run_rows(
            "",
            "setp.ne.u32 %p1, %r2, 0;\n set.eq.xor.u32.u32 %q, %r0, %r1, !%p1;\n cvt.u64.u32 %out, %q;",
            &[[1, 1, 1, 0], [1, 1, 0, 0]]
        ),
        [0xffff_ffff, 0]
    );
    // An s16 result in a 32-bit register is sign-extended.
    assert_eq!(
        run_rows(
            ".reg .s32 %w;",
            "set.eq.s16.f16 %w, %h0, %h1;\n cvt.u64.u32 %out, %w;",
            &[[ONE, ONE, 0, 0]]
        ),
        [0xffff_ffff]
    );
}

#[test]
fn cvt_relu_satfinite_and_packing() {
    let f = |x: f32| u64::from(x.to_bits());
    let rows = [
        [f(1.5), f(-2.0), 0],
        [f(-1.0), f(f32::NAN), 0],
        [f(1e6), f(-f32::INFINITY), 0],
        [f(65520.0), f(-65519.0), 0],
        [f(1.0 + 2f32.powi(-11)), f(-(1.0 + 3.0 * 2f32.powi(-11))), 0],
    ];
    // d = {cvt(a) in the upper half, cvt(b) in the lower half}.
    let pair = |lo: u64, hi: u64| lo | (hi << 16);
    let rn = r32("cvt.rn.f16x2.f32", 2, &rows);
    assert_eq!(rn[0], pair(0xc000, 0x3e00));
    assert_eq!(rn[1] >> 16, NEG_ONE);
    assert!(is_nan16(rn[1] & 0xffff, false));
    assert_eq!(rn[2], pair(NEG_INF, INF));
    // 65520 is the tie between 65504 and 2^16: to nearest even it overflows; 65519 does not.
    assert_eq!(rn[3], pair(0xfbff, INF));
    // 1 + 2^-11 is a tie (to even: 1); -(1 + 3 * 2^-11) rounds away to -(1 + 2^-9).
    assert_eq!(rn[4], pair(0xbc02, ONE));
    let rz = r32("cvt.rz.f16x2.f32", 2, &rows);
    assert_eq!(
        rz[2],
        pair(NEG_INF, MAX),
        "toward zero, a finite value stays finite"
    );
    assert_eq!(rz[4], pair(0xbc01, ONE));
    // .satfinite: beyond the largest finite value (infinity included) is ±MAX_NORM; NaN stays.
    let sf = r32("cvt.rn.satfinite.f16x2.f32", 2, &rows);
    assert_eq!(sf[2], pair(0xfbff, MAX));
    assert_eq!(sf[3], pair(0xfbff, MAX));
    assert!(is_nan16(sf[1] & 0xffff, false));
    // .relu: negatives to +0, NaN to the canonical NaN.
    let relu = r32("cvt.rn.relu.f16x2.f32", 2, &rows);
    assert_eq!(relu[..3], [pair(0, 0x3e00), pair(0x7fff, 0), pair(0, INF)]);
    let both = r32("cvt.rn.relu.satfinite.f16x2.f32", 2, &rows);
    assert_eq!(both[2], pair(0, MAX));
    // bf16: a to the upper half; 1 + 2^-8 is a tie (to even: 1), 1 + 3 * 2^-8 rounds up.
    let bf = r32(
        "cvt.rn.bf16x2.f32",
        2,
        &[
            [f(1.0 + 2f32.powi(-8)), f(1.0 + 3.0 * 2f32.powi(-8)), 0],
            [f(f32::MAX), f(f32::MIN), 0],
        ],
    );
    assert_eq!(bf[0], pair(0x3f82, 0x3f80));
    assert_eq!(bf[1], pair(0xff80, 0x7f80));
    let bfs = r32(
        "cvt.rz.satfinite.bf16x2.f32",
        2,
        &[[f(f32::INFINITY), f(-f32::INFINITY), 0]],
    );
    assert_eq!(bfs, [pair(0xff7f, 0x7f7f)]);
    // Scalar forms.
    let one_f16 = |op: &str, x: f32| -> u64 {
        run_rows(
            "",
            &format!("{op} %hq, %f0;\n cvt.u64.u16 %out, %hq;"),
            &[[f(x), 0, 0, 0]],
        )[0]
    };
    assert_eq!(one_f16("cvt.rn.relu.f16.f32", -3.0), 0);
    assert_eq!(one_f16("cvt.rn.relu.f16.f32", f32::NAN), 0x7fff);
    assert_eq!(one_f16("cvt.rn.satfinite.f16.f32", -1e9), 0xfbff);
    assert_eq!(one_f16("cvt.rz.relu.satfinite.bf16.f32", 3.4e38), 0x7f7f);
    assert_eq!(one_f16("cvt.rn.relu.bf16.f32", -0.0), 0);
    assert_eq!(one_f16("cvt.rn.f16.f32", -0.0), NEG_ZERO);
}

#[test]
fn f32_ftz_flushes_inputs_and_results_keeping_the_sign() {
    let rows = [
        [1, 0, 0],
        // -subnormal + -0: -0 once flushed (a +0 addend would make it +0).
        [0x8000_0001, 0x8000_0000, 0],
        // 2^-126 - 2^-127 = 2^-127: a subnormal result.
        [0x0080_0000, 0x8040_0000, 0],
        [0x8080_0000, 0x0040_0000, 0],
    ];
    assert_eq!(
        r32("add.f32", 2, &rows),
        [1, 0x8000_0001, 0x0040_0000, 0x8040_0000]
    );
    assert_eq!(
        r32("add.ftz.f32", 2, &rows),
        [0, 0x8000_0000, 0x0080_0000, 0x8080_0000]
    );
    // Flushing the result: 2^-126 * 0.5.
    assert_eq!(
        r32(
            "mul.ftz.f32",
            2,
            &[[0x0080_0000, 0x3f00_0000, 0], [0x8080_0000, 0x3f00_0000, 0]]
        ),
        [0, 0x8000_0000]
    );
    assert_eq!(
        r32("mul.rz.ftz.f32", 2, &[[0x0080_0000, 0x3f00_0000, 0]]),
        [0]
    );
    assert_eq!(
        r32(
            "fma.rn.ftz.f32",
            3,
            &[[0x8000_0001, 0x3f80_0000, 0x8000_0000]]
        ),
        [0x8000_0000]
    );
}

#[test]
fn nan_to_integer_follows_the_isa() {
    // Zero, unless the source is f64 or the destination 64-bit: then 1 << (width - 1).
    let nan32 = [[u64::from(f32::NAN.to_bits()), 0, 0, 0]];
    let nan64 = [[f64::NAN.to_bits(), 0, 0, 0]];
    let run = |body: &str, rows: &[[u64; 4]]| run_rows(".reg .b64 %w;", body, rows)[0];
    assert_eq!(
        run("cvt.rzi.s32.f32 %q, %f0;\n cvt.u64.u32 %out, %q;", &nan32),
        0
    );
    assert_eq!(
        run("cvt.rni.u16.f32 %q, %f0;\n cvt.u64.u32 %out, %q;", &nan32),
        0
    );
    assert_eq!(run("cvt.rzi.s64.f32 %out, %f0;", &nan32), 1 << 63);
    assert_eq!(run("cvt.rzi.u64.f32 %out, %f0;", &nan32), 1 << 63);
    assert_eq!(
        run("cvt.rzi.s32.f64 %q, %fd0;\n cvt.u64.u32 %out, %q;", &nan64),
        0x8000_0000
    );
    assert_eq!(
        run("cvt.rzi.u8.f64 %q, %fd0;\n cvt.u64.u32 %out, %q;", &nan64),
        0x80
    );
    assert_eq!(
        run("cvt.rzi.s8.f64 %q, %fd0;\n cvt.u64.u32 %out, %q;", &nan64),
        0xffff_ff80,
        "an s8 result in a 32-bit register is sign-extended"
    );
}

#[test]
fn clocks_copysign_and_testp_on_f64() {
    let rows: Vec<[u64; 4]> = (0..4).map(|_| [0; 4]).collect();
    let timer = run_rows(
        ".reg .b64 %c<2>;",
        "mov.u64 %c0, %globaltimer;\n mov.u64 %c1, %globaltimer;\n sub.s64 %out, %c1, %c0;",
        &rows,
    );
    assert!(timer.iter().all(|&d| (d as i64) >= 0));
    let clock = run_rows(
        ".reg .b32 %c<2>;",
        "mov.u32 %c0, %clock;\n mov.u32 %c1, %clock;\n sub.u32 %q, %c1, %c0;\n cvt.u64.u32 %out, %q;",
        &rows,
    );
    assert!(clock.iter().all(|&d| d < 1 << 31));
    let f = |x: f64| x.to_bits();
    assert_eq!(
        run_rows(
            ".reg .f64 %g<3>;",
            "mov.b64 %g0, %x0;\n mov.b64 %g1, %x1;\n copysign.f64 %g2, %g0, %g1;\n mov.b64 %out, %g2;",
            &[[f(-0.0), f(3.0), 0, 0], [f(1.0), f(-2.5), 0, 0]]
        ),
        [f(-3.0), f(2.5)]
    );
    let values = [
        0.0f64,
        f64::MIN_POSITIVE / 2.0,
        1.0,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let rows: Vec<[u64; 4]> = values.iter().map(|v| [v.to_bits(), 0, 0, 0]).collect();
    let test = |t: &str| {
        run_rows(
            "",
            &format!("testp.{t}.f64 %p1, %fd0;\n selp.u64 %out, 1, 0, %p1;"),
            &rows,
        )
    };
    assert_eq!(test("subnormal"), [0, 1, 0, 0, 0]);
    assert_eq!(test("normal"), [0, 0, 1, 0, 0]);
    assert_eq!(test("finite"), [1, 1, 1, 0, 0]);
    assert_eq!(test("infinite"), [0, 0, 0, 1, 0]);
    assert_eq!(test("notanumber"), [0, 0, 0, 0, 1]);
}

/// A finite half-precision value as `k * 2^e`, with its sign (for zeros); `None` for NaN
/// and infinities.
fn exact_half(bits: u64, bf16: bool) -> Option<(i128, i32, bool)> {
    let (m, e, bias) = if bf16 { (7, 8, 127) } else { (10, 5, 15) };
    let neg = (bits >> 15) & 1 == 1;
    let field = ((bits >> m) & ((1 << e) - 1)) as i32;
    let frac = i128::from(bits & ((1 << m) - 1));
    if field == (1 << e) - 1 {
        return None;
    }
    let (mag, exp) = if field == 0 {
        (frac, 1 - bias - m)
    } else {
        (frac | (1 << m), field - bias - m)
    };
    Some((if neg { -mag } else { mag }, exp, neg))
}

/// Rounds `k * 2^e` (k ≠ 0) to nearest even in f16 or bf16, IEEE 754 style.
fn round_half_ref(k: i128, e: i32, bf16: bool) -> u64 {
    let (m, bias) = if bf16 { (7u32, 127i32) } else { (10, 15) };
    let sign = u64::from(k < 0) << 15;
    let mag = k.unsigned_abs();
    let top = e + (127 - mag.leading_zeros() as i32);
    let mut q = top.max(1 - bias) - m as i32;
    let shift = q - e;
    let mut kk = if shift <= 0 {
        mag << (-shift) as u32
    } else if shift >= 128 {
        0
    } else {
        let kk = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        kk + u128::from(rem > half || (rem == half && kk & 1 == 1))
    };
    if kk == 1 << (m + 1) {
        kk >>= 1;
        q += 1;
    }
    let exp_field_max = if bf16 { 0xff } else { 0x1f };
    if kk >= 1 << m && q + m as i32 > bias {
        return sign | (exp_field_max << m);
    }
    if kk < 1 << m {
        sign | kk as u64
    } else {
        sign | (((q + m as i32 + bias) as u64) << m) | (kk as u64 & ((1 << m) - 1))
    }
}

/// `kind` (add, sub, mul, fma) on finite half values per IEEE 754 with one rounding to nearest
/// even, `.ftz` (f16) flushing subnormal inputs and results, `.sat` clamping to [+0, 1].
fn half_ref(kind: &str, bf16: bool, ftz: bool, sat: bool, ops: [u64; 3]) -> Option<u64> {
    let flush = |b: u64| {
        let (m, e) = if bf16 { (7, 8) } else { (10, 5) };
        if ftz && (b >> m) & ((1 << e) - 1) == 0 {
            b & 0x8000
        } else {
            b
        }
    };
    let [a, b, c] = ops.map(flush);
    let (ka, ea, sa) = exact_half(a, bf16)?;
    let (kb, eb, sb) = exact_half(b, bf16)?;
    let (kc, ec, sc) = exact_half(c, bf16)?;
    // Terms `x * 2^ex` summed exactly at the smaller exponent; the sign of an exact zero sum:
    // negative only when both terms are negative zeros.
    let (x, ex, sx, y, ey, sy) = match kind {
        "add" => (ka, ea, sa, kb, eb, sb),
        "sub" => (ka, ea, sa, -kb, eb, !sb),
        "mul" => (ka * kb, ea + eb, sa != sb, 0, 0, true),
        _ => (ka * kb, ea + eb, sa != sb, kc, ec, sc),
    };
    // A zero term takes no part in the alignment (its exponent may be far below the other's).
    let e = match (x, y) {
        (0, _) => ey,
        (_, 0) => ex,
        _ => ex.min(ey),
    };
    let (x, y) = (
        if x == 0 { 0 } else { x << (ex - e) },
        if y == 0 { 0 } else { y << (ey - e) },
    );
    let sum = x + y;
    let r = if sum == 0 {
        if (x == 0 && sx) && (y == 0 && sy) {
            0x8000
        } else {
            0
        }
    } else {
        round_half_ref(sum, e, bf16)
    };
    let r = flush(r);
    Some(if !sat {
        r
    } else if r & 0x8000 != 0 {
        0
    } else if exact_half(r, bf16).is_none_or(|(k, e, _)| (k as f64) * 2f64.powi(e) >= 1.0) {
        if bf16 { 0x3f80 } else { 0x3c00 }
    } else {
        r
    })
}

/// Random finite operands (bf16 restricted to exponents within ±30, where the exact sums fit
/// the reference's integers) and edge patterns.
fn random_halves(bf16: bool, n: usize, seed: u64) -> Vec<[u64; 3]> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let edges: &[u64] = if bf16 {
        &[
            0x0000, 0x8000, 0x3f80, 0xbf80, 0x4e7f, 0x3080, 0x3f81, 0xbf81,
        ]
    } else {
        &[
            0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x8400, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
            0x3c01, 0x3bff, 0x1400, 0x0200,
        ]
    };
    let mut pick = || -> u64 {
        let r = next();
        if r % 5 == 0 {
            return edges[(r >> 8) as usize % edges.len()];
        }
        if bf16 {
            let exp = 127 - 30 + (r >> 16) % 61;
            (r & 0x807f) | (exp << 7)
        } else {
            let v = r & 0xffff;
            // Finite only: infinities and NaNs are checked by hand above.
            if v & 0x7c00 == 0x7c00 { v & 0xbfff } else { v }
        }
    };
    (0..n).map(|_| [pick(), pick(), pick()]).collect()
}

#[test]
fn half_arithmetic_matches_exact_rounding() {
    let mut checked = 0;
    for bf16 in [false, true] {
        let ty = if bf16 { "bf16" } else { "f16" };
        let rows = random_halves(bf16, 3000, if bf16 { 0x1234_5678 } else { 0x9e37_79b9 });
        for kind in ["add", "sub", "mul", "fma"] {
            let mut variants = vec![(false, false)];
            if !bf16 {
                variants.extend([(true, false), (false, true), (true, true)]);
            }
            for (ftz, sat) in variants {
                let op = format!(
                    "{kind}{}{}{}.{ty}",
                    if kind == "fma" { ".rn" } else { "" },
                    if ftz { ".ftz" } else { "" },
                    if sat { ".sat" } else { "" }
                );
                let n = if kind == "fma" { 3 } else { 2 };
                for chunk in rows.chunks(1000) {
                    let got = h16(&op, n, chunk);
                    for (row, &g) in chunk.iter().zip(&got) {
                        let want = half_ref(kind, bf16, ftz, sat, *row).unwrap();
                        assert_eq!(
                            g, want,
                            "{op} {:#06x} {:#06x} {:#06x}",
                            row[0], row[1], row[2]
                        );
                        checked += 1;
                    }
                }
                // The x2 form: two independent lanes.
                let pairs: Vec<[u64; 3]> = chunk_pairs(&rows);
                let got = r32(&op.replace(ty, &format!("{ty}x2")), n, &pairs[..1000]);
                for (i, g) in got.iter().enumerate() {
                    let lo = half_ref(kind, bf16, ftz, sat, rows[2 * i]).unwrap();
                    let hi = half_ref(kind, bf16, ftz, sat, rows[2 * i + 1]).unwrap();
                    assert_eq!(*g, lo | (hi << 16), "{op}x2 row {i}");
                }
            }
        }
    }
    assert!(checked > 40_000, "{checked}");
}

/// Consecutive rows packed two by two (first in the low half).
fn chunk_pairs(rows: &[[u64; 3]]) -> Vec<[u64; 3]> {
    rows.chunks_exact(2)
        .map(|p| [0, 1, 2].map(|j| p[0][j] | (p[1][j] << 16)))
        .collect()
}
