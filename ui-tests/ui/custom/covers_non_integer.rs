use jitseam::{In, Out};

// `covers` counts elements: `a` is a float.
#[jitseam::kernel(abi = custom, covers = a)]
fn scale(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: i32, a: f32);

fn main() {}
