use jitseam::{In, Out};

// A strided kernel has at least one axis.
#[jitseam::kernel(abi = strided(0))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
