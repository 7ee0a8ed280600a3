use jitseam::{In, Out};

// 32 × 64 = 2048 threads: twice what a CUDA block can hold.
#[jitseam::kernel(abi = custom, block = (32, 64, 1))]
fn tile(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
