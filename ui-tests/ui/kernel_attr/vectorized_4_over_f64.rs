use jitseam::{In, Out};

// Four doubles are 32 bytes; a vector access is at most 16.
#[jitseam::kernel(abi = vectorized(4))]
fn add(a: In<f64>, b: In<f64>, out: Out<f64>);

fn main() {}
