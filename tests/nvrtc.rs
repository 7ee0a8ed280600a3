//! NVRTC from Rust: every fixture's CUDA C compiled for sm_90 in-process, loaded as a cubin
//! (proven through the sealed PTX of the same compile), run on the emulator and compared with
//! Rust — the whole launch suite, every ABI and dtype; a compile error's log reaches the caller;
//! one call from source to a loaded kernel.
//!
//! Needs libnvrtc (`scripts/install-nvrtc`, its output on LD_LIBRARY_PATH); without it each test
//! prints a notice and passes, except under CI, where it fails.

mod common;

use common::nvrtc_env::{self, ready};
use common::{fixtures, launch_suite};
use jitseam::nvrtc::{self, CompileOptions, CompileTarget};
use jitseam::{AbiKind, AbiSpec, Artifact, Device, ElementKind, Error, Kernel, LoadedImage};

/// Each fixture's source compiled for sm_90; the artifact is the cubin, linked to its PTX.
fn nvrtc_cubin(fixture: &fixtures::Fixture) -> Artifact {
    let compiled = nvrtc_env::compiled(fixture.file, "sm_90");
    compiled
        .cubin_artifact(fixture.entry, fixture.spec.clone())
        .expect("an sm_90 compile makes a cubin")
}

macro_rules! nvrtc_suite {
    (; $($name:ident),* $(,)?) => {$(
        /// The launch suite with every fixture compiled by NVRTC in this process and loaded as a
        /// cubin on the safe path; the emulator runs the verified PTX of the same compile.
        #[test]
        fn $name() {
            if ready(stringify!($name)) {
                launch_suite::with_artifacts(nvrtc_cubin, || launch_suite::$name(&Device::emulator()));
            }
        }
    )*};
}

launch_suite_names!(nvrtc_suite!());

#[test]
fn compiled_cubins_load_on_the_safe_path_through_their_ptx() {
    if !ready("compiled_cubins_load_on_the_safe_path_through_their_ptx") {
        return;
    }
    for fixture in fixtures::all() {
        let compiled = nvrtc_env::compiled(fixture.file, "sm_90");
        assert!(compiled.is_from_nvrtc());
        assert!(compiled.nvrtc_version() >= (12, 0));
        assert!(
            compiled
                .options()
                .iter()
                .any(|o| o == "--gpu-architecture=sm_90")
        );
        let cubin = jitseam_ptx::parse_cubin(compiled.cubin().unwrap()).unwrap();
        assert_eq!(cubin.arch.to_string(), "sm_90");
        let artifact = nvrtc_cubin(fixture);
        let provenance = artifact.provenance.clone().unwrap();
        assert!(provenance.compiler.starts_with("nvrtc 12."));
        assert_eq!(provenance.linked_ptx.as_ref().unwrap().text, compiled.ptx());
        let loaded = Kernel::describe(artifact.clone()).unwrap().load().unwrap();
        assert!(loaded.loaded().body_verified());
        assert!(matches!(
            loaded.loaded().image(),
            LoadedImage::Cubin {
                linked_ptx: true,
                ..
            }
        ));

        // The link survives serde within the process…
        let json = serde_json::to_string(&artifact).unwrap();
        let back: Artifact = serde_json::from_str(&json).unwrap();
        Kernel::describe(back).unwrap().load().unwrap();
        // …but not a PTX that is not the one of this compile.
        let mut swapped = artifact.clone();
        if let Some(link) = swapped
            .provenance
            .as_mut()
            .and_then(|p| p.linked_ptx.as_mut())
        {
            link.text.push('\n');
        }
        let err = Kernel::describe(swapped).unwrap().load().unwrap_err();
        assert!(matches!(err.error, Error::CubinUnverified { .. }), "{err}");

        // The PTX artifact of the same compile loads too, with its provenance.
        let ptx = compiled.ptx_artifact(fixture.entry, fixture.spec.clone());
        assert!(ptx.provenance.as_ref().unwrap().linked_ptx.is_none());
        Kernel::describe(ptx).unwrap().load().unwrap();
    }
}

#[test]
fn compute_targets_give_ptx_only_with_the_committed_parameter_lists() {
    if !ready("compute_targets_give_ptx_only_with_the_committed_parameter_lists") {
        return;
    }
    for fixture in fixtures::all() {
        let compiled = nvrtc_env::compiled(fixture.file, "compute_80");
        assert!(compiled.cubin().is_none());
        let fresh = jitseam_ptx::parse_module(compiled.ptx()).unwrap();
        let committed = jitseam_ptx::parse_module(fixture.ptx).unwrap();
        let params = |m: &jitseam_ptx::Module| {
            m.entry(fixture.entry)
                .unwrap()
                .params
                .iter()
                .map(|p| (p.ty, p.align, p.array_len))
                .collect::<Vec<_>>()
        };
        assert_eq!(params(&fresh), params(&committed), "{}", fixture.entry);
        assert_eq!(fresh.target.arch, "sm_80");
        // Its artifact is PTX (nothing to link).
        let artifact = compiled.artifact(fixture.entry, fixture.spec.clone());
        assert_eq!(artifact.kind, jitseam::ArtifactKind::Ptx);
    }
}

#[test]
fn a_compile_error_carries_the_full_log_with_line_numbers() {
    if !ready("a_compile_error_carries_the_full_log_with_line_numbers") {
        return;
    }
    let source = "extern \"C\" __global__ void k(float* x) {\n    x[0] = 1.0f;\n    undeclared_name = 2;\n}\n";
    let options = CompileOptions::new(CompileTarget::compute(80)).named("broken.cu");
    let err = nvrtc::compile(source, &options).unwrap_err();
    match &err {
        Error::Compile { name, status, log } => {
            assert_eq!(name, "broken.cu");
            assert!(status.contains("COMPILATION"), "{status}");
            assert!(log.contains("broken.cu(3)"), "{log}");
            assert!(log.contains("undeclared_name"), "{log}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    assert!(err.to_string().contains("broken.cu(3)"), "{err}");
    assert!(err.is_decline());
}

#[test]
fn one_call_from_cuda_c_to_a_launched_kernel() {
    if !ready("one_call_from_cuda_c_to_a_launched_kernel") {
        return;
    }
    let source = r#"extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                        long long n, float a) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) y[i] = a * x[i];
}"#;
    use ElementKind::F32;
    let abi = AbiSpec::owned(AbiKind::Scalar, vec![F32], vec![F32], vec![F32]);
    let options = CompileOptions::new(CompileTarget::sm(90))
        .define("UNUSED", "1")
        .fast_math();
    let kernel = nvrtc::compile_and_load(source, &options, "scale", abi).unwrap();
    let device = Device::emulator();
    let kernel = kernel.bind(&device).unwrap();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dx = device.upload(&x).unwrap();
    let mut dy = device.upload(&vec![f32::NAN; 1000]).unwrap();
    let stream = device.default_stream();
    kernel
        .launch(
            &stream,
            &[(&dx).into()],
            &mut [(&mut dy).into()],
            &[1000],
            &[2.5f32.into()],
        )
        .unwrap();
    let y = stream.read(&dy).unwrap();
    assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.5 * x));

    // A wrong ABI in the same call is load()'s decline.
    let wrong = AbiSpec::owned(AbiKind::Scalar, vec![F32], vec![F32], vec![]);
    let err = nvrtc::compile_and_load(source, &options, "scale", wrong).unwrap_err();
    assert!(matches!(err, Error::ParamCount { .. }), "{err}");
}

#[test]
fn without_nvrtc_every_entry_point_is_a_typed_error() {
    if nvrtc::is_available() {
        return;
    }
    let err = nvrtc::compile("", &CompileOptions::new(CompileTarget::compute(80))).unwrap_err();
    assert!(matches!(err, Error::NvrtcUnavailable { .. }), "{err}");
    assert!(!err.is_decline());
}
