use jitseam::{In, Out};

// `shared` declares the dynamic shared memory of custom kernels; the other abis launch with none.
#[jitseam::kernel(abi = scalar, shared = 4 * 256)]
fn copy(x: In<f32>, out: Out<f32>);

fn main() {}
