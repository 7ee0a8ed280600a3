use jitseam::{In, Out};

// `covers` belongs to custom kernels.
#[jitseam::kernel(abi = scalar, covers = n)]
fn copy(x: In<f32>, out: Out<f32>, n: u32);

fn main() {}
