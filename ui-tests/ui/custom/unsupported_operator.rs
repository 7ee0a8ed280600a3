use jitseam::{In, Out};

// Extents take + - * / and div_ceil, not `%`.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n % 4)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
