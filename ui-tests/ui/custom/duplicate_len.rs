use jitseam::{In, Out};

// One pointer, one extent.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n)] #[len(n + 1)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
