use jitseam::{In, Out};

// `div_ceil` takes two arguments.
#[jitseam::kernel(abi = custom)]
fn partials(#[len(n)] x: In<f32>, #[len(div_ceil(n))] out: Out<f32>, n: u32);

fn main() {}
