use jitseam::{In, Out};

#[jitseam::kernel(abi = vectorized(4))]
pub fn relu_add(a: In<f32>, b: In<f32>, out: Out<f32>, alpha: f32);
