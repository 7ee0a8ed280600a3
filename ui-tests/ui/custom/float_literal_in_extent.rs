use jitseam::{In, Out};

// Extents are integers.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n * 1.5)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
