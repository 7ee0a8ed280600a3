//! Corpus kernels that are unsafe under their honest signature, each found by the verifier
//! declining to prove an access: the guard it loads with stops exactly the launch that shows
//! the fault (on a GPU it would read someone else's memory), while an honest launch runs as
//! the reference does.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::{Device, Error, In, Kernel, LaunchConfig, Out, Signature};

#[path = "common/custom_verify.rs"]
#[allow(dead_code, reason = "these kernels are not mutated")]
mod custom_verify;
use custom_verify::{line_of, rejects};
use jitseam_verify::RejectKind;

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
