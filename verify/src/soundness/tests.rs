//! The harness over every family of forms the verifier models. Each test prints what it ran
//! (`cargo test -p jitseam-verify soundness -- --nocapture`) and fails on any counterexample.

use jitseam_ptx::ScalarType::{self, *};

use super::forms::{Form, Input, edges, full};
use super::{Tally, run_forms};

const INTS: [ScalarType; 6] = [U16, S16, U32, S32, U64, S64];

fn signed(ty: ScalarType) -> bool {
    matches!(ty, S8 | S16 | S32 | S64)
}

fn bits(ty: ScalarType) -> u32 {
    ty.bytes() * 8
}

/// The bit type of the same width (`and`, `or`, `xor`, `not`, `shl` take `.b*`).
fn bit_type(ty: ScalarType) -> ScalarType {
    match ty.bytes() {
        2 => B16,
        4 => B32,
        _ => B64,
    }
}

/// Input classes for `ty`: its full range, small values (with negatives for signed types) and
/// values around the 2^31 edge where the type holds them.
fn classes(ty: ScalarType) -> Vec<(i128, i128)> {
    let (lo, hi) = full(ty);
    let mut out = vec![(lo, hi)];
    let small = if signed(ty) { (-1000, 1000) } else { (0, 1000) };
    out.push((small.0.max(lo), small.1.min(hi)));
    let edge = 1i128 << 31;
    if hi > edge + 64 {
        out.push((edge - 64, edge + 64));
    }
    out
}

fn input(name: &'static str, ty: ScalarType, class: (i128, i128)) -> Input {
    Input {
        name,
        ty,
        class,
        pointer: false,
    }
}

/// A register holding `base + offset` of the pointer param's operand, `offset` in `class`.
fn pointer(name: &'static str, class: (i128, i128)) -> Input {
    Input {
        name,
        ty: U64,
        class,
        pointer: true,
    }
}

fn report(name: &str, tally: &Tally) {
    println!(
        "soundness/{name}: {} cases, {} claims held, {} unchecked, {} violations",
        tally.cases,
        tally.held,
        tally.unchecked,
        tally.violations.len()
    );
    for v in tally.violations.iter().take(12) {
        println!("  VIOLATION {v}");
    }
}

fn assert_sound(name: &str, forms: &[Form]) -> Tally {
    let tally = run_forms(forms);
    report(name, &tally);
    assert!(
        tally.violations.is_empty(),
        "{} counterexample(s) in {name}; the first:\n{}",
        tally.violations.len(),
        tally.violations[0]
    );
    assert!(tally.held > 0, "{name}: nothing was checked");
    tally
}

/// `op.ty %d, %a, %b` and `op.ty %d, %a, IMM` for a binary integer operation.
fn binary(op: &str, ty: ScalarType, imms: &[i128]) -> Vec<Form> {
    let mut out = Vec::new();
    for class in classes(ty) {
        out.push(Form {
            regs: vec![("%a", ty), ("%b", ty), ("%d", ty)],
            inputs: vec![input("%a", ty, class), input("%b", ty, class)],
            text: format!("{op}.{} %d, %a, %b;", ty.name()),
            outputs: vec![("%d", ty)],
            branch: None,
        });
        for &imm in imms {
            if imm < full(ty).0 || imm > full(ty).1 {
                continue;
            }
            out.push(Form {
                regs: vec![("%a", ty), ("%d", ty)],
                inputs: vec![input("%a", ty, class)],
                text: format!("{op}.{} %d, %a, {imm};", ty.name()),
                outputs: vec![("%d", ty)],
                branch: None,
            });
        }
    }
    out
}

#[test]
fn integer_arithmetic() {
    let mut forms = Vec::new();
    for ty in INTS {
        let w = bits(ty) as i128;
        let consts = [0, 1, 2, 3, 7, 8, 1000, -1, -2, (1 << (w - 1)) - 1];
        for op in ["add", "sub", "mul.lo", "mul.hi", "min", "max"] {
            forms.extend(binary(op, ty, &consts));
        }
        for op in ["div", "rem"] {
            forms.extend(binary(op, ty, &[1, 2, 3, 4, 7, 8, 1000, -1, -3]));
        }
        for class in classes(ty) {
            forms.push(Form {
                regs: vec![("%a", ty), ("%b", ty), ("%c", ty), ("%d", ty)],
                inputs: vec![
                    input("%a", ty, class),
                    input("%b", ty, class),
                    input("%c", ty, class),
                ],
                text: format!("mad.lo.{} %d, %a, %b, %c;", ty.name()),
                outputs: vec![("%d", ty)],
                branch: None,
            });
            for op in ["not", "neg", "abs"] {
                if op != "not" && !signed(ty) {
                    continue;
                }
                let t = if op == "not" { bit_type(ty) } else { ty };
                forms.push(Form {
                    regs: vec![("%a", t), ("%d", t)],
                    inputs: vec![input("%a", t, class)],
                    text: format!("{op}.{} %d, %a;", t.name()),
                    outputs: vec![("%d", t)],
                    branch: None,
                });
            }
        }
    }
    assert_sound("integer_arithmetic", &forms);
}

#[test]
fn wide_multiplies() {
    let mut forms = Vec::new();
    for (ty, wide) in [(U16, U32), (S16, S32), (U32, U64), (S32, S64)] {
        for class in classes(ty) {
            forms.push(Form {
                regs: vec![("%a", ty), ("%b", ty), ("%d", wide)],
                inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                text: format!("mul.wide.{} %d, %a, %b;", ty.name()),
                outputs: vec![("%d", wide)],
                branch: None,
            });
            forms.push(Form {
                regs: vec![("%a", ty), ("%b", ty), ("%c", wide), ("%d", wide)],
                inputs: vec![
                    input("%a", ty, class),
                    input("%b", ty, class),
                    input("%c", wide, full(wide)),
                ],
                text: format!("mad.wide.{} %d, %a, %b, %c;", ty.name()),
                outputs: vec![("%d", wide)],
                branch: None,
            });
            for imm in [0, 1, 4, 8, 1000, -4] {
                if imm < full(ty).0 {
                    continue;
                }
                forms.push(Form {
                    regs: vec![("%a", ty), ("%d", wide)],
                    inputs: vec![input("%a", ty, class)],
                    text: format!("mul.wide.{} %d, %a, {imm};", ty.name()),
                    outputs: vec![("%d", wide)],
                    branch: None,
                });
            }
        }
    }
    assert_sound("wide_multiplies", &forms);
}

#[test]
fn bitwise_and_shifts() {
    let mut forms = Vec::new();
    for ty in INTS {
        let b = bit_type(ty);
        let w = bits(ty) as i128;
        let masks = [
            0xff,
            0xffff,
            0x7fff_ffff,
            0xffff_ffff,
            -4096,
            -(1 << 32),
            (1 << (w - 1)) - 1,
            1,
            3,
            -1,
            0,
            // Masks with low zero bits: the `and` is a multiple of their lowest set bit.
            124,
            0xf0,
            0x7fff_fff0,
            (1 << (w - 1)) - 8,
        ];
        for op in ["and", "or", "xor"] {
            forms.extend(binary(op, b, &masks));
        }
        for class in classes(b) {
            for (op, t) in [
                ("shl", b),
                ("shr", ty),
                ("shr", if signed(ty) { ty } else { b }),
            ] {
                let shift = (0, w + 2);
                forms.push(Form {
                    regs: vec![("%a", t), ("%s", U32), ("%d", t)],
                    inputs: vec![input("%a", t, class), input("%s", U32, shift)],
                    text: format!("{op}.{} %d, %a, %s;", t.name()),
                    outputs: vec![("%d", t)],
                    branch: None,
                });
                for k in [0, 1, 2, 3, 5, 16, 31, 32, 63, 64] {
                    if k > w {
                        continue;
                    }
                    forms.push(Form {
                        regs: vec![("%a", t), ("%d", t)],
                        inputs: vec![input("%a", t, class)],
                        text: format!("{op}.{} %d, %a, {k};", t.name()),
                        outputs: vec![("%d", t)],
                        branch: None,
                    });
                }
            }
        }
    }
    assert_sound("bitwise_and_shifts", &forms);
}

#[test]
fn conversions() {
    let all = [U8, S8, U16, S16, U32, S32, U64, S64];
    let mut forms = Vec::new();
    for dst in all {
        for src in all {
            let mut cls = vec![full(src)];
            if signed(src) {
                cls.push((-300, 300));
            }
            for class in cls {
                forms.push(Form {
                    regs: vec![("%a", src), ("%d", dst)],
                    inputs: vec![input("%a", src, class)],
                    text: format!("cvt.{}.{} %d, %a;", dst.name(), src.name()),
                    outputs: vec![("%d", dst)],
                    branch: None,
                });
            }
        }
    }
    for ty in INTS {
        for class in classes(ty) {
            forms.push(Form {
                regs: vec![("%a", ty), ("%d", ty)],
                inputs: vec![input("%a", ty, class)],
                text: format!("mov.{} %d, %a;", ty.name()),
                outputs: vec![("%d", ty)],
                branch: None,
            });
        }
    }
    assert_sound("conversions", &forms);
}

const CMPS: [&str; 10] = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];

#[test]
fn comparisons_and_the_facts_each_branch_learns() {
    let mut forms = Vec::new();
    for ty in INTS {
        for cmp in CMPS {
            for class in classes(ty) {
                forms.push(Form {
                    regs: vec![("%a", ty), ("%b", ty), ("%p", Pred)],
                    inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                    text: format!("setp.{cmp}.{} %p, %a, %b;", ty.name()),
                    outputs: vec![("%p", Pred)],
                    branch: Some("%p"),
                });
                for imm in edges(class).into_iter().take(6).chain([0, 1, 100]) {
                    if imm < full(ty).0 || imm > full(ty).1 {
                        continue;
                    }
                    forms.push(Form {
                        regs: vec![("%a", ty), ("%p", Pred)],
                        inputs: vec![input("%a", ty, class)],
                        text: format!("setp.{cmp}.{} %p, %a, {imm};", ty.name()),
                        outputs: vec![("%p", Pred)],
                        branch: Some("%p"),
                    });
                }
            }
        }
    }
    assert_sound("comparisons", &forms);
}

#[test]
fn two_destination_and_combining_comparisons() {
    let mut forms = Vec::new();
    for ty in [S32, U32, S64] {
        for cmp in ["lt", "eq", "ge", "hi"] {
            for bop in ["and", "or", "xor"] {
                for neg in ["", "!"] {
                    let class = classes(ty)[1];
                    let regs = vec![
                        ("%a", ty),
                        ("%b", ty),
                        ("%x", ty),
                        ("%y", ty),
                        ("%c", Pred),
                        ("%p", Pred),
                        ("%q", Pred),
                    ];
                    let inputs = vec![
                        input("%a", ty, class),
                        input("%b", ty, class),
                        input("%x", ty, class),
                        input("%y", ty, class),
                    ];
                    let t = ty.name();
                    // A known predicate `%c`, then `p|q` combined with it.
                    forms.push(Form {
                        regs: regs.clone(),
                        inputs: inputs.clone(),
                        text: format!(
                            "setp.lt.{t} %c, %x, %y; setp.{cmp}.{bop}.{t} %p|%q, %a, %b, {neg}%c;"
                        ),
                        outputs: vec![("%p", Pred), ("%q", Pred), ("%c", Pred)],
                        branch: Some("%q"),
                    });
                    // `p|p`: the second write is the one that stays.
                    forms.push(Form {
                        regs,
                        inputs,
                        text: format!(
                            "setp.lt.{t} %c, %x, %y; setp.{cmp}.{bop}.{t} %p|%p, %a, %b, {neg}%c;"
                        ),
                        outputs: vec![("%p", Pred)],
                        branch: Some("%p"),
                    });
                }
            }
            let class = classes(ty)[0];
            forms.push(Form {
                regs: vec![("%a", ty), ("%b", ty), ("%p", Pred), ("%q", Pred)],
                inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                text: format!("setp.{cmp}.{} %p|%q, %a, %b;", ty.name()),
                outputs: vec![("%p", Pred), ("%q", Pred)],
                branch: Some("%q"),
            });
        }
    }
    assert_sound("two_destination_comparisons", &forms);
}

#[test]
fn predicate_logic_and_selects() {
    let mut forms = Vec::new();
    let ty = S32;
    let class = (-50, 50);
    let regs = || {
        vec![
            ("%a", ty),
            ("%b", ty),
            ("%x", ty),
            ("%y", ty),
            ("%c", Pred),
            ("%e", Pred),
            ("%p", Pred),
            ("%d", ty),
        ]
    };
    let inputs = || {
        vec![
            input("%a", ty, class),
            input("%b", ty, class),
            input("%x", ty, class),
            input("%y", ty, class),
        ]
    };
    let pre = "setp.lt.s32 %c, %a, %b; setp.ge.s32 %e, %x, %y;";
    for op in [
        "and.pred %p, %c, %e;",
        "or.pred %p, %c, %e;",
        "xor.pred %p, %c, %e;",
    ] {
        forms.push(Form {
            regs: regs(),
            inputs: inputs(),
            text: format!("{pre} {op}"),
            outputs: vec![("%p", Pred)],
            branch: Some("%p"),
        });
    }
    for op in ["not.pred %p, %c;", "mov.pred %p, %c;"] {
        forms.push(Form {
            regs: regs(),
            inputs: inputs(),
            text: format!("{pre} {op}"),
            outputs: vec![("%p", Pred)],
            branch: Some("%p"),
        });
    }
    for sel in ["selp.s32 %d, %x, %y, %c;", "selp.s32 %d, %a, 7, %e;"] {
        forms.push(Form {
            regs: regs(),
            inputs: inputs(),
            text: format!("{pre} {sel}"),
            outputs: vec![("%d", ty)],
            branch: None,
        });
    }
    assert_sound("predicate_logic_and_selects", &forms);
}

#[test]
fn the_high_word_test() {
    // `(a | b) & ~0xffffffff == 0`: NVRTC's test that both halves fit 32 bits.
    let mut forms = Vec::new();
    for cmp in ["eq", "ne"] {
        for class in [(0, (1i128 << 34)), (-(1i128 << 40), 1i128 << 40), full(S64)] {
            forms.push(Form {
                regs: vec![
                    ("%a", S64),
                    ("%b", S64),
                    ("%o", B64),
                    ("%h", B64),
                    ("%p", Pred),
                ],
                inputs: vec![input("%a", S64, class), input("%b", S64, class)],
                text: format!(
                    "or.b64 %o, %a, %b; and.b64 %h, %o, -4294967296; setp.{cmp}.s64 %p, %h, 0;"
                ),
                outputs: vec![("%p", Pred)],
                branch: Some("%p"),
            });
        }
        // A 32-bit `or` read by the 64-bit `and` from its 32-bit register: the low halves of
        // the parts, zero-extended, always pass the test.
        forms.push(Form {
            regs: vec![
                ("%a", S32),
                ("%b", S32),
                ("%o", B32),
                ("%h", B64),
                ("%p", Pred),
            ],
            inputs: vec![
                input("%a", S32, (-1000, 1000)),
                input("%b", S32, (-1000, 1000)),
            ],
            text: format!(
                "or.b32 %o, %a, %b; and.b64 %h, %o, -4294967296; setp.{cmp}.s64 %p, %h, 0;"
            ),
            outputs: vec![("%p", Pred)],
            branch: Some("%p"),
        });
        // The `or` of 32-bit values, widened: the test then says nothing about the parts'
        // signs (a negative `int` zero-extended is below 2^32).
        for cvt in ["cvt.u64.u32", "cvt.s64.s32", "cvt.u64.u16"] {
            let narrow = if cvt.ends_with("u16") { U16 } else { S32 };
            let class = if narrow == U16 {
                full(U16)
            } else {
                (-1000, 1000)
            };
            let b = bit_type(narrow);
            forms.push(Form {
                regs: vec![
                    ("%a", narrow),
                    ("%b", narrow),
                    ("%o", b),
                    ("%e", B64),
                    ("%h", B64),
                    ("%p", Pred),
                ],
                inputs: vec![input("%a", narrow, class), input("%b", narrow, class)],
                text: format!(
                    "or.{} %o, %a, %b; {cvt} %e, %o; and.b64 %h, %e, -4294967296; setp.{cmp}.s64 %p, %h, 0;",
                    b.name()
                ),
                outputs: vec![("%p", Pred)],
                branch: Some("%p"),
            });
        }
    }
    // The same test at 32 bits with any mask `−2^k`: `(i − 1 | j − 1) & −32 == 0` of a 2-D
    // stencil says both are in [0, 32); parts that may be negative, wider masks, and the 32-bit
    // test read at 64 bits (or the 64-bit one at 32) must claim no more than the machine does.
    for cmp in ["eq", "ne"] {
        for ty in [S32, U32] {
            for class in [(-40, 40), (0, 1000), full(ty)] {
                for (mask, and_w, setp_w) in [
                    (-32i64, 32, 32),
                    (-1, 32, 32),
                    (-2, 32, 32),
                    (-65536, 32, 32),
                    (-2147483648, 32, 32),
                    (-32, 64, 64),
                    (-4294967296, 64, 64),
                ] {
                    let (and_b, setp_t) = (
                        if and_w == 32 { B32 } else { B64 },
                        if setp_w == 32 { S32 } else { S64 },
                    );
                    forms.push(Form {
                        regs: vec![
                            ("%a", ty),
                            ("%b", ty),
                            ("%o", B32),
                            ("%h", and_b),
                            ("%p", Pred),
                        ],
                        inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                        text: format!(
                            "add.s32 %a, %a, -1; or.b32 %o, %a, %b; and.{} %h, %o, {mask}; setp.{cmp}.{} %p, %h, 0;",
                            and_b.name(),
                            setp_t.name()
                        ),
                        outputs: vec![("%p", Pred)],
                        branch: Some("%p"),
                    });
                }
            }
        }
    }
    assert_sound("the_high_word_test", &forms);
}

#[test]
fn carries_mad_hi_and_relu() {
    let mut forms = Vec::new();
    for ty in INTS {
        for class in classes(ty) {
            forms.push(Form {
                regs: vec![("%a", ty), ("%b", ty), ("%c", ty), ("%d", ty)],
                inputs: vec![
                    input("%a", ty, class),
                    input("%b", ty, class),
                    input("%c", ty, class),
                ],
                text: format!("mad.hi.{} %d, %a, %b, %c;", ty.name()),
                outputs: vec![("%d", ty)],
                branch: None,
            });
        }
    }
    for ty in [U32, S32, U64, S64] {
        let t = ty.name();
        for class in classes(ty) {
            let regs = vec![
                ("%a", ty),
                ("%b", ty),
                ("%x", ty),
                ("%y", ty),
                ("%d", ty),
                ("%e", ty),
            ];
            let inputs = vec![
                input("%a", ty, class),
                input("%b", ty, class),
                input("%x", ty, class),
                input("%y", ty, class),
            ];
            for text in [
                format!("add.cc.{t} %d, %a, %b; addc.{t} %e, %x, %y;"),
                format!("sub.cc.{t} %d, %a, %b; subc.{t} %e, %x, %y;"),
                format!("mad.lo.cc.{t} %d, %a, %b, %x; madc.hi.{t} %e, %a, %b, %y;"),
                format!("add.cc.{t} %d, %a, %b; addc.cc.{t} %e, %x, %y; addc.{t} %d, 0, 0;"),
            ] {
                forms.push(Form {
                    regs: regs.clone(),
                    inputs: inputs.clone(),
                    text,
                    outputs: vec![("%d", ty), ("%e", ty)],
                    branch: None,
                });
            }
        }
    }
    for ty in [S16, S32] {
        for op in ["min", "max"] {
            for class in classes(ty) {
                forms.push(Form {
                    regs: vec![("%a", ty), ("%b", ty), ("%d", ty)],
                    inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                    text: format!("{op}.relu.{} %d, %a, %b;", ty.name()),
                    outputs: vec![("%d", ty)],
                    branch: None,
                });
            }
        }
    }
    assert_sound("carries_and_relu", &forms);
}

#[test]
fn pointer_arithmetic_and_widths() {
    let mut forms = Vec::new();
    for class in [(0, 4096), (-(1i128 << 40), 1i128 << 40)] {
        for (text, out_ty) in [
            ("add.s64 %d, %p, %a;", U64),
            ("add.s64 %d, %a, %p;", U64),
            ("sub.s64 %d, %p, %a;", U64),
            ("add.u64 %d, %p, 16;", U64),
            ("mov.b64 %d, %p;", U64),
            ("mov.u64 %d, %p;", U64),
            ("sub.s64 %d, %p, %q;", S64),
            // A pointer through 32 bits is its low half: no longer the operand's address.
            ("mov.u32 %r, %p;", U32),
            ("mov.b32 %r, %p;", U32),
            ("cvt.u32.u64 %r, %p;", U32),
            ("mov.u16 %s, %p;", U16),
            // Arithmetic, selects and conversions of addresses narrower than 64 bits: the low
            // part of an address, no address of the operand.
            ("add.u32 %r, %p, 0;", U32),
            ("add.s32 %r, %p, 16;", U32),
            ("sub.u32 %r, %p, 4;", U32),
            ("sub.u32 %r, %p, %q;", U32),
            ("add.u16 %s, %p, 2;", U16),
            ("selp.b32 %r, %p, %q, %c;", U32),
            ("selp.b64 %d, %p, %p, %c;", U64),
            ("selp.b64 %d, %p, %q, %c;", U64),
            ("cvta.to.global.u64 %d, %p;", U64),
            ("cvta.global.u64 %d, %p;", U64),
            // Through `.param` variables, whole and in part.
            (
                "{ .param .b64 t; st.param.b64 [t], %p; ld.param.b64 %d, [t]; }",
                U64,
            ),
            (
                "{ .param .b64 t; st.param.b64 [t], %p; ld.param.b32 %r, [t]; }",
                U32,
            ),
            (
                "{ .param .b64 t; st.param.b32 [t], %p; ld.param.b64 %d, [t]; }",
                U64,
            ),
            (
                "{ .param .b32 t; st.param.b32 [t], %p; ld.param.b32 %r, [t]; }",
                U32,
            ),
        ] {
            let out = if text.contains("%r,") {
                "%r"
            } else if text.contains("%s,") {
                "%s"
            } else {
                "%d"
            };
            forms.push(Form {
                regs: vec![
                    ("%p", U64),
                    ("%q", U64),
                    ("%a", S64),
                    ("%c", Pred),
                    ("%d", U64),
                    ("%r", U32),
                    ("%s", U16),
                ],
                inputs: vec![
                    pointer("%p", class),
                    pointer("%q", class),
                    input("%a", S64, class),
                    input("%c", Pred, (0, 1)),
                ],
                text: text.to_owned(),
                outputs: vec![(out, out_ty)],
                branch: None,
            });
        }
    }
    assert_sound("pointer_arithmetic_and_widths", &forms);
}

#[test]
fn or_of_disjoint_bits() {
    // `a | b` is taken for `a + b` when one side is a multiple of 2^k and the other in
    // [0, 2^k); the forms where the bits may overlap (5 against a multiple of 4, 3 against a
    // multiple of 6, `b & 7` against a multiple of 4) must keep whatever the `or` really is.
    let mut forms = Vec::new();
    for ty in [S32, U32, S64, U64] {
        let b = bit_type(ty);
        let t = ty.name();
        let bn = b.name();
        for class in classes(ty) {
            let mut texts = Vec::new();
            for (scale, consts) in [
                ("shl.b", [0i128, 1, 3, 15, 16, 17, -1, -16]),
                ("mul.lo.", [0, 1, 3, 4, 5, 7, -4, 100]),
            ] {
                for c in consts {
                    let m = if scale == "shl.b" {
                        format!("shl.{bn} %m, %a, 4;")
                    } else {
                        format!("mul.lo.{t} %m, %a, 100;")
                    };
                    texts.push(format!("{m} or.{bn} %d, %m, {c};"));
                    texts.push(format!("{m} or.{bn} %d, {c}, %m;"));
                }
            }
            texts.push(format!("mul.lo.{t} %m, %a, 6; or.{bn} %d, %m, 3;"));
            texts.push(format!(
                "mul.lo.{t} %m, %a, 6; add.{t} %m, %m, 2; or.{bn} %d, %m, 1;"
            ));
            for mask in [3, 7, 15] {
                texts.push(format!(
                    "shl.{bn} %m, %a, 2; and.{bn} %x, %b, {mask}; or.{bn} %d, %m, %x;"
                ));
                texts.push(format!(
                    "shl.{bn} %m, %a, 2; and.{bn} %x, %b, {mask}; or.{bn} %d, %x, %m;"
                ));
            }
            for text in texts {
                forms.push(Form {
                    regs: vec![("%a", ty), ("%b", ty), ("%m", ty), ("%x", ty), ("%d", ty)],
                    inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                    text,
                    outputs: vec![("%d", ty)],
                    branch: None,
                });
            }
        }
    }
    // An `or` of parts added to a pointer stays an address of that pointer's operand.
    for text in [
        "or.b64 %o, %a, %b; add.s64 %d, %p, %o;",
        "or.b64 %o, %a, %b; add.s64 %d, %o, %p;",
        "or.b64 %o, %a, %b; sub.s64 %d, %p, %o;",
        "shl.b64 %o, %a, 4; or.b64 %o, %o, 8; add.s64 %d, %p, %o;",
    ] {
        forms.push(Form {
            regs: vec![
                ("%p", U64),
                ("%a", S64),
                ("%b", S64),
                ("%o", B64),
                ("%d", U64),
            ],
            inputs: vec![
                pointer("%p", (0, 4096)),
                input("%a", S64, (0, 1000)),
                input("%b", S64, (0, 1000)),
            ],
            text: text.to_owned(),
            outputs: vec![("%d", U64)],
            branch: None,
        });
    }
    assert_sound("or_of_disjoint_bits", &forms);
}

/// The value of `p` with atom `a` at `point[a]` (every atom of the test has one).
fn value_at(p: &crate::poly::Poly, point: &[i128]) -> i128 {
    p.terms()
        .iter()
        .map(|(m, c)| m.atoms().iter().fold(*c, |t, &a| t * point[a as usize]))
        .sum()
}

#[test]
fn quotients_of_facts() {
    // Division by a symbol positive at every launch, or by a constant: a new fact `p ≥ 0`
    // that, with a fact true everywhere, sums to `s·X + c` (`s ≥ 1`, `c ≤ −1`) adds `X ≥ 1`,
    // and a sum `d·X + c` adds `X + floor(c / d) ≥ 0`. The store is checked at points of every
    // size: wherever the facts assumed and the definitions hold, every fact the store then
    // holds must hold. The guards are those of NVRTC's unrolled grid-stride loop
    // (`I0 + S·(J + 4k) < n` with `J = f + 1 − 4·floor((f + 1) / 4)`,
    // `f = floor((n − 1 − I0) / S)`), of its block-stride loop by a constant (`tid + 32·(J +
    // 4k) < n`), and variants whose constant leaves nothing to divide.
    use crate::atoms::{AtomKind, Atoms, I0, S, TID};
    use crate::facts::Facts;
    use crate::poly::Poly;
    let mut derived = 0;
    let mut held = 0u64;
    for stride_atom in [true, false] {
        let mut atoms = Atoms::new();
        let n = atoms.push(AtomKind::Param(0), 0, (1 << 31) - 1);
        let k = atoms.push(AtomKind::Counter, 0, 1 << 40);
        let (s, i0) = if stride_atom {
            (Poly::atom(S), Poly::atom(I0))
        } else {
            (Poly::constant(32), Poly::atom(TID))
        };
        let (np, kp) = (Poly::atom(n), Poly::atom(k));
        let num = np.add_const(-1).and_then(|x| x.sub(&i0)).unwrap();
        let (f, _) = atoms.floor(&num, &s, -(1 << 100), 1 << 100).unwrap();
        let fp = Poly::atom(f);
        let (g, _) = atoms
            .floor(
                &fp.add_const(1).unwrap(),
                &Poly::constant(4),
                -(1 << 100),
                1 << 100,
            )
            .unwrap();
        let gp = Poly::atom(g);
        // `I0 + S·(f + 1 − 4g + 4k + shift) ≤ n − 1 + slack`.
        let guard = |shift: i128, slack: i128| {
            let j = fp
                .add_const(1 + shift)
                .and_then(|x| x.sub(&gp.scale(4)?))
                .and_then(|x| x.add(&kp.scale(4)?))
                .unwrap();
            np.add_const(-1 + slack)
                .and_then(|x| x.sub(&i0))
                .and_then(|x| x.sub(&s.mul(&j)?))
                .unwrap()
        };
        for (shift, slack) in [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (0, 5), (3, 0)] {
            let p = guard(shift, slack);
            let mut facts = Facts::default();
            facts.assume(&atoms, &p, 0);
            derived += facts.ineqs.iter().filter(|x| x.p != p.tighten()).count();
            let seed = 0x5eed ^ (shift as u64) ^ ((slack as u64) << 8) ^ u64::from(stride_atom);
            let mut rng = super::forms::Rng::new(seed);
            for _ in 0..20_000 {
                let sv = if stride_atom { rng.within((1, 40)) } else { 32 };
                let i0v = rng.within((0, sv - 1));
                let nv = rng.within((i0v + 1, i0v + 400));
                let fv = (nv - 1 - i0v).div_euclid(sv);
                let gv = (fv + 1).div_euclid(4);
                let kv = rng.within((0, 30));
                let mut point = vec![0i128; atoms.next_id() as usize];
                let base = if stride_atom { I0 } else { TID };
                for (a, v) in [(S, sv), (base, i0v), (n, nv), (k, kv), (f, fv), (g, gv)] {
                    point[a as usize] = v;
                }
                if value_at(&p, &point) < 0 {
                    continue;
                }
                for fact in &facts.ineqs {
                    assert!(
                        value_at(&fact.p, &point) >= 0,
                        "from {p:?} ≥ 0 the store holds {:?} ≥ 0, false at stride {sv}, \
                         base {i0v}, n = {nv}, k = {kv}",
                        fact.p
                    );
                    held += 1;
                }
            }
        }
    }
    println!("soundness/quotients_of_facts: {derived} facts derived, {held} claims held");
    assert!(derived >= 6, "the rule derived {derived} facts");
}

#[test]
fn products_scaled_by_products() {
    // A fact `A − 1 − a ≥ 0` true everywhere scaled by a product of atoms `q` (each `≥ 0` on
    // the path), to cancel `q·a` in a goal: the mixed-radix index `(a·B + b)·C + c` of a 3-D grid below
    // `A·B·C`, and variants. Every goal the prover claims is checked at random points where the
    // facts hold; the unsafe variants (a radix past its extent, an index one past the last, a
    // scale that may be negative, a digit one past its radix) must never be claimed where they
    // are false.
    use crate::atoms::{AtomKind, Atoms};
    use crate::facts::Facts;
    use crate::poly::Poly;
    use std::cell::Cell;
    let mut atoms = Atoms::new();
    let digit = (0, 60);
    let radix = (1, 60);
    let [a, aa, b, bb, c, cc] = [digit, radix, digit, radix, digit, radix]
        .map(|(lo, hi)| atoms.push(AtomKind::Opaque, lo, hi));
    // A scale that may be negative.
    let sgn = atoms.push(AtomKind::Opaque, -60, 60);
    let p = |x: u32| Poly::atom(x);
    let mul = |x: &Poly, y: &Poly| x.mul(y).unwrap();
    let sum = |x: &Poly, y: &Poly| x.add(y).unwrap();
    let below = |x: u32, bound: u32, slack: i128| {
        p(bound).add_const(-1 + slack).unwrap().sub(&p(x)).unwrap()
    };
    // Facts true everywhere, as the launch geometry's are: each digit below its radix
    // (`slack` 1 for the variant with one digit past it).
    let store = |slack_b: i128| {
        let mut table = atoms.clone();
        for (x, bound, slack) in [(a, aa, 0), (b, bb, slack_b), (c, cc, 0)] {
            table.add_global(below(x, bound, slack));
        }
        (table, Facts::default())
    };
    let index = sum(&mul(&sum(&mul(&p(a), &p(bb)), &p(b)), &p(cc)), &p(c));
    let volume = mul(&mul(&p(aa), &p(bb)), &p(cc));
    let wide_index = sum(
        &mul(&sum(&mul(&p(a), &p(bb)), &p(b)), &p(cc)),
        &p(c).scale(2).unwrap(),
    );
    // (goal, facts' slack on b, whether it is true wherever the facts hold)
    let goals: Vec<(Poly, i128, bool)> = vec![
        // `volume − 1 − index ≥ 0`: true.
        (volume.add_const(-1).unwrap().sub(&index).unwrap(), 0, true),
        // One past the last: false.
        (volume.sub(&index).unwrap().add_const(-2).unwrap(), 0, false),
        // A digit one past its radix: false.
        (volume.add_const(-1).unwrap().sub(&index).unwrap(), 1, false),
        // The last digit at stride 2 (a radix past its extent): false.
        (
            volume.add_const(-1).unwrap().sub(&wide_index).unwrap(),
            0,
            false,
        ),
        // `B·s·(A − 1 − a) ≥ 0`: false where `s < 0`.
        (mul(&mul(&p(bb), &p(sgn)), &below(a, aa, 0)), 0, false),
        // `B·C·(A − 1 − a) ≥ 0`: true.
        (mul(&mul(&p(bb), &p(cc)), &below(a, aa, 0)), 0, true),
    ];
    let mut proven_true = 0;
    let mut held = 0u64;
    for (i, (goal, slack, _)) in goals.iter().enumerate() {
        let (table, facts) = store(*slack);
        if facts.prove(&table, goal, &Cell::new(0)).is_none() {
            continue;
        }
        let mut rng = super::forms::Rng::new(0xd1 ^ i as u64);
        for _ in 0..20_000 {
            let mut point = vec![0i128; atoms.next_id() as usize];
            for (x, bound) in [(a, aa), (b, bb), (c, cc)] {
                let r = rng.within(radix);
                point[bound as usize] = r;
                let extra = if x == b { *slack } else { 0 };
                point[x as usize] = rng.within((0, r - 1 + extra));
            }
            point[sgn as usize] = rng.within((-60, 60));
            assert!(
                value_at(goal, &point) >= 0,
                "claimed {goal:?} ≥ 0, false at {point:?}"
            );
            held += 1;
        }
        proven_true += 1;
    }
    println!(
        "soundness/products_scaled_by_products: {proven_true} goals claimed, {held} claims held"
    );
    assert!(
        proven_true >= 2,
        "only {proven_true} of the true goals were proven"
    );
}

#[test]
fn coordinates_at_their_bounds() {
    // A goal's product monomials `c·q·a` (`c < 0`, `a` a thread or block coordinate, `q ≥ 0`)
    // cancelled against the launch geometry's `B − 1 − a ≥ 0` scaled by `q`, before the
    // search: the row-major index of a 3-D grid of rows, `((ctaid.z·nctaid.y + ctaid.y)·
    // nctaid.x + ctaid.x)·n + col`, below `nctaid.z·nctaid.y·nctaid.x·n` where `col < n`, and
    // variants. Every goal the prover claims is checked at random launches where the facts
    // hold; the unsafe variants (one past the last, a row stride past `n`, a scale that may be
    // negative, a coordinate scaled by another axis' size) must never be claimed where false.
    use crate::atoms::{AtomKind, Atoms, CTAID, NCTAID, TID};
    use crate::facts::Facts;
    use crate::poly::Poly;
    use std::cell::Cell;
    let mut atoms = Atoms::new();
    atoms.add_axes();
    let [_, _, cy, gy, _, _] = atoms.axes[0];
    let [_, _, cz, gz, _, _] = atoms.axes[1];
    let (cx, gx) = (CTAID, NCTAID);
    let n = atoms.push(AtomKind::Param(0), 0, 200);
    let col = atoms.push(AtomKind::Opaque, 0, 400);
    let sgn = atoms.push(AtomKind::Opaque, -60, 60);
    let p = |x: u32| Poly::atom(x);
    let mul = |x: &Poly, y: &Poly| x.mul(y).unwrap();
    let sum = |x: &Poly, y: &Poly| x.add(y).unwrap();
    // `col ≤ n − 1` on this path, as a block-stride loop's test leaves it.
    let mut facts = Facts::default();
    facts.assume(
        &atoms,
        &p(n).add_const(-1).unwrap().sub(&p(col)).unwrap(),
        0,
    );
    let row = sum(&mul(&sum(&mul(&p(cz), &p(gy)), &p(cy)), &p(gx)), &p(cx));
    let volume = mul(&mul(&mul(&p(gx), &p(gy)), &p(gz)), &p(n));
    let at = |stride: &Poly| sum(&mul(&row, stride), &p(col));
    let last = |index: &Poly| volume.add_const(-1).unwrap().sub(index).unwrap();
    // (goal, whether it is true wherever the facts hold)
    let goals: Vec<(Poly, bool)> = vec![
        (last(&at(&p(n))), true),
        // One past the last.
        (
            volume.sub(&at(&p(n))).unwrap().add_const(-2).unwrap(),
            false,
        ),
        // Rows `n + 1` apart.
        (last(&at(&p(n).add_const(1).unwrap())), false),
        // `n·sgn·(nctaid.x − 1 − ctaid.x) ≥ 0`: false where `sgn < 0`.
        (
            mul(
                &mul(&p(n), &p(sgn)),
                &p(gx).add_const(-1).unwrap().sub(&p(cx)).unwrap(),
            ),
            false,
        ),
        // `ctaid.y·nctaid.x·n` below `nctaid.x·n`: false past the first row of blocks.
        (
            mul(&p(gx), &p(n))
                .add_const(-1)
                .unwrap()
                .sub(&mul(&mul(&p(cy), &p(gx)), &p(n)))
                .unwrap(),
            false,
        ),
    ];
    let mut claimed_true = 0;
    let mut held = 0u64;
    for (i, (goal, _)) in goals.iter().enumerate() {
        // The rewriting itself: the goal it leaves is never above the goal it was given.
        let bounded = facts.coordinates_at_bounds(&atoms, goal);
        let claimed = facts.prove(&atoms, goal, &Cell::new(0)).is_some();
        let mut rng = super::forms::Rng::new(0xc0 ^ i as u64);
        for _ in 0..20_000 {
            let mut point = vec![0i128; atoms.next_id() as usize];
            for (c, g) in [(cx, gx), (cy, gy), (cz, gz)] {
                let size = rng.within((1, 40));
                point[g as usize] = size;
                point[c as usize] = rng.within((0, size - 1));
            }
            let width = rng.within((1, 200));
            point[n as usize] = width;
            point[col as usize] = rng.within((0, width - 1));
            point[sgn as usize] = rng.within((-60, 60));
            point[TID as usize] = 0;
            if let Some(b) = &bounded {
                assert!(
                    value_at(goal, &point) >= value_at(b, &point),
                    "{goal:?} at its bounds is {b:?}, above it at {point:?}"
                );
            }
            if claimed {
                assert!(
                    value_at(goal, &point) >= 0,
                    "claimed {goal:?} ≥ 0, false at {point:?}"
                );
            }
            held += 1;
        }
        claimed_true += usize::from(claimed);
    }
    // The row-major index is proven by the rewriting alone: nothing with a coordinate in a
    // product is left, and what is left follows from `col < n` by intervals.
    let bounded = facts.coordinates_at_bounds(&atoms, &goals[0].0);
    let linear = bounded.as_ref().is_some_and(|b| {
        b.terms().iter().all(|(m, _)| {
            m.degree() < 2 || !m.atoms().iter().any(|a| [cx, cy, cz, TID].contains(a))
        })
    });
    assert!(linear, "the row index at its bounds is {bounded:?}");
    // Exactly `n − 1 − col`: each coordinate at its bound, nothing else.
    let want = p(n).add_const(-1).unwrap().sub(&p(col)).unwrap();
    assert_eq!(bounded, Some(want.clone()));

    // A tile of rows under a declared block of 8 rows (`%ntid.y` fixed at 8 on the path):
    // `(8·ctaid.y + tid.y)·n + col < 8·nctaid.y·n` leaves `n − 1 − col` only once the fixed
    // `%ntid.y` is read as 8, as intervals cannot compare `ntid.y·n` with `8·n`.
    let [ty, by, ..] = atoms.axes[0];
    let mut tile = facts.clone();
    tile.bound(by, 8, 8);
    let rows = sum(&mul(&p(cy), &Poly::constant(8)), &p(ty));
    let tiled = sum(&mul(&rows, &p(n)), &p(col));
    let extent = mul(&mul(&p(gy), &p(n)), &Poly::constant(8));
    let goal = extent.add_const(-1).unwrap().sub(&tiled).unwrap();
    let bounded = tile.coordinates_at_bounds(&atoms, &goal);
    assert_eq!(bounded, Some(want.clone()));
    assert!(tile.prove(&atoms, &goal, &Cell::new(0)).is_some());
    let mut rng = super::forms::Rng::new(0xc7);
    for _ in 0..20_000 {
        let mut point = vec![0i128; atoms.next_id() as usize];
        point[gy as usize] = rng.within((1, 40));
        point[cy as usize] = rng.within((0, point[gy as usize] - 1));
        point[by as usize] = 8;
        point[ty as usize] = rng.within((0, 7));
        let width = rng.within((1, 200));
        point[n as usize] = width;
        point[col as usize] = rng.within((0, width - 1));
        assert!(value_at(&goal, &point) >= value_at(&want, &point));
        held += 1;
    }
    println!(
        "soundness/coordinates_at_their_bounds: {claimed_true} goals claimed, {held} claims held"
    );
    assert_eq!(claimed_true, 1, "the true goal alone must be proven");
}

#[test]
fn coordinates_by_their_cofactors() {
    // A coordinate whose cofactor has terms of both signs (a stride that is a difference,
    // `n − n₀`) put at `B − 1` where the cofactor is `≤ 0` on the path, at 0 where it is
    // `≥ 0`: a concatenation's second source, `(i − n₀) + ctaid.y·(n − n₀) + ctaid.z·(n −
    // n₀)·nctaid.y` below `(n − n₀)·nctaid.y·nctaid.z` where `n₀ ≤ i < n`, and variants. Every
    // goal left is checked never to be above the goal given, and every goal claimed to hold,
    // at random launches where the path's facts hold; the unsafe variants (one past the
    // last, a stride one past the row, a difference whose sign the path does not know, the
    // cofactor's sign read the wrong way round) must never be claimed where false.
    use crate::atoms::{AtomKind, Atoms};
    use crate::facts::Facts;
    use crate::poly::Poly;
    use std::cell::Cell;
    let mut atoms = Atoms::new();
    atoms.add_axes();
    let [_, _, cy, gy, _, _] = atoms.axes[0];
    let [_, _, cz, gz, _, _] = atoms.axes[1];
    let n = atoms.push(AtomKind::Param(0), -300, 300);
    let n0 = atoms.push(AtomKind::Param(1), -300, 300);
    let i = atoms.push(AtomKind::Opaque, 0, 600);
    let p = |x: u32| Poly::atom(x);
    let mul = |x: &Poly, y: &Poly| x.mul(y).unwrap();
    let sum = |x: &Poly, y: &Poly| x.add(y).unwrap();
    let diff = |x: &Poly, y: &Poly| x.sub(y).unwrap();
    // The second source's branch: `n₀ ≤ i` and `i ≤ n − 1`.
    let mut branch = Facts::default();
    branch.assume(&atoms, &diff(&p(i), &p(n0)), 0);
    branch.assume(&atoms, &diff(&p(n).add_const(-1).unwrap(), &p(i)), 0);
    // Only `i ≤ n − 1`: `n − n₀` may be negative.
    let mut unsure = Facts::default();
    unsure.assume(&atoms, &diff(&p(n).add_const(-1).unwrap(), &p(i)), 0);
    let width = diff(&p(n), &p(n0));
    let index = |stride: &Poly| {
        let planes = mul(&mul(&p(cz), stride), &p(gy));
        sum(&sum(&diff(&p(i), &p(n0)), &mul(&p(cy), stride)), &planes)
    };
    let volume = mul(&mul(&width, &p(gy)), &p(gz));
    let last = |index: &Poly| diff(&volume.add_const(-1).unwrap(), index);
    // (facts, goal, whether it is true wherever the facts hold)
    let cases: Vec<(&Facts, Poly, bool)> = vec![
        (&branch, last(&index(&width)), true),
        // One past the last.
        (
            &branch,
            diff(&volume, &index(&width)).add_const(-2).unwrap(),
            false,
        ),
        // Rows `n − n₀ + 1` apart.
        (&branch, last(&index(&width.add_const(1).unwrap())), false),
        // `n − n₀` of no known sign: `ctaid.y·(n₀ − n) ≥ 0` is false where `n > n₀`,
        (&unsure, mul(&p(cy), &diff(&p(n0), &p(n))), false),
        // and `(nctaid.y − 1 − ctaid.y)·(n − n₀) ≥ 0` where `n < n₀`.
        (
            &unsure,
            mul(&diff(&p(gy).add_const(-1).unwrap(), &p(cy)), &width),
            false,
        ),
        // A cofactor `≥ 0` (`ctaid.y·(n − n₀) ≥ 0`): true, at 0.
        (&branch, mul(&p(cy), &width), true),
        // The same cofactor against the bound: `(n − n₀)·(nctaid.y − 1 − 2·ctaid.y) ≥ 0`
        // is false past the middle row; read as `≤ 0` it would be claimed.
        (
            &branch,
            mul(
                &width,
                &diff(
                    &p(gy).add_const(-1).unwrap(),
                    &mul(&p(cy), &Poly::constant(2)),
                ),
            ),
            false,
        ),
    ];
    let mut claimed_true = 0;
    let mut rewritten = 0;
    let mut held = 0u64;
    for (k, (facts, goal, truth)) in cases.iter().enumerate() {
        let bounded = facts.coordinates_by_cofactor(&atoms, goal);
        rewritten += usize::from(bounded.is_some());
        let claimed = facts.prove(&atoms, goal, &Cell::new(0)).is_some();
        let mut rng = super::forms::Rng::new(0xcf ^ k as u64);
        for _ in 0..20_000 {
            let mut point = vec![0i128; atoms.next_id() as usize];
            for (c, g) in [(cy, gy), (cz, gz)] {
                let size = rng.within((1, 40));
                point[g as usize] = size;
                point[c as usize] = rng.within((0, size - 1));
            }
            // `i < n` (and `n₀ ≤ i` on the branch): the facts hold at every point.
            let top = rng.within((1, 300));
            point[n as usize] = top;
            let at = rng.within((0, top - 1));
            point[i as usize] = at;
            point[n0 as usize] = if std::ptr::eq(*facts, &branch) {
                rng.within((-300, at))
            } else {
                rng.within((-300, 300))
            };
            if let Some(b) = &bounded {
                assert!(
                    value_at(goal, &point) >= value_at(b, &point),
                    "{goal:?} by its cofactors is {b:?}, above it at {point:?}"
                );
            }
            if claimed {
                assert!(
                    value_at(goal, &point) >= 0,
                    "claimed {goal:?} ≥ 0, false at {point:?}"
                );
            }
            held += 1;
        }
        assert!(
            !claimed || *truth,
            "case {k}: the false goal {goal:?} was claimed"
        );
        claimed_true += usize::from(claimed);
    }
    // The concatenation's index is left exactly `n − 1 − i`: both coordinates at `B − 1`.
    let bounded = branch.coordinates_by_cofactor(&atoms, &cases[0].1);
    assert_eq!(
        bounded,
        Some(diff(&p(n).add_const(-1).unwrap(), &p(i))),
        "the second source's index by its cofactors"
    );
    println!(
        "soundness/coordinates_by_their_cofactors: {claimed_true} goals claimed, {rewritten} \
         rewritten, {held} claims held"
    );
    assert_eq!(claimed_true, 2, "the two true goals must be proven");
}

#[test]
fn the_lone_bad_monomial() {
    // An access's bound proven by one fact and intervals, where the constant covers every
    // monomial that may take the goal below zero but the lowest: a shared histogram's bin,
    // `4·(b + 256·warp)` below 6144 bytes with `b ≤ 255` (a loaded word's low byte) and `warp ≤ 5`. Each
    // goal claimed is checked at random points where the facts hold; the unsafe variants (a
    // histogram one slot short, a bin scaled past the slot, a warp one past) must never be claimed where false.
    use crate::atoms::{AtomKind, Atoms};
    use crate::facts::Facts;
    use crate::poly::Poly;
    use std::cell::Cell;
    let mut atoms = Atoms::new();
    // `b = x − 256·q`, a loaded word's low byte as the and-mask rule writes it: its bound is
    // a fact of two atoms, which no interval of either gives.
    let x = atoms.push(AtomKind::Opaque, 0, (1 << 32) - 1);
    let q = atoms.push(AtomKind::Opaque, 0, (1 << 24) - 1);
    let warp = atoms.push(AtomKind::Opaque, 0, 5);
    let wide = atoms.push(AtomKind::Opaque, 0, 6);
    let p = |x: u32| Poly::atom(x);
    let k = Poly::constant;
    let byte = p(x).sub(&p(q).scale(256).unwrap()).unwrap();
    let mut facts = Facts::default();
    facts.assume(&atoms, &byte, 0);
    facts.assume(&atoms, &k(255).sub(&byte).unwrap(), 0);
    let offset = |scale: i128, w: u32| {
        byte.scale(scale)
            .unwrap()
            .add(&p(w).scale(1024).unwrap())
            .unwrap()
    };
    let below = |size: i128, o: &Poly| k(size - 4).sub(o).unwrap();
    // (goal, whether it holds wherever the facts do)
    let cases: Vec<(Poly, bool)> = vec![
        (below(6144, &offset(4, warp)), true),
        (below(6140, &offset(4, warp)), false),
        (below(6144, &offset(5, warp)), false),
        (below(6144, &offset(4, wide)), false),
        // `3·b` against `b ≤ 255`: divides, and holds (`765 + 5120 ≤ 6140`).
        (below(6144, &offset(3, warp)), true),
    ];
    let mut claimed_true = 0;
    let mut held = 0u64;
    for (i, (goal, truth)) in cases.iter().enumerate() {
        let claimed = facts.prove_access(&atoms, goal, &Cell::new(0)).is_some();
        assert!(
            !claimed || *truth,
            "case {i}: the false goal {goal:?} was claimed"
        );
        let mut rng = super::forms::Rng::new(0x1b ^ i as u64);
        for _ in 0..20_000 {
            let mut point = vec![0i128; atoms.next_id() as usize];
            let high = rng.within((0, (1 << 24) - 1));
            point[q as usize] = high;
            point[x as usize] = 256 * high + rng.within((0, 255));
            point[warp as usize] = rng.within((0, 5));
            point[wide as usize] = rng.within((0, 6));
            if claimed {
                assert!(
                    value_at(goal, &point) >= 0,
                    "claimed {goal:?} ≥ 0, false at {point:?}"
                );
            }
            held += 1;
        }
        claimed_true += usize::from(claimed);
    }
    // A fact of the other sign is not used: `b ≥ 0` alone cannot cancel `−3·b`.
    let mut floor_only = Facts::default();
    floor_only.assume(&atoms, &byte, 0);
    let goal = below(6144, &offset(3, warp));
    assert_eq!(floor_only.cancel_the_lone_bad(&atoms, &goal), None);
    // The bin goal needs the fact: without it the warp's interval alone does not settle it.
    assert_eq!(
        Facts::default().cancel_the_lone_bad(&atoms, &cases[0].0),
        None
    );
    assert_eq!(facts.cancel_the_lone_bad(&atoms, &cases[0].0), Some(0));
    println!("soundness/the_lone_bad_monomial: {claimed_true} goals claimed, {held} claims held");
    assert_eq!(claimed_true, 2, "the two true goals must be proven");
}

#[test]
fn param_loads_into_wider_registers() {
    // `ld.param.T %r, [p]` into a register wider than `T`: sign-extended for a signed `T`,
    // zero-extended otherwise. Each load is lowered as `load()` lowers it, under a contract
    // whose integer param is a symbol of `T`'s width, and run on the interpreter with the
    // param at the edges of its type: wherever the abstract value is exact (its polynomial at
    // the param's value, modulo the register's width), the interpreter's register must hold it.
    use crate::analyze::{Analyzer, initial_state};
    use crate::atoms::{AtomKind, Atoms};
    use crate::contract::{EntryContract, Extent, OperandRef, ParamContract};
    use crate::facts::Facts;
    use crate::lower::Lowerer;
    use crate::value::Val;
    use jitseam_emu::interp::{LaunchDims, Regions, RunOptions, run_with};
    use jitseam_ptx::resolve::ResolvedModule;
    const OUT: u64 = 0x5000_0000;
    let mut exact = 0;
    let mut held = 0u64;
    // The param's declared signedness need not be the load's: NVRTC loads an `int` with
    // `ld.param.u32`.
    for (ty, reg, declared_signed) in [S8, U8, B8, S16, U16, B16, S32, U32, B32]
        .into_iter()
        .flat_map(|t| [B16, B32, B64].map(|r| (t, r)))
        .flat_map(|(t, r)| [true, false].map(|s| (t, r, s)))
    {
        {
            if reg.bytes() <= ty.bytes() && ty.bytes() > 1 {
                continue;
            }
            let (w, rw) = (bits(ty), bits(reg));
            let text = format!(
                ".version 8.8\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 \
                 k_out, .param .{t} k_p)\n{{\n\t.reg .b64 %o;\n\t.reg .{r} %v;\n\tld.param.u64 \
                 %o, [k_out];\n\tld.param.{t} %v, [k_p];\n\tst.global.{r} [%o], %v;\n\tret;\n}}\n",
                t = ty.name(),
                r = reg.name()
            );
            let module = ResolvedModule::new(&text).unwrap();
            let entry = module.entry(&text, "k").unwrap();
            let lowered = Lowerer::new(&text, &module, &entry).lower().unwrap();
            let contract = EntryContract {
                params: vec![
                    ParamContract::Pointer {
                        operand: OperandRef::Output(0),
                        access_bytes: 1,
                        elem_bytes: 1,
                        extent: Extent::Dense,
                    },
                    ParamContract::Int {
                        signed: declared_signed,
                        bits: w as u8,
                    },
                ],
                block: None,
                dynamic_shared: None,
            };
            let mut atoms = Atoms::new();
            let range = if declared_signed {
                (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
            } else {
                (0, (1i128 << w) - 1)
            };
            let a = atoms.push(AtomKind::Param(1), range.0, range.1);
            let mut an = Analyzer::new(&lowered, &contract, atoms);
            an.param_atoms = vec![None, Some(a)];
            let mut st = initial_state(lowered.num_regs, Facts::default());
            let mut v = None;
            for (idx, ins) in lowered.insts.iter().enumerate() {
                an.exec(&mut st, idx, ins, true);
                if let crate::ir::Kind::Cvt { d, .. } | crate::ir::Kind::LdKParam { d, .. } =
                    ins.kind
                    && d == 1
                {
                    v = Some(st.get(d).clone());
                }
            }
            let Some(Val::Int { p, w: vw }) = v else {
                panic!("{text}: the loaded register holds {v:?}");
            };
            // The abstract value claims its low `vw` bits: a narrower claim than the register
            // claims nothing about the rest.
            let claimed = u32::from(vw.min(rw as u8));
            // Some other value (an opaque atom): no claim about the param's.
            if p.atoms().any(|x| x != a) {
                continue;
            }
            if claimed == rw {
                exact += 1;
            }
            let program = jitseam_emu::decode(&text, &module.module, "k").unwrap();
            let values = [range.0, range.0 + 1, -1, 0, 1, range.1 - 1, range.1];
            for value in values
                .into_iter()
                .filter(|x| (range.0..=range.1).contains(x))
            {
                let mut out = vec![0u8; 8];
                {
                    let memory = Regions::new(vec![(OUT, &mut out[..])]);
                    let mut params = OUT.to_le_bytes().to_vec();
                    params.extend_from_slice(&(value as u64).to_le_bytes()[..ty.bytes() as usize]);
                    params.resize(16, 0);
                    let dims = LaunchDims {
                        grid: [1, 1, 1],
                        block: [1, 1, 1],
                        dynamic_shared_bytes: 0,
                    };
                    run_with(&program, &params, dims, &memory, &RunOptions::default()).unwrap();
                }
                let seen = u64::from_le_bytes(out.try_into().unwrap()) as i128;
                let mask = (1i128 << claimed) - 1;
                let at = value_at(&p, &{
                    let mut point = vec![0i128; a as usize + 1];
                    point[a as usize] = value;
                    point
                });
                assert_eq!(
                    at & mask,
                    seen & mask,
                    "ld.param.{} into .{} of {value}: claimed {p:?} (low {claimed} bits), the \
                     interpreter holds {seen:#x}",
                    ty.name(),
                    reg.name()
                );
                held += 1;
            }
        }
    }
    println!("soundness/param_loads_into_wider_registers: {exact} exact, {held} claims held");
    assert!(
        exact >= 18,
        "only {exact} loads were exact at the register's width"
    );
}

#[test]
fn warp_shuffles_and_warp_size() {
    // A shuffle's destination is another lane's value: the analysis claims nothing of it (and
    // of its predicate), and the registers it reads keep what they held. The same of votes.
    let mut forms = Vec::new();
    for mode in ["bfly", "down", "up", "idx"] {
        for class in classes(S32) {
            forms.push(Form {
                regs: vec![("%a", S32), ("%d", S32), ("%e", S32), ("%p", Pred)],
                inputs: vec![input("%a", S32, class)],
                text: format!(
                    "shfl.sync.{mode}.b32 %d|%p, %a, 1, 31, -1; add.s32 %e, %a, 1; add.s32 %d, %d, 0;"
                ),
                outputs: vec![("%d", S32), ("%e", S32), ("%a", S32)],
                branch: None,
            });
        }
    }
    // A vote's mask or predicate is the warp's: nothing is claimed of it, and what it reads
    // keeps its value.
    for class in classes(S32) {
        for vote in [
            "vote.sync.ballot.b32 %d, %p, -1;",
            "vote.sync.any.pred %q, %p, -1; selp.s32 %d, 1, 0, %q;",
            "vote.sync.all.pred %q, %p, -1; selp.s32 %d, 1, 0, %q;",
            "activemask.b32 %d;",
        ] {
            forms.push(Form {
                regs: vec![
                    ("%a", S32),
                    ("%d", S32),
                    ("%e", S32),
                    ("%p", Pred),
                    ("%q", Pred),
                ],
                inputs: vec![input("%a", S32, class)],
                text: format!(
                    "setp.lt.s32 %p, %a, 0; {vote} add.s32 %e, %a, 1; add.s32 %d, %d, 0;"
                ),
                outputs: vec![("%d", S32), ("%e", S32), ("%a", S32)],
                branch: None,
            });
        }
    }
    // `warpSize` is the constant 32 to both readers.
    for class in classes(U32) {
        for text in [
            "mov.u32 %d, WARP_SZ; add.u32 %e, %a, %d;",
            "add.u32 %e, %a, WARP_SZ; mov.u32 %d, %e;",
            "rem.u32 %e, %a, WARP_SZ; div.u32 %d, %a, WARP_SZ;",
        ] {
            forms.push(Form {
                regs: vec![("%a", U32), ("%d", U32), ("%e", U32)],
                inputs: vec![input("%a", U32, class)],
                text: text.to_owned(),
                outputs: vec![("%d", U32), ("%e", U32)],
                branch: None,
            });
        }
    }
    assert_sound("warp_shuffles_and_warp_size", &forms);
}

/// `a ^ b` with both sides in `[0, 2^k)` lies in `[0, 2^k)`: operands bounded by a mask, a
/// `min`, a remainder or their own class, partners `tid ^ j` at constants `j` below and at or
/// past the bound (`j = 2^k` sets bit `k`), and sides that may be negative or reach the top
/// bit of the width (where the rule says nothing).
#[test]
fn xor_partners() {
    let mut forms = Vec::new();
    for ty in [U16, U32, S32, U64, S64] {
        let b = bit_type(ty);
        let bn = b.name();
        let t = ty.name();
        let mut cls = classes(ty);
        cls.extend([(0, 511), (0, 512), (0, 1023), (0, 1)]);
        for class in cls {
            let mut texts = vec![format!("xor.{bn} %d, %a, %b;")];
            for j in [0i128, 1, 2, 16, 255, 256, 511, 512, 1024, -1] {
                if j < full(ty).0 || j > full(ty).1 {
                    continue;
                }
                texts.push(format!("xor.{bn} %d, %a, {j};"));
                texts.push(format!("xor.{bn} %d, {j}, %a;"));
            }
            for (ma, mb) in [(511, 511), (511, 255), (300, 7), (0, 1023), (1023, 1024)] {
                texts.push(format!(
                    "and.{bn} %x, %a, {ma}; and.{bn} %y, %b, {mb}; xor.{bn} %d, %x, %y;"
                ));
            }
            texts.push(format!(
                "min.{t} %x, %a, 300; xor.{bn} %d, %x, 256; xor.{bn} %e, %d, %x;"
            ));
            texts.push(format!(
                "rem.{t} %x, %a, %b; xor.{bn} %d, %x, %b; xor.{bn} %e, %x, 512;"
            ));
            texts.push(format!(
                "shr.{t} %x, %a, 3; xor.{bn} %d, %x, %b; add.{t} %e, %d, 1;"
            ));
            for text in texts {
                forms.push(Form {
                    regs: vec![
                        ("%a", ty),
                        ("%b", ty),
                        ("%x", ty),
                        ("%y", ty),
                        ("%d", ty),
                        ("%e", ty),
                    ],
                    inputs: vec![input("%a", ty, class), input("%b", ty, class)],
                    text,
                    outputs: vec![("%d", ty), ("%e", ty)],
                    branch: None,
                });
            }
        }
    }
    assert_sound("xor_partners", &forms);
}

/// A thread's `.local` frame: its local-space address (`mov`), the generic one (`cvta.local`)
/// and back (`cvta.to.local`), offsets into it; two addresses of the same frame must differ
/// by what their offsets claim, in either space.
#[test]
fn local_frame_addresses() {
    let mut forms = Vec::new();
    for class in [(0, 64), (-(1i128 << 40), 1i128 << 40)] {
        for text in [
            "mov.u64 %d, buf; add.s64 %e, %d, %a;",
            "mov.u64 %d, buf; cvta.local.u64 %e, %d;",
            "cvta.local.u64 %d, buf; add.s64 %e, %d, 8;",
            "mov.u64 %d, buf; add.s64 %f, %d, %a; cvta.local.u64 %e, %f;",
            "cvta.local.u64 %d, buf; add.s64 %f, %d, %a; cvta.to.local.u64 %e, %f;",
            "mov.u64 %d, buf; cvta.local.u64 %f, %d; cvta.to.local.u64 %e, %f;",
            "mov.u64 %d, buf; cvta.to.local.u64 %e, %d;",
        ] {
            forms.push(Form {
                regs: vec![
                    ("%a", S64),
                    ("%d", U64),
                    ("%e", U64),
                    ("%f", U64),
                    ("%r", U32),
                ],
                inputs: vec![input("%a", S64, class)],
                text: format!("{{ .local .align 8 .b8 buf[64]; {text} }}"),
                outputs: vec![("%d", U64), ("%e", U64)],
                branch: None,
            });
        }
    }
    assert_sound("local_frame_addresses", &forms);
}

/// The arithmetic of a run-time guard, as the guard rewrite emits it: the slot `q` of a byte
/// offset `o` (`o >> K` masked below 2^61), `q·w` back, and the test `q·w = o ∧ q < limit`
/// whose branch the guarded access runs on — each value, and the facts each branch learns, must
/// hold of the concrete run, at every width, for offsets anywhere in `u64` (an address below
/// its operand's base is a huge offset) and limits up to 2^40. The offset itself comes from
/// `address − base` of one operand, the subtraction `pointer_arithmetic_and_widths` covers.
#[test]
fn the_guard_sequence() {
    const MASK: u64 = 0x5FFF_FFFF_FFFF_FFFF;
    let mut forms = Vec::new();
    for k in 0..5u32 {
        let edge = 1i128 << (61 + k).min(63);
        for offsets in [
            full(U64),
            (0, 4096),
            (edge - 64, edge + 64),
            (full(U64).1 - 4096, full(U64).1),
        ] {
            for limits in [(0, 64), (0, 1i128 << 40)] {
                forms.push(Form {
                    regs: vec![
                        ("%o", U64),
                        ("%l", U64),
                        ("%q", U64),
                        ("%m", U64),
                        ("%c", Pred),
                    ],
                    inputs: vec![input("%o", U64, offsets), input("%l", U64, limits)],
                    text: format!(
                        "shr.u64 %q, %o, {k}; and.b64 %q, %q, {MASK}; shl.b64 %m, %q, {k}; \
                         setp.eq.u64 %c, %m, %o; setp.lt.and.u64 %c, %q, %l, %c;"
                    ),
                    outputs: vec![("%q", U64), ("%m", U64), ("%c", Pred)],
                    branch: Some("%c"),
                });
                // The access's address, `base + q·w`, from the operand's base.
                forms.push(Form {
                    regs: vec![
                        ("%p", U64),
                        ("%o", U64),
                        ("%l", U64),
                        ("%q", U64),
                        ("%m", U64),
                        ("%a", U64),
                        ("%c", Pred),
                    ],
                    inputs: vec![
                        pointer("%p", (0, 0)),
                        input("%o", U64, offsets),
                        input("%l", U64, limits),
                    ],
                    text: format!(
                        "shr.u64 %q, %o, {k}; and.b64 %q, %q, {MASK}; shl.b64 %m, %q, {k}; \
                         setp.eq.u64 %c, %m, %o; setp.lt.and.u64 %c, %q, %l, %c; \
                         add.s64 %a, %p, %m;"
                    ),
                    outputs: vec![("%a", U64), ("%c", Pred)],
                    branch: Some("%c"),
                });
            }
        }
    }
    assert_sound("the_guard_sequence", &forms);
}

/// An order test of a value that may not read exactly at the test's width (a 32-bit `mad.lo`
/// of a masked block index, which wraps): the register holds some number of the test's range,
/// which the test bounds. The register's value after the test, what each branch learns of it,
/// and a widening multiply of it must hold of the concrete run — for sums that wrap and sums
/// that do not, at both signednesses, against bounds anywhere in the range.
#[test]
fn order_tests_of_wrapped_values() {
    let mut forms = Vec::new();
    for ty in [U32, S32] {
        let (wide, word) = if ty == U32 {
            (U64, "u32")
        } else {
            (S64, "s32")
        };
        for cmp in ["lt", "le", "gt", "ge"] {
            for a in [(0, (1i128 << 24) - 1), (0, 1000)] {
                for n in [full(ty), (0, 1 << 20), (full(ty).1 - 1000, full(ty).1)] {
                    forms.push(Form {
                        regs: vec![
                            ("%a", ty),
                            ("%b", ty),
                            ("%c", ty),
                            ("%n", ty),
                            ("%r", ty),
                            ("%d", wide),
                            ("%p", Pred),
                        ],
                        inputs: vec![
                            input("%a", ty, a),
                            input("%b", ty, (1, 1024)),
                            input("%c", ty, (0, 1023)),
                            input("%n", ty, n),
                        ],
                        text: format!(
                            "mad.lo.s32 %r, %b, %a, %c; setp.{cmp}.{word} %p, %r, %n; \
                             mul.wide.{word} %d, %r, 16;"
                        ),
                        outputs: vec![("%r", ty), ("%d", wide), ("%p", Pred)],
                        branch: Some("%p"),
                    });
                }
            }
        }
    }
    assert_sound("order_tests_of_wrapped_values", &forms);
}

/// The launch facts a contract with declared extents may assume under a geometry condition:
/// `limit − p ≥ 0` for each of [`crate::declared::thread_products`] under `ThreadsAtMost`,
/// for [`crate::declared::blocks`] under `BlocksAtMost`, and for every axis's threads under
/// each `AxisThreadsAtMost` the verifier asks for. Each fact must hold at every launch the
/// condition admits: random geometries (blocks of at most 1024 threads, grids log-uniform
/// within the device's largest), many near the limit. A condition with a limit twice too
/// weak for its facts must be caught admitting a launch where one fails.
#[test]
fn launch_geometry_products() {
    use crate::LaunchCondition;
    use crate::atoms::{Atoms, NCTAID, NTID, S};
    use crate::declared::{axis_threads, blocks, thread_products};
    use crate::poly::Poly;
    let mut atoms = Atoms::new();
    atoms.add_axes();
    // (the condition, its facts' products, the bound the facts put on each)
    let mut conditions: Vec<(LaunchCondition, Vec<Poly>, u64)> = Vec::new();
    // The conditions are made as `attempt` makes them, from the limits its facts use.
    let (_, limit) = crate::THREADS;
    conditions.push((
        LaunchCondition::ThreadsAtMost { limit },
        thread_products(&atoms),
        limit,
    ));
    let (_, limit) = crate::BLOCKS;
    conditions.push((
        LaunchCondition::BlocksAtMost { limit },
        blocks(&atoms).into_iter().collect(),
        limit,
    ));
    for (_, limit, axes) in crate::DECLARED_CONDITIONS {
        if axes {
            let threads = axis_threads(&atoms).into_iter().map(|(_, s)| Poly::atom(s));
            conditions.push((
                LaunchCondition::AxisThreadsAtMost { limit },
                threads.collect(),
                limit,
            ));
        }
    }
    let mut rng = super::forms::Rng::new(0x7d);
    // Log-uniform in `1..=hi`: as many small launches as launches near any limit.
    let mut draw = |hi: u32| {
        let bits = rng.within((0, i128::from(32 - hi.leading_zeros())));
        let top = ((1i128 << bits) - 1).clamp(1, i128::from(hi));
        rng.within((1, top)) as u32
    };
    let mut geometries = Vec::new();
    while geometries.len() < 60_000 {
        let block = [draw(1024), draw(1024), draw(64)];
        if block.iter().map(|&b| u64::from(b)).product::<u64>() > 1024 {
            continue;
        }
        let grid = [
            draw(crate::MAX_GRID[0]),
            draw(crate::MAX_GRID[1]),
            draw(crate::MAX_GRID[2]),
        ];
        geometries.push((grid, block));
    }
    // The edges: at each limit and one past it.
    for (_, _, bound) in &conditions {
        let b = u32::try_from(*bound).unwrap_or(u32::MAX);
        geometries.push(([b / 1024, 1, 1], [1024, 1, 1]));
        geometries.push(([b / 1024 + 1, 1, 1], [1024, 1, 1]));
        geometries.push(([b, 1, 1], [1, 1, 1]));
    }
    geometries.push(([1, 1 << 15, 1 << 15], [2, 1, 1]));
    geometries.push(([1, 65535, 32769], [1, 1, 1]));
    let point = |grid: [u32; 3], block: [u32; 3]| {
        let mut point = vec![0i128; atoms.next_id() as usize];
        let groups = [(NTID, NCTAID, S)]
            .into_iter()
            .chain(atoms.axes.iter().map(|a| (a[1], a[3], a[5])));
        for (axis, (b, g, s)) in groups.enumerate() {
            point[b as usize] = i128::from(block[axis]);
            point[g as usize] = i128::from(grid[axis]);
            point[s as usize] = i128::from(grid[axis]) * i128::from(block[axis]);
        }
        point
    };
    // (launches the condition admits, of those with a product above half the bound,
    // launches where a product passes the bound)
    let tally = |condition: LaunchCondition, products: &[Poly], bound: u64| {
        let (mut admitted, mut tight, mut violations) = (0u64, 0u64, 0u64);
        for &(grid, block) in &geometries {
            if !condition.holds_custom(grid, block, 0, 0) {
                continue;
            }
            admitted += 1;
            let at = point(grid, block);
            let top = products.iter().map(|p| value_at(p, &at)).max().unwrap_or(0);
            tight += u64::from(top > i128::from(bound / 2));
            violations += u64::from(top > i128::from(bound));
        }
        (admitted, tight, violations)
    };
    let mut held = 0;
    for (condition, products, bound) in &conditions {
        assert!(!products.is_empty(), "{condition:?} assumes no fact");
        let (admitted, tight, violations) = tally(*condition, products, *bound);
        assert_eq!(
            violations, 0,
            "{condition:?} admits a launch one of its facts fails at"
        );
        assert!(
            tight > 0,
            "{condition:?}: no admitted launch near its bound ({admitted} admitted)"
        );
        held += admitted;
        // A limit twice too weak for the facts the proof assumes: the harness must see it.
        let weak = 2 * bound + 1;
        let weak = match *condition {
            LaunchCondition::ThreadsAtMost { .. } => LaunchCondition::ThreadsAtMost { limit: weak },
            LaunchCondition::BlocksAtMost { .. } => LaunchCondition::BlocksAtMost { limit: weak },
            _ => LaunchCondition::AxisThreadsAtMost { limit: weak },
        };
        let (_, _, caught) = tally(weak, products, *bound);
        assert!(
            caught > 0,
            "{weak:?} against the facts of {condition:?} was not caught"
        );
    }
    println!(
        "soundness/launch_geometry_products: {} conditions, {held} launches held",
        conditions.len()
    );
}

/// Order tests against bits that may have wrapped one way only: a product of sizes `≥ 0`
/// read as a 32-bit number (`z < ne02 · ne03`, llama.cpp's `pad`), which can only wrap down,
/// and a difference `a − b ≤ 1000` read unsigned, which can only wrap up. What each branch
/// learns of the exact numbers (the bits at most the first, at least the second) must hold of
/// the concrete run, for every order, either side of the test, both signednesses.
#[test]
fn one_sided_wraps_of_a_bound() {
    let mut forms = Vec::new();
    let wide = (0, (1i128 << 31) - 1);
    for (make, a, b) in [
        ("mul.lo.s32 %r, %a, %b;", wide, wide),
        ("mul.lo.s32 %r, %a, %b;", (0, 1 << 20), (1000, 70_000)),
        ("add.s32 %r, %a, %b;", wide, wide),
        ("sub.s32 %r, %a, %b;", (0, 1000), wide),
    ] {
        for word in ["u32", "s32"] {
            let ty = if word == "u32" { U32 } else { S32 };
            for cmp in ["lt", "le", "gt", "ge"] {
                for z in [full(ty), (0, 1000)] {
                    for test in ["%p, %z, %r", "%p, %r, %z", "%p, %r, 1000", "%p, 1000, %r"] {
                        forms.push(Form {
                            regs: vec![
                                ("%a", S32),
                                ("%b", S32),
                                ("%z", ty),
                                ("%r", S32),
                                ("%p", Pred),
                            ],
                            inputs: vec![
                                input("%a", S32, a),
                                input("%b", S32, b),
                                input("%z", ty, z),
                            ],
                            text: format!("{make} setp.{cmp}.{word} {test};"),
                            outputs: vec![("%r", S32), ("%p", Pred)],
                            branch: Some("%p"),
                        });
                    }
                }
            }
        }
    }
    assert_sound("one_sided_wraps_of_a_bound", &forms);
}
