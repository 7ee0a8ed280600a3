//! Cubins: NVRTC-made cubins (tests/fixtures/cubin/, see its README) read with their
//! architecture and parameters; the parameters equal those of the PTX of the same compile for
//! every fixture; a wrong ABI is declined with the parameter index; a cubin without sealed PTX
//! loads only through `load_unverified`; damaged images never panic.

mod common;

use common::fixtures;
use common::nvrtc_env::cubin_fixture;
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, ElementKind, Error, Kernel, LinkedPtx, LoadedImage,
    Provenance,
};
use jitseam_ptx::{CubinParam, parse_cubin};
use proptest::prelude::*;

const ARCHS: [&str; 2] = ["sm_90", "sm_80"];

/// `(offset, size)` of each PTX parameter, placed as the PTX ABI places them: each at the next
/// multiple of its alignment (`.align` or the type's size).
fn ptx_offsets(entry: &jitseam_ptx::Entry) -> Vec<(u32, u32)> {
    let mut at = 0u64;
    entry
        .params
        .iter()
        .map(|p| {
            let align = u64::from(p.align.unwrap_or(p.ty.bytes()).max(1));
            at = at.div_ceil(align) * align;
            let placed = (at as u32, p.size_bytes() as u32);
            at += p.size_bytes();
            placed
        })
        .collect()
}

#[test]
fn every_fixture_cubin_has_the_params_of_the_ptx_of_its_compile() {
    let mut checked = 0;
    for fixture in fixtures::all() {
        for arch in ARCHS {
            let (bytes, ptx) = cubin_fixture(fixture.file, arch);
            let cubin = parse_cubin(&bytes).unwrap();
            assert_eq!(cubin.arch.to_string(), arch, "{}", fixture.file);
            let module = jitseam_ptx::parse_module(&ptx).unwrap();
            let ptx_entry = module.entry(fixture.entry).unwrap();
            let entry = cubin
                .entry(fixture.entry)
                .unwrap_or_else(|| panic!("{} {arch}: no entry {}", fixture.file, fixture.entry));
            let from_cubin: Vec<(u32, u32)> =
                entry.params.iter().map(|p| (p.offset, p.size)).collect();
            assert_eq!(
                from_cubin,
                ptx_offsets(ptx_entry),
                "{} {arch}",
                fixture.entry
            );
            let ordinals: Vec<u32> = entry.params.iter().map(|p| p.ordinal).collect();
            assert_eq!(ordinals, (0..entry.params.len() as u32).collect::<Vec<_>>());
            let total = from_cubin.last().map_or(0, |(o, s)| o + s);
            assert_eq!(
                entry.param_cbank.map(|c| c.size),
                Some(total),
                "{}",
                fixture.entry
            );
            assert!(entry.registers.is_some_and(|r| r > 0), "{}", fixture.entry);
            checked += 1;
        }
    }
    assert_eq!(checked, fixtures::all().len() * ARCHS.len());
}

#[test]
fn cubin_params_match_every_fixture_abi() {
    for fixture in fixtures::all() {
        for arch in ARCHS {
            let (bytes, _) = cubin_fixture(fixture.file, arch);
            let artifact = Artifact::cubin(bytes, fixture.entry, fixture.spec.clone());
            // SAFETY: NVRTC compiled these fixtures from the sources next to them, which touch
            // only their operands within the ABI's bounds (the PTX of the same compile passes
            // `load()`, see tests/nvrtc.rs).
            let loaded = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }
                .unwrap_or_else(|e| panic!("{} {arch}: {e}", fixture.entry));
            assert!(!loaded.loaded().body_verified());
            assert_eq!(loaded.loaded().target().arch, arch);
            assert!(matches!(
                loaded.loaded().image(),
                LoadedImage::Cubin {
                    linked_ptx: false,
                    ..
                }
            ));
        }
    }
}

fn axpb_cubin(spec: AbiSpec) -> Artifact {
    let (bytes, _) = cubin_fixture("add_scalar_mul_scalar_f32_scalar.ptx", "sm_90");
    Artifact::cubin(bytes, "baracuda_gen_add_scalar_mul_scalar_f32_scalar", spec)
}

fn load_vouched(artifact: Artifact) -> Result<Kernel<jitseam::Erased, jitseam::Loaded>, Error> {
    // SAFETY: the fixture kernels touch only their operands (see above); these tests only
    // check what `load_unverified` still refuses, nothing is launched.
    Ok(unsafe { Kernel::describe(artifact)?.load_unverified() }?)
}

#[test]
fn a_cubin_with_a_wrong_abi_is_declined_with_the_parameter_index() {
    use ElementKind::{F32, F64};
    // An f64 where the cubin has a 4-byte float: parameter 3 (after two pointers and `n`).
    let err = load_vouched(axpb_cubin(AbiSpec::owned(
        AbiKind::Scalar,
        vec![F32],
        vec![F32],
        vec![F64, F32],
    )))
    .unwrap_err();
    match &err {
        Error::CubinParamMismatch {
            index,
            expected_size,
            found_size,
            ..
        } => assert_eq!((*index, *expected_size, *found_size), (3, 8, 4)),
        other => panic!("expected CubinParamMismatch, got {other}"),
    }
    assert!(err.to_string().contains("parameter 3"), "{err}");
    assert!(err.is_decline());

    // One param too few: the count.
    let err = load_vouched(axpb_cubin(AbiSpec::owned(
        AbiKind::Scalar,
        vec![F32],
        vec![F32],
        vec![F32],
    )))
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ParamCount {
                expected: 4,
                found: 5,
                ..
            }
        ),
        "{err}"
    );

    // A cubin records sizes, not types: an i32 where the kernel has an f32 cannot be told apart.
    use ElementKind::I32;
    load_vouched(axpb_cubin(AbiSpec::owned(
        AbiKind::Scalar,
        vec![F32],
        vec![F32],
        vec![I32, F32],
    )))
    .unwrap();

    // A symbol the cubin lacks is named with what it has.
    let mut artifact = axpb_cubin(AbiSpec::owned(
        AbiKind::Scalar,
        vec![F32],
        vec![F32],
        vec![F32, F32],
    ));
    artifact.link.symbol = "nope".into();
    let err = load_vouched(artifact).unwrap_err();
    assert!(
        err.to_string()
            .contains("baracuda_gen_add_scalar_mul_scalar_f32_scalar"),
        "{err}"
    );
}

fn axpb_spec() -> AbiSpec {
    use ElementKind::F32;
    AbiSpec::owned(AbiKind::Scalar, vec![F32], vec![F32], vec![F32, F32])
}

#[test]
fn a_cubin_without_sealed_ptx_of_its_compile_is_refused_by_load() {
    let err = Kernel::describe(axpb_cubin(axpb_spec()))
        .unwrap()
        .load()
        .unwrap_err();
    assert!(matches!(err.error, Error::CubinUnverified { .. }), "{err}");
    assert!(err.to_string().contains("load_unverified"), "{err}");

    // A link written by hand (or carried in from another process) does not verify either.
    let (_, ptx) = cubin_fixture("add_scalar_mul_scalar_f32_scalar.ptx", "sm_90");
    let mut forged = axpb_cubin(axpb_spec());
    forged.provenance = Some(Provenance {
        compiler: "nvrtc 12.9".into(),
        target: "sm_90".into(),
        options: vec![],
        source_sha256: String::new(),
        linked_ptx: Some(LinkedPtx {
            text: ptx,
            seal: "0".repeat(64),
        }),
    });
    let err = Kernel::describe(forged).unwrap().load().unwrap_err();
    assert!(matches!(err.error, Error::CubinUnverified { .. }), "{err}");
}

#[test]
fn an_unlinked_cubin_cannot_run_on_the_emulator() {
    let loaded = load_vouched(axpb_cubin(axpb_spec())).unwrap();
    let err = loaded.bind(&Device::emulator()).unwrap_err();
    assert!(matches!(err.error, Error::ImageUnsupported { .. }), "{err}");
}

#[test]
fn cubin_facts_are_read_from_nv_info() {
    let (bytes, _) = cubin_fixture("two_entries.ptx", "sm_80");
    let cubin = parse_cubin(&bytes).unwrap();
    let mut names: Vec<&str> = cubin.entry_names().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["baracuda_gen_abs_f32_scalar", "baracuda_gen_neg_f32_scalar"]
    );
    let entry = &cubin.entries[0];
    assert_eq!(
        entry.params,
        [(0, 0, 8), (1, 8, 8), (2, 16, 8)].map(|(ordinal, offset, size)| CubinParam {
            ordinal,
            offset,
            size
        })
    );
    assert_eq!(entry.shared_bytes, 0);
    assert_eq!(entry.max_threads, None);
    // Not a cubin at all.
    assert!(parse_cubin(b"\x7fELF").is_err());
    assert!(parse_cubin(fixtures::all()[0].ptx.as_bytes()).is_err());
}

fn any_cubin() -> impl Strategy<Value = Vec<u8>> {
    let files: Vec<Vec<u8>> = [
        "add_f32_scalar.ptx",
        "two_entries.ptx",
        "add_f32_strided_r3.ptx",
    ]
    .iter()
    .flat_map(|f| ARCHS.map(|a| cubin_fixture(f, a).0))
    .collect();
    proptest::sample::select(files)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Truncated, bit-flipped and byte-stomped cubins: an error or a value, never a panic.
    #[test]
    fn damaged_cubins_never_panic(
        cubin in any_cubin(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        truncate in any::<bool>(),
    ) {
        let mut bytes = cubin;
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        let _ = parse_cubin(&bytes);
        let artifact = Artifact::cubin(bytes, "baracuda_gen_add_f32_scalar", fixtures::all()[0].spec.clone());
        let _ = load_vouched(artifact);
    }
}
