//! Extended-precision integer arithmetic — `add.cc`, `addc{.cc}`, `sub.cc`, `subc{.cc}`,
//! `mad{.lo,.hi}.cc`, `madc{.lo,.hi}{.cc}` on `.u32`, `.s32`, `.u64`, `.s64` — and `mad.hi`,
//! each checked against 128-bit reference arithmetic written from the PTX ISA's definitions:
//! every operation at the integer edges and on random operands, and the multi-word chains the
//! carry flag exists for (a 128-bit add and subtract from 64-bit halves, a 96-bit add from
//! three 32-bit words, a 64 × 64 → 128-bit product from 32-bit limbs).

use jitseam_emu::interp::{LaunchDims, Regions, RunOptions, run_with};
use jitseam_emu::{DecodeError, Program, decode};
use jitseam_ptx::parse_module;

const IN: u64 = 0x10_0000;
const OUT: u64 = 0x80_0000;
/// Inputs per thread (`%x0..%x7`) and results per thread (`%o0..%o3`), all `.b64`.
const INPUTS: usize = 8;
const OUTPUTS: usize = 4;

/// A kernel whose thread `i` loads row `i` of the input into `%x0..%x7` (and their low halves
/// into `%w0..%w7`), runs `body`, and stores `%o0..%o3`.
fn kernel(body: &str) -> String {
    format!(
        "
.version 8.0
.target sm_80
.address_size 64
.func (.reg .b32 r) keep(.reg .b32 a)
{{
    mov.b32 r, a;
    ret;
}}
.func (.reg .b32 r) inside(.reg .b32 a)
{{
    addc.u32 r, a, 0;
    ret;
}}
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b64 %x<8>;
    .reg .b32 %w<8>;
    .reg .b64 %o<4>;
    .reg .b32 %v<4>;
    .reg .b64 %a<8>;
    .reg .b32 %t, %u;
    ld.param.u64 %a1, [k_in];
    ld.param.u64 %a2, [k_out];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %a3, %t, 64;
    add.s64 %a4, %a1, %a3;
    ld.global.v2.u64 {{%x0, %x1}}, [%a4];
    ld.global.v2.u64 {{%x2, %x3}}, [%a4+16];
    ld.global.v2.u64 {{%x4, %x5}}, [%a4+32];
    ld.global.v2.u64 {{%x6, %x7}}, [%a4+48];
    cvt.u32.u64 %w0, %x0;
    cvt.u32.u64 %w1, %x1;
    cvt.u32.u64 %w2, %x2;
    cvt.u32.u64 %w3, %x3;
    cvt.u32.u64 %w4, %x4;
    cvt.u32.u64 %w5, %x5;
    cvt.u32.u64 %w6, %x6;
    cvt.u32.u64 %w7, %x7;
    mov.u64 %o0, 0;
    mov.u64 %o1, 0;
    mov.u64 %o2, 0;
    mov.u64 %o3, 0;
    {body}
    mul.wide.u32 %a5, %t, 32;
    add.s64 %a6, %a2, %a5;
    st.global.v2.u64 [%a6], {{%o0, %o1}};
    st.global.v2.u64 [%a6+16], {{%o2, %o3}};
}}
"
    )
}

fn program(body: &str) -> Program {
    let ptx = kernel(body);
    let module = parse_module(&ptx).unwrap();
    decode(&ptx, &module, "k").unwrap_or_else(|e| panic!("{e}\n{body}"))
}

fn decoded(body: &str) -> Result<Program, DecodeError> {
    let ptx = kernel(body);
    let module = parse_module(&ptx).unwrap();
    decode(&ptx, &module, "k")
}

/// Runs `body` with one thread per row (several lockstep groups when there are more than 64
/// rows) and returns each thread's four results, the buffer sentinel-filled first.
fn run(body: &str, rows: &[[u64; INPUTS]]) -> Vec<[u64; OUTPUTS]> {
    let program = program(body);
    let mut input: Vec<u8> = rows
        .iter()
        .flat_map(|row| row.iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let mut out = vec![0xa5u8; 8 * OUTPUTS * rows.len()];
    {
        let memory = Regions::new(vec![(IN, &mut input[..]), (OUT, &mut out[..])]);
        let mut params = IN.to_le_bytes().to_vec();
        params.extend_from_slice(&OUT.to_le_bytes());
        let dims = LaunchDims::linear(1, rows.len() as u32);
        run_with(&program, &params, dims, &memory, &RunOptions::default())
            .unwrap_or_else(|e| panic!("{e}\n{body}"));
    }
    out.chunks_exact(8 * OUTPUTS)
        .map(|c| {
            let mut r = [0u64; OUTPUTS];
            for (v, b) in r.iter_mut().zip(c.chunks_exact(8)) {
                *v = u64::from_le_bytes(b.try_into().unwrap());
            }
            r
        })
        .collect()
}

/// The integer edges of 32- and 64-bit arithmetic.
const EDGES: [u64; 12] = [
    0,
    1,
    2,
    (1 << 31) - 1,
    1 << 31,
    (1 << 31) + 1,
    (1 << 32) - 1,
    1 << 32,
    (1 << 63) - 1,
    1 << 63,
    (1 << 63) + 1,
    u64::MAX,
];

/// A deterministic generator (splitmix64), so that a failure reproduces.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An edge or a random value, about half and half.
    fn operand(&mut self) -> u64 {
        let r = self.next();
        if r & 1 == 0 {
            EDGES[(r >> 1) as usize % EDGES.len()]
        } else {
            self.next()
        }
    }
}

/// Rows of operands: every pair of edges in `x0, x1`, then random and edge values, with `x3`
/// a carry-in of 0 or 1 and the other inputs edges or random.
fn rows(random: usize, seed: u64) -> Vec<[u64; INPUTS]> {
    let mut rng = Random(seed);
    let mut rows = Vec::new();
    for (i, &a) in EDGES.iter().enumerate() {
        for (j, &b) in EDGES.iter().enumerate() {
            let c = EDGES[(i * 7 + j * 3) % EDGES.len()];
            rows.push([a, b, c, ((i + j) % 2) as u64, 0, 0, 0, 0]);
        }
    }
    for _ in 0..random {
        let mut row = [0u64; INPUTS];
        for v in &mut row {
            *v = rng.operand();
        }
        row[3] &= 1;
        rows.push(row);
    }
    rows
}

/// What one extended-precision instruction computes, per the ISA: the result and the carry
/// (borrow) out, from `a`, `b`, `c` and the carry in, on `bits` bits.
#[derive(Debug, Clone, Copy)]
enum Form {
    Add,
    Sub,
    MadLo,
    MadHi,
}

fn reference(form: Form, signed: bool, bits: u32, a: u64, b: u64, c: u64, cin: u64) -> (u64, u64) {
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (a, b, c, cin) = (a & m, b & m, c & m, u128::from(cin));
    let signed_value = |v: u64| -> i128 {
        if bits == 64 {
            i128::from(v as i64)
        } else {
            i128::from(v as u32 as i32)
        }
    };
    let (x, y) = match form {
        Form::Add | Form::Sub => (u128::from(a), u128::from(b)),
        Form::MadLo | Form::MadHi => {
            // The full 2n-bit product: of the signed values for a signed type.
            let product = if signed {
                (signed_value(a) * signed_value(b)) as u128
            } else {
                u128::from(a) * u128::from(b)
            };
            let half = match form {
                Form::MadHi => product >> bits,
                _ => product,
            };
            (half & u128::from(m), u128::from(c))
        }
    };
    match form {
        Form::Sub => {
            let taken = y + cin;
            ((x.wrapping_sub(taken) as u64) & m, u64::from(x < taken))
        }
        _ => {
            let sum = x + y + cin;
            (sum as u64 & m, (sum >> bits) as u64 & 1)
        }
    }
}

/// The registers and the carry-in setter of one type: `(operand register prefix, the type,
/// bits, signed)`.
const TYPES: [(&str, &str, u32, bool); 4] = [
    ("%w", "u32", 32, false),
    ("%w", "s32", 32, true),
    ("%x", "u64", 64, false),
    ("%x", "s64", 64, true),
];

#[test]
fn every_form_computes_the_isa_result_and_carry_at_the_edges() {
    let rows = rows(200, 1);
    for (reg, ty, bits, signed) in TYPES {
        let wide = bits == 64;
        // `%o0` the result, `%o1` the carry out (or, for a form without .cc, the carry in
        // left as it was), widened to 64 bits.
        let out = |d: &str| {
            if wide {
                format!("mov.b64 %o0, {d};")
            } else {
                format!("cvt.u64.u32 %o0, {d};")
            }
        };
        let d = if wide { "%x7" } else { "%w7" };
        let flag = if wide { "%x6" } else { "%w6" };
        let capture = if wide {
            format!("addc.{ty} {flag}, 0, 0;\n    mov.b64 %o1, {flag};")
        } else {
            format!("addc.{ty} {flag}, 0, 0;\n    cvt.u64.u32 %o1, {flag};")
        };
        // The carry flag set to `%x3` (0 or 1): `%x3 + (2^64 - 1)` carries exactly when it is 1.
        let set = "add.cc.u64 %a7, %x3, -1;";
        let (a, b, c) = (format!("{reg}0"), format!("{reg}1"), format!("{reg}2"));
        let cases: [(&str, Form, bool, bool); 14] = [
            ("add.cc", Form::Add, false, true),
            ("addc", Form::Add, true, false),
            ("addc.cc", Form::Add, true, true),
            ("sub.cc", Form::Sub, false, true),
            ("subc", Form::Sub, true, false),
            ("subc.cc", Form::Sub, true, true),
            ("mad.lo.cc", Form::MadLo, false, true),
            ("mad.hi.cc", Form::MadHi, false, true),
            ("madc.lo", Form::MadLo, true, false),
            ("madc.hi", Form::MadHi, true, false),
            ("madc.lo.cc", Form::MadLo, true, true),
            ("madc.hi.cc", Form::MadHi, true, true),
            ("mad.lo", Form::MadLo, false, false),
            ("mad.hi", Form::MadHi, false, false),
        ];
        for (op, form, reads, writes) in cases {
            let multiplies = matches!(form, Form::MadLo | Form::MadHi);
            let operands = if multiplies {
                format!("{d}, {a}, {b}, {c}")
            } else {
                format!("{d}, {a}, {b}")
            };
            let body = format!(
                "{set}\n    {op}.{ty} {operands};\n    {}\n    {capture}",
                out(d)
            );
            let got = run(&body, &rows);
            for (row, got) in rows.iter().zip(&got) {
                let cin = row[3];
                let (value, carry) = reference(
                    form,
                    signed,
                    bits,
                    row[0],
                    row[1],
                    row[2],
                    if reads { cin } else { 0 },
                );
                let flag = if writes { carry } else { cin };
                assert_eq!(
                    (got[0], got[1]),
                    (value, flag),
                    "{op}.{ty} a={:#x} b={:#x} c={:#x} cin={cin}",
                    row[0],
                    row[1],
                    row[2]
                );
            }
        }
    }
}

#[test]
fn a_128_bit_add_and_subtract_from_64_bit_halves() {
    // (x1:x0) ± (x5:x4), with the carry (the borrow) out of the top word: `addc 0, 0` gives the
    // carry, `subc 0, 0` zero less the borrow.
    let add = "
    add.cc.u64 %o0, %x0, %x4;
    addc.cc.u64 %o1, %x1, %x5;
    addc.u64 %o2, 0, 0;
    ";
    let sub = "
    sub.cc.u64 %o0, %x0, %x4;
    subc.cc.u64 %o1, %x1, %x5;
    subc.u64 %o2, 0, 0;
    ";
    let mut rows = rows(300, 2);
    for row in &mut rows {
        row[4] = row[2];
        row[5] = row[3].wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ row[1];
    }
    let sums = run(add, &rows);
    let differences = run(sub, &rows);
    for ((row, sum), difference) in rows.iter().zip(&sums).zip(&differences) {
        let a = u128::from(row[0]) | u128::from(row[1]) << 64;
        let b = u128::from(row[4]) | u128::from(row[5]) << 64;
        let (want, carry) = a.overflowing_add(b);
        assert_eq!(
            (u128::from(sum[0]) | u128::from(sum[1]) << 64, sum[2]),
            (want, u64::from(carry)),
            "{a:#x} + {b:#x}"
        );
        let (want, borrow) = a.overflowing_sub(b);
        assert_eq!(
            (
                u128::from(difference[0]) | u128::from(difference[1]) << 64,
                difference[2]
            ),
            (want, 0u64.wrapping_sub(u64::from(borrow))),
            "{a:#x} - {b:#x}"
        );
    }
}

/// `%v0..%v3` widened into the results `%o0..%o3`.
const WIDEN: &str = "
    cvt.u64.u32 %o0, %v0;
    cvt.u64.u32 %o1, %v1;
    cvt.u64.u32 %o2, %v2;
    cvt.u64.u32 %o3, %v3;
";

/// The four 32-bit words of `x`, lowest first.
fn words(x: u128) -> [u64; 4] {
    [0, 1, 2, 3].map(|k| ((x >> (32 * k)) & 0xffff_ffff) as u64)
}

#[test]
fn a_96_bit_add_from_three_32_bit_words() {
    let body = "
    add.cc.u32 %v0, %w0, %w4;
    addc.cc.u32 %v1, %w1, %w5;
    addc.cc.u32 %v2, %w2, %w6;
    addc.u32 %v3, 0, 0;
    ";
    let mut rows = rows(300, 3);
    for row in &mut rows {
        row[4] = row[3].wrapping_add(row[1]).rotate_left(17);
        row[5] = row[0] ^ row[2];
        row[6] = !row[1];
    }
    let got = run(&format!("{body}{WIDEN}"), &rows);
    let mask = |v: u64| u128::from(v & 0xffff_ffff);
    for (row, got) in rows.iter().zip(&got) {
        let a = mask(row[0]) | mask(row[1]) << 32 | mask(row[2]) << 64;
        let b = mask(row[4]) | mask(row[5]) << 32 | mask(row[6]) << 64;
        assert_eq!(*got, words(a + b), "{a:#x} + {b:#x}");
    }
}

#[test]
fn a_64_by_64_bit_product_from_32_bit_limbs() {
    // (w1:w0) · (w5:w4) = r3:r2:r1:r0, the textbook schoolbook sequence of mad.cc/madc.
    let body = "
    mul.lo.u32 %v0, %w0, %w4;
    mul.hi.u32 %v1, %w0, %w4;
    mad.lo.cc.u32 %v1, %w0, %w5, %v1;
    madc.hi.u32 %v2, %w0, %w5, 0;
    mad.lo.cc.u32 %v1, %w1, %w4, %v1;
    madc.hi.cc.u32 %v2, %w1, %w4, %v2;
    addc.u32 %v3, 0, 0;
    mad.lo.cc.u32 %v2, %w1, %w5, %v2;
    madc.hi.u32 %v3, %w1, %w5, %v3;
    ";
    let mut rows = rows(300, 4);
    for row in &mut rows {
        row[4] = row[2];
        row[5] = row[2] >> 32 ^ row[3];
        row[1] >>= 32 * (row[3] & 1);
    }
    let got = run(&format!("{body}{WIDEN}"), &rows);
    for (row, got) in rows.iter().zip(&got) {
        let a = (row[0] & 0xffff_ffff) | row[1] << 32;
        let b = (row[4] & 0xffff_ffff) | row[5] << 32;
        assert_eq!(
            *got,
            words(u128::from(a) * u128::from(b)),
            "{a:#x} * {b:#x}"
        );
    }
}

#[test]
fn the_carry_flag_is_each_threads_own_and_reads_zero_before_any_write() {
    // Threads alternate between setting the carry and clearing it; each reads its own. The
    // first `addc` of every group reads zero: the launch has several groups, and each one's
    // last instruction leaves the carry set.
    let body = "
    addc.u32 %v0, %w0, 0;
    cvt.u64.u32 %o2, %v0;
    and.b32 %u, %t, 1;
    add.cc.u32 %v1, %u, -1;
    addc.u32 %v2, 0, 0;
    cvt.u64.u32 %o0, %v2;
    add.cc.u32 %v1, 1, -1;
    ";
    let rows: Vec<[u64; INPUTS]> = (0..200).map(|i| [i, 0, 0, 0, 0, 0, 0, 0]).collect();
    let got = run(body, &rows);
    for (i, got) in got.iter().enumerate() {
        assert_eq!(got[0], (i % 2) as u64, "thread {i}'s own carry");
        assert_eq!(got[2], i as u64, "thread {i} read a carry before any write");
    }
}

#[test]
fn the_carry_flag_does_not_cross_a_call() {
    // The PTX ISA does not preserve it across calls: the emulator clears it on the way in and
    // on the way out, whatever either side set.
    let body = "
    add.cc.u32 %v0, 1, -1;
    call (%v1), keep, (%w0);
    addc.u32 %v2, 0, 0;
    cvt.u64.u32 %o0, %v2;
    add.cc.u32 %v0, 1, -1;
    call (%v3), inside, (%w0);
    cvt.u64.u32 %o1, %v3;
    add.cc.u32 %v0, 1, -1;
    addc.u32 %v2, 0, 0;
    cvt.u64.u32 %o2, %v2;
    ";
    let got = run(body, &[[7, 0, 0, 0, 0, 0, 0, 0]]);
    assert_eq!(got[0][0], 0, "no carry after the call");
    assert_eq!(got[0][1], 7, "no carry into the called function");
    assert_eq!(got[0][2], 1, "the carry itself works");
}

#[test]
fn mad_hi_runs_on_every_integer_type() {
    // `mad.hi` is refused no longer: `d = (a · b) >> n + c` on n bits, signed for .s types.
    let rows = rows(100, 5);
    for (reg, ty, bits, signed) in TYPES {
        let d = if bits == 64 { "%x7" } else { "%w7" };
        let widen = if bits == 64 {
            format!("mov.b64 %o0, {d};")
        } else {
            format!("cvt.u64.u32 %o0, {d};")
        };
        let body = format!("mad.hi.{ty} {d}, {reg}0, {reg}1, {reg}2;\n    {widen}");
        let got = run(&body, &rows);
        for (row, got) in rows.iter().zip(&got) {
            let (want, _) = reference(Form::MadHi, signed, bits, row[0], row[1], row[2], 0);
            assert_eq!(
                got[0], want,
                "mad.hi.{ty} {:#x} {:#x} {:#x}",
                row[0], row[1], row[2]
            );
        }
    }
}

#[test]
fn what_is_not_extended_precision_is_refused_saying_why() {
    for (body, invalid, reason) in [
        (
            "add.cc.u16 %v0, %v1, %v2;",
            true,
            ".u32, .s32, .u64 or .s64",
        ),
        (
            "add.cc.b32 %v0, %v1, %v2;",
            true,
            ".u32, .s32, .u64 or .s64",
        ),
        ("add.cc.sat.s32 %v0, %v1, %v2;", true, "does not take"),
        ("mad.cc.u32 %v0, %v1, %v2, %v3;", true, "needs .lo or .hi"),
        ("madc.wide.u32 %x0, %w1, %w2, %x3;", true, "does not take"),
        (
            "mul.cc.u32 %v0, %v1, %v2;",
            false,
            "this modifier on arithmetic",
        ),
        (
            "mad.s32 %v0, %v1, %v2, %v3;",
            true,
            "needs .lo, .hi or .wide",
        ),
        ("mad.hi.sat.s32 %v0, %v1, %v2, %v3;", false, "mad.hi.sat"),
    ] {
        match decoded(body) {
            Err(DecodeError::Parse(e)) if invalid => {
                assert!(e.to_string().contains(reason), "{body}: {e}")
            }
            Err(DecodeError::Unsupported {
                reason: r,
                instruction,
                ..
            }) if !invalid => {
                assert!(r.contains(reason), "{body}: {r}");
                assert_eq!(
                    instruction,
                    body.split_whitespace().next().unwrap(),
                    "{body}"
                );
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}
