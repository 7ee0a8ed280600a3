use jitseam::{In, Out};

// No CUDA device launches a block deeper than 64 along z.
#[jitseam::kernel(abi = custom, block = (1, 1, 128))]
fn column(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
