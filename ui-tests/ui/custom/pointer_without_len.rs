use jitseam::{In, Out};

// Every pointer of a custom kernel declares its extent.
#[jitseam::kernel(abi = custom)]
fn copy(x: In<f32>, #[len(n)] out: Out<f32>, n: i32);

fn main() {}
