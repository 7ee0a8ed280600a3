use jitseam::{In, Out};

// The covered count decides the grid, so it cannot be computed from it.
#[jitseam::kernel(abi = custom, covers = grid.x)]
fn copy(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
