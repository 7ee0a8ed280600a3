//! `describe → load`: every real NVRTC fixture loads with its true ABI, and each kind of
//! mismatch is declined with the variant and fields that say what is wrong.

mod common;

use common::fixtures;
use jitseam::abi::SpecProblem;
use jitseam::abi::{ParamClass, ParamRole};
use jitseam::error::Mismatch;
use jitseam::{AbiKind, AbiSpec, Artifact, ArtifactKind, ElementKind::*, Error, Kernel};

fn load(artifact: Artifact) -> Result<Kernel<jitseam::Erased, jitseam::Loaded>, Error> {
    Ok(Kernel::describe(artifact)?.load()?)
}

/// A one-entry module whose parameter list is `params` (PTX spelling, comma-separated).
fn module_with(params: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k({params})\n{{\n\tret;\n}}\n"
    )
}

#[test]
fn every_fixture_loads_with_its_true_abi() {
    let all = fixtures::all();
    assert!(all.len() >= 19, "manifest lists {} entries", all.len());
    for f in all.iter() {
        let kernel = load(f.artifact()).unwrap_or_else(|e| panic!("{}: {e}", f.entry));
        let loaded = kernel.loaded();
        assert_eq!(loaded.entry().unwrap().name, f.entry);
        assert_eq!(loaded.target().arch, "sm_80");
        assert_eq!(
            loaded.layout().params().len(),
            f.spec.expected_params().len()
        );
    }
}

#[test]
fn loaded_layout_places_f64_params_after_the_count() {
    let k = load(fixtures::by_entry("baracuda_gen_axpb_f64_scalar").artifact()).unwrap();
    let offsets: Vec<_> = k
        .loaded()
        .layout()
        .params()
        .iter()
        .map(|p| (p.role, p.offset))
        .collect();
    assert_eq!(
        offsets,
        [
            (ParamRole::Input(0), 0),
            (ParamRole::Output(0), 8),
            (ParamRole::Count, 16),
            (ParamRole::Param(0), 24),
            (ParamRole::Param(1), 32),
        ]
    );
}

#[test]
fn invalid_spec_is_declined_at_describe() {
    let spec = AbiSpec::new(AbiKind::Vectorized { width: 3 }, &[F32], &[F32], &[]);
    let err = Kernel::describe(Artifact::ptx("", "k", spec)).unwrap_err();
    match err {
        Error::InvalidSpec { entry, problem } => {
            assert_eq!(entry, "k");
            assert_eq!(problem, SpecProblem::VectorWidth { width: 3 });
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn non_utf8_bytes_are_declined() {
    let mut artifact = Artifact::ptx("", "k", AbiSpec::new(AbiKind::Scalar, &[], &[F32], &[]));
    artifact.bytes = b".version 8.0\n\xff\xfe".to_vec();
    match load(artifact).unwrap_err() {
        Error::InvalidUtf8 { entry, valid_up_to } => {
            assert_eq!(entry, "k");
            assert_eq!(valid_up_to, 13);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn text_that_is_not_ptx_is_declined_with_line_and_column() {
    let spec = AbiSpec::new(AbiKind::Scalar, &[], &[F32], &[]);
    let text = ".version 8.0\n.target sm_80\n.visible .entry k(.param .u64 a,, )\n{ ret; }\n";
    match load(Artifact::ptx(text, "k", spec)).unwrap_err() {
        Error::Ptx { entry, detail } => {
            assert_eq!(entry, "k");
            assert_eq!(detail.line, 3);
            assert!(detail.col > 1, "column {}", detail.col);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn an_error_chain_prints_each_message_once() {
    use std::error::Error as _;
    let spec = AbiSpec::new(AbiKind::Scalar, &[], &[F32], &[]);
    let text = ".version 8.0\n.target sm_80\n.visible .entry k(.param .u64 a,, )\n{ ret; }\n";
    let declined = Kernel::describe(Artifact::ptx(text, "k", spec))
        .unwrap()
        .load()
        .unwrap_err();
    // What a chain printer (anyhow's `{:?}`) shows: the message, then each source's message.
    let mut messages = vec![declined.to_string()];
    let mut next = declined.source();
    while let Some(source) = next {
        messages.push(source.to_string());
        next = source.source();
    }
    for (i, message) in messages.iter().enumerate() {
        for later in &messages[i + 1..] {
            assert!(
                !message.contains(later.as_str()),
                "{message:?} repeats {later:?}"
            );
        }
    }
    assert!(messages[0].contains("line 3"), "{messages:?}");
}

#[test]
fn missing_entry_lists_the_entries_that_exist() {
    let f = fixtures::by_entry("baracuda_gen_neg_f32_scalar");
    let artifact = Artifact::ptx(f.ptx, "baracuda_gen_relu_f32_scalar", f.spec.clone());
    match load(artifact).unwrap_err() {
        Error::EntryNotFound {
            entry,
            available,
            mangled,
        } => {
            assert_eq!(mangled, None);
            assert_eq!(entry, "baracuda_gen_relu_f32_scalar");
            assert_eq!(
                available,
                ["baracuda_gen_neg_f32_scalar", "baracuda_gen_abs_f32_scalar"]
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn wrong_parameter_count_is_declined() {
    let f = fixtures::by_entry("baracuda_gen_add_f32_scalar");
    // Three inputs claimed; the kernel has two.
    let spec = AbiSpec::new(AbiKind::Scalar, &[F32, F32, F32], &[F32], &[]);
    match load(Artifact::ptx(f.ptx, f.entry, spec)).unwrap_err() {
        Error::ParamCount {
            entry,
            expected,
            found,
            lists,
        } => {
            assert_eq!(entry, f.entry);
            assert_eq!((expected, found), (5, 4));
            assert_eq!(
                lists.to_string(),
                "the abi expects (.u64 in0, .u64 in1, .u64 in2, .u64 out0, .u64 n), \
                 the entry declares (.u64, .u64, .u64, .u64)"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn scalar_and_strided_are_told_apart_by_the_param_list() {
    // The seeds sniffed `_scalar` in the name; a strided kernel claimed as scalar must fail.
    let f = fixtures::by_entry("baracuda_gen_add_f32_strided_r1");
    let spec = AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[]);
    assert!(matches!(
        load(Artifact::ptx(f.ptx, f.entry, spec)),
        Err(Error::ParamCount {
            expected: 4,
            found: 8,
            ..
        })
    ));
    let f = fixtures::by_entry("baracuda_gen_add_sub_f32_mo2_scalar");
    let one_output = AbiSpec::new(AbiKind::Scalar, &[F32, F32], &[F32], &[]);
    assert!(matches!(
        load(Artifact::ptx(f.ptx, f.entry, one_output)),
        Err(Error::ParamCount {
            expected: 4,
            found: 5,
            ..
        })
    ));
}

#[test]
fn f64_param_claimed_as_f32_is_a_class_mismatch() {
    let f = fixtures::by_entry("baracuda_gen_mul_scalar_f64_strided_r2");
    let spec = AbiSpec::new(AbiKind::Strided { rank: 2 }, &[F64], &[F64], &[F32]);
    match load(Artifact::ptx(f.ptx, f.entry, spec)).unwrap_err() {
        Error::ParamMismatch {
            entry,
            index,
            role,
            expected,
            found,
            what,
            ..
        } => {
            assert_eq!(entry, f.entry);
            assert_eq!(index, 9);
            assert_eq!(role, ParamRole::Param(0));
            assert_eq!(expected, ParamClass::F32);
            assert_eq!(found, ".f64");
            assert_eq!(what, Mismatch::Class);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn narrower_integer_is_a_size_mismatch() {
    let text = module_with(".param .u64 a, .param .u64 o, .param .u32 n");
    let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
    match load(Artifact::ptx(text, "k", spec)).unwrap_err() {
        Error::ParamMismatch {
            index,
            role,
            expected,
            what,
            ..
        } => {
            assert_eq!((index, role), (2, ParamRole::Count));
            assert_eq!(expected, ParamClass::Int64);
            assert_eq!(what, Mismatch::Size);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn half_param_byte_arrays_are_checked_for_size_and_alignment() {
    let spec = AbiSpec::new(AbiKind::Scalar, &[F16], &[F16], &[F16]);
    let base = ".param .u64 a, .param .u64 o, .param .u64 n";
    let good = module_with(&format!("{base}, .param .align 2 .b8 p[2]"));
    assert!(load(Artifact::ptx(good, "k", spec.clone())).is_ok());

    let misaligned = module_with(&format!("{base}, .param .align 4 .b8 p[2]"));
    match load(Artifact::ptx(misaligned, "k", spec.clone())).unwrap_err() {
        Error::ParamMismatch {
            index,
            expected,
            found,
            what,
            ..
        } => {
            assert_eq!(index, 3);
            assert_eq!(expected, ParamClass::Bytes { size: 2, align: 2 });
            assert_eq!(found, ".align 4 .b8 [2]");
            assert_eq!(what, Mismatch::Alignment);
        }
        other => panic!("unexpected {other:?}"),
    }

    let wide = module_with(&format!("{base}, .param .align 2 .b8 p[4]"));
    assert!(matches!(
        load(Artifact::ptx(wide, "k", spec)),
        Err(Error::ParamMismatch {
            index: 3,
            what: Mismatch::Size,
            ..
        })
    ));
}

#[test]
fn ptx_bytes_labelled_cubin_are_declined_plainly() {
    let f = fixtures::by_entry("baracuda_gen_add_f32_scalar");
    let mut artifact = f.artifact();
    artifact.kind = ArtifactKind::Cubin;
    let err = load(artifact).unwrap_err();
    assert!(matches!(&err, Error::Cubin { entry, .. } if entry == f.entry));
    assert!(err.to_string().contains("not a readable cubin"), "{err}");
    assert!(err.is_decline());
}

#[test]
fn a_declined_load_gives_the_kernel_back() {
    let f = fixtures::by_entry("baracuda_gen_add_f32_scalar");
    let mut artifact = f.artifact();
    artifact.link.symbol = "wrong".to_owned();
    let described = Kernel::describe(artifact).unwrap();
    let (error, mut kernel) = described.load().unwrap_err().into_parts();
    assert!(matches!(error, Error::EntryNotFound { .. }));
    assert_eq!(kernel.artifact().link.entry_point, f.entry);
    // Nothing was lost: the same artifact, with the symbol fixed, loads.
    let mut artifact = kernel.artifact().clone();
    artifact.link.symbol = f.entry.to_owned();
    kernel = Kernel::describe(artifact).unwrap();
    assert!(kernel.load().is_ok());
}

#[test]
fn artifacts_round_trip_through_json() {
    let f = fixtures::by_entry("baracuda_gen_add_scalar_mul_scalar_f32_scalar");
    let artifact = f.artifact();
    let json = serde_json::to_string(&artifact).unwrap();
    let back: Artifact = serde_json::from_str(&json).unwrap();
    assert_eq!(back, artifact);
    assert!(load(back).is_ok());
}

#[test]
fn an_entry_compiled_without_extern_c_is_named_with_the_fix() {
    let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
    // What NVRTC names `__global__ void my_saxpy(const float*, float*, long long)` without
    // `extern "C"`.
    let mangled = "_Z8my_saxpyPKfPfx";
    let text = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry {mangled}(\
         .param .u64 a, .param .u64 b, .param .u64 c)\n{{\n\tret;\n}}\n"
    );
    let error = load(Artifact::ptx(text, "my_saxpy", spec)).unwrap_err();
    match &error {
        Error::EntryNotFound {
            mangled: Some(found),
            ..
        } => {
            assert_eq!(found.mangled, mangled);
            assert!(
                found.demangled.starts_with("my_saxpy("),
                "{}",
                found.demangled
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    let message = error.to_string();
    assert!(message.contains("extern \"C\""), "{message}");
    assert!(
        message.contains("symbol = \"_Z8my_saxpyPKfPfx\""),
        "{message}"
    );
}

/// Runs `work` on a thread with a 256 KiB stack: a parser that recursed once per level of its
/// input without a limit would overflow it (aborting the test binary).
fn on_a_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(work)
        .unwrap()
        .join()
        .unwrap()
}

/// Operands and initializers nested ten times past the body parser's limits, and as deep as the
/// report that found the overflow (30,000 levels), are declined by `load()` with the limit in
/// the message, on a small stack. A module-scope variable's initializer is read where the
/// variable is needed: binding on the emulator declines it (the verifier refuses any access
/// through a variable it cannot read).
#[test]
fn nesting_past_the_parsers_limits_is_declined_on_a_small_stack() {
    use jitseam_ptx::body::{MAX_INITIALIZER_NESTING, MAX_OPERAND_NESTING};
    let nested =
        |levels: usize, inner: &str| format!("{}{inner}{}", "{".repeat(levels), "}".repeat(levels));
    let module = |global: &str, statement: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n{global}\n\
             .visible .entry k(.param .u64 k_out, .param .u64 k_n)\n{{\n\t.reg .b32 %r<2>;\n\t{statement}\n\tret;\n}}\n"
        )
    };
    let spec = || AbiSpec::new(AbiKind::Scalar, &[], &[F32], &[]);
    let in_body = [
        (
            format!("mov.b32 {};", nested(10 * MAX_OPERAND_NESTING, "%r1")),
            MAX_OPERAND_NESTING,
        ),
        (
            format!("mov.b32 {};", nested(30_000, "%r1")),
            MAX_OPERAND_NESTING,
        ),
        (
            format!(
                ".local .u32 l[1] = {};",
                nested(10 * MAX_INITIALIZER_NESTING, "1")
            ),
            MAX_INITIALIZER_NESTING,
        ),
    ];
    for (statement, limit) in in_body {
        let text = module("", &statement);
        let declined = on_a_small_stack(move || load(Artifact::ptx(text, "k", spec())).err());
        let shown = declined.as_ref().map(ToString::to_string);
        assert!(declined.is_some_and(|e| e.is_decline()), "{shown:?}");
        let shown = shown.unwrap_or_default();
        assert!(
            shown.contains(&format!("nested more than {limit} levels deep")),
            "{shown}"
        );
    }
    for levels in [10 * MAX_INITIALIZER_NESTING, 30_000] {
        let text = module(&format!(".global .u32 g[1] = {};", nested(levels, "1")), "");
        let bound = on_a_small_stack(move || {
            let loaded = load(Artifact::ptx(text, "k", spec())).map_err(|e| e.to_string())?;
            loaded
                .bind(&jitseam::Device::emulator())
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        let shown = bound.err().unwrap_or_default();
        assert!(
            shown.contains(&format!(
                "nested more than {MAX_INITIALIZER_NESTING} levels deep"
            )),
            "{shown}"
        );
    }
}

/// A deeply nested artifact in JSON is an error, not a stack overflow: serde_json skips a
/// field the artifact ignores without recursing, and refuses nesting where a value belongs
/// before it recurses further than its recursion limit (128). (The input need not be closed:
/// either happens first.)
#[test]
fn deeply_nested_artifact_json_is_an_error_on_a_small_stack() {
    let f = fixtures::by_entry("baracuda_gen_add_scalar_mul_scalar_f32_scalar");
    let json = serde_json::to_string(&f.artifact()).unwrap();
    let deep = "[".repeat(100_000);
    for field in ["later", "abi", "bytes", "link", "provenance"] {
        let text = json.replacen('{', &format!("{{\"{field}\":{deep}"), 1);
        let parsed = on_a_small_stack(move || serde_json::from_str::<Artifact>(&text).is_err());
        assert!(parsed, "{field}");
    }
}

/// A missing entry's name is demangled to suggest `extern "C"`; the demangler recurses once per
/// level of nesting in the name, which on a small stack (an unoptimized build's frames are
/// large) overflowed at a dozen levels. Names nested 200 deep are declined plainly on a 256 KiB
/// stack, and a name nested a few levels still gets its hint.
#[test]
fn deeply_nested_mangled_names_are_declined_on_a_small_stack() {
    let module = |name: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry {name}(\
             .param .u64 a, .param .u64 b, .param .u64 c)\n{{\n\tret;\n}}\n"
        )
    };
    let levels = 200;
    for name in [
        format!("_Z8my_saxpy{}v", "P".repeat(levels)),
        format!("_Z8my_saxpyI{}iEv", "1aI".repeat(levels)),
        format!("_Z8my_saxpy{}v", "PFv".repeat(levels)),
        format!("_Z8my_saxpy{}iE", "N1a".repeat(levels)),
    ] {
        let text = module(&name);
        let declined = on_a_small_stack(move || {
            let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
            load(Artifact::ptx(text, "my_saxpy", spec)).err()
        });
        assert!(
            matches!(declined, Some(Error::EntryNotFound { .. })),
            "{declined:?}"
        );
    }
    let mangled = "_Z8my_saxpyPPPKfPfx";
    let text = module(mangled);
    let declined = on_a_small_stack(move || {
        let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
        load(Artifact::ptx(text, "my_saxpy", spec)).err()
    });
    match declined {
        Some(Error::EntryNotFound {
            mangled: Some(found),
            ..
        }) => assert_eq!(
            found.demangled,
            "my_saxpy(float const***, float*, long long)"
        ),
        other => panic!("unexpected {other:?}"),
    }
}

/// `load()` parses and resolves the PTX once: the module it proved reaches the backend at
/// `bind()`, so a backend that reads PTX itself (the emulator) decodes it without parsing the
/// text again. A kernel loaded unverified only had its header scanned, and gets the text.
#[test]
fn bind_hands_the_backend_the_module_load_parsed() {
    let backend = jitseam::testing::FakeBackend::builder().build();
    let device = backend.device();
    let fixture = &fixtures::all()[0];
    let kernel = load(fixture.artifact()).unwrap();
    kernel.bind(&device).unwrap();
    assert_eq!((backend.loads(), backend.resolved_loads()), (1, 1));

    // SAFETY: the fixture is a real NVRTC kernel for its ABI; nothing is launched here.
    let vouched = unsafe {
        Kernel::describe(fixture.artifact())
            .unwrap()
            .load_unverified()
    };
    vouched.unwrap().bind(&device).unwrap();
    assert_eq!((backend.loads(), backend.resolved_loads()), (2, 1));
}
