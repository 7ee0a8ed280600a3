use jitseam::{In, Out};

// A Vec is host memory: pass device data as an operand.
#[jitseam::kernel(abi = scalar)]
fn scale(x: In<f32>, out: Out<f32>, weights: Vec<f32>);

fn main() {}
