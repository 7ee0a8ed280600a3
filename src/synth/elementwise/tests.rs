use super::plan::widths;
use super::*;
use crate::abi::{AbiKind, MAX_RANK};
use crate::artifact::ParamSource;
use crate::kernel::Kernel;
use crate::synth::{Arch, JitBudget, OperandDesc, OperandRole, Region};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const DTYPES: [ElementKind; 4] = [
    ElementKind::F32,
    ElementKind::F64,
    ElementKind::F16,
    ElementKind::BF16,
];

fn request(region: Region, operands: Vec<OperandDesc>) -> JitRequest {
    JitRequest {
        region,
        operands,
        arch: Arch::sm(80),
        budget: JitBudget::millis(1000),
    }
}

fn dense(dtype: ElementKind, shape: &[u64], align: u32) -> OperandDesc {
    OperandDesc::contiguous(dtype, shape, align)
}

fn view(dtype: ElementKind, shape: &[u64], strides: &[i64], align: u32) -> OperandDesc {
    OperandDesc {
        dtype,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        align,
    }
}

/// `op` applied to binds `0..arity`, with scalars 2.0, 3.0, …
fn region_for(name: &str) -> Region {
    let (arity, scalars) = op_signature(name).unwrap_or((0, 0));
    Region::op_with_scalars(
        name,
        (0..arity as u32).map(Region::bind).collect(),
        (0..scalars).map(|s| 2.0 + s as f64).collect(),
    )
}

/// The layouts of the matrix with the ABI each must get (for `dtype`, two inputs): every vector
/// width the dtype allows, scalar, and strided.
fn layouts(dtype: ElementKind) -> Vec<(Vec<OperandDesc>, AbiKind)> {
    let mut out = Vec::new();
    for &width in widths(dtype) {
        // 3 vectors' worth, aligned to exactly one vector: no wider width fits.
        let n = 3 * u64::from(width);
        let align = u32::from(width) * dtype.size() as u32;
        out.push((
            vec![dense(dtype, &[n], align); 3],
            AbiKind::Vectorized { width },
        ));
    }
    // 15 elements: divisible by no width.
    out.push((vec![dense(dtype, &[3, 5], 16); 3], AbiKind::Scalar));
    let strided = vec![
        view(dtype, &[4, 6], &[1, 4], 256), // transposed
        view(dtype, &[4, 6], &[0, 1], 256), // broadcast rows
        dense(dtype, &[4, 6], 256),
    ];
    out.push((strided, AbiKind::Strided { rank: 2 }));
    out
}

/// Request for `name` over the first `arity` inputs of a layout (plus its output).
fn matrix_request(name: &str, layout: &[OperandDesc]) -> JitRequest {
    let (arity, _) = op_signature(name).unwrap_or((0, 0));
    let mut operands: Vec<OperandDesc> = layout[..arity].to_vec();
    operands.extend(layout.last().cloned());
    request(region_for(name), operands)
}

#[test]
fn every_kernel_of_the_matrix_describes_and_loads() -> TestResult {
    let synth = ElementwiseSynthesizer::new();
    let mut emitted = 0;
    for dtype in DTYPES {
        for (layout, abi) in layouts(dtype) {
            for name in OPS {
                let req = matrix_request(name, &layout);
                let result = synth.synthesize(&req);
                if !supports(name, dtype) {
                    assert_eq!(
                        result,
                        Err(SynthDecline::UnsupportedOp {
                            op: name.to_owned(),
                            dtype
                        }),
                        "{name} {dtype}"
                    );
                    continue;
                }
                let artifact = result?;
                assert_eq!(artifact.abi.abi, abi, "{name} {dtype}");
                let entry = artifact.link.entry_point.clone();
                let loaded = Kernel::describe(artifact)?.load()?;
                assert_eq!(loaded.loaded().entry().unwrap().name, entry);
                assert_eq!(loaded.loaded().target().sm(), Some(80));
                emitted += 1;
            }
        }
    }
    // 17 ops × 17 layouts (f32: v4 v2 scalar strided; f64: v2 scalar strided; f16, bf16:
    // v8 v4 v2 scalar strided), less the 5 f64 transcendentals × 3 layouts.
    assert_eq!(emitted, 17 * 17 - 5 * 3);
    Ok(())
}

fn abi_of(operands: Vec<OperandDesc>) -> Result<AbiKind, SynthDecline> {
    let region = Region::op("add", vec![Region::bind(0), Region::bind(1)]);
    ElementwiseSynthesizer::new()
        .synthesize(&request(region, operands))
        .map(|a| a.abi.abi)
}

#[test]
fn dense_aligned_divisible_operands_get_the_widest_vector() {
    use ElementKind::*;
    for (dtype, width) in [(F32, 4), (F64, 2), (F16, 8), (BF16, 8)] {
        let operands = vec![dense(dtype, &[8, 16], 16); 3];
        assert_eq!(
            abi_of(operands),
            Ok(AbiKind::Vectorized { width }),
            "{dtype}"
        );
    }
}

#[test]
fn a_narrower_vector_is_used_when_only_it_fits() {
    // 6 elements: not a multiple of 4, a multiple of 2.
    assert_eq!(
        abi_of(vec![dense(ElementKind::F32, &[6], 16); 3]),
        Ok(AbiKind::Vectorized { width: 2 })
    );
    // 16 elements but one base only 8-byte aligned: float2, not float4.
    let mut operands = vec![dense(ElementKind::F32, &[16], 16); 3];
    operands[1].align = 8;
    assert_eq!(abi_of(operands), Ok(AbiKind::Vectorized { width: 2 }));
}

#[test]
fn offset_views_and_indivisible_counts_get_the_scalar_abi() {
    // An offset view: the base is only element-aligned.
    let mut operands = vec![dense(ElementKind::F32, &[64], 256); 3];
    operands[0].align = 4;
    assert_eq!(abi_of(operands), Ok(AbiKind::Scalar));
    // n odd: no width divides it.
    for dtype in DTYPES {
        assert_eq!(
            abi_of(vec![dense(dtype, &[3, 5], 16); 3]),
            Ok(AbiKind::Scalar)
        );
    }
    // f64 with an 8-byte-aligned output.
    let mut operands = vec![dense(ElementKind::F64, &[64], 16); 3];
    operands[2].align = 8;
    assert_eq!(abi_of(operands), Ok(AbiKind::Scalar));
    // Rank 0: one element.
    assert_eq!(
        abi_of(vec![dense(ElementKind::F32, &[], 16); 3]),
        Ok(AbiKind::Scalar)
    );
}

#[test]
fn non_dense_views_get_the_strided_abi() {
    let f = ElementKind::F32;
    let out = dense(f, &[4, 6], 256);
    let plain = dense(f, &[4, 6], 256);
    // Transposed.
    let transposed = view(f, &[4, 6], &[1, 4], 256);
    assert_eq!(
        abi_of(vec![transposed, plain.clone(), out.clone()]),
        Ok(AbiKind::Strided { rank: 2 })
    );
    // Broadcast (stride 0 on an axis of extent > 1).
    let broadcast = view(f, &[4, 6], &[0, 1], 256);
    assert_eq!(
        abi_of(vec![plain.clone(), broadcast, out.clone()]),
        Ok(AbiKind::Strided { rank: 2 })
    );
    // Reversed (stride -1) — the seeds treated this as contiguous.
    let reversed = view(f, &[24], &[-1], 4);
    assert_eq!(
        abi_of(vec![reversed, dense(f, &[24], 256), dense(f, &[24], 256)]),
        Ok(AbiKind::Strided { rank: 1 })
    );
    // A gapped view (every other row of a larger buffer), and a strided output.
    let gapped = view(f, &[4, 6], &[12, 1], 256);
    assert_eq!(
        abi_of(vec![gapped, plain.clone(), out]),
        Ok(AbiKind::Strided { rank: 2 })
    );
    let strided_out = view(f, &[4, 6], &[1, 4], 256);
    assert_eq!(
        abi_of(vec![plain.clone(), plain, strided_out]),
        Ok(AbiKind::Strided { rank: 2 })
    );
}

#[test]
fn strided_kernels_load_at_every_rank() -> TestResult {
    for rank in 1..=MAX_RANK {
        let shape = vec![2u64; rank];
        let mut strides = row_major(&shape);
        strides.reverse(); // a full transpose, non-dense for rank ≥ 2
        strides[0] = -strides[0]; // and reversed on the first axis
        let operands = vec![
            view(ElementKind::BF16, &shape, &strides, 2),
            dense(ElementKind::BF16, &shape, 2),
        ];
        let req = request(Region::op("exp", vec![Region::bind(0)]), operands);
        let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
        let rank = u8::try_from(rank)?;
        assert_eq!(artifact.abi.abi, AbiKind::Strided { rank });
        Kernel::describe(artifact)?.load()?;
    }
    Ok(())
}

fn row_major(shape: &[u64]) -> Vec<i64> {
    crate::synth::row_major_strides(shape)
}

#[test]
fn params_are_numbered_post_order_and_recorded() -> TestResult {
    // add_scalar(mul_scalar(x, 2.0), 3.0): post-order nodes x = 0, mul_scalar = 1,
    // add_scalar = 2. Param 0 is the INNER mul_scalar's scalar (the seeds filled it pre-order).
    let region = Region::op_with_scalars(
        "add_scalar",
        vec![Region::op_with_scalars(
            "mul_scalar",
            vec![Region::bind(0)],
            vec![2.0],
        )],
        vec![3.0],
    );
    let operands = vec![dense(ElementKind::F32, &[3], 4); 2];
    let req = request(region.clone(), operands);
    let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
    assert_eq!(
        artifact.param_map,
        [
            ParamSource { node: 1, scalar: 0 },
            ParamSource { node: 2, scalar: 0 },
        ]
    );
    assert_eq!(
        region.param_values(&artifact.param_map),
        Some(vec![2.0, 3.0])
    );
    assert_eq!(
        artifact.abi.params.as_ref(),
        [ElementKind::F32, ElementKind::F32]
    );
    let text = String::from_utf8(artifact.bytes.clone())?;
    let entry = &artifact.link.entry_point;
    // (x, out, n, p0, p1): the inner op reads param 3, the outer param 4.
    assert!(
        text.contains(&format!(".param .f32 {entry}_param_3,")),
        "{text}"
    );
    assert!(
        text.contains(&format!(".param .f32 {entry}_param_4\n")),
        "{text}"
    );
    assert!(text.contains("// params  : p0 = node 1 scalar 0, p1 = node 2 scalar 0"));
    // p0 (param 3) lands in %f1 and feeds the mul; p1 (param 4) in %f2 and feeds the add.
    assert!(
        text.contains(&format!("ld.param.f32 %f1, [{entry}_param_3]")),
        "{text}"
    );
    assert!(
        text.contains(&format!("ld.param.f32 %f2, [{entry}_param_4]")),
        "{text}"
    );
    assert!(
        text.contains("mul.f32 %f4, %f3, %f1;\n\tadd.f32 %f5, %f4, %f2;"),
        "{text}"
    );
    Kernel::describe(artifact)?.load()?;
    Ok(())
}

#[test]
fn params_of_sibling_subtrees_follow_post_order() -> TestResult {
    // add(mul_scalar(x, a), mul_scalar(y, b)): x=0, mul_scalar=1, y=2, mul_scalar=3, add=4.
    let region = Region::op(
        "add",
        vec![
            Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![5.0]),
            Region::op_with_scalars("mul_scalar", vec![Region::bind(1)], vec![7.0]),
        ],
    );
    let req = request(region.clone(), vec![dense(ElementKind::F64, &[8], 16); 3]);
    let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
    assert_eq!(
        artifact.param_map,
        [
            ParamSource { node: 1, scalar: 0 },
            ParamSource { node: 3, scalar: 0 },
        ]
    );
    assert_eq!(
        region.param_values(&artifact.param_map),
        Some(vec![5.0, 7.0])
    );
    // f64 kernels take f64 params: never narrowed.
    assert_eq!(
        artifact.abi.params.as_ref(),
        [ElementKind::F64, ElementKind::F64]
    );
    Ok(())
}

#[test]
fn half_kernels_take_their_params_in_the_compute_type() -> TestResult {
    for dtype in [ElementKind::F16, ElementKind::BF16] {
        let region = Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![0.1]);
        let req = request(region, vec![dense(dtype, &[16], 16); 2]);
        let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
        assert_eq!(artifact.abi.params.as_ref(), [ElementKind::F32]);
        Kernel::describe(artifact)?.load()?;
    }
    Ok(())
}

#[test]
fn synthesis_is_deterministic_and_independent_of_scalar_values() -> TestResult {
    let synth = ElementwiseSynthesizer::new();
    let make = |scalar: f64| {
        request(
            Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![scalar]),
            vec![dense(ElementKind::F32, &[4, 4], 16); 2],
        )
    };
    let a = synth.synthesize(&make(2.0))?;
    let b = synth.synthesize(&make(2.0))?;
    let c = synth.synthesize(&make(-9.5))?;
    assert_eq!(a, b);
    assert_eq!(a.bytes, c.bytes, "scalars are runtime params, not baked in");
    let entry = &a.link.entry_point;
    assert!(
        entry.starts_with("jitseam_ew_") && entry.ends_with("_f32_v4"),
        "{entry}"
    );
    assert_eq!(entry.len(), "jitseam_ew_".len() + 16 + "_f32_v4".len());
    assert_eq!(a.link.symbol, *entry);
    assert_eq!(a.link.revision_hash.as_deref(), Some(REVISION));
    assert_eq!(
        a.link.structure_key.as_deref(),
        Some("ew:mul_scalar(in0,p):f32:vectorized:4:in1")
    );
    // Another ABI or dtype is another entry.
    let d = synth.synthesize(&request(
        Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]),
        vec![dense(ElementKind::F32, &[3], 16); 2],
    ))?;
    assert_ne!(d.link.entry_point, *entry);
    Ok(())
}

#[test]
fn the_module_states_its_target_and_region() -> TestResult {
    let region = Region::op(
        "relu",
        vec![Region::op("add", vec![Region::bind(0), Region::bind(1)])],
    );
    let req = request(region, vec![dense(ElementKind::F32, &[7], 4); 3]);
    let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
    let text = String::from_utf8(artifact.bytes)?;
    assert!(text.contains(".version 8.0\n.target sm_80\n.address_size 64\n"));
    assert!(text.contains("// region  : relu(add(in0, in1))"), "{text}");
    assert!(text.contains("// abi     : scalar"));
    assert!(text.contains("// signature: (in0, in1, out0, n)"));
    assert!(!text.contains("%none"), "every operand register resolved");
    Ok(())
}

#[test]
fn an_input_read_twice_is_loaded_once_and_an_unread_one_not_at_all() -> TestResult {
    // mul(in1, in1) over three inputs: only input 1 is read, once.
    let region = Region::op("mul", vec![Region::bind(1), Region::bind(1)]);
    let req = request(region, vec![dense(ElementKind::F32, &[5], 4); 4]);
    let artifact = ElementwiseSynthesizer::new().synthesize(&req)?;
    assert_eq!(
        artifact.abi.inputs.len(),
        3,
        "every input keeps its pointer slot"
    );
    let text = String::from_utf8(artifact.bytes.clone())?;
    assert_eq!(text.matches("ld.global.nc.f32").count(), 1, "{text}");
    assert_eq!(text.matches("ld.param.u64").count(), 3, "in1, out0, n");
    Kernel::describe(artifact)?.load()?;
    Ok(())
}

/// The instruction forms the emulator implements (what NVRTC emits for elementwise kernels).
/// A new form in the synthesizer's output must be added here deliberately, after checking the
/// emulator runs it.
const EMULATOR_FORMS: &[&str] = &[
    "abs.f32",
    "abs.f64",
    "add.f32",
    "add.f64",
    "add.s64",
    "and.b32",
    "bra",
    "cvt.f32.f16",
    "cvt.rn.bf16.f32",
    "cvt.rn.f16.f32",
    "cvt.u16.u32",
    "cvt.u32.u16",
    "cvt.u64.u32",
    "cvta.to.global.u64",
    "div.rn.f32",
    "div.rn.f64",
    "div.u64",
    "ex2.approx.ftz.f32",
    "fma.rn.f32",
    "ld.global.nc.f32",
    "ld.global.nc.f64",
    "ld.global.nc.u16",
    "ld.global.nc.u32",
    "ld.global.nc.v2.f32",
    "ld.global.nc.v2.f64",
    "ld.global.nc.v2.u32",
    "ld.global.nc.v4.f32",
    "ld.global.nc.v4.u32",
    "ld.param.f32",
    "ld.param.f64",
    "ld.param.u64",
    "lg2.approx.ftz.f32",
    "mad.lo.s64",
    "max.f32",
    "max.f64",
    "min.f32",
    "min.f64",
    "mov.b32",
    "mov.u32",
    "mul.f32",
    "mul.f64",
    "mul.lo.s64",
    "mul.wide.u32",
    "neg.f32",
    "neg.f64",
    "or.b32",
    "rcp.rn.f32",
    "rem.u64",
    "ret",
    "selp.f32",
    "setp.ge.f32",
    "setp.ge.s64",
    "setp.le.f32",
    "setp.lt.f32",
    "setp.lt.s64",
    "shl.b32",
    "shl.b64",
    "shr.u32",
    "sqrt.rn.f32",
    "sqrt.rn.f64",
    "st.global.f32",
    "st.global.f64",
    "st.global.u16",
    "st.global.u32",
    "st.global.v2.f32",
    "st.global.v2.f64",
    "st.global.v2.u32",
    "st.global.v4.f32",
    "st.global.v4.u32",
    "sub.f32",
    "sub.f64",
    "tanh.approx.f32",
];

/// The opcode (with modifiers) of every instruction line in `text`.
fn opcodes(text: &str) -> Vec<String> {
    let body = text.split_once(")\n{").map_or("", |(_, body)| body);
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('.'))
        .filter(|l| !l.ends_with(':') && *l != "}")
        .map(|l| {
            let l = if l.starts_with('@') {
                l.split_once(' ').map_or(l, |(_, rest)| rest)
            } else {
                l
            };
            l.split([' ', ';']).next().unwrap_or("").to_owned()
        })
        .collect()
}

#[test]
fn every_instruction_is_one_the_emulator_runs() -> TestResult {
    let synth = ElementwiseSynthesizer::new();
    let mut seen = std::collections::BTreeSet::new();
    for dtype in DTYPES {
        for (layout, _) in layouts(dtype) {
            for name in OPS.into_iter().filter(|n| supports(n, dtype)) {
                let artifact = synth.synthesize(&matrix_request(name, &layout))?;
                let text = String::from_utf8(artifact.bytes)?;
                for form in opcodes(&text) {
                    assert!(
                        EMULATOR_FORMS.contains(&form.as_str()),
                        "{name} {dtype}: `{form}` is not an emulator instruction"
                    );
                    seen.insert(form);
                }
                // No shared memory, no barriers.
                assert!(!text.contains(".shared") && !text.contains("bar."));
            }
        }
    }
    // The list is tight: everything on it is used somewhere.
    let unused: Vec<_> = EMULATOR_FORMS
        .iter()
        .filter(|f| !seen.contains(**f))
        .collect();
    assert!(unused.is_empty(), "listed but never emitted: {unused:?}");
    Ok(())
}

#[test]
fn shapes_are_validated_before_emitting() {
    let f = ElementKind::F32;
    let add = || Region::op("add", vec![Region::bind(0), Region::bind(1)]);
    let decline = |operands: Vec<OperandDesc>| {
        ElementwiseSynthesizer::new()
            .synthesize(&request(add(), operands))
            .err()
    };
    // An input with fewer elements than the output: the seeds read it out of bounds.
    assert_eq!(
        decline(vec![
            dense(f, &[3], 4),
            dense(f, &[4], 4),
            dense(f, &[4], 4)
        ]),
        Some(SynthDecline::ShapeMismatch {
            operand: OperandRole::Input(0),
            expected: vec![4],
            found: vec![3],
        })
    );
    // Implicit broadcasting is refused: broadcast is spelled as stride 0 at the output's shape.
    assert_eq!(
        decline(vec![
            dense(f, &[3, 4], 4),
            dense(f, &[1, 4], 4),
            dense(f, &[3, 4], 4)
        ]),
        Some(SynthDecline::ShapeMismatch {
            operand: OperandRole::Input(1),
            expected: vec![3, 4],
            found: vec![1, 4],
        })
    );
    // Same element count, other shape.
    assert!(matches!(
        decline(vec![
            dense(f, &[2, 2], 4),
            dense(f, &[4], 4),
            dense(f, &[4], 4)
        ]),
        Some(SynthDecline::ShapeMismatch { .. })
    ));
    assert_eq!(
        decline(vec![
            view(f, &[4], &[1, 1], 4),
            dense(f, &[4], 4),
            dense(f, &[4], 4)
        ]),
        Some(SynthDecline::StrideCount {
            operand: OperandRole::Input(0),
            shape_rank: 1,
            strides: 2,
        })
    );
    assert_eq!(
        decline(vec![dense(f, &[1; 9], 4); 3]),
        Some(SynthDecline::RankTooHigh {
            operand: OperandRole::Input(0),
            rank: 9,
            max: 8,
        })
    );
    assert_eq!(
        decline(vec![dense(f, &[u64::MAX], 4); 3]),
        Some(SynthDecline::TooLarge {
            operand: OperandRole::Input(0)
        })
    );
    assert_eq!(
        decline(vec![dense(f, &[1 << 32, 1 << 32], 4); 3]),
        Some(SynthDecline::TooLarge {
            operand: OperandRole::Input(0)
        })
    );
    assert_eq!(
        decline(vec![
            dense(f, &[4], 4),
            dense(f, &[4], 2),
            dense(f, &[4], 4)
        ]),
        Some(SynthDecline::Misaligned {
            operand: OperandRole::Input(1),
            dtype: f,
            align: 2,
        })
    );
    assert!(matches!(
        decline(vec![
            dense(f, &[4], 4),
            dense(f, &[4], 4),
            dense(f, &[4], 12)
        ]),
        Some(SynthDecline::Misaligned {
            operand: OperandRole::Output(0),
            align: 12,
            ..
        })
    ));
    assert_eq!(
        decline(vec![
            dense(f, &[3, 4], 4),
            dense(f, &[3, 4], 4),
            view(f, &[3, 4], &[0, 1], 4)
        ]),
        Some(SynthDecline::OutputOverlaps { axis: 0, extent: 3 })
    );
    // Stride 0 on an axis of extent 1 writes nothing twice: accepted.
    assert_eq!(
        decline(vec![
            dense(f, &[1, 4], 4),
            dense(f, &[1, 4], 4),
            view(f, &[1, 4], &[0, 1], 4)
        ]),
        None
    );
}

#[test]
fn dtypes_are_declined_not_approximated() {
    use ElementKind::*;
    let add = || Region::op("add", vec![Region::bind(0), Region::bind(1)]);
    let decline = |dtypes: [ElementKind; 3]| {
        let operands = dtypes.iter().map(|&d| dense(d, &[4], 16)).collect();
        ElementwiseSynthesizer::new()
            .synthesize(&request(add(), operands))
            .err()
    };
    assert_eq!(
        decline([I32, I32, I32]),
        Some(SynthDecline::UnsupportedDtype {
            operand: OperandRole::Output(0),
            dtype: I32
        })
    );
    // A U32 index operand is reported as U32.
    assert_eq!(
        decline([F32, U32, F32]),
        Some(SynthDecline::UnsupportedDtype {
            operand: OperandRole::Input(1),
            dtype: U32
        })
    );
    assert_eq!(
        decline([F16, F32, F32]),
        Some(SynthDecline::MixedDtypes {
            operand: OperandRole::Input(0),
            expected: F32,
            found: F16
        })
    );
}

#[test]
fn regions_are_validated() {
    let f = ElementKind::F32;
    let two = || vec![dense(f, &[4], 4); 2];
    let synth = ElementwiseSynthesizer::new();
    let decline = |region: Region, operands: Vec<OperandDesc>| {
        synth.synthesize(&request(region, operands)).err()
    };
    assert_eq!(
        decline(Region::op("gelu", vec![Region::bind(0)]), two()),
        Some(SynthDecline::UnsupportedOp {
            op: "gelu".into(),
            dtype: f
        })
    );
    assert_eq!(
        decline(
            Region::op("exp", vec![Region::bind(0)]),
            vec![dense(ElementKind::F64, &[4], 8); 2]
        ),
        Some(SynthDecline::UnsupportedOp {
            op: "exp".into(),
            dtype: ElementKind::F64
        })
    );
    assert_eq!(
        decline(Region::op("add", vec![Region::bind(0)]), two()),
        Some(SynthDecline::Arity {
            op: "add".into(),
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        decline(Region::op("mul_scalar", vec![Region::bind(0)]), two()),
        Some(SynthDecline::ScalarCount {
            op: "mul_scalar".into(),
            expected: 1,
            found: 0
        })
    );
    assert_eq!(
        decline(Region::op("neg", vec![Region::bind(1)]), two()),
        Some(SynthDecline::BindOutOfRange {
            index: 1,
            inputs: 1
        })
    );
    assert_eq!(
        decline(Region::bind(0), Vec::new()),
        Some(SynthDecline::NoOutput)
    );
    let mut deep = Region::bind(0);
    for _ in 0..100 {
        deep = Region::op("neg", vec![deep]);
    }
    assert!(matches!(
        decline(deep, two()),
        Some(SynthDecline::RegionTooLarge {
            max_depth: MAX_REGION_DEPTH,
            ..
        })
    ));
    // A bare bind is a copy kernel.
    assert_eq!(decline(Region::bind(0), two()), None);
}

#[test]
fn arch_and_budget_are_honoured() {
    let region = Region::op("neg", vec![Region::bind(0)]);
    let operands = vec![dense(ElementKind::F32, &[4], 4); 2];
    let mut req = request(region, operands);
    req.arch = Arch::sm(75);
    assert_eq!(
        ElementwiseSynthesizer::new().synthesize(&req).err(),
        Some(SynthDecline::UnsupportedArch {
            arch: Arch::sm(75),
            min: MIN_ARCH
        })
    );
    req.arch = Arch::sm(90);
    req.budget = JitBudget { max_compile_us: 0 };
    // Synthesis takes at least a microsecond; a zero budget is always exceeded.
    let got = ElementwiseSynthesizer::new().synthesize(&req);
    assert!(
        matches!(got, Err(SynthDecline::OverBudget { budget_us: 0, .. }))
            || got.is_ok_and(|_| cfg!(miri)),
    );
}

#[test]
fn declines_travel_as_data() {
    let decline = SynthDecline::UnsupportedOp {
        op: "exp".into(),
        dtype: ElementKind::F64,
    };
    let json = serde_json::to_string(&decline).unwrap_or_default();
    assert_eq!(
        json,
        r#"{"decline":"unsupported_op","op":"exp","dtype":"f64"}"#
    );
    let back: Option<SynthDecline> = serde_json::from_str(&json).ok();
    assert_eq!(back, Some(decline.clone()));
    assert_eq!(decline.to_string(), "unsupported op `exp` for f64");
}
