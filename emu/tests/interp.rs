//! The body parser, the decoder and the interpreter on the NVRTC fixtures and on hand-written
//! PTX: results, refusals and memory faults.

use jitseam_emu::interp::{Access, ExecError, FaultKind, LaunchDims, Regions, run};
use jitseam_emu::{DecodeError, decode};
use jitseam_ptx::body::{Operand, Statement, parse_body};
use jitseam_ptx::parse_module;

const FIXTURES: &[(&str, &str)] = &[
    (
        "add_bf16_scalar",
        include_str!("../../tests/fixtures/add_bf16_scalar.ptx"),
    ),
    (
        "add_f16_co_v8",
        include_str!("../../tests/fixtures/add_f16_co_v8.ptx"),
    ),
    (
        "add_f16_scalar",
        include_str!("../../tests/fixtures/add_f16_scalar.ptx"),
    ),
    (
        "add_f32_co_v2",
        include_str!("../../tests/fixtures/add_f32_co_v2.ptx"),
    ),
    (
        "add_f32_co_v4",
        include_str!("../../tests/fixtures/add_f32_co_v4.ptx"),
    ),
    (
        "add_f32_scalar",
        include_str!("../../tests/fixtures/add_f32_scalar.ptx"),
    ),
    (
        "add_f32_strided_r1",
        include_str!("../../tests/fixtures/add_f32_strided_r1.ptx"),
    ),
    (
        "add_f32_strided_r2",
        include_str!("../../tests/fixtures/add_f32_strided_r2.ptx"),
    ),
    (
        "add_f32_strided_r3",
        include_str!("../../tests/fixtures/add_f32_strided_r3.ptx"),
    ),
    (
        "add_f64_co_v2",
        include_str!("../../tests/fixtures/add_f64_co_v2.ptx"),
    ),
    (
        "add_scalar_mul_scalar_f32_scalar",
        include_str!("../../tests/fixtures/add_scalar_mul_scalar_f32_scalar.ptx"),
    ),
    (
        "add_sub_f32_mo2_scalar",
        include_str!("../../tests/fixtures/add_sub_f32_mo2_scalar.ptx"),
    ),
    (
        "axpb_f64_scalar",
        include_str!("../../tests/fixtures/axpb_f64_scalar.ptx"),
    ),
    (
        "mul_f64_scalar",
        include_str!("../../tests/fixtures/mul_f64_scalar.ptx"),
    ),
    (
        "mul_scalar_f64_strided_r2",
        include_str!("../../tests/fixtures/mul_scalar_f64_strided_r2.ptx"),
    ),
    (
        "relu_f32_scalar",
        include_str!("../../tests/fixtures/relu_f32_scalar.ptx"),
    ),
    (
        "silu_f32_scalar",
        include_str!("../../tests/fixtures/silu_f32_scalar.ptx"),
    ),
    (
        "two_entries",
        include_str!("../../tests/fixtures/two_entries.ptx"),
    ),
];

fn fixture(name: &str) -> &'static str {
    FIXTURES.iter().find(|(n, _)| *n == name).unwrap().1
}

/// Allocations at 0x1000-spaced, 256-aligned bases.
struct Mem {
    allocs: Vec<(u64, Vec<u8>)>,
}

impl Mem {
    fn new() -> Self {
        Self { allocs: Vec::new() }
    }
    fn alloc(&mut self, bytes: Vec<u8>) -> u64 {
        let base = 0x10_0000 + 0x10_0000 * self.allocs.len() as u64;
        self.allocs.push((base, bytes));
        base
    }
    fn regions(&mut self) -> Regions<'_> {
        Regions::new(
            self.allocs
                .iter_mut()
                .map(|(b, v)| (*b, v.as_mut_slice()))
                .collect(),
        )
    }
    fn f32s(&self, base: u64) -> Vec<f32> {
        let (_, v) = self.allocs.iter().find(|(b, _)| *b == base).unwrap();
        v.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

fn f32_bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn packet(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn program(file: &str, entry: &str) -> jitseam_emu::Program {
    let src = fixture(file);
    let module = parse_module(src).unwrap();
    decode(src, &module, entry).unwrap()
}

#[test]
fn every_fixture_entry_decodes() {
    for (name, src) in FIXTURES {
        let module = parse_module(src).unwrap();
        for entry in module.entry_names() {
            let p = decode(src, &module, entry).unwrap_or_else(|e| panic!("{name}/{entry}: {e}"));
            assert!(!p.is_empty());
        }
    }
}

fn run_add_f32(n: usize, dims: LaunchDims) -> Vec<f32> {
    let p = program("add_f32_scalar", "baracuda_gen_add_f32_scalar");
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let mut mem = Mem::new();
    let pa = mem.alloc(f32_bytes(&a));
    let pb = mem.alloc(f32_bytes(&b));
    let po = mem.alloc(f32_bytes(&vec![f32::NAN; n]));
    run(
        &p,
        &packet(&[pa, pb, po, n as u64]),
        dims,
        &mut mem.regions(),
    )
    .unwrap();
    mem.f32s(po)
}

#[test]
fn scalar_add_matches_for_several_geometries() {
    for (n, grid, block) in [
        (1000, 4, 256),
        (1000, 1, 1),
        (1000, 3, 7),
        (17, 100, 32),
        (0, 1, 1),
    ] {
        let out = run_add_f32(n, LaunchDims::linear(grid, block));
        for (i, v) in out.iter().enumerate() {
            assert_eq!(*v, 1.5 * i as f32, "n={n} grid={grid} block={block} i={i}");
        }
    }
}

#[test]
fn out_of_bounds_store_is_a_fault_and_nothing_after_it_is_written() {
    let p = program("add_f32_scalar", "baracuda_gen_add_f32_scalar");
    let mut mem = Mem::new();
    let pa = mem.alloc(f32_bytes(&[1.0; 16]));
    let pb = mem.alloc(f32_bytes(&[2.0; 16]));
    let po = mem.alloc(f32_bytes(&[0.0; 8]));
    // n = 16 but the output holds 8: the thread for element 8 must fault on its store.
    let err = run(
        &p,
        &packet(&[pa, pb, po, 16]),
        LaunchDims::linear(1, 32),
        &mut mem.regions(),
    )
    .unwrap_err();
    let ExecError::Fault(fault) = err else {
        panic!("{err:?}")
    };
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.access, Access::Store);
    assert_eq!(fault.address, po + 32);
    assert_eq!(fault.thread, [8, 0, 0]);
    assert_eq!(fault.nearest.unwrap().base, po);
    assert!(
        fault.instruction.starts_with("st.global.f32"),
        "{}",
        fault.instruction
    );
    assert!(fault.line > 0);
    assert_eq!(mem.f32s(po), vec![3.0; 8]);
}

#[test]
fn float4_access_at_a_4_byte_offset_is_misaligned() {
    let p = program("add_f32_co_v4", "baracuda_gen_add_f32_co_v4");
    let mut mem = Mem::new();
    let pa = mem.alloc(f32_bytes(&[1.0; 12]));
    let pb = mem.alloc(f32_bytes(&[2.0; 8]));
    let po = mem.alloc(f32_bytes(&[0.0; 8]));
    let err = run(
        &p,
        &packet(&[pa + 4, pb, po, 2]),
        LaunchDims::linear(1, 2),
        &mut mem.regions(),
    )
    .unwrap_err();
    let ExecError::Fault(fault) = err else {
        panic!("{err:?}")
    };
    assert_eq!(fault.kind, FaultKind::Misaligned);
    assert_eq!(fault.size, 16);
    assert_eq!(fault.address, pa + 4);
    assert!(
        fault.to_string().contains("misaligned 16-byte load"),
        "{fault}"
    );
}

#[test]
fn short_packet_is_refused() {
    let p = program("add_f32_scalar", "baracuda_gen_add_f32_scalar");
    let mut mem = Mem::new();
    let err = run(
        &p,
        &packet(&[0, 0, 0]),
        LaunchDims::linear(1, 1),
        &mut mem.regions(),
    );
    assert!(matches!(
        err,
        Err(ExecError::ShortPacket {
            needed: 32,
            found: 24,
            ..
        })
    ));
}

#[test]
fn calls_with_param_passing_work() {
    let p = program("two_entries", "baracuda_gen_neg_f32_scalar");
    let q = program("two_entries", "baracuda_gen_abs_f32_scalar");
    let xs: Vec<f32> = (0..37).map(|i| i as f32 - 18.5).collect();
    for (prog, f) in [(p, (|x: f32| -x) as fn(f32) -> f32), (q, f32::abs)] {
        let mut mem = Mem::new();
        let px = mem.alloc(f32_bytes(&xs));
        let po = mem.alloc(f32_bytes(&[f32::NAN; 37]));
        run(
            &prog,
            &packet(&[px, po, 37]),
            LaunchDims::linear(2, 8),
            &mut mem.regions(),
        )
        .unwrap();
        let want: Vec<f32> = xs.iter().map(|&x| f(x)).collect();
        assert_eq!(mem.f32s(po), want);
    }
}

const HEADER: &str = ".version 8.8\n.target sm_80\n.address_size 64\n";

fn decode_text(body: &str) -> Result<jitseam_emu::Program, DecodeError> {
    let src = format!("{HEADER}.visible .entry k(.param .u64 p)\n{{\n{body}\n}}\n");
    let module = parse_module(&src).unwrap();
    decode(&src, &module, "k")
}

#[test]
fn unsupported_instructions_are_refused_with_their_line() {
    for (body, what) in [
        (".shared .align 4 .b8 smem[];", "smem"),
        (
            ".reg .b32 %r<2>;\nshfl.up.b32 %r1, %r0, 1, 0;",
            "shfl.up.b32",
        ),
        (
            ".reg .pred %p<2>;\nvote.all.pred %p1, %p0;",
            "vote.all.pred",
        ),
        (
            ".reg .b32 %r<2>;\nbarrier.cluster.arrive;",
            "barrier.cluster.arrive",
        ),
        (
            ".reg .f32 %f<2>;\nredux.sync.min.f32 %f1, %f0, -1;",
            "redux.sync.min.f32",
        ),
    ] {
        match decode_text(body) {
            Err(DecodeError::Unsupported {
                entry,
                instruction,
                line,
                ..
            }) => {
                assert_eq!(entry, "k");
                assert_eq!(instruction, what);
                assert!(line >= 6, "{line}");
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn malformed_bodies_are_parse_errors() {
    for body in [
        "mov.u32 %r1, 1;",
        ".reg .b32 %r<2>;\nbra NOWHERE;",
        ".reg .b32 %r<2>;\nadd.u32 %r1, %r0;",
        ".reg .b32 %r<2>;\nadd.u32 %r1 %r0, 1;",
        ".reg .b32 %r<2>;\nL: ret;\nL: ret;",
    ] {
        assert!(
            matches!(decode_text(body), Err(DecodeError::Parse(_))),
            "{body}: {:?}",
            decode_text(body)
        );
    }
}

#[test]
fn body_parser_reads_every_operand_form() {
    let src = "{ .reg .f32 %f<5>; { .reg .b16 c; mov.b16 c, 0x3f80U; }\n\
               @!%p1 bra $L__BB0_2; ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+-16];\n\
               setp.lt.s64 %p|%q, %rd1, -4294967296; mov.f32 %f1, 0f3F800000;\n\
               mov.u32 %r1, %ctaid.x; call.uni (retval0), f, (param0, param1); $L__BB0_2: }";
    let stmts = parse_body(src, 1..src.len() - 1).unwrap();
    let instrs: Vec<_> = stmts
        .iter()
        .filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
        .collect();
    assert!(matches!(&stmts[0], Statement::Reg { names, .. } if names[0].count == Some(5)));
    assert_eq!(instrs[0].operands[1], Operand::Int(0x3f80));
    assert!(instrs[1].guard.unwrap().negated);
    assert_eq!(
        instrs[2].operands[1],
        Operand::Address {
            base: Some("%rd1"),
            offset: -16
        }
    );
    assert!(matches!(&instrs[2].operands[0], Operand::Vector(v) if v.len() == 4));
    assert_eq!(instrs[3].operands[0], Operand::PredPair("%p", "%q"));
    assert_eq!(instrs[3].operands[2], Operand::Int((-4294967296i64) as u64));
    assert_eq!(instrs[5].operands[1], Operand::Special("%ctaid", 0));
    assert!(matches!(&instrs[6].operands[2], Operand::List(v) if v.len() == 2));
    assert!(matches!(
        stmts.last(),
        Some(Statement::Label {
            name: "$L__BB0_2",
            ..
        })
    ));
}

/// Runs a one-thread kernel that stores `out` (a .b64) computed by `body` to the pointer param.
fn compute(body: &str) -> u64 {
    let src = format!(
        "{HEADER}.visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<4>;\n.reg .b16 %rs<8>;\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n\
         ld.param.u64 %rd0, [p];\n{body}\nst.global.u64 [%rd0], %rd7;\nret;\n}}\n"
    );
    let module = parse_module(&src).unwrap();
    let p = decode(&src, &module, "k").unwrap_or_else(|e| panic!("{body}: {e}"));
    let mut mem = Mem::new();
    let base = mem.alloc(vec![0; 8]);
    run(
        &p,
        &packet(&[base]),
        LaunchDims::linear(1, 1),
        &mut mem.regions(),
    )
    .unwrap();
    u64::from_le_bytes(mem.allocs[0].1[..8].try_into().unwrap())
}

#[test]
fn integer_semantics() {
    let cases: &[(&str, u64)] = &[
        (
            "mov.u32 %r1, -7; mov.u32 %r2, 2; div.s32 %r3, %r1, %r2; cvt.s64.s32 %rd7, %r3;",
            (-3i64) as u64,
        ),
        (
            "mov.u32 %r1, -7; mov.u32 %r2, 2; rem.s32 %r3, %r1, %r2; cvt.s64.s32 %rd7, %r3;",
            (-1i64) as u64,
        ),
        (
            "mov.u32 %r1, -7; mov.u32 %r2, 2; div.u32 %r3, %r1, %r2; cvt.u64.u32 %rd7, %r3;",
            0x7fff_fffc,
        ),
        (
            "mov.u32 %r1, 0xffffffff; mul.wide.u32 %rd7, %r1, %r1;",
            0xffff_fffe_0000_0001,
        ),
        ("mov.u32 %r1, -1; mul.wide.s32 %rd7, %r1, %r1;", 1),
        (
            "mov.u32 %r1, 0x80000000; mul.hi.u32 %r2, %r1, 4; cvt.u64.u32 %rd7, %r2;",
            2,
        ),
        (
            "mov.u32 %r1, -8; shr.s32 %r2, %r1, 1; cvt.s64.s32 %rd7, %r2;",
            (-4i64) as u64,
        ),
        (
            "mov.u32 %r1, -8; shr.u32 %r2, %r1, 28; cvt.u64.u32 %rd7, %r2;",
            15,
        ),
        (
            "mov.u32 %r1, 1; shl.b32 %r2, %r1, 32; cvt.u64.u32 %rd7, %r2;",
            0,
        ),
        (
            "mov.u32 %r1, -5; max.s32 %r2, %r1, 3; min.u32 %r3, %r1, 3; add.s32 %r4, %r2, %r3; cvt.u64.u32 %rd7, %r4;",
            6,
        ),
        (
            "mov.u32 %r1, 5; mad.lo.s32 %r2, %r1, 3, 4; cvt.u64.u32 %rd7, %r2;",
            19,
        ),
        ("mov.u32 %r1, 5; mad.wide.u32 %rd7, %r1, 3, 4;", 19),
        ("mov.b64 %rd1, -1; not.b64 %rd7, %rd1;", 0),
        (
            "mov.u32 %r1, -9; abs.s32 %r2, %r1; neg.s32 %r3, %r2; xor.b32 %r4, %r3, %r2; cvt.u64.u32 %rd7, %r4;",
            0xffff_fffe,
        ),
        (
            "mov.u32 %r1, 7; mov.u32 %r2, 0; div.u32 %r3, %r1, %r2; cvt.u64.u32 %rd7, %r3;",
            0xffff_ffff,
        ),
        (
            "mov.b32 %r1, 0x00020001; mov.b32 {%rs1, %rs2}, %r1; cvt.u64.u16 %rd7, %rs2;",
            2,
        ),
        (
            "mov.b16 %rs1, 3; mov.b16 %rs2, 4; mov.b32 %r1, {%rs1, %rs2}; cvt.u64.u32 %rd7, %r1;",
            0x0004_0003,
        ),
        (
            "mov.u64 %rd1, 5; setp.lt.s64 %p1, %rd1, 7; setp.gt.and.s64 %p2, %rd1, 1, !%p1; selp.u64 %rd7, 10, 20, %p2;",
            20,
        ),
        (
            "mov.u64 %rd1, 5; setp.lt.s64 %p1|%p2, %rd1, 7; selp.u64 %rd7, 10, 20, %p2;",
            20,
        ),
        (
            "mov.u64 %rd1, -1; setp.lo.u64 %p1, %rd1, 7; @%p1 bra L; mov.u64 %rd7, 1; bra.uni E;\nL: mov.u64 %rd7, 2;\nE:",
            1,
        ),
        (
            "mov.u32 %r1, -1; cvt.u16.u32 %rs1, %r1; cvt.s64.s16 %rd7, %rs1;",
            u64::MAX,
        ),
    ];
    for (body, want) in cases {
        assert_eq!(compute(body), *want, "{body}");
    }
}

fn compute_f32(body: &str) -> f32 {
    f32::from_bits(compute(&format!("{body}\nmov.b32 %r7, %f7; cvt.u64.u32 %rd7, %r7;")) as u32)
}

#[test]
fn float_semantics() {
    let cases: &[(&str, f32)] = &[
        ("mov.f32 %f1, 0f3F800000; add.f32 %f7, %f1, %f1;", 2.0),
        (
            "mov.f32 %f1, 0f40400000; mov.f32 %f2, 0f3F000000; fma.rn.f32 %f7, %f1, %f2, %f1;",
            4.5,
        ),
        (
            "mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f33D6BF95; add.rp.f32 %f7, %f1, %f2;",
            1.000_000_1,
        ),
        (
            "mov.f32 %f1, 0f40000000; sqrt.rn.f32 %f7, %f1;",
            std::f32::consts::SQRT_2,
        ),
        ("mov.f32 %f1, 0fBF800000; cvt.sat.f32.f32 %f7, %f1;", 0.0),
        ("mov.f32 %f1, 0f40200000; cvt.rni.f32.f32 %f7, %f1;", 2.0),
        ("mov.f32 %f1, 0f40600000; cvt.rmi.f32.f32 %f7, %f1;", 3.0),
        ("mov.u32 %r1, -3; cvt.rn.f32.s32 %f7, %r1;", -3.0),
        ("mov.f32 %f1, 0f40000000; ex2.approx.ftz.f32 %f7, %f1;", 4.0),
        (
            "mov.f32 %f1, 0f7FC00000; mov.f32 %f2, 0f3F800000; max.f32 %f7, %f1, %f2;",
            1.0,
        ),
        (
            "mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f40000000; div.rn.f32 %f7, %f1, %f2;",
            0.5,
        ),
        (
            "mov.f64 %fd1, 0d3FF8000000000000; cvt.rn.f32.f64 %f7, %fd1;",
            1.5,
        ),
        (
            "mov.f32 %f1, 0f3F800000; setp.nan.f32 %p1, %f1, %f1; selp.f32 %f7, 0f40000000, 0f40400000, %p1;",
            3.0,
        ),
        (
            "mov.b16 %rs1, 0x3C00; mov.b16 %rs2, 0x4000; add.f16 %rs3, %rs1, %rs2; cvt.f32.f16 %f7, %rs3;",
            3.0,
        ),
        (
            "mov.b16 %rs1, 0x3F80; mov.b16 %rs2, 0x4000; { .reg .b16 c; mov.b16 c, 0x3f80U; fma.rn.bf16 %rs3, %rs1, c, %rs2; } cvt.f32.bf16 %f7, %rs3;",
            3.0,
        ),
        (
            "mov.f32 %f1, 0f3FC00000; cvt.rn.f16.f32 %rs1, %f1; cvt.f32.f16 %f7, %rs1;",
            1.5,
        ),
    ];
    for (body, want) in cases {
        assert_eq!(compute_f32(body), *want, "{body}");
    }
    // cvt.rzi.s32.f32 of -2.7 is -2; NaN converts to 0.
    assert_eq!(
        compute("mov.f32 %f1, 0fC02CCCCD; cvt.rzi.s32.f32 %r1, %f1; cvt.s64.s32 %rd7, %r1;"),
        (-2i64) as u64
    );
    assert_eq!(
        compute("mov.f32 %f1, 0f7FC00000; cvt.rni.s32.f32 %r1, %f1; cvt.s64.s32 %rd7, %r1;"),
        0
    );
}

/// Divergence inside a lockstep group: a guarded `ret`, a loop whose trip count differs per
/// thread, and a call on only some lanes, over shapes whose groups span blocks and end partly
/// filled. Every thread must compute exactly what it would alone.
#[test]
fn divergent_control_flow_matches_per_thread_semantics() {
    let src = format!(
        "{HEADER}
.func (.param .b64 r) triple(.param .b64 x)
{{
    .reg .b64 %a<3>;
    ld.param.b64 %a1, [x];
    mul.lo.s64 %a2, %a1, 3;
    st.param.b64 [r], %a2;
    ret;
}}
.visible .entry k(.param .u64 out, .param .u64 n)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd3, %r1, %r2;
    cvt.u64.u32 %rd4, %r3;
    add.s64 %rd3, %rd3, %rd4;
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 ret;
    rem.u64 %rd5, %rd3, 7;
    mov.u64 %rd6, 0;
    mov.u64 %rd7, 0;
$LOOP:
    setp.ge.u64 %p2, %rd7, %rd5;
    @%p2 bra $AFTER;
    add.s64 %rd6, %rd6, %rd7;
    add.s64 %rd7, %rd7, 1;
    bra.uni $LOOP;
$AFTER:
    and.b64 %rd8, %rd3, 1;
    setp.eq.u64 %p3, %rd8, 0;
    @%p3 bra $EVEN;
    {{
    .param .b64 arg;
    st.param.b64 [arg+0], %rd6;
    .param .b64 ret;
    call.uni (ret), triple, (arg);
    ld.param.b64 %rd6, [ret+0];
    }}
    bra.uni $DONE;
$EVEN:
    add.s64 %rd6, %rd6, 1000;
$DONE:
    shl.b64 %rd9, %rd3, 3;
    add.s64 %rd10, %rd1, %rd9;
    st.global.u64 [%rd10], %rd6;
    ret;
}}
"
    );
    let module = parse_module(&src).unwrap();
    let p = decode(&src, &module, "k").unwrap();
    let want = |i: u64| {
        let sum: u64 = (0..i % 7).sum();
        if i.is_multiple_of(2) {
            sum + 1000
        } else {
            sum * 3
        }
    };
    for (n, grid, block) in [(200u64, 4, 64), (150, 3, 50), (37, 5, 9), (300, 1, 300)] {
        let mut mem = Mem::new();
        let total = u64::from(grid * block);
        let po = mem.alloc(vec![0xee; 8 * total as usize]);
        run(
            &p,
            &packet(&[po, n]),
            LaunchDims::linear(grid, block),
            &mut mem.regions(),
        )
        .unwrap();
        let got: Vec<u64> = mem.allocs[0]
            .1
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for (i, &v) in got.iter().enumerate() {
            let i = i as u64;
            let expected = if i < n {
                want(i)
            } else {
                0xeeee_eeee_eeee_eeee
            };
            assert_eq!(v, expected, "n={n} grid={grid} block={block} i={i}");
        }
    }
}

/// `exit` inside a called `.func` ends the thread (PTX ISA: "terminate a thread"); it must not
/// return to the caller like `ret`. Odd threads call a function that exits before the store
/// that follows the call; even threads call one that returns.
#[test]
fn exit_in_a_function_ends_the_thread() {
    let src = format!(
        "{HEADER}
.func leave(.param .b64 x)
{{
    .reg .pred %p<2>;
    .reg .b64 %a<3>;
    ld.param.b64 %a1, [x];
    and.b64 %a2, %a1, 1;
    setp.eq.u64 %p1, %a2, 0;
    @%p1 ret;
    exit;
}}
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd2, %r1;
    {{
    .param .b64 arg;
    st.param.b64 [arg+0], %rd2;
    call.uni leave, (arg);
    }}
    shl.b64 %rd3, %rd2, 3;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u64 [%rd4], %rd2;
    ret;
}}
"
    );
    let module = parse_module(&src).unwrap();
    let p = decode(&src, &module, "k").unwrap();
    let mut mem = Mem::new();
    let po = mem.alloc(vec![0xee; 8 * 10]);
    run(
        &p,
        &packet(&[po]),
        LaunchDims::linear(1, 10),
        &mut mem.regions(),
    )
    .unwrap();
    let got: Vec<u64> = mem.allocs[0]
        .1
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u64> = (0..10u64)
        .map(|i| if i % 2 == 0 { i } else { 0xeeee_eeee_eeee_eeee })
        .collect();
    assert_eq!(got, want);
}
