//! [`marshal`]: the argument packet of a checked launch — pointers, shape and strides as signed
//! 64-bit words, the count, then params in their declared classes, each at its layout offset —
//! lent together with the launch itself, which tells a backend that asks what the operands
//! reach.

use super::CheckedLaunch;
use crate::abi::{ArgPacket, ParamRole, PlacedParam, copy_le};
use crate::device::{AsViewDesc, ViewDesc};

/// Lays out the packet of a checked launch: pointers (base + offset), shape and strides as
/// signed 64-bit values, the count, then params in their declared classes.
///
/// The launch path uses [`marshal_with`] instead: returning the half-kilobyte packet by value
/// costs a copy (rustc does not build it in the caller's frame), and launches are hot.
pub fn marshal<'c, I: AsViewDesc, O: AsViewDesc>(
    checked: &'c CheckedLaunch<'_, I, O>,
) -> ArgPacket<'c> {
    let mut packet = ArgPacket::zeroed(checked.layout, checked, checked.grid_stride);
    fill_packet(checked, packet.bytes_mut());
    packet
}

/// [`marshal`], lending the packet to `use_packet` in the frame where it was built, so it is
/// written once and never moved. Always inlined: the launch's own frame holds the packet.
#[inline(always)]
pub fn marshal_with<'c, I: AsViewDesc, O: AsViewDesc, R>(
    checked: &'c CheckedLaunch<'_, I, O>,
    use_packet: impl FnOnce(&ArgPacket<'c>) -> R,
) -> R {
    let mut packet = ArgPacket::zeroed(checked.layout, checked, checked.grid_stride);
    fill_packet(checked, packet.bytes_mut());
    use_packet(&packet)
}

/// Writes every param of `checked` into `bytes`, a zeroed packet of its layout's size. Always
/// inlined: out of line, the call and the re-derivation of the packet's slice cost a launch as
/// much as the dense words it writes.
#[inline(always)]
pub(super) fn fill_packet<I: AsViewDesc, O: AsViewDesc>(
    checked: &CheckedLaunch<'_, I, O>,
    bytes: &mut [u8],
) {
    let layout = checked.layout;
    let mut rest = layout.params();
    // A dense layout's leading words are the operands' addresses and the count, in order: they
    // are written without looking at their roles, and only the params after them go through
    // the general loop.
    if let Some(prefix) = layout.dense_prefix()
        && prefix.inputs == checked.inputs.len()
        && prefix.outputs == checked.outputs.len()
        && let Some(words) = bytes.get_mut(..prefix.len() * 8)
        && let Some(after) = rest.get(prefix.len()..)
    {
        // The operands drive each zip: a zip asks its first iterator first, so the words are
        // taken only for operands that exist.
        let mut words = words.chunks_exact_mut(8);
        for (view, slot) in checked.inputs.iter().zip(words.by_ref()) {
            copy_le(slot, address(view.view_desc()).to_le_bytes());
        }
        for (view, slot) in checked.outputs.iter().zip(words.by_ref()) {
            copy_le(slot, address(view.view_desc()).to_le_bytes());
        }
        if let Some(slot) = words.next() {
            copy_le(slot, checked.count.to_le_bytes());
        }
        rest = after;
    }
    // Most dense kernels have no params after the prefix: no call for an empty loop.
    if !rest.is_empty() {
        fill_params(checked, rest, bytes);
    }
}

/// Writes each of `params` (placed params of `checked`'s layout) into `bytes` by its role.
#[inline]
fn fill_params<I: AsViewDesc, O: AsViewDesc>(
    checked: &CheckedLaunch<'_, I, O>,
    params: &[PlacedParam],
    bytes: &mut [u8],
) {
    for placed in params {
        let Some(slot) = bytes.get_mut(placed.offset..placed.offset + placed.class.size()) else {
            continue;
        };
        // Every role but a runtime param is one 64-bit word: compute it, then store it once.
        let word = match placed.role {
            ParamRole::Input(k) => address_of(checked.inputs, k),
            ParamRole::Output(m) => address_of(checked.outputs, m),
            ParamRole::Shape(d) => checked.shape.get(d as usize).map_or(0, |&e| e as u64),
            ParamRole::InputStride { input, axis } => stride_of(checked.inputs, input, axis),
            ParamRole::OutputStride { output, axis } => stride_of(checked.outputs, output, axis),
            ParamRole::Count => checked.count,
            ParamRole::Param(p) => {
                if let Some(value) = checked.params.get(p as usize) {
                    value.write_slot(slot);
                }
                continue;
            }
        };
        copy_le(slot, word.to_le_bytes());
    }
}

#[inline]
fn address_of<V: AsViewDesc>(views: &[V], index: u32) -> u64 {
    views
        .get(index as usize)
        .map_or(0, |v| address(v.view_desc()))
}

/// The device address of a view's origin.
#[inline(always)]
fn address(view: &ViewDesc) -> u64 {
    view.base
        .wrapping_add((view.offset as u64).wrapping_mul(view.dtype.size() as u64))
}

/// A stride as the packet's signed 64-bit word (two's complement).
#[inline]
fn stride_of<V: AsViewDesc>(views: &[V], index: u32, axis: u32) -> u64 {
    views
        .get(index as usize)
        .and_then(|v| v.view_desc().strides().get(axis as usize))
        .map_or(0, |&s| s as i64 as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{AbiKind, AbiSpec, ParamLayout, ParamValue};
    use crate::device::DeviceId;
    use crate::dtype::ElementKind;
    use crate::launch::{LaunchFacts, check};

    /// The dense pack plan writes what the general loop writes, byte for byte.
    #[test]
    fn the_dense_prefix_packs_like_the_general_loop() {
        let device = DeviceId::from_raw(1);
        for (inputs, outputs) in [(0, 1), (1, 1), (2, 1), (1, 2), (3, 2)] {
            for abi in [AbiKind::Scalar, AbiKind::Vectorized { width: 4 }] {
                let spec = AbiSpec::owned(
                    abi.clone(),
                    vec![ElementKind::F32; inputs],
                    vec![ElementKind::F32; outputs],
                    vec![ElementKind::F32, ElementKind::F64],
                );
                let layout = ParamLayout::new(&spec.expected_params());
                assert!(layout.dense_prefix().is_some());
                let facts = LaunchFacts {
                    entry: "k",
                    spec: &spec,
                    layout: &layout,
                    device,
                    max_grid_x: u32::MAX,
                    limits: &crate::device::ConfigLimits::TYPICAL,
                    grid_stride: false,
                    proof: None,
                    guarded: None,
                    plan: &crate::state::LaunchPlan::of(
                        &spec,
                        &layout,
                        None,
                        &crate::device::ConfigLimits::TYPICAL,
                    ),
                };
                let view = |k: u64| {
                    ViewDesc::contiguous(device, ElementKind::F32, 4096 * (k + 1), 64, 4, 16)
                };
                let ins: Vec<_> = (0..inputs as u64).map(view).collect();
                let outs: Vec<_> = (0..outputs as u64).map(|m| view(100 + m)).collect();
                let params = [ParamValue::F32(2.5), ParamValue::F64(-1.0)];
                let checked = check(facts, device, &ins, &outs, &[16], &params)
                    .unwrap_or_else(|e| panic!("check: {e}"));
                let planned = marshal(&checked);
                let mut general = vec![0u8; layout.size()];
                fill_params(&checked, layout.params(), &mut general);
                assert_eq!(
                    planned.bytes(),
                    &general[..],
                    "{inputs} in, {outputs} out, {abi:?}"
                );
            }
        }
    }
}
