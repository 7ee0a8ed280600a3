use jitseam::{DeviceBound, DeviceBuffer, In, Kernel, Out, Stream};

#[jitseam::kernel(abi = strided(2))]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// A strided kernel needs each operand's shape and strides; a plain buffer has neither.
fn launch(kernel: &Kernel<Add, DeviceBound>, stream: &Stream, a: &DeviceBuffer<f32>, b: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>) -> Result<(), jitseam::Error> {
    let b = b.shaped(&[4, 2])?;
    let mut out = out.shaped_mut(&[4, 2])?;
    kernel.launch(stream, Add::args(a, &b, &mut out))
}

fn main() {}
