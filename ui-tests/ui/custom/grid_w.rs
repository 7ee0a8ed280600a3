use jitseam::{In, Out};

// The launch geometry has x, y and z.
#[jitseam::kernel(abi = custom)]
fn block_sum(#[len(n)] x: In<f32>, #[len(grid.w)] partial: Out<f32>, n: u32);

fn main() {}
