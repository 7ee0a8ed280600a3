use jitseam::{In, Out};

// `block` declares the launch shape of custom kernels; the other abis choose their own blocks.
#[jitseam::kernel(abi = scalar, block = (256, 1, 1))]
fn copy(x: In<f32>, out: Out<f32>);

fn main() {}
