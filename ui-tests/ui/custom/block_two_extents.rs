use jitseam::{In, Out};

// x, y and z, all three: a two-dimensional tile still says its z.
#[jitseam::kernel(abi = custom, block = (16, 16))]
fn tile(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
