use jitseam::{In, Out};

// A String cannot live in a device buffer.
#[jitseam::kernel(abi = scalar)]
fn add(a: In<String>, out: Out<f32>);

fn main() {}
