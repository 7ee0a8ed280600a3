use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn relu_add(a: In<f32>, b: In<f32>, out: Out<f32>, alpha: f32);

// An f16 buffer where the kernel reads f32.
fn launch(kernel: &Kernel<ReluAdd, DeviceBound>, stream: &Stream, a: &DeviceBuffer<half::f16>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) {
    let _ = kernel.launch(stream, ReluAdd::args(a, b, out, 1.0));
}

fn main() {}
