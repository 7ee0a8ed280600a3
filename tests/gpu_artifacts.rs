//! Compiled artifacts on a real GPU: the committed NVRTC cubins and fatbins (embedded, see
//! tests/fixtures/cubin/README.md) load and launch through the whole launch suite; the driver's
//! JIT time for PTX is printed against the load time of the cubin; a cubin for another major
//! architecture is refused at bind; with NVRTC on the machine, in-process compiles of the
//! fixtures for the device's own architecture run on the safe path.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure.
#![cfg(feature = "gpu-tests")]

mod common;

use std::time::Instant;

use common::nvrtc_env::{cubin_bytes, fatbin_fixture};
use common::{fixtures, launch_suite};
use jitseam::{Artifact, Device, Error, Kernel, LoadedImage};

fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"))
}

fn device_sm(device: &Device) -> u32 {
    device
        .properties()
        .compute_capability
        .map_or(0, |(major, minor)| major * 10 + minor)
}

/// The committed sm_90 cubin of a fixture (NVRTC output of its source).
fn sm90_cubin(fixture: &fixtures::Fixture) -> Artifact {
    Artifact::cubin(
        cubin_bytes(fixture.file, "sm_90"),
        fixture.entry,
        fixture.spec.clone(),
    )
}

fn fatbin(fixture: &fixtures::Fixture) -> Artifact {
    Artifact::fatbin(
        fatbin_fixture(fixture.file),
        fixture.entry,
        fixture.spec.clone(),
    )
}

macro_rules! gpu_artifact_suites {
    (; $($name:ident),* $(,)?) => {
        mod cubin_unverified {
            use super::*;
            $(
                /// The committed sm_90 cubins (needs an sm_90 device), through `load_unverified`.
                #[test]
                fn $name() {
                    let device = cuda();
                    if device_sm(&device) / 10 != 9 {
                        eprintln!("NOTICE: sm_90 cubins need a compute capability 9.x device");
                        return;
                    }
                    launch_suite::with_unverified_artifacts(sm90_cubin, || launch_suite::$name(&device));
                }
            )*
        }
        mod fatbin_safe {
            use super::*;
            $(
                /// The fatbins on the safe path: the driver JITs the verified compute_80 PTX.
                #[test]
                fn $name() {
                    launch_suite::with_artifacts(fatbin, || launch_suite::$name(&cuda()));
                }
            )*
        }
        mod fatbin_unverified {
            use super::*;
            $(
                /// The fatbins through `load_unverified`: the exact-SM cubin where there is one.
                #[test]
                fn $name() {
                    launch_suite::with_unverified_artifacts(fatbin, || launch_suite::$name(&cuda()));
                }
            )*
        }
        mod nvrtc_native {
            use super::*;
            $(
                /// In-process NVRTC cubins for this device's architecture, on the safe path.
                #[test]
                fn $name() {
                    if !common::nvrtc_env::ready(stringify!($name)) {
                        return;
                    }
                    launch_suite::with_artifacts(native_cubin, || launch_suite::$name(&cuda()));
                }
            )*
        }
    };
}

fn native_cubin(fixture: &fixtures::Fixture) -> Artifact {
    let arch = format!("sm_{}", device_sm(&cuda()));
    common::nvrtc_env::compiled(fixture.file, &arch)
        .cubin_artifact(fixture.entry, fixture.spec.clone())
        .expect("an sm_XY compile makes a cubin")
}

launch_suite_names!(gpu_artifact_suites!());

#[test]
fn ptx_jit_time_against_cubin_load_time() {
    let device = cuda();
    let fixture = fixtures::by_entry(launch_suite::SILU_F32);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let bind_ms = |artifact: &Artifact, unverified: bool| {
        median(
            (0..9)
                .map(|_| {
                    let described = Kernel::describe(artifact.clone()).unwrap();
                    let start = Instant::now();
                    let loaded = if unverified {
                        // SAFETY: NVRTC output of the fixture source (touches only its operands).
                        unsafe { described.load_unverified() }
                    } else {
                        described.load()
                    };
                    let bound = loaded.unwrap().bind(&device).unwrap();
                    let ms = start.elapsed().as_secs_f64() * 1e3;
                    drop(bound);
                    ms
                })
                .collect(),
        )
    };
    let ptx = bind_ms(&fixture.artifact(), false);
    let fat = bind_ms(&fatbin(&fixture), false);
    eprintln!(
        "{}: load+bind of compute_80 ptx (driver jit): median {ptx:.3} ms; fatbin (safe path, ptx image): {fat:.3} ms",
        fixture.entry
    );
    if device_sm(&device) / 10 == 9 {
        let cubin = bind_ms(&sm90_cubin(&fixture), true);
        eprintln!(
            "{}: load+bind of the sm_90 cubin: median {cubin:.3} ms ({:.1}x faster than the ptx jit)",
            fixture.entry,
            ptx / cubin
        );
    }
}

#[test]
fn a_cubin_for_another_major_architecture_is_refused_at_bind() {
    let device = cuda();
    let fixture = fixtures::by_entry(launch_suite::ADD_F32);
    let other = if device_sm(&device) / 10 == 8 {
        "sm_90"
    } else {
        "sm_80"
    };
    let artifact = Artifact::cubin(
        cubin_bytes(fixture.file, other),
        fixture.entry,
        fixture.spec.clone(),
    );
    // SAFETY: NVRTC output of the fixture source; it is refused before any launch.
    let loaded = unsafe { Kernel::describe(artifact).unwrap().load_unverified() }.unwrap();
    assert!(matches!(loaded.loaded().image(), LoadedImage::Cubin { .. }));
    let err = loaded.bind(&device).unwrap_err();
    assert!(matches!(err.error, Error::CubinArch { .. }), "{err}");
}
