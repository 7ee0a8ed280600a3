use jitseam::{In, Out};

// The declared shared size is over integer params and the geometry, not a pointer.
#[jitseam::kernel(abi = custom, shared = 4 * x)]
fn rows(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: i32);

fn main() {}
