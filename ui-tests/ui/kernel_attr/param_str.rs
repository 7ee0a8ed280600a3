use jitseam::{In, Out};

// A string cannot travel by value in a kernel's parameter list.
#[jitseam::kernel(abi = scalar)]
fn scale(x: In<f32>, out: Out<f32>, label: &str);

fn main() {}
