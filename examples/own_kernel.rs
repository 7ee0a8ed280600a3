//! Your own CUDA kernel, start to finish: CUDA C compiled at run time with NVRTC, bound in its
//! own parameter order with the custom ABI, its body proven at `load()`, launched through a
//! typed launcher that rustc checks. On a CUDA GPU when one opens, else on the emulator; where
//! NVRTC is not installed it says so and stops.
//!
//! `cargo run --example own_kernel` (NVRTC: `LD_LIBRARY_PATH="$(scripts/install-nvrtc)"`).

use jitseam::nvrtc::{self, CompileOptions, CompileTarget};
use jitseam::prelude::*;

/// `y = a * x + y`, the output first and an `int n`, as CUDA code often has it.
const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float* y, const float* x, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#;

// The kernel's own parameter list: each pointer with the extent it may touch, and `covers = n`:
// one thread per element, so jitseam chooses the grid.
#[jitseam::kernel(abi = custom, covers = n)]
fn saxpy(#[len(n)] y: Out<f32>, #[len(n)] x: In<f32>, n: i32, a: f32);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Err(missing) = nvrtc::version() {
        eprintln!("own_kernel: skipped, {missing}");
        return Ok(());
    }
    // PTX for compute_80 (an `sm_XY` target adds a cubin, verified through this PTX).
    let compiled = nvrtc::compile(SAXPY, &CompileOptions::new(CompileTarget::compute(80)))?;
    let device = Device::best_available().device;
    let kernel = Kernel::<Saxpy, _>::describe_typed(compiled.artifact(Saxpy::SYMBOL, Saxpy::SPEC))?
        // Host only: the entry's `.param` list against the declaration, and a proof that the
        // body touches `y` and `x` only below `n`, storing only through `y`.
        .load()?
        .bind(&device)?;

    let n = 1000;
    let x = device.upload(&vec![1.0f32; n])?;
    let mut y = device.upload(&vec![2.0f32; n])?;
    let stream = device.default_stream();
    kernel.launch(&stream, Saxpy::args(&mut y, &x, n as i32, 3.0))?;
    assert!(stream.read(&y)?.iter().all(|&v| v == 5.0));

    // What rustc cannot see is checked at launch: `n` past the buffers is declined, naming `y`.
    let error = kernel
        .launch(&stream, Saxpy::args(&mut y, &x, n as i32 + 1, 3.0))
        .unwrap_err();
    assert!(error.is_decline(), "{error}");
    println!("saxpy on {}: ok; {error}", device.properties().name);
    Ok(())
}
