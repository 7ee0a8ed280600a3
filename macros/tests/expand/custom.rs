use jitseam::{In, Out};

/// Out-first saxpy with an `int n`, one thread per element.
#[jitseam::kernel(abi = custom, covers = n, symbol = "saxpy_out_first")]
pub fn saxpy(#[len(n)] out: Out<f32>, #[len(div_ceil(n, 2) * 2)] x: In<f32>, n: i32, a: f32);
