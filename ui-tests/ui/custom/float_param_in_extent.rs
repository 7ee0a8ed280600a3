use jitseam::{In, Out};

// An extent counts elements: `a` is a float.
#[jitseam::kernel(abi = custom)]
fn scale(#[len(a)] x: In<f32>, #[len(n)] out: Out<f32>, n: i32, a: f32);

fn main() {}
