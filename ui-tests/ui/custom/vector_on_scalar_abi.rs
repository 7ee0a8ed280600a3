use jitseam::{In, Out};

// Only custom kernels declare vector elements: their extents count vectors.
#[jitseam::kernel(abi = scalar)]
fn copy(x: In<[f32; 4]>, out: Out<f32>);

fn main() {}
