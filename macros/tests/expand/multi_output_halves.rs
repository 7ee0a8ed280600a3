use jitseam::{In, Out};

type Half = half::f16;

/// Two outputs, half-precision operands (one named through an alias, which the macro leaves to
/// the `Element` bound) and integer params.
#[kernel(abi = vectorized(8))]
fn add_sub(a: In<Half>, b: In<half::f16>, sum: Out<f16>, diff: Out<f16>, count: u32, seed: i64);
