use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, LaunchConfig, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// jitseam chooses a scalar kernel's grid from `n`: it takes no launch configuration.
fn launch(kernel: &Kernel<Add, DeviceBound>, stream: &Stream, a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) -> Result<(), jitseam::Error> {
    kernel.launch_with(stream, LaunchConfig::linear(4, 256), Add::args(a, b, out))
}

fn main() {}
