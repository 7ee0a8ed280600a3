use jitseam::{In, Out};

// The macro cannot size an alias by name, so the generated static assertion holds it to
// `W · size ≤ 16`: four doubles are 32 bytes.
type Wide = f64;

#[jitseam::kernel(abi = vectorized(4))]
fn add(a: In<Wide>, b: In<Wide>, out: Out<Wide>);

fn main() {}
