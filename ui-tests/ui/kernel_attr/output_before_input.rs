use jitseam::{In, Out};

// The kernel's pointers are inputs first, then outputs.
#[jitseam::kernel(abi = scalar)]
fn add(out: Out<f32>, a: In<f32>, b: In<f32>);

fn main() {}
