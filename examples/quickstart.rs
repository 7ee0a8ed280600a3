//! The main job, end to end: describe a real NVRTC kernel, verify it, bind it to the best device
//! available and launch it.
//!
//! `cargo run --example quickstart`

use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind, Kernel};

const ADD_F32: &str = include_str!("../tests/fixtures/add_f32_scalar.ptx");

fn main() -> Result<(), jitseam::Error> {
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32, ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let artifact = Artifact::ptx(ADD_F32, "baracuda_gen_add_f32_scalar", spec);
    let loaded = Kernel::describe(artifact)?.load()?;
    let info = loaded.loaded();
    println!(
        "loaded `{}` (ptx {}.{}, {}): parameter list verified against {}",
        info.entry().name,
        info.version().major,
        info.version().minor,
        info.target().arch,
        loaded.artifact().abi.abi,
    );
    for p in info.layout().params() {
        println!(
            "  offset {:>3}  {:<28} {}",
            p.offset,
            p.class.to_string(),
            p.role
        );
    }
    Ok(())
}
