use jitseam::{In, Out};

#[jitseam::kernel(abi = vectorized(3))]
pub fn bad_width(a: In<f32>, out: Out<f32>);
