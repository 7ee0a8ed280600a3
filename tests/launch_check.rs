//! The checked launch path: `check` refuses every mismatch with the variant and fields that say
//! what is wrong, `marshal` writes exact packets, and the erased launch hands the backend exactly
//! that packet.

mod common;

use common::{fake, fixtures};
use jitseam::device::{Geometry, ViewDesc};
use jitseam::error::Operand;
use jitseam::launch::{LaunchFacts, check, grid_for, marshal};
use jitseam::{Device, DeviceBound, Erased, Error, Kernel, ParamValue};

fn bound(entry: &str, device: &Device) -> Kernel<Erased, DeviceBound> {
    let f = fixtures::by_entry(entry);
    Kernel::describe(f.artifact())
        .unwrap()
        .load()
        .unwrap()
        .bind(device)
        .unwrap()
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

const ADD_F32: &str = "baracuda_gen_add_f32_scalar";
const ADD_F32_V4: &str = "baracuda_gen_add_f32_co_v4";
const STRIDED_F64_P: &str = "baracuda_gen_mul_scalar_f64_strided_r2";

#[test]
fn scalar_packet_is_three_pointers_and_n() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(1000).unwrap();
    let b = dev.alloc::<f32>(1000).unwrap();
    let out = dev.alloc::<f32>(1000).unwrap();
    let (ins, outs) = ([a.desc(), b.desc()], [out.desc()]);
    let checked = check(k.facts(), dev.id(), &ins, &outs, &[1000], &[]).unwrap();
    assert_eq!(checked.geometry(), Geometry::linear(4, 256));
    let packet = marshal(&checked);
    assert_eq!(
        u64s(packet.bytes()),
        [a.address(), b.address(), out.address(), 1000]
    );
    assert_eq!(packet.param(3), Some(&1000u64.to_le_bytes()[..]));
}

#[test]
fn vectorized_count_is_in_vectors_and_views_add_their_offset() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32_V4, &dev);
    let a = dev.alloc::<f32>(1028).unwrap();
    let b = dev.alloc::<f32>(1024).unwrap();
    let out = dev.alloc::<f32>(1024).unwrap();
    let a_view = a.slice(4..1028).unwrap();
    let (ins, outs) = ([a_view.desc(), b.desc()], [out.desc()]);
    let checked = check(k.facts(), dev.id(), &ins, &outs, &[1024], &[]).unwrap();
    assert_eq!(checked.count(), 256);
    assert_eq!(
        u64s(marshal(&checked).bytes()),
        [a.address() + 16, b.address(), out.address(), 256]
    );
}

#[test]
fn strided_packet_has_shape_strides_count_and_an_f64_param() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(12).unwrap();
    let mut out = dev.alloc::<f64>(12).unwrap();
    // x read transposed: a 4x3 view of a 3x4 buffer.
    let xt = x.strided(0, &[4, 3], &[1, 4]).unwrap();
    let o = out.shaped_mut(&[4, 3]).unwrap();
    let (ins, outs) = ([xt.desc()], [o.desc()]);
    let params = [ParamValue::F64(2.5)];
    let checked = check(k.facts(), dev.id(), &ins, &outs, &[4, 3], &params).unwrap();
    let packet = marshal(&checked);
    let words = u64s(packet.bytes());
    assert_eq!(
        words[..9],
        [x.address(), out.address(), 4, 3, 1, 4, 3, 1, 12]
    );
    assert_eq!(f64::from_bits(words[9]), 2.5);
    assert_eq!(packet.bytes().len(), 80);
}

#[test]
fn negative_stride_view_inside_its_allocation_is_accepted() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(6).unwrap();
    let mut out = dev.alloc::<f64>(6).unwrap();
    // Rows reversed: origin at the last row.
    let rev = x.strided(3, &[2, 3], &[-3, 1]).unwrap();
    let o = out.shaped_mut(&[2, 3]).unwrap();
    let (ins, outs) = ([rev.desc()], [o.desc()]);
    let params = [ParamValue::F64(1.0)];
    let checked = check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &params).unwrap();
    let words = u64s(marshal(&checked).bytes());
    assert_eq!(words[0], x.address() + 3 * 8);
    assert_eq!(words[4] as i64, -3);
}

#[test]
fn strided_view_reaching_outside_its_allocation_is_refused() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(6).unwrap();
    let mut out = dev.alloc::<f64>(6).unwrap();
    let too_far = x.strided(1, &[2, 3], &[3, 1]).unwrap();
    let o = out.shaped_mut(&[2, 3]).unwrap();
    let (ins, outs) = ([too_far.desc()], [o.desc()]);
    let err = check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[2.0f64.into()]).unwrap_err();
    match err {
        Error::ViewOutOfBounds {
            operand,
            lowest,
            highest,
            len,
            ..
        } => {
            assert_eq!(operand, Operand::Input(0));
            assert_eq!((lowest, highest, len), (1, 6, 6));
        }
        other => panic!("unexpected {other:?}"),
    }
    let before_start = x.strided(0, &[2, 3], &[-3, 1]).unwrap();
    let ins = [before_start.desc()];
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[2.0f64.into()]),
        Err(Error::ViewOutOfBounds { lowest: -3, .. })
    ));
}

#[test]
fn buffer_on_another_device_is_refused() {
    let (dev, _) = fake::recording();
    let (other, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(8).unwrap();
    let b = other.alloc::<f32>(8).unwrap();
    let out = dev.alloc::<f32>(8).unwrap();
    let (ins, outs) = ([a.desc(), b.desc()], [out.desc()]);
    match check(k.facts(), dev.id(), &ins, &outs, &[8], &[]).unwrap_err() {
        Error::DeviceMismatch {
            entry,
            operand,
            expected,
            found,
        } => {
            assert_eq!(entry, ADD_F32);
            assert_eq!(operand, Operand::Input(1));
            assert_eq!((expected, found), (dev.id(), other.id()));
        }
        e => panic!("unexpected {e:?}"),
    }
}

#[test]
fn stream_on_another_device_is_refused() {
    let (dev, _) = fake::recording();
    let (other, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(8).unwrap();
    let mut out = dev.alloc::<f32>(8).unwrap();
    let err = k
        .launch(
            &other.default_stream(),
            &[(&a).into(), (&a).into()],
            &mut [(&mut out).into()],
            &[8],
            &[],
        )
        .unwrap_err();
    assert!(matches!(
        err,
        Error::DeviceMismatch { operand: Operand::Stream, expected, found, .. }
            if expected == dev.id() && found == other.id()
    ));
    assert!(err.is_decline());
}

#[test]
fn wrong_dtype_is_refused() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(8).unwrap();
    let b = dev.alloc::<half::f16>(8).unwrap();
    let out = dev.alloc::<f32>(8).unwrap();
    let (ins, outs) = ([a.desc(), b.desc()], [out.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[8], &[]),
        Err(Error::DtypeMismatch {
            operand: Operand::Input(1),
            expected: jitseam::ElementKind::F32,
            found: jitseam::ElementKind::F16,
            ..
        })
    ));
}

#[test]
fn short_operand_is_refused() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(100).unwrap();
    let b = dev.alloc::<f32>(99).unwrap();
    let out = dev.alloc::<f32>(100).unwrap();
    let (ins, outs) = ([a.desc(), b.desc()], [out.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[100], &[]),
        Err(Error::ElementCount {
            operand: Operand::Input(1),
            expected: 100,
            found: 99,
            ..
        })
    ));
}

#[test]
fn float4_view_at_one_element_offset_is_misaligned() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32_V4, &dev);
    let a = dev.alloc::<f32>(9).unwrap();
    let b = dev.alloc::<f32>(8).unwrap();
    let out = dev.alloc::<f32>(8).unwrap();
    let shifted = a.slice(1..9).unwrap();
    let (ins, outs) = ([shifted.desc(), b.desc()], [out.desc()]);
    match check(k.facts(), dev.id(), &ins, &outs, &[8], &[]).unwrap_err() {
        Error::Misaligned {
            operand,
            offset,
            required,
            ..
        } => assert_eq!((operand, offset, required), (Operand::Input(0), 4, 16)),
        e => panic!("unexpected {e:?}"),
    }
}

#[test]
fn vector_count_not_divisible_is_refused() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32_V4, &dev);
    let bufs: Vec<_> = (0..3).map(|_| dev.alloc::<f32>(10).unwrap()).collect();
    let (ins, outs) = ([bufs[0].desc(), bufs[1].desc()], [bufs[2].desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[10], &[]),
        Err(Error::NotDivisible {
            n: 10,
            width: 4,
            ..
        })
    ));
}

#[test]
fn param_of_another_type_is_never_converted() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(4).unwrap();
    let mut out = dev.alloc::<f64>(4).unwrap();
    let xv = x.shaped(&[2, 2]).unwrap();
    let ov = out.shaped_mut(&[2, 2]).unwrap();
    let (ins, outs) = ([xv.desc()], [ov.desc()]);
    assert!(matches!(
        check(
            k.facts(),
            dev.id(),
            &ins,
            &outs,
            &[2, 2],
            &[ParamValue::F32(2.0)]
        ),
        Err(Error::ParamType {
            index: 0,
            expected: jitseam::ElementKind::F64,
            found: jitseam::ElementKind::F32,
            ..
        })
    ));
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[2, 2], &[]),
        Err(Error::ArgumentCount {
            what: "params",
            expected: 1,
            found: 0,
            ..
        })
    ));
}

#[test]
fn output_broadcast_over_an_axis_overlaps_itself() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(6).unwrap();
    let mut out = dev.alloc::<f64>(3).unwrap();
    let xv = x.shaped(&[2, 3]).unwrap();
    let ov = out.strided_mut(0, &[2, 3], &[0, 1]).unwrap();
    let (ins, outs) = ([xv.desc()], [ov.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[1.0f64.into()]),
        Err(Error::OutputOverlaps {
            output: 0,
            axis: 0,
            extent: 2,
            ..
        })
    ));
    // Strides that interleave rows overlap too, though no stride is zero.
    let mut out6 = dev.alloc::<f64>(6).unwrap();
    let ov = out6.strided_mut(0, &[2, 3], &[1, 1]).unwrap();
    let outs = [ov.desc()];
    let error = check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[1.0f64.into()]).unwrap_err();
    assert!(
        matches!(&error, Error::OutputOverlaps { axis: 1, extent: 3, strides, .. } if strides[..] == [1, 1]),
        "{error:?}"
    );
    // The message names the real strides, not a stride of 0 that no axis has.
    let message = error.to_string();
    assert!(message.contains("strides [1, 1]"), "{message}");
    assert!(message.contains("axis 1 (extent 3, stride 1)"), "{message}");
}

#[test]
fn output_overlapping_an_input_is_refused() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let mut whole = dev.alloc::<f32>(16).unwrap();
    let b = dev.alloc::<f32>(8).unwrap();
    let (left, right) = whole.split_at_mut(8).unwrap();
    // Disjoint halves of one allocation are fine...
    let (ins, outs) = ([left.desc(), b.desc()], [right.desc()]);
    assert!(check(k.facts(), dev.id(), &ins, &outs, &[8], &[]).is_ok());
    // ...the same range as input and output is not (the erased face cannot lean on borrowck).
    let (ins, outs) = ([left.desc(), b.desc()], [left.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[8], &[]),
        Err(Error::Aliasing {
            output: 0,
            other: Operand::Input(0),
            ..
        })
    ));
}

#[test]
fn strided_view_to_a_scalar_kernel_is_not_contiguous() {
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(8).unwrap();
    let b = dev.alloc::<f32>(8).unwrap();
    let out = dev.alloc::<f32>(8).unwrap();
    let t = a.strided(0, &[2, 4], &[1, 2]).unwrap();
    let (ins, outs) = ([t.desc(), b.desc()], [out.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[8], &[]),
        Err(Error::NotContiguous {
            operand: Operand::Input(0),
            ..
        })
    ));
}

#[test]
fn strided_rank_and_shape_must_match() {
    let (dev, _) = fake::recording();
    let k = bound(STRIDED_F64_P, &dev);
    let x = dev.alloc::<f64>(6).unwrap();
    let mut out = dev.alloc::<f64>(6).unwrap();
    let ov = out.shaped_mut(&[2, 3]).unwrap();
    let (ins, outs) = ([x.desc()], [ov.desc()]);
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[1.0f64.into()]),
        Err(Error::RankMismatch {
            operand: Operand::Input(0),
            expected: 2,
            found: 1,
            ..
        })
    ));
    let xv = x.shaped(&[3, 2]).unwrap();
    let ins = [xv.desc()];
    assert!(matches!(
        check(k.facts(), dev.id(), &ins, &outs, &[2, 3], &[1.0f64.into()]),
        Err(Error::ShapeMismatch {
            operand: Operand::Input(0),
            ..
        })
    ));
}

#[test]
fn n_beyond_u32_max_gets_a_valid_capped_grid() {
    let n: u64 = (1 << 33) + 5;
    assert_eq!(grid_for(n, 2_147_483_647).grid[0], 33_554_433);
    assert_eq!(grid_for(n, 65_535).grid[0], 65_535);
    assert_eq!(grid_for(0, 65_535).grid[0], 1);
    assert_eq!(grid_for(u64::MAX, u32::MAX).grid[0], u32::MAX);

    // Through `check`, with descriptions of allocations that need not exist to be checked.
    let (dev, _) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let big = |base| {
        ViewDesc::contiguous(
            dev.id(),
            jitseam::ElementKind::F32,
            base,
            n as usize,
            0,
            n as usize,
        )
    };
    let gib = 1u64 << 40;
    let (ins, outs) = ([big(gib), big(2 * gib)], [big(3 * gib)]);
    let facts: LaunchFacts<'_> = k.facts();
    let shape = [n as usize];
    let checked = check(facts, dev.id(), &ins, &outs, &shape, &[]).unwrap();
    assert_eq!(checked.count(), n);
    assert_eq!(checked.geometry(), Geometry::linear(33_554_433, 256));
}

#[test]
fn erased_launch_hands_the_backend_the_marshaled_packet() {
    let (dev, backend) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(300).unwrap();
    let b = dev.alloc::<f32>(300).unwrap();
    let mut out = dev.alloc::<f32>(300).unwrap();
    let stream = dev.default_stream();
    k.launch(
        &stream,
        &[(&a).into(), (&b).into()],
        &mut [(&mut out).into()],
        &[300],
        &[],
    )
    .unwrap();
    let launched = backend.launched();
    assert_eq!(launched.len(), 1);
    assert_eq!(launched[0].symbol, ADD_F32);
    assert_eq!(launched[0].geometry, Geometry::linear(2, 256));
    assert_eq!(
        u64s(&launched[0].packet),
        [a.address(), b.address(), out.address(), 300]
    );
}

#[test]
fn refused_launch_reaches_no_backend() {
    let (dev, backend) = fake::recording();
    let k = bound(ADD_F32, &dev);
    let a = dev.alloc::<f32>(3).unwrap();
    let mut out = dev.alloc::<f32>(4).unwrap();
    let stream = dev.default_stream();
    let err = k.launch(
        &stream,
        &[(&a).into(), (&a).into()],
        &mut [(&mut out).into()],
        &[4],
        &[],
    );
    assert!(err.is_err());
    assert!(backend.launched().is_empty());
}

#[test]
fn device_ids_are_never_reused_and_liveness_follows_clones() {
    let (dev, _) = fake::recording();
    let id = dev.id();
    let clone = dev.clone();
    let buffer = dev.alloc::<f32>(4).unwrap();
    drop(dev);
    assert!(jitseam::device::is_live(id));
    drop(clone);
    assert!(
        jitseam::device::is_live(id),
        "the buffer still holds the device"
    );
    drop(buffer);
    assert!(!jitseam::device::is_live(id));
    let (again, _) = fake::recording();
    assert!(again.id() > id);
}
