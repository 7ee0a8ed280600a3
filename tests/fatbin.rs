//! Fatbins: the fixtures in tests/fixtures/fatbin/ (an sm_90 cubin and compute_80 PTX of each
//! source, see tests/fixtures/cubin/README.md) parsed; the image for a device chosen; the PTX
//! image verified like any PTX and run on the emulator; cubins only through `load_unverified`;
//! compressed and damaged containers declined, never a panic.

mod common;

use common::nvrtc_env::fatbin_fixture;
use common::{fixtures, launch_suite};
use jitseam::state::FatbinChoice;
use jitseam::{Artifact, Device, Error, Kernel, LoadedImage};
use jitseam_ptx::fatbin::{Compression, FatbinError, ImageKind, parse_fatbin};
use proptest::prelude::*;

fn fatbin_artifact(fixture: &fixtures::Fixture) -> Artifact {
    Artifact::fatbin(
        fatbin_fixture(fixture.file),
        fixture.entry,
        fixture.spec.clone(),
    )
}

#[test]
fn every_fixture_fatbin_holds_an_sm_90_cubin_and_compute_80_ptx() {
    for fixture in fixtures::all() {
        let bytes = fatbin_fixture(fixture.file);
        let fatbin = parse_fatbin(&bytes).unwrap();
        let kinds: Vec<(ImageKind, u32)> = fatbin.images.iter().map(|i| (i.kind, i.sm)).collect();
        assert_eq!(
            kinds,
            [(ImageKind::Cubin, 90), (ImageKind::Ptx, 80)],
            "{}",
            fixture.file
        );
        let ptx = fatbin.images[1].ptx_text(&bytes).unwrap();
        assert!(ptx.contains(&format!(".entry {}(", fixture.entry)));
        let cubin = jitseam_ptx::parse_cubin(fatbin.images[0].payload(&bytes).unwrap()).unwrap();
        assert!(cubin.entry(fixture.entry).is_some());
    }
}

#[test]
fn the_image_is_chosen_for_the_device() {
    let bytes = fatbin_fixture("add_f32_scalar.ptx");
    let fatbin = parse_fatbin(&bytes).unwrap();
    let pick = |sm, cubin| fatbin.select(sm, cubin).map(|i| i.arch_name());
    assert_eq!(pick(90, true).as_deref(), Some("sm_90"));
    assert_eq!(pick(90, false).as_deref(), Some("compute_80"));
    assert_eq!(pick(86, true).as_deref(), Some("compute_80"));
    assert_eq!(pick(100, true).as_deref(), Some("compute_80"));
    assert_eq!(pick(75, true), None);
}

#[test]
fn load_verifies_the_ptx_image_and_keeps_the_cubin_for_the_unsafe_path() {
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let loaded = Kernel::describe(fatbin_artifact(&fixture))
        .unwrap()
        .load()
        .unwrap();
    assert!(loaded.loaded().body_verified());
    assert_eq!(loaded.loaded().target().arch, "sm_80");
    let LoadedImage::Fatbin { images } = loaded.loaded().image() else {
        panic!("not a fatbin image: {:?}", loaded.loaded().image());
    };
    let kinds: Vec<_> = images
        .iter()
        .map(|i: &FatbinChoice| (i.kind, i.sm))
        .collect();
    assert_eq!(kinds, [(ImageKind::Ptx, 80)]);

    // SAFETY: the fixture kernel touches only its operands (its PTX just passed `load()`).
    let vouched = unsafe {
        Kernel::describe(fatbin_artifact(&fixture))
            .unwrap()
            .load_unverified()
    }
    .unwrap();
    let LoadedImage::Fatbin { images } = vouched.loaded().image() else {
        panic!("not a fatbin image");
    };
    assert_eq!(images.len(), 2);
}

fn from_fatbin(fixture: &fixtures::Fixture) -> Artifact {
    fatbin_artifact(fixture)
}

macro_rules! fatbin_suite {
    (; $($name:ident),* $(,)?) => {$(
        /// The launch suite with every fixture loaded from its fatbin (the PTX image, on the
        /// emulator), compared with Rust.
        #[test]
        fn $name() {
            launch_suite::with_artifacts(from_fatbin, || launch_suite::$name(&Device::emulator()));
        }
    )*};
}

launch_suite_names!(fatbin_suite!());

#[test]
fn a_wrong_abi_is_declined_through_the_ptx_image() {
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let wrong = fixtures::by_entry(launch_suite::AXPB_F32);
    let artifact = Artifact::fatbin(
        fatbin_fixture(fixture.file),
        fixture.entry,
        wrong.spec.clone(),
    );
    let err = Kernel::describe(artifact).unwrap().load().unwrap_err();
    assert!(
        matches!(
            err.error,
            Error::ParamCount {
                expected: 5,
                found: 4,
                ..
            }
        ),
        "{err}"
    );
}

/// Sets a flag bit in the header of image `index` (a single-container fatbin: headers follow
/// one another from byte 16, each recording its own size at +4 and its payload's at +8).
fn with_flag(mut bytes: Vec<u8>, index: usize, flag: u64) -> Vec<u8> {
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut at = 16;
    for _ in 0..index {
        let header = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        at += header + word(&bytes, at + 8) as usize;
    }
    let flags = word(&bytes, at + 40) | flag;
    bytes[at + 40..at + 48].copy_from_slice(&flags.to_le_bytes());
    bytes
}

#[test]
fn compressed_images_are_declined_by_type() {
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let bytes = with_flag(fatbin_fixture(fixture.file), 1, 0x2000);
    let fatbin = parse_fatbin(&bytes).unwrap();
    assert_eq!(fatbin.images[1].compression, Some(Compression::Lz));
    assert!(matches!(
        fatbin.images[1].payload(&bytes),
        Err(FatbinError::Compressed { sm: 80, .. })
    ));
    assert_eq!(fatbin.select(86, true), None);
    let artifact = Artifact::fatbin(bytes.clone(), fixture.entry, fixture.spec.clone());
    let err = Kernel::describe(artifact).unwrap().load().unwrap_err();
    match &err.error {
        Error::NoFatbinImage { available, .. } => {
            assert!(
                available.iter().any(|a| a.contains("compressed")),
                "{available:?}"
            )
        }
        other => panic!("expected NoFatbinImage, got {other}"),
    }
    let zstd = with_flag(fatbin_fixture(fixture.file), 0, 0x8000);
    assert_eq!(
        parse_fatbin(&zstd).unwrap().images[0].compression,
        Some(Compression::Zstd)
    );
}

#[test]
fn not_a_fatbin_is_declined() {
    assert_eq!(parse_fatbin(b"abc"), Err(FatbinError::NotFatbin));
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let artifact = Artifact::fatbin(
        fixture.ptx.as_bytes().to_vec(),
        fixture.entry,
        fixture.spec.clone(),
    );
    let err = Kernel::describe(artifact).unwrap().load().unwrap_err();
    assert!(matches!(err.error, Error::Fatbin { .. }), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Truncated and mutated fatbins: an error or a value, never a panic — in the reader and in
    /// both load paths.
    #[test]
    fn damaged_fatbins_never_panic(
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        truncate in any::<bool>(),
    ) {
        let fixture = fixtures::by_entry(launch_suite::AXPB_F32);
        let mut bytes = fatbin_fixture(fixture.file);
        // Bias the damage towards the headers, where the interesting failures are.
        let head = 160.min(bytes.len());
        for (n, (at, value)) in flips.into_iter().enumerate() {
            let i = if n % 2 == 0 { at.index(head) } else { at.index(bytes.len()) };
            bytes[i] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        if let Ok(fatbin) = parse_fatbin(&bytes) {
            for image in &fatbin.images {
                let _ = image.ptx_text(&bytes);
            }
            let _ = fatbin.select(90, true);
        }
        let artifact = Artifact::fatbin(bytes, fixture.entry, fixture.spec.clone());
        let _ = Kernel::describe(artifact.clone()).unwrap().load();
        // SAFETY: nothing is launched; only the checks `load_unverified` still runs are
        // exercised.
        let _ = unsafe { Kernel::describe(artifact).unwrap().load_unverified() };
    }
}

/// A fatbin of one container holding a PTX image of `(sm, text)` for each entry, laid out as
/// `fatbinary` writes them (the fields `parse_fatbin` reads: kind, header and payload sizes,
/// version, architecture, flags).
fn ptx_fatbin(images: &[(u32, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(sm, text) in images {
        let mut payload = text.as_bytes().to_vec();
        payload.resize((payload.len() + 1).next_multiple_of(8), 0);
        let mut header = [0u8; 64];
        header[0..2].copy_from_slice(&1u16.to_le_bytes());
        header[4..8].copy_from_slice(&64u32.to_le_bytes());
        header[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        header[24..26].copy_from_slice(&0u16.to_le_bytes());
        header[26..28].copy_from_slice(&8u16.to_le_bytes());
        header[28..32].copy_from_slice(&sm.to_le_bytes());
        header[40..48].copy_from_slice(&0x11u64.to_le_bytes());
        body.extend_from_slice(&header);
        body.extend_from_slice(&payload);
    }
    let mut fatbin = Vec::with_capacity(16 + body.len());
    fatbin.extend_from_slice(&jitseam_ptx::fatbin::FATBIN_MAGIC.to_le_bytes());
    fatbin.extend_from_slice(&1u16.to_le_bytes());
    fatbin.extend_from_slice(&16u16.to_le_bytes());
    fatbin.extend_from_slice(&(body.len() as u64).to_le_bytes());
    fatbin.extend_from_slice(&body);
    fatbin
}

/// A scalar `x → out` kernel for `sm_XY` that returns at once, its input declared `x_attributes`.
fn returning_kernel(sm: u32, x_attributes: &str) -> String {
    format!(
        ".version 8.0\n.target sm_{sm}\n.address_size 64\n\
         .visible .entry k(.param .u64 {x_attributes} k_x, .param .u64 k_out, .param .u64 k_n)\n\
         {{\n\tret;\n}}\n"
    )
}

/// Two PTX images that differ in the alignment their input declares: whichever image `bind`
/// loads (the emulator takes the highest, a compute 8.6 GPU the lowest), a launch enforces the
/// strictest, `.ptr .align 16`.
#[test]
fn the_strictest_alignment_of_any_image_is_checked_at_launch() {
    const SPEC: jitseam::AbiSpec = jitseam::AbiSpec::new(
        jitseam::AbiKind::Scalar,
        &[jitseam::ElementKind::F32],
        &[jitseam::ElementKind::F32],
        &[],
    );
    let unaligned = returning_kernel(80, "");
    let aligned = returning_kernel(90, ".ptr .global .align 16");
    let device = Device::emulator();
    let stream = device.default_stream();
    let x = device.upload(&[1.0f32; 64]).unwrap();
    let mut out = device.alloc::<f32>(32).unwrap();
    for images in [
        [(80, &*unaligned), (90, &*aligned)],
        [(80, &*aligned), (90, &*unaligned)],
    ] {
        let artifact = Artifact::fatbin(ptx_fatbin(&images), "k", SPEC);
        let kernel = Kernel::describe(artifact)
            .unwrap()
            .load()
            .unwrap()
            .bind(&device)
            .unwrap();
        // Four f32 past a 256-byte-aligned allocation start: 16-byte aligned.
        let on_16 = x.slice(4..36).unwrap();
        kernel
            .launch(
                &stream,
                &[(&on_16).into()],
                &mut [(&mut out).into()],
                &[32],
                &[],
            )
            .unwrap();
        let off_by_one = x.slice(1..33).unwrap();
        let launched = kernel.launch(
            &stream,
            &[(&off_by_one).into()],
            &mut [(&mut out).into()],
            &[32],
            &[],
        );
        assert!(
            matches!(launched, Err(Error::PointerMisaligned { required: 16, .. })),
            "images {:?}: {launched:?}",
            images.map(|(sm, text)| (sm, text.contains(".align 16")))
        );
    }
}
