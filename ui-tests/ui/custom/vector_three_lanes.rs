use jitseam::{In, Out};

// A vector element is 2, 4, 8 or 16 lanes of at most 16 bytes: CUDA has no `float3` loads.
#[jitseam::kernel(abi = custom)]
fn copy(#[len(n)] x: In<[f32; 3]>, #[len(n)] out: Out<f32>, n: i32);

fn main() {}
