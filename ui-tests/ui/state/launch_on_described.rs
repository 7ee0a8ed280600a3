use jitseam::{Described, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// A described kernel was never checked against its PTX, nor put on a device.
fn launch(kernel: Kernel<Add, Described>, stream: &Stream, a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) {
    let _ = kernel.launch(stream, Add::args(a, b, out));
}

fn main() {}
