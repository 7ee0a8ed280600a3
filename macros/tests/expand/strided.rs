use jitseam::{In, Out};

#[jitseam::kernel(abi = strided(2))]
pub(crate) fn mul_scalar(x: In<f64>, out: Out<f64>, factor: f64);
