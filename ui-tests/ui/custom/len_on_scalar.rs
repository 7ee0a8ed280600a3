use jitseam::{In, Out};

// A by-value param has no extent.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, #[len(n)] n: i32);

fn main() {}
