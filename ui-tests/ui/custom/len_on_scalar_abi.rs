use jitseam::{In, Out};

// Only custom kernels declare extents: every operand of the scalar abi has `n` elements.
#[jitseam::kernel(abi = scalar)]
fn copy(#[len(n)] x: In<f32>, out: Out<f32>);

fn main() {}
