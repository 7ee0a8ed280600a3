use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn relu_add(a: In<f32>, b: In<f32>, out: Out<f32>, alpha: f32);

// The kernel takes __restrict__ pointers: one buffer cannot be read and written at once.
fn launch(kernel: &Kernel<ReluAdd, DeviceBound>, stream: &Stream, mut a: DeviceBuffer<f32>, b: &DeviceBuffer<f32>) {
    let _ = kernel.launch(stream, ReluAdd::args(&a, b, &mut a, 1.0));
}

fn main() {}
