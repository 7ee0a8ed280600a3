use jitseam::{In, Out};

// `m` is not a param of this kernel.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(m)] x: In<f32>, #[len(n)] out: Out<f32>, n: i32);

fn main() {}
