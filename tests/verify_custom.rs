//! The body verifier against custom-ABI contracts (declared extents, three-dimensional
//! launches): the NVRTC fixtures of tests/fixtures/custom/ are proven, and hand-mutated copies
//! of them, each with one violation, are rejected with the kind and line of the violation.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::AbiSpec;
use jitseam_ptx::verify::{LaunchCondition, Proof, RejectKind, Rejection, verify_entry};

const PTX: &str = include_str!("fixtures/custom/custom.ptx");

const SAXPY: &str = "out: out f32[n], x: in f32[n], n: i32, a: f32";
const VECTOR_ADD: &str =
    "a: in f32[num_elements], b: in f32[num_elements], c: out f32[num_elements], num_elements: i32";
const MATMUL: &str =
    "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32";
const STENCIL: &str =
    "input: in f32[width * height], out: out f32[width * height], width: i32, height: i32";

fn verify(text: &str, entry: &str, signature: &str) -> Result<Proof, Rejection> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    verify_entry(text, entry, &spec.contract())
}

#[test]
fn the_fixtures_are_proven() {
    for (entry, signature) in [
        ("saxpy_out_first", SAXPY),
        ("vectorAdd", VECTOR_ADD),
        ("vectorAdd128", VECTOR_ADD),
        ("stencil5", STENCIL),
        ("matmul", MATMUL),
    ] {
        match verify(PTX, entry, signature) {
            Ok(proof) => eprintln!("{entry}: {:?}", proof.conditions),
            Err(r) => panic!("{entry}: {r}"),
        }
    }
}
