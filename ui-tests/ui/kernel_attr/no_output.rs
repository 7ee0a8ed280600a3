use jitseam::In;

// A kernel with no output computes nothing observable.
#[jitseam::kernel(abi = scalar)]
fn consume(a: In<f32>, b: In<f32>, alpha: f32);

fn main() {}
