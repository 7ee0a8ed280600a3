use jitseam::{In, Out};

/// A tiled transpose written for blocks of exactly 32 × 8 threads.
#[jitseam::kernel(abi = custom, block = (32, 8, 1))]
pub fn transpose(
    #[len(32 * grid.y + height * (32 * grid.x - 1))] odata: Out<f32>,
    #[len(32 * grid.x + width * (32 * grid.y - 1))] idata: In<f32>,
    width: i32,
    height: i32,
);
