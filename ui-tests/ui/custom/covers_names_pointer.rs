use jitseam::{In, Out};

// `covers` is a count over the params, not a pointer.
#[jitseam::kernel(abi = custom, covers = x)]
fn copy(#[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
