//! Declared launch shapes on the emulator: the launch suite (tests/common/launch_shape_suite.rs)
//! and what a declared block, or a `.reqntid`, lets the body verifier prove — a tiled body is
//! proven under its shape and declined without it, and a shape wider than the tile is declined.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/launch_shape_suite.rs"]
mod launch_shape_suite;

use jitseam::error::ConfigProblem;
use jitseam::{AbiSpec, Artifact, Device, Error, Kernel, LaunchConfig};
use jitseam_verify::RejectKind;
use launch_shape_suite::{PTX, SIGNATURE, TILE_PTX};

launch_shape_suite_tests!(Device::emulator);

const ENTRY: &str = "samples_matrix_mul_tiled";

/// `load_proven()` of the tiled product under `signature`: every access proven, no guard
/// (`load()` would guard what the block does not prove).
fn load(signature: &str) -> Result<(), Error> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    Kernel::describe(Artifact::ptx(PTX, ENTRY, spec))
        .unwrap()
        .load_proven()
        .map(|_| ())
        .map_err(|e| e.error)
}

fn rejection(err: &Error) -> &jitseam_verify::Rejection {
    match err {
        Error::BodyRejected { rejection, .. } => rejection,
        other => panic!("expected a body rejection, got {other}"),
    }
}

/// `load()` of `entry` in tests/fixtures/shapes/tile.ptx under `signature`.
fn load_tile(entry: &str, signature: &str) -> Result<(), Error> {
    load_text(TILE_PTX, entry, signature)
}

fn load_text(ptx: &str, entry: &str, signature: &str) -> Result<(), Error> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    Kernel::describe(Artifact::ptx(ptx, entry, spec))
        .unwrap()
        .load_proven()
        .map(|_| ())
        .map_err(|e| e.error)
}

fn assert_bounds_decline(result: Result<(), Error>, what: &str) {
    let err = result.expect_err(what);
    let r = rejection(&err);
    assert!(
        matches!(r.kind, RejectKind::OutOfBounds | RejectKind::MayWrap),
        "{what}: {err}"
    );
}

const TILE_1D: &str = "out: out f32[16 * grid.x], x: in f32[16 * grid.x]";
const TILE_2D: &str = "out: out f32[256 * grid.x], x: in f32[256 * grid.x]";

#[test]
fn tiled_body_is_proven_only_under_its_declared_block() {
    // `x[blockIdx.x * 16 + threadIdx.x]` and `tile[threadIdx.x]`: in bounds for 16 threads.
    load_tile("tile_scale_1d", &format!("{TILE_1D}; block = (16, 1, 1)")).unwrap();
    assert_bounds_decline(load_tile("tile_scale_1d", TILE_1D), "1-d, no block");
    // `tile[threadIdx.y][threadIdx.x]` written, `tile[threadIdx.x][threadIdx.y]` read.
    load_tile(
        "tile_transpose_2d",
        &format!("{TILE_2D}; block = (16, 16, 1)"),
    )
    .unwrap();
    assert_bounds_decline(load_tile("tile_transpose_2d", TILE_2D), "2-d, no block");
}

#[test]
fn declared_block_wider_than_the_tile_is_declined() {
    assert_bounds_decline(
        load_tile("tile_scale_1d", &format!("{TILE_1D}; block = (32, 1, 1)")),
        "1-d, block (32, 1, 1)",
    );
    for block in ["(32, 16, 1)", "(16, 32, 1)", "(17, 16, 1)"] {
        assert_bounds_decline(
            load_tile("tile_transpose_2d", &format!("{TILE_2D}; block = {block}")),
            block,
        );
    }
    // The matrix product's tiles under a block wider than them.
    for block in ["(32, 16, 1)", "(16, 32, 1)"] {
        assert_bounds_decline(load(&format!("{SIGNATURE}; block = {block}")), block);
    }
}

/// Under its declared block, a body indexing its tile one row past the block is declined.
#[test]
fn tile_index_past_the_declared_block_is_declined() {
    let store = "st.shared.f32 \t[%rd11], %f1;";
    for past in [
        "st.shared.f32 \t[%rd11+64], %f1;",
        "st.shared.f32 \t[%rd11+4], %f1;",
    ] {
        let mutated = TILE_PTX.replacen(store, past, 1);
        assert_ne!(
            mutated, TILE_PTX,
            "the fixture's text changed: update the mutation"
        );
        assert_bounds_decline(
            load_text(
                &mutated,
                "tile_transpose_2d",
                &format!("{TILE_2D}; block = (16, 16, 1)"),
            ),
            past,
        );
    }
}

/// `.reqntid 16, 16, 1` in the entry is the same fact as a declared block: the body is proven
/// (and declined without it, above), and every launch is held to it.
#[test]
fn reqntid_is_a_declared_block() {
    let splice = ".param .u64 tile_transpose_2d_param_1\n)\n";
    let required = TILE_PTX.replacen(splice, &format!("{splice}.reqntid 16, 16, 1\n"), 1);
    assert_ne!(
        required, TILE_PTX,
        "the fixture's text changed: update the splice"
    );
    let spec = AbiSpec::parse_custom(TILE_2D, None).unwrap();
    let device = Device::emulator();
    let described =
        || Kernel::describe(Artifact::ptx(&required, "tile_transpose_2d", spec.clone())).unwrap();
    let verified = described().load().unwrap().bind(&device).unwrap();
    assert!(verified.loaded().body_verified());
    // SAFETY: the body is proven above for this `.reqntid`, which every launch checks.
    let unverified = unsafe { described().load_unverified() }
        .unwrap()
        .bind(&device)
        .unwrap();
    // `load_unverified` keeps the directive: the same decline, the same launch.
    for kernel in [verified, unverified] {
        let x = device.upload(&[1.0f32; 256]).unwrap();
        let mut out = device.upload(&[f32::NAN; 256]).unwrap();
        let stream = device.default_stream();
        let err = kernel
            .launch_custom(
                &stream,
                Some(LaunchConfig::new([1, 1, 1], [32, 8, 1])),
                &[(&x).into()],
                &mut [(&mut out).into()],
                &[],
            )
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::LaunchConfig {
                    problem: ConfigProblem::RequiredBlock {
                        required: [16, 16, 1],
                        block: [32, 8, 1],
                    },
                    ..
                }
            ),
            "{err}"
        );
        assert!(stream.read(&out).unwrap().iter().all(|v| v.is_nan()));
        kernel
            .launch_custom(
                &stream,
                Some(LaunchConfig::new([1, 1, 1], [16, 16, 1])),
                &[(&x).into()],
                &mut [(&mut out).into()],
                &[],
            )
            .unwrap();
        assert!(stream.read(&out).unwrap().iter().all(|&v| v == 2.0));
    }
}

/// A declared block the entry's `.reqntid` or `.maxntid` contradicts is refused at load, under
/// either trust, naming both.
#[test]
fn declared_block_contradicting_a_directive_is_refused_at_load() {
    for (directive, spliced) in [
        (".reqntid 32, 8, 1", ".reqntid 32, 8, 1\n"),
        (".maxntid 128, 1, 1", ".maxntid 128, 1, 1\n"),
    ] {
        let ptx = PTX.replacen(
            ".param .u32 samples_matrix_mul_tiled_param_4\n)\n",
            &format!(".param .u32 samples_matrix_mul_tiled_param_4\n)\n{spliced}"),
            1,
        );
        assert_ne!(ptx, PTX, "the fixture's text changed: update the splice");
        let spec =
            AbiSpec::parse_custom(&format!("{SIGNATURE}; block = (16, 16, 1)"), None).unwrap();
        let verified = Kernel::describe(Artifact::ptx(&ptx, ENTRY, spec.clone()))
            .unwrap()
            .load()
            .map(|_| ())
            .unwrap_err()
            .error;
        // SAFETY: refused at load; nothing is launched.
        let unverified = unsafe {
            Kernel::describe(Artifact::ptx(&ptx, ENTRY, spec))
                .unwrap()
                .load_unverified()
        }
        .map(|_| ())
        .unwrap_err()
        .error;
        for err in [verified, unverified] {
            match &err {
                Error::BlockConflict {
                    entry,
                    declared: [16, 16, 1],
                    directive: found,
                } => {
                    assert_eq!(entry, ENTRY);
                    assert_eq!(found, directive);
                }
                other => panic!("{directive}: {other}"),
            }
            assert!(err.to_string().contains(directive), "{err}");
        }
    }
}
