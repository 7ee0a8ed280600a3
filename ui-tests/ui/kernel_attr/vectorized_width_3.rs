use jitseam::{In, Out};

// Vectors have 2, 4 or 8 lanes.
#[jitseam::kernel(abi = vectorized(3))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
