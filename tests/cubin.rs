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

/// A minimal CUDA ELF: `kernels` entry symbols `k0, k1, …`, each with an `.nv.info.kN` section
/// holding one 8-byte parameter, and a module-wide `.nv.info` with each kernel's register
/// count. Laid out by hand: the reader must take it like `ptxas` output.
fn synthetic_cubin(kernels: usize) -> Vec<u8> {
    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u64le(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut shstrtab = b"\0.shstrtab\0.strtab\0.symtab\0.nv.info\0".to_vec();
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24];
    let mut module_info = Vec::new();
    // (name offset in .shstrtab, section bytes)
    let mut infos: Vec<(u32, Vec<u8>)> = Vec::new();
    for k in 0..kernels {
        let name = format!("k{k}");
        let symbol = u32::try_from(strtab.len()).unwrap();
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        u32le(&mut symtab, symbol);
        symtab.push(0x12); // STB_GLOBAL, STT_FUNC
        symtab.push(0x10); // STO_CUDA_ENTRY
        u16le(&mut symtab, 1);
        u64le(&mut symtab, 0);
        u64le(&mut symtab, 0);
        // EIATTR_REGCOUNT: (symbol index, registers).
        module_info.extend_from_slice(&[0x04, 0x2f, 8, 0]);
        u32le(&mut module_info, u32::try_from(k + 1).unwrap());
        u32le(&mut module_info, 16);
        // EIATTR_KPARAM_INFO: index, ordinal 0, offset 0, size 8 in the top 14 bits.
        let mut info = vec![0x04, 0x17, 12, 0];
        u32le(&mut info, 0);
        u16le(&mut info, 0);
        u16le(&mut info, 0);
        u32le(&mut info, 8 << 18);
        let section_name = u32::try_from(shstrtab.len()).unwrap();
        shstrtab.extend_from_slice(format!(".nv.info.{name}\0").as_bytes());
        infos.push((section_name, info));
    }
    // Contents after the 64-byte header, then the section headers.
    let mut data = Vec::new();
    // Every piece 8-byte aligned, as the reader's headers and symbols want.
    let mut place = |bytes: &[u8]| {
        data.resize(data.len().next_multiple_of(8), 0);
        let at = 64 + data.len() as u64;
        data.extend_from_slice(bytes);
        (at, bytes.len() as u64)
    };
    /// A section header's fields: name, type, link, entry size, (offset, size).
    type Header = (u32, u32, u32, u64, (u64, u64));
    let mut sections: Vec<Header> = vec![
        (0, 0, 0, 0, (0, 0)),
        (1, 3, 0, 0, place(&shstrtab)),
        (11, 3, 0, 0, place(&strtab)),
        (19, 2, 2, 24, place(&symtab)),
        (27, 0x7000_0000, 0, 0, place(&module_info)),
    ];
    for (name, info) in &infos {
        sections.push((*name, 0x7000_0000, 0, 0, place(info)));
    }
    data.resize(data.len().next_multiple_of(8), 0);
    let shoff = 64 + data.len() as u64;
    let mut elf = Vec::new();
    elf.extend_from_slice(b"\x7fELF\x02\x01\x01\x33\x07\0\0\0\0\0\0\0");
    u16le(&mut elf, 2);
    u16le(&mut elf, 190);
    u32le(&mut elf, 1);
    u64le(&mut elf, 0);
    u64le(&mut elf, 0);
    u64le(&mut elf, shoff);
    u32le(&mut elf, 0x5a_055a);
    u16le(&mut elf, 64);
    u16le(&mut elf, 56);
    u16le(&mut elf, 0);
    u16le(&mut elf, 64);
    u16le(&mut elf, u16::try_from(sections.len()).unwrap_or(0));
    u16le(&mut elf, 1);
    elf.extend_from_slice(&data);
    for (name, kind, link, entsize, (offset, size)) in sections {
        u32le(&mut elf, name);
        u32le(&mut elf, kind);
        u64le(&mut elf, 0);
        u64le(&mut elf, 0);
        u64le(&mut elf, offset);
        u64le(&mut elf, size);
        u32le(&mut elf, link);
        u32le(&mut elf, 1); // sh_info: the first global symbol
        u64le(&mut elf, 1);
        u64le(&mut elf, entsize);
    }
    elf
}

#[test]
fn a_synthetic_cubin_reads_like_one_from_ptxas() {
    let cubin = parse_cubin(&synthetic_cubin(3)).unwrap();
    assert_eq!(cubin.arch.to_string(), "sm_90");
    assert_eq!(cubin.entry_names().collect::<Vec<_>>(), ["k0", "k1", "k2"]);
    let k1 = cubin.entry("k1").unwrap();
    assert_eq!(
        k1.params,
        [CubinParam {
            ordinal: 0,
            offset: 0,
            size: 8
        }]
    );
    assert_eq!(k1.registers, Some(16));
}

/// Each section and register record finds its kernel by name at once: a cubin with 60,000
/// kernels, each with its own section, is read in well under the watchdog's ten seconds (a
/// search through every kernel for every section took minutes).
#[test]
fn many_kernels_with_a_section_each_are_read_without_a_search_per_section() {
    let kernels = 60_000;
    let bytes = synthetic_cubin(kernels);
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(parse_cubin(&bytes).map(|cubin| {
            let read = cubin
                .entries
                .iter()
                .filter(|e| e.params.len() == 1 && e.registers == Some(16))
                .count();
            (cubin.entries.len(), read)
        }));
    });
    let parsed = result
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the cubin is read within ten seconds");
    assert_eq!(parsed, Ok((kernels, kernels)));
}
