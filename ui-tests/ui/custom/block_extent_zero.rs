use jitseam::{In, Out};

// A block with no thread along y launches nothing.
#[jitseam::kernel(abi = custom, block = (16, 0, 1))]
fn tile(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
