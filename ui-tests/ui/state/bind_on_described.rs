use jitseam::{Described, Device, In, Kernel, Out};

#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// `bind` needs what `load()` verified: the entry and its parameter list.
fn bind(kernel: Kernel<Add, Described>, device: &Device) {
    let _ = kernel.bind(device);
}

fn main() {}
