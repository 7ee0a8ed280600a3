use jitseam::{In, Out};

// A kernel that covers `n` with one thread per element launches one-dimensional blocks.
#[jitseam::kernel(abi = custom, covers = n, block = (16, 16, 1))]
fn scale(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
