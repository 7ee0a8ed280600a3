//! Module headers, entries, parameters, performance directives and functions.

mod common;

use jitseam_ptx::{
    Lexer, Linkage, Module, Param, ParseErrorKind, PerfDirective, PtrAttr, ScalarType, StateSpace,
    TokenKind, Version, parse_module, scan_module,
};

fn parse(src: &str) -> Module {
    match parse_module(src) {
        Ok(module) => module,
        Err(error) => unreachable!("sample must parse: {error}"),
    }
}

fn param<'m>(module: &'m Module, entry: &str, index: usize) -> &'m Param {
    let params = module.entry(entry).map(|e| &e.params);
    params
        .and_then(|p| p.get(index))
        .unwrap_or_else(|| unreachable!("{entry} #{index}"))
}

#[test]
fn nvrtc_scalar_header_and_params() {
    let module = parse(common::NVRTC_SCALAR);
    assert_eq!(module.version, Version { major: 8, minor: 8 });
    assert_eq!(module.target.arch, "sm_80");
    assert_eq!(module.target.sm(), Some(80));
    assert_eq!(module.target.arch_suffix(), None);
    assert_eq!(module.address_size, Some(64));
    assert_eq!(
        module.entry_names().collect::<Vec<_>>(),
        ["baracuda_gen_add_f32_scalar"]
    );
    let entry = &module.entries[0];
    assert_eq!(entry.linkage, Linkage::Visible);
    assert_eq!(entry.params.len(), 4);
    for (i, p) in entry.params.iter().enumerate() {
        assert_eq!(p.name, format!("baracuda_gen_add_f32_scalar_param_{i}"));
        assert_eq!(p.ty, ScalarType::U64);
        assert_eq!((p.align, p.array_len, p.ptr), (None, None, None));
        assert_eq!(p.size_bytes(), 8);
        assert!(common::NVRTC_SCALAR[p.offset..].starts_with(".param"));
    }
    assert!(entry.directives.is_empty());
    assert!(common::NVRTC_SCALAR[entry.offset..].starts_with(".entry"));
}

#[test]
fn body_range_is_the_interior_and_relexes() {
    let src = common::NVRTC_SCALAR;
    let module = parse(src);
    let body = module.entries[0].body.clone().unwrap_or_default();
    assert_eq!(src.as_bytes()[body.start - 1], b'{');
    assert_eq!(src.as_bytes()[body.end], b'}');
    assert!(src[body.clone()].trim_start().starts_with(".reg .pred"));
    assert!(src[body.clone()].trim_end().ends_with("ret;"));
    let tokens: Vec<_> = Lexer::with_range(src, body.clone()).collect();
    assert!(tokens.iter().all(Result::is_ok));
    let first = tokens.first().and_then(|t| t.as_ref().ok()).copied();
    assert_eq!(
        first.map(|t| (t.kind, t.text)),
        Some((TokenKind::Directive, ".reg"))
    );
    assert!(first.is_some_and(|t| t.offset > body.start));
}

#[test]
fn mixed_target_and_entries() {
    let module = parse(common::MIXED);
    assert_eq!(module.version, Version { major: 8, minor: 5 });
    assert_eq!(module.target.arch, "sm_90a");
    assert_eq!(module.target.sm(), Some(90));
    assert_eq!(module.target.arch_suffix(), Some('a'));
    assert_eq!(
        module.entry_names().collect::<Vec<_>>(),
        ["mixed_scalar", "weak_kernel", "plain_kernel"]
    );
    let linkages: Vec<_> = module.entries.iter().map(|e| e.linkage).collect();
    assert_eq!(
        linkages,
        [Linkage::Visible, Linkage::Weak, Linkage::Default]
    );
    assert!(module.entries.iter().all(|e| e.body.is_some()));
    assert!(module.entry("helper").is_none());
}

#[test]
fn param_attributes() {
    let module = parse(common::MIXED);
    let p0 = param(&module, "mixed_scalar", 0);
    assert_eq!(p0.ty, ScalarType::U64);
    assert_eq!(
        p0.ptr,
        Some(PtrAttr {
            space: Some(StateSpace::Global),
            align: Some(16)
        })
    );
    assert_eq!(p0.align, None);
    assert_eq!(param(&module, "mixed_scalar", 1).ty, ScalarType::F32);
    assert_eq!(param(&module, "mixed_scalar", 2).ty, ScalarType::F64);
    let half = param(&module, "mixed_scalar", 3);
    assert_eq!(
        (half.ty, half.align, half.array_len),
        (ScalarType::B8, Some(2), Some(2))
    );
    assert_eq!(half.size_bytes(), 2);
    let vec16 = param(&module, "mixed_scalar", 4);
    assert_eq!(
        (vec16.align, vec16.array_len, vec16.size_bytes()),
        (Some(16), Some(16), 16)
    );
    assert_eq!(param(&module, "mixed_scalar", 5).ty, ScalarType::S64);
    assert_eq!(module.entry("weak_kernel").map(|e| e.params.len()), Some(0));
    assert_eq!(param(&module, "plain_kernel", 0).ty, ScalarType::U32);
}

#[test]
fn performance_directives() {
    let module = parse(common::MIXED);
    let directives = |name| {
        module
            .entry(name)
            .map(|e| e.directives.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        directives("mixed_scalar"),
        [
            PerfDirective::MaxNtid(vec![256, 1, 1]),
            PerfDirective::MinNctaPerSm(2)
        ]
    );
    assert_eq!(
        directives("weak_kernel"),
        [
            PerfDirective::ReqNtid(vec![128]),
            PerfDirective::MaxNreg(32)
        ]
    );
    // `.noreturn` and `.pragma` are tolerated and not modelled.
    assert_eq!(directives("plain_kernel"), []);
}

#[test]
fn functions_with_returns_and_prototypes() {
    let module = parse(common::MIXED);
    let names: Vec<_> = module.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["vprintf", "helper"]);
    let vprintf = &module.functions[0];
    assert_eq!(vprintf.linkage, Linkage::Extern);
    assert_eq!(vprintf.body, None);
    assert_eq!(vprintf.returns.len(), 1);
    assert_eq!(vprintf.params.len(), 2);
    let helper = &module.functions[1];
    assert_eq!(helper.linkage, Linkage::Default);
    assert_eq!(helper.returns[0].name, "func_retval0");
    assert_eq!(helper.returns[0].ty, ScalarType::B32);
    let types: Vec<_> = helper.params.iter().map(|p| p.ty).collect();
    assert_eq!(types, [ScalarType::B32, ScalarType::F32]);
    let body = helper.body.clone().unwrap_or_default();
    assert!(common::MIXED[body].contains("st.param.b32"));
}

#[test]
fn debug_target_file_and_section() {
    let module = parse(common::DEBUG);
    assert_eq!(module.target.arch, "sm_80");
    assert_eq!(module.target.modifiers, ["debug"]);
    assert!(module.target.is_debug());
    assert_eq!(module.entry_names().collect::<Vec<_>>(), ["dbg"]);
}

#[test]
fn target_variants() {
    let header = |target: &str| format!(".version 8.8\n.target {target}\n");
    let cases = [
        ("sm_100f", Some(100), Some('f')),
        ("compute_90", Some(90), None),
        ("sm_90a, texmode_independent", Some(90), Some('a')),
        ("texmode_independent, sm_70, map_f64_to_f32", Some(70), None),
    ];
    for (target, sm, suffix) in cases {
        let module = parse(&header(target));
        assert_eq!(module.target.sm(), sm, "{target}");
        assert_eq!(module.target.arch_suffix(), suffix, "{target}");
    }
    let module = parse(&header("texmode_independent, sm_70, map_f64_to_f32"));
    assert_eq!(
        module.target.modifiers,
        ["texmode_independent", "map_f64_to_f32"]
    );
    assert_eq!(module.address_size, None);
}

#[test]
fn prototype_entry_and_unnamed_params_list() {
    let module = parse(
        ".version 8.0\n.target sm_80\n.extern .entry ext(.param .b64 a);\n.entry bare { ret; }\n",
    );
    let ext = module.entry("ext");
    assert_eq!(
        ext.map(|e| (e.linkage, e.body.clone())),
        Some((Linkage::Extern, None))
    );
    assert_eq!(module.entry("bare").map(|e| e.params.len()), Some(0));
}

#[test]
fn scalar_types_round_trip() {
    let all = [
        ("b8", 1),
        ("b16", 2),
        ("b32", 4),
        ("b64", 8),
        ("b128", 16),
        ("u8", 1),
        ("u16", 2),
        ("u32", 4),
        ("u64", 8),
        ("s8", 1),
        ("s16", 2),
        ("s32", 4),
        ("s64", 8),
        ("f16", 2),
        ("f16x2", 4),
        ("bf16", 2),
        ("bf16x2", 4),
        ("f32", 4),
        ("f64", 8),
    ];
    for (name, bytes) in all {
        let ty = ScalarType::from_directive(&format!(".{name}"));
        assert_eq!(ty.map(ScalarType::name), Some(name));
        assert_eq!(ty.map(ScalarType::bytes), Some(bytes));
        let src = format!(".version 8.8\n.target sm_80\n.entry k(.param .{name} p) {{ }}");
        assert_eq!(
            param(&parse(&src), "k", 0).ty,
            ty.unwrap_or(ScalarType::Pred)
        );
    }
    assert_eq!(ScalarType::from_directive("u64"), None);
    assert_eq!(ScalarType::from_directive(".u65"), None);
}

#[test]
fn other_array_types() {
    let src = ".version 8.8\n.target sm_80\n.entry k(.param .align 8 .u32 v[4]) { }";
    let module = parse(src);
    let p = param(&module, "k", 0);
    assert_eq!(
        (p.ty, p.align, p.array_len, p.size_bytes()),
        (ScalarType::U32, Some(8), Some(4), 16)
    );
}

#[test]
fn missing_header_directives_are_typed_errors() {
    let no_version = parse_module(".target sm_80\n.entry k() { }");
    assert_eq!(
        no_version.map_err(|e| e.kind),
        Err(ParseErrorKind::MissingVersion)
    );
    let no_target = parse_module(".version 8.8\n.entry k() { }");
    assert_eq!(
        no_target.map_err(|e| e.kind),
        Err(ParseErrorKind::MissingTarget)
    );
    assert_eq!(
        parse_module("").map_err(|e| e.kind),
        Err(ParseErrorKind::MissingVersion)
    );
}

#[test]
fn scan_index_converts_to_the_parsed_module() {
    for src in [common::NVRTC_SCALAR, common::MIXED, common::DEBUG] {
        let index = scan_module(src).unwrap_or_else(|e| unreachable!("{e}"));
        let module = parse(src);
        assert_eq!(index.to_module(), module);
        assert_eq!(Module::from(index.clone()), module);
        assert_eq!(
            (index.version, &index.target),
            (module.version, &module.target)
        );
        assert_eq!(index.address_size, module.address_size);
        assert_eq!(index.entry_count(), module.entries.len());
        assert!(index.entry_names().eq(module.entry_names()));
        for (entry, owned) in index.entries().zip(&module.entries) {
            assert_eq!(&entry.to_owned(), owned);
            let found = index.entry(entry.name).map(|e| e.to_owned());
            assert_eq!(found.as_ref(), module.entry(entry.name));
            for (param, owned) in entry.params.iter().zip(&owned.params) {
                assert_eq!(param.size_bytes(), owned.size_bytes());
            }
        }
        assert!(
            index
                .functions()
                .map(|f| f.to_owned())
                .eq(module.functions.clone())
        );
        assert!(index.entry("no_such_kernel").is_none());
    }
}

#[test]
fn scan_index_borrows_names_and_shares_param_storage() {
    let src = common::MIXED;
    let index = scan_module(src).unwrap_or_else(|e| unreachable!("{e}"));
    let entry = index
        .entry("mixed_scalar")
        .unwrap_or_else(|| unreachable!());
    // Names are slices of the source, not copies.
    let name = entry.params[0].name;
    assert!(src.as_bytes().as_ptr_range().contains(&name.as_ptr()));
    assert_eq!(&src[entry.params[0].offset..][..6], ".param");
    assert_eq!(entry.params.len(), 6);
    assert_eq!(
        entry
            .directives
            .iter()
            .map(|d| d.to_owned())
            .collect::<Vec<_>>(),
        [
            PerfDirective::MaxNtid(vec![256, 1, 1]),
            PerfDirective::MinNctaPerSm(2)
        ]
    );
    let weak = index.entry("weak_kernel").unwrap_or_else(|| unreachable!());
    assert!(weak.params.is_empty());
    assert_eq!(weak.linkage, Linkage::Weak);
    assert!(
        matches!(&weak.directives[0], jitseam_ptx::DirectiveRef::ReqNtid(d) if d.as_slice() == [128])
    );
}
