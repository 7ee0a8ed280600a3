use jitseam::{In, Out};

// Which ABI is meant?
#[jitseam::kernel(abi = scalar, abi = vectorized(4))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
