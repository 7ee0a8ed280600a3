//! The main job, end to end, on the best device this machine has (a CUDA GPU when one opens,
//! else the CPU emulator):
//!
//! 1. a runtime's fused graph node `silu(a * b + c + s)` has no kernel on this device, so the
//!    carrier turns it into a JIT request;
//! 2. the reference synthesizer writes a PTX kernel for it, choosing the ABI from the operands;
//! 3. jitseam adopts it: describe → load (the PTX `.param` list is verified against the ABI) →
//!    bind (module loaded, architecture checked);
//! 4. the kernel is launched through the checked path and its result compared with Rust;
//! 5. a real NVRTC kernel is launched through a typed `#[jitseam::kernel]` launcher.
//!
//! `cargo run --example quickstart`

use std::process::ExitCode;

use jitseam::adopt::adopt_request;
use jitseam::carrier::{GraphView, KernelRegistry, request_for};
use jitseam::synth::{Arch, ElementwiseSynthesizer, JitBudget, Region};
use jitseam::{Device, ElementKind, In, Kernel, Out, Signature};

const ROWS: usize = 64;
const COLS: usize = 1000;
const SHIFT: f64 = 0.25;

/// A three-input graph: nodes 0..3 are `a`, `b`, `c` (f32, `ROWS × COLS`, row-major), node 3 is
/// the fused `silu(a * b + c + SHIFT)`.
struct Graph;

#[derive(Debug, Clone, Copy, PartialEq)]
enum DType {
    F32,
}

impl GraphView for Graph {
    type NodeId = usize;
    type Op = &'static str;
    type DType = DType;

    fn fused_op(&self, node: usize) -> Option<&'static str> {
        (node == 3).then_some("fused_silu_fma_shift")
    }
    fn recipe(&self, node: usize) -> Option<Region> {
        (node == 3).then(|| {
            let ab = Region::op("mul", vec![Region::bind(0), Region::bind(1)]);
            let abc = Region::op("add", vec![ab, Region::bind(2)]);
            let shifted = Region::op_with_scalars("add_scalar", vec![abc], vec![SHIFT]);
            Region::op("silu", vec![shifted])
        })
    }
    fn inputs(&self, node: usize) -> Vec<usize> {
        if node == 3 { vec![0, 1, 2] } else { Vec::new() }
    }
    fn shape(&self, _: usize) -> Vec<u64> {
        vec![ROWS as u64, COLS as u64]
    }
    fn strides(&self, _: usize) -> Vec<i64> {
        vec![COLS as i64, 1]
    }
    fn dtype(&self, _: usize) -> DType {
        DType::F32
    }
    fn base_align(&self, _: usize) -> u32 {
        256
    }
    fn seam_dtype(&self, dtype: DType) -> Option<ElementKind> {
        match dtype {
            DType::F32 => Some(ElementKind::F32),
        }
    }
}

/// The runtime's own kernels: none for the fused op, as far as this device is concerned.
struct NoKernels;

impl KernelRegistry for NoKernels {
    type Op = &'static str;
    type DType = DType;
    type Backend = &'static str;

    fn has_kernel(&self, _: &&'static str, _: &[DType], _: &&'static str) -> bool {
        false
    }
}

/// The NVRTC fixture's signature, declared once; the macro generates `BaracudaGenAddF32Scalar`
/// and a typed launcher whose misuse does not compile.
#[jitseam::kernel(abi = scalar)]
fn baracuda_gen_add_f32_scalar(a: In<f32>, b: In<f32>, out: Out<f32>);

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("quickstart failed: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let selection = Device::best_available();
    let device = selection.device;
    println!("device:     {}", selection.reason);

    // 1. The carrier: a fused node with no kernel here becomes a request.
    let arch = Arch::sm(80);
    let request = request_for(
        &Graph,
        3,
        &"this-device",
        &NoKernels,
        arch,
        JitBudget::millis(50),
    )
    .map_err(|reason| format!("carrier declined: {reason:?}"))?;
    println!(
        "carrier:    fused node 3 → JIT request over {} operands, shape {:?}",
        request.operands.len(),
        request
            .operands
            .last()
            .map(|o| o.shape.clone())
            .unwrap_or_default()
    );

    // 2 + 3. Synthesize, describe, load (verify), bind.
    let adopted = adopt_request::<DType, _>(&request, &ElementwiseSynthesizer::new(), &device)
        .map_err(|decline| format!("adoption declined: {decline:?}"))?;
    let kernel = &adopted.kernel;
    let loaded = kernel.loaded();
    println!(
        "synthesize: `{}` ({} abi, {} parameters, params {:?})",
        kernel.entry(),
        kernel.artifact().abi.abi,
        loaded.layout().params().len(),
        adopted.params
    );
    let version = loaded
        .version()
        .map_or_else(String::new, |v| format!("{}.{}", v.major, v.minor));
    println!(
        "adopt:      ptx {version} for {}, verified and bound",
        loaded.target().arch
    );

    // 4. Launch through the checked path and compare with Rust.
    let n = ROWS * COLS;
    let a: Vec<f32> = (0..n).map(|i| ((i % 97) as f32 - 48.0) / 24.0).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i % 31) as f32 - 15.0) / 10.0).collect();
    let c: Vec<f32> = (0..n).map(|i| ((i % 13) as f32 - 6.0) / 4.0).collect();
    let err = |e: jitseam::Error| e.to_string();
    let (da, db, dc) = (
        device.upload(&a).map_err(err)?,
        device.upload(&b).map_err(err)?,
        device.upload(&c).map_err(err)?,
    );
    let mut out = device.upload(&vec![f32::NAN; n]).map_err(err)?;
    let stream = device.default_stream();
    kernel
        .launch(
            &stream,
            &[(&da).into(), (&db).into(), (&dc).into()],
            &mut [(&mut out).into()],
            &[n],
            &adopted.params,
        )
        .map_err(err)?;
    let got = stream.read(&out).map_err(err)?;
    let worst = (0..n)
        .map(|i| {
            let want = silu(a[i].mul_add(b[i], c[i]) + SHIFT as f32);
            let error = (got[i] - want).abs() / want.abs().max(1.0);
            // An unwritten element is still the NaN sentinel: count it as the worst error.
            if error.is_nan() { f32::INFINITY } else { error }
        })
        .fold(0.0f32, f32::max);
    println!("launch:     {n} elements, worst relative error vs Rust {worst:.2e}");
    if worst > 1e-5 {
        return Err(format!(
            "result differs from the Rust reference (worst {worst})"
        ));
    }

    // 5. A real NVRTC kernel through the typed face.
    let ptx = include_str!("../tests/fixtures/add_f32_scalar.ptx");
    let typed = Kernel::<BaracudaGenAddF32Scalar, _>::describe_typed(
        BaracudaGenAddF32Scalar::ptx_artifact(ptx),
    )
    .map_err(err)?
    .load()
    .map_err(|e| e.to_string())?
    .bind(&device)
    .map_err(|e| e.to_string())?;
    let mut sum = device.upload(&vec![f32::NAN; n]).map_err(err)?;
    typed
        .launch(&stream, BaracudaGenAddF32Scalar::args(&da, &db, &mut sum))
        .map_err(err)?;
    let sum = stream.read(&sum).map_err(err)?;
    let exact = (0..n).all(|i| sum[i] == a[i] + b[i]);
    println!(
        "typed:      NVRTC `baracuda_gen_add_f32_scalar` via #[jitseam::kernel]: {}",
        if exact { "exact" } else { "WRONG" }
    );
    if !exact {
        return Err("typed launch result differs from a + b".to_owned());
    }

    // And a refusal: the same launch with a short output never reaches the device.
    let mut short = device.alloc::<f32>(n - 1).map_err(err)?;
    match typed.launch(&stream, BaracudaGenAddF32Scalar::args(&da, &db, &mut short)) {
        Err(e) if e.is_decline() => println!("declined:   {e}"),
        other => return Err(format!("a short output was not declined: {other:?}")),
    }
    println!("ok");
    Ok(())
}
