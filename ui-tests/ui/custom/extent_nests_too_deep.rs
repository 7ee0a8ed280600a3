use jitseam::{In, Out};

// 33 levels of parentheses: one past the 32 an extent may nest, refused at the level too many.
#[jitseam::kernel(abi = custom)]
fn copy(#[len((((((((((((((((((((((((((((((((((n))))))))))))))))))))))))))))))))))] x: In<f32>, #[len(n)] out: Out<f32>, n: u32);

fn main() {}
