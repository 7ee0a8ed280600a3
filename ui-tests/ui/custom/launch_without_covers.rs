use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = custom)]
fn block_sum(#[len(n)] x: In<f32>, #[len(grid.x)] partial: Out<f32>, n: u32);

// Without `covers`, jitseam cannot choose the grid: the launch needs a `LaunchConfig`.
fn launch(kernel: &Kernel<BlockSum, DeviceBound>, stream: &Stream, x: &DeviceBuffer<f32>, partial: &mut DeviceBuffer<f32>) -> Result<(), jitseam::Error> {
    kernel.launch(stream, BlockSum::args(x, partial, 1024))
}

fn main() {}
