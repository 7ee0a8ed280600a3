use jitseam::{DeviceBuffer, In, Kernel, Loaded, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// A loaded kernel is verified on the host but bound to no device.
fn launch(kernel: Kernel<Add, Loaded>, stream: &Stream, a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) {
    let _ = kernel.launch(stream, Add::args(a, b, out));
}

fn main() {}
