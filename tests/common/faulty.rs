//! A kernel that faults on purpose: it follows the scalar ABI (`in0, out0, n`) but stores one
//! float far beyond its output. Bound with `load_unverified`, since `load_proven()` declines it
//! (and `load()` would guard the store, which then never happens); only ever run where the fault is contained — the emulator (a memory fault) and the driver
//! model (the sticky `CUDA_ERROR_ILLEGAL_ADDRESS` of a real driver) — never on a GPU.

use jitseam::{AbiKind, AbiSpec, Artifact, Device, DeviceBound, ElementKind, Erased, Kernel};

pub const ENTRY: &str = "store_out_of_bounds";

pub const PTX: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry store_out_of_bounds(
    .param .u64 in0,
    .param .u64 out0,
    .param .u64 n
)
{
    .reg .b64 %rd<4>;
    .reg .f32 %f<2>;
    ld.param.u64 %rd1, [out0];
    cvta.to.global.u64 %rd2, %rd1;
    add.s64 %rd3, %rd2, 1099511627776;
    mov.f32 %f1, 0f3F800000;
    st.global.f32 [%rd3], %f1;
    ret;
}
";

/// Its artifact: one f32 input, one f32 output, `structure_key` as given.
pub fn artifact(structure_key: Option<&str>) -> Artifact {
    let spec = AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32],
        vec![ElementKind::F32],
        vec![],
    );
    let mut artifact = Artifact::ptx(PTX, ENTRY, spec);
    artifact.link.structure_key = structure_key.map(str::to_owned);
    artifact
}

/// The kernel bound to `device` (the emulator or the driver model only, see the module docs).
pub fn bind(device: &Device, structure_key: Option<&str>) -> Kernel<Erased, DeviceBound> {
    let described = Kernel::describe(artifact(structure_key)).unwrap();
    // SAFETY: not upheld on purpose — the body writes outside its output. Callers bind it only
    // to the emulator, whose memory checker stops the store, or to the driver model, whose
    // device memory is a checked table: neither lets the store reach host memory.
    unsafe { described.load_unverified() }
        .unwrap()
        .bind(device)
        .unwrap()
}

/// One launch over `n` elements on `device`'s default stream; the fault surfaces later, at the
/// stream's next synchronization.
pub fn launch(kernel: &Kernel<Erased, DeviceBound>, n: usize) {
    let device = kernel.device();
    let x = device.upload(&vec![0.0f32; n]).unwrap();
    let mut y = device.alloc_zeros::<f32>(n).unwrap();
    kernel
        .launch(
            &device.default_stream(),
            &[(&x).into()],
            &mut [(&mut y).into()],
            &[n],
            &[],
        )
        .unwrap();
}
