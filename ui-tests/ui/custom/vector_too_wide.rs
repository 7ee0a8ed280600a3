use jitseam::{In, Out};

// Four doubles are 32 bytes: wider than any one access.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n)] x: In<[f64; 4]>, #[len(n)] out: Out<f64>, n: i32);

fn main() {}
