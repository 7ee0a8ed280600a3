//! Corpus kernels that are unsafe under their honest signature, each found by the verifier
//! declining to prove an access. The launch that shows the fault is stopped before it does
//! harm (on a GPU it would read or write someone else's memory): by the guard the kernel
//! loads with, or, for the Rodinia stencils, by the emulator's check of uninitialized shared
//! memory one read earlier. An honest launch of each runs as the reference does.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, Error, In, Kernel, LaunchConfig, Out, Signature};
use jitseam_emu::interp::FaultKind;

#[path = "common/custom_verify.rs"]
#[allow(dead_code, reason = "these kernels are not mutated")]
mod custom_verify;
use custom_verify::{line_of, rejects};
use jitseam_verify::RejectKind;

/// Asserts that `kernel` loaded with a guard on the access at `line`.
fn guarded_at<K: Signature>(kernel: &Kernel<K, jitseam::Loaded>, line: u32) {
    let guards = kernel.loaded().proof().unwrap().guards();
    assert!(guards.iter().any(|g| g.line == line), "{guards:?}");
}

/// The emulator's fault at `line`: a read of a shared slot no thread wrote.
fn uninitialized_shared(result: Result<(), Error>, line: u32) {
    match result {
        Err(Error::MemoryFault(fault)) => {
            assert_eq!(fault.line, line, "{fault}");
            assert_eq!(fault.kind, FaultKind::UninitializedShared, "{fault}");
        }
        other => panic!("expected a read of uninitialized shared memory, got {other:?}"),
    }
}

/// The fault a launch's stream reports: a guard's, at `line` through `operand`.
fn guard_fault(
    result: Result<(), Error>,
    line: u32,
    operand: &str,
) -> Box<jitseam::error::GuardFault> {
    match result {
        Err(Error::GuardFault(fault)) => {
            assert_eq!(
                (fault.line, fault.operand.as_str()),
                (line, operand),
                "{fault}"
            );
            fault
        }
        other => panic!("expected a guard fault at line {line}, got {other:?}"),
    }
}

#[jitseam::kernel(abi = custom)]
fn ggml_cpy_permute_f32(
    #[len((div_ceil(ne, ne00 * ne01 * ne02) - 1) * s03 + (ne02 - 1) * s02 + (ne01 - 1) * s01 + (ne00 - 1) * s00 + 1)]
    x: In<f32>,
    #[len(ne)] dst: Out<f32>,
    ne: i32,
    ne00: i32,
    ne01: i32,
    ne02: i32,
    s00: i32,
    s01: i32,
    s02: i32,
    s03: i32,
);

const CPY_SIG: &str = "x: in f32[(div_ceil(ne, ne00 * ne01 * ne02) - 1) * s03 + (ne02 - 1) * s02 \
                       + (ne01 - 1) * s01 + (ne00 - 1) * s00 + 1], dst: out f32[ne], ne: i32, \
                       ne00: i32, ne01: i32, ne02: i32, s00: i32, s01: i32, s02: i32, s03: i32";

/// The corpus's permuting copy (after llama.cpp's `cpy`) divides its 64-bit index by
/// `ne00 * ne01 * ne02` taken as an `int`, but subtracts the quotient times the exact
/// product: where the `int` product wraps, the decomposition is wrong. `2048^3 = 2^33` wraps
/// to 0, `i / 0` is all ones on a GPU (and on the emulator), and with `s03 = 1` thread 0 reads
/// `x[2^32 − 1]` of an extent of 2048. So the read is guarded, and the guard stops exactly
/// that launch, while one whose product fits copies as the reference does.
#[test]
fn a_permute_whose_int_divisor_wraps_is_stopped_by_its_guard() {
    let text = include_str!("fixtures/real/ggml_cpy.ptx");
    let entry = "ggml_cpy_permute_f32";
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel =
        Kernel::<GgmlCpyPermuteF32, _>::describe_typed(GgmlCpyPermuteF32::ptx_artifact(text))
            .unwrap()
            .load()
            .unwrap();
    rejects(text, entry, CPY_SIG, RejectKind::MayWrap, "ld.global.f32");
    let read = line_of(text, entry, "ld.global.f32");
    let guards: Vec<u32> = kernel
        .loaded()
        .proof()
        .unwrap()
        .guards()
        .iter()
        .map(|g| g.line)
        .collect();
    assert_eq!(guards, [read]);
    let kernel = kernel.bind(&device).unwrap();
    let single = LaunchConfig::new([1, 1, 1], [1, 1, 1]);
    let x = device.upload(&vec![1.0f32; 2048]).unwrap();
    let mut dst = device.upload(&[f32::NAN]).unwrap();
    kernel
        .launch_with(
            &stream,
            single,
            GgmlCpyPermuteF32::args(&x, &mut dst, 1, 2048, 2048, 2048, 1, 0, 0, 1),
        )
        .unwrap();
    let fault = guard_fault(stream.synchronize(), read, "x");
    assert_eq!(fault.offset, 4 * ((1 << 32) - 1), "{fault}");
    // A 2 × 3 × 2 block transposed: element `(i00, i01, i02)` read at `i00·6 + i01·2 + i02`.
    let src: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let x = device.upload(&src).unwrap();
    let mut dst = device.upload(&[f32::NAN; 12]).unwrap();
    kernel
        .launch_with(
            &stream,
            LaunchConfig::new([1, 1, 1], [16, 1, 1]),
            GgmlCpyPermuteF32::args(&x, &mut dst, 12, 2, 3, 2, 6, 2, 1, 12),
        )
        .unwrap();
    let want: Vec<f32> = (0..12)
        .map(|i| {
            let (i00, i01, i02) = (i % 2, i / 2 % 3, i / 6);
            src[i00 * 6 + i01 * 2 + i02]
        })
        .collect();
    assert_eq!(stream.read(&dst).unwrap(), want);
}

#[jitseam::kernel(abi = custom)]
fn samples_sobel(
    #[len((grid.x - 1) * pitch + w)] p_sobel_original: Out<u8>,
    pitch: u32,
    w: i32,
    h: i32,
    f_scale: f32,
    #[len(w * h)] img: In<u8>,
);

const SOBEL_SIG: &str = "pSobelOriginal: out u8[(grid.x - 1) * Pitch + w], Pitch: u32, w: i32, \
                         h: i32, fScale: f32, img: in u8[w * h]";

/// The CUDA samples' Sobel filter clamps each row to `[0, h − 1]`, which for an image of no
/// rows (`h = 0`, an extent of 0) is `−1`: the first read of each column is at `img[−w + x]`.
/// So the reads are guarded, and the guard stops that launch, while an image of rows filters
/// as the reference does.
#[test]
fn sobel_over_an_image_of_no_rows_is_stopped_by_its_guard() {
    let text = include_str!("fixtures/real/samples_image.ptx");
    let entry = "samples_sobel";
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<SamplesSobel, _>::describe_typed(SamplesSobel::ptx_artifact(text))
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(kernel.loaded().proof().unwrap().guards().len(), 8);
    let kernel = kernel.bind(&device).unwrap();
    let empty = device.upload::<u8>(&[]).unwrap();
    let mut out = device.upload(&[7u8; 4]).unwrap();
    let one_row = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    kernel
        .launch_with(
            &stream,
            one_row,
            SamplesSobel::args(&mut out, 4, 4, 0, 1.0, &empty),
        )
        .unwrap();
    // The first read of the loop body, `pix02` at `(x + 1, y − 1)`.
    let at = "ld.global.u8 	%r39, [%rd11];";
    rejects(text, entry, SOBEL_SIG, RejectKind::MayWrap, at);
    let first = line_of(text, entry, at);
    guard_fault(stream.synchronize(), first, "img");
    // A flat 4 × 3 image: no edge, every output 0.
    let img = device.upload(&[9u8; 12]).unwrap();
    let mut out = device.upload(&[7u8; 12]).unwrap();
    kernel
        .launch_with(
            &stream,
            LaunchConfig::new([3, 1, 1], [32, 1, 1]),
            SamplesSobel::args(&mut out, 4, 4, 3, 1.0, &img),
        )
        .unwrap();
    assert_eq!(stream.read(&out).unwrap(), [0u8; 12]);
}

#[jitseam::kernel(abi = custom, block = (256, 1, 1))]
fn rodinia_pathfinder_dynproc(
    iteration: i32,
    #[len(cols * (start_step + iteration))] gpu_wall: In<i32>,
    #[len(cols)] gpu_src: In<i32>,
    #[len(cols)] gpu_results: Out<i32>,
    cols: i32,
    rows: i32,
    start_step: i32,
    border: i32,
);

/// Rodinia's `pathfinder` finds each block's valid columns from `blkX = small · bx − border`
/// and `validXmin = −blkX` in `int` arithmetic. A `border` of `INT_MIN` (no declared extent
/// names it) makes both wrap to `INT_MIN`: every thread is valid, and reads the wall at
/// `cols · startStep + INT_MIN + tx`, which the verifier declines to prove. On the emulator
/// the launch stops a step earlier, at the valid thread's read of its own shared slot, which
/// no thread loaded (its column is not in the input); a GPU reads garbage there and goes on
/// to the wall. An honest launch finds the reference's paths.
#[test]
fn pathfinder_with_a_border_of_int_min_is_unsafe() {
    let text = include_str!("fixtures/real/rodinia_pathfinder.ptx");
    let entry = "rodinia_pathfinder_dynproc";
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<RodiniaPathfinderDynproc, _>::describe_typed(
        RodiniaPathfinderDynproc::ptx_artifact(text),
    )
    .unwrap()
    .load()
    .unwrap();
    guarded_at(
        &kernel,
        line_of(text, entry, "ld.global.u32 	%r45, [%rd20];"),
    );
    let kernel = kernel.bind(&device).unwrap();
    let left = line_of(text, entry, "ld.shared.u32 	%r40, [%rd3];");
    let cols = 300usize;
    let wall = device.upload(&vec![1i32; cols]).unwrap();
    let src = device.upload(&vec![0i32; cols]).unwrap();
    let mut results = device.upload(&vec![-7i32; cols]).unwrap();
    let one = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
    kernel
        .launch_with(
            &stream,
            one,
            RodiniaPathfinderDynproc::args(
                1,
                &wall,
                &src,
                &mut results,
                cols as i32,
                2,
                0,
                i32::MIN,
            ),
        )
        .unwrap();
    uninitialized_shared(stream.synchronize(), left);
    // One step over a wall of ones from a source of zeros: every path costs 1.
    let two = LaunchConfig::new([2, 1, 1], [256, 1, 1]);
    kernel
        .launch_with(
            &stream,
            two,
            RodiniaPathfinderDynproc::args(1, &wall, &src, &mut results, cols as i32, 2, 0, 1),
        )
        .unwrap();
    assert_eq!(stream.read(&results).unwrap(), vec![1; cols]);
}

#[jitseam::kernel(abi = custom, block = (16, 16, 1))]
fn rodinia_hotspot_calculate_temp(
    iteration: i32,
    #[len(grid_cols * grid_rows)] power: In<f32>,
    #[len(grid_cols * grid_rows)] temp_src: In<f32>,
    #[len(grid_cols * grid_rows)] temp_dst: Out<f32>,
    grid_cols: i32,
    grid_rows: i32,
    border_cols: i32,
    border_rows: i32,
    cap: f32,
    rx: f32,
    ry: f32,
    rz: f32,
    step: f32,
    time_elapsed: f32,
);

/// Rodinia's `hotspot` has `pathfinder`'s arithmetic on both axes: a `border_cols` of
/// `INT_MIN` makes `blkX` and `validXmin` wrap to `INT_MIN`, and the threads of the small
/// block store their cell at `grid_cols · yidx + INT_MIN + tx`, before the output, which the
/// verifier declines to prove. On the emulator the launch stops earlier, at the first read of
/// a tile cell no thread loaded (as for `pathfinder`).
#[test]
fn hotspot_with_a_border_of_int_min_is_unsafe() {
    let text = include_str!("fixtures/real/rodinia_hotspot.ptx");
    let entry = "rodinia_hotspot_calculate_temp";
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<RodiniaHotspotCalculateTemp, _>::describe_typed(
        RodiniaHotspotCalculateTemp::ptx_artifact(text),
    )
    .unwrap()
    .load()
    .unwrap();
    guarded_at(
        &kernel,
        line_of(text, entry, "st.global.f32 	[%rd40], %f25;"),
    );
    let kernel = kernel.bind(&device).unwrap();
    let cells = device.upload(&[80.0f32; 256]).unwrap();
    let power = device.upload(&[0.0f32; 256]).unwrap();
    let mut dst = device.upload(&[f32::NAN; 256]).unwrap();
    let one = LaunchConfig::new([1, 1, 1], [16, 16, 1]);
    for border_cols in [i32::MIN, 1] {
        let args = RodiniaHotspotCalculateTemp::args(
            1,
            &power,
            &cells,
            &mut dst,
            16,
            16,
            border_cols,
            1,
            0.5,
            2.0,
            3.0,
            4.0,
            0.1,
            0.1,
        );
        kernel.launch_with(&stream, one, args).unwrap();
        if border_cols == i32::MIN {
            let read = line_of(text, entry, "ld.shared.f32 	%f12, [%rd3];");
            uninitialized_shared(stream.synchronize(), read);
        }
    }
    // At the ambient temperature with no power, each cell of the small block (threads 1..=14
    // on each axis, a border of one cell before it) stays at 80; the rest is not written.
    let out = stream.read(&dst).unwrap();
    for (i, v) in out.iter().enumerate() {
        if i / 16 < 14 && i % 16 < 14 {
            assert_eq!(*v, 80.0, "cell {i}");
        } else {
            assert!(v.is_nan(), "cell {i} = {v}");
        }
    }
}

#[jitseam::kernel(abi = custom)]
fn ggml_add_bcast_f32(
    #[len((ne3 - 1) * s03 + (ne2 - 1) * s02 + (ne1 - 1) * s01 + ne0)] src0: In<f32>,
    #[len((ne13 - 1) * s13 + (ne12 - 1) * s12 + (ne11 - 1) * s11 + ne10)] src1: In<f32>,
    #[len((ne3 - 1) * s3 + (ne2 - 1) * s2 + (ne1 - 1) * s1 + ne0)] dst: Out<f32>,
    ne0: i32,
    ne1: i32,
    ne2: i32,
    ne3: i32,
    ne10: i32,
    ne11: i32,
    ne12: i32,
    ne13: i32,
    s1: i32,
    s2: i32,
    s3: i32,
    s01: i32,
    s02: i32,
    s03: i32,
    s11: i32,
    s12: i32,
    s13: i32,
);

/// The corpus's broadcasting add (after llama.cpp's `k_bin_bcast`) wraps each destination
/// coordinate into the second source by `i % ne1x`. A second source of no columns (`ne10 =
/// 0`, an extent of 0) makes that `i0 % 0`, which leaves `i0` on a GPU (and on the emulator):
/// each thread reads `src1[i0]` of an empty source. The guard stops that launch; an honest
/// broadcast adds as the reference does.
#[test]
fn add_bcast_from_a_source_of_no_columns_is_stopped_by_its_guard() {
    let text = include_str!("fixtures/real/ggml_binbcast.ptx");
    let entry = "ggml_add_bcast_f32";
    let device = Device::emulator();
    let stream = device.default_stream();
    let kernel = Kernel::<GgmlAddBcastF32, _>::describe_typed(GgmlAddBcastF32::ptx_artifact(text))
        .unwrap()
        .load()
        .unwrap();
    let read = line_of(text, entry, "ld.global.f32 	%f1, [%rd17];");
    guarded_at(&kernel, read);
    let kernel = kernel.bind(&device).unwrap();
    let row = device.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let empty = device.upload::<f32>(&[]).unwrap();
    let mut dst = device.upload(&[f32::NAN; 4]).unwrap();
    let config = LaunchConfig::new([1, 1, 1], [4, 1, 1]);
    kernel
        .launch_with(
            &stream,
            config,
            GgmlAddBcastF32::args(
                &row, &empty, &mut dst, 4, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ),
        )
        .unwrap();
    let fault = guard_fault(stream.synchronize(), read, "src1");
    assert_eq!(fault.limit, 0, "{fault}");
    // A row of two broadcast over four columns.
    let pair = device.upload(&[10.0f32, 20.0]).unwrap();
    kernel
        .launch_with(
            &stream,
            config,
            GgmlAddBcastF32::args(
                &row, &pair, &mut dst, 4, 1, 1, 1, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ),
        )
        .unwrap();
    assert_eq!(stream.read(&dst).unwrap(), [11.0, 22.0, 13.0, 24.0]);
}
