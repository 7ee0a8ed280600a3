use jitseam::In;

// `Out` is read by name but must resolve like any Rust type: here it is not in scope.
#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
