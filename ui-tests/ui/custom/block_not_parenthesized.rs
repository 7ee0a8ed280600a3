use jitseam::{In, Out};

// A block is three extents in parentheses, not one number.
#[jitseam::kernel(abi = custom, block = 256)]
fn scale(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
