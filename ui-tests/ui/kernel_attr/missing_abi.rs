use jitseam::{In, Out};

// The ABI decides the parameter list; there is no default.
#[jitseam::kernel(symbol = "add_f32")]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

fn main() {}
