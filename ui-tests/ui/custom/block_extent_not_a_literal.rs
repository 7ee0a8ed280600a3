use jitseam::{In, Out};

const TILE: u32 = 16;

// The macro checks the block when it expands, so it takes literals, not a constant it cannot
// read.
#[jitseam::kernel(abi = custom, block = (TILE, TILE, 1))]
fn tile(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
