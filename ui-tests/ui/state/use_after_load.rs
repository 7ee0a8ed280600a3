use jitseam::{Described, In, Kernel, Out};

#[jitseam::kernel(abi = scalar)]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

// `load()` consumes the described kernel: the old state cannot be used again.
fn load_twice(kernel: Kernel<Add, Described>) {
    let _loaded = kernel.load();
    let _again = kernel.load();
}

fn main() {}
