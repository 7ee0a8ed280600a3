use jitseam::{In, Out};

// There is no tiled ABI.
#[jitseam::kernel(abi = tiled(4))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
