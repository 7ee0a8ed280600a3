use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = scalar)]
fn relu_add(a: In<f32>, b: In<f32>, out: Out<f32>, alpha: f32);

// A transposed view where the scalar ABI indexes densely.
fn launch(kernel: &Kernel<ReluAdd, DeviceBound>, stream: &Stream, a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) -> Result<(), jitseam::Error> {
    let a_t = a.strided(0, &[4, 2], &[1, 4])?;
    kernel.launch(stream, ReluAdd::args(&a_t, b, out, 1.0))
}

fn main() {}
