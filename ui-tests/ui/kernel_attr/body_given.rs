use jitseam::{In, Out};

// The kernel is the artifact; the declaration only describes it.
#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>) {}

fn main() {}
