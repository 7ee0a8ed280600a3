use jitseam::{In, Out};

// The strided ABI stops at rank 8.
#[jitseam::kernel(abi = strided(9))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
