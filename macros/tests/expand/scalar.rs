use jitseam::{In, Out};

/// `x * scale + shift`, one element per thread.
#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_scalar_mul_scalar_f32_scalar")]
pub fn axpb(x: In<f32>, out: Out<f32>, scale: f32, shift: f32);
