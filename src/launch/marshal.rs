//! [`marshal`]: the argument packet of a checked launch — pointers, shape and strides as signed
//! 64-bit words, the count, then params in their declared classes, each at its layout offset —
//! lent together with the launch itself, which tells a backend that asks what the operands
//! reach.

use super::CheckedLaunch;
use crate::abi::{ArgPacket, ParamRole, copy_le};
use crate::device::ViewDesc;

/// Lays out the packet of a checked launch: pointers (base + offset), shape and strides as
/// signed 64-bit values, the count, then params in their declared classes.
///
/// The launch path uses [`marshal_with`] instead: returning the half-kilobyte packet by value
/// costs a copy (rustc does not build it in the caller's frame), and launches are hot.
pub fn marshal<'c>(checked: &'c CheckedLaunch<'_>) -> ArgPacket<'c> {
    let mut packet = ArgPacket::zeroed(checked.facts.layout, checked, checked.facts.grid_stride);
    fill_packet(checked, packet.bytes_mut());
    packet
}

/// [`marshal`], lending the packet to `use_packet` in the frame where it was built, so it is
/// written once and never moved.
#[inline]
pub fn marshal_with<'c, R>(
    checked: &'c CheckedLaunch<'_>,
    use_packet: impl FnOnce(&ArgPacket<'c>) -> R,
) -> R {
    let mut packet = ArgPacket::zeroed(checked.facts.layout, checked, checked.facts.grid_stride);
    fill_packet(checked, packet.bytes_mut());
    use_packet(&packet)
}

/// Writes every param of `checked` into `bytes`, a zeroed packet of its layout's size.
fn fill_packet(checked: &CheckedLaunch<'_>, bytes: &mut [u8]) {
    let layout = checked.facts.layout;
    for placed in layout.params() {
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
                    value.write_to(slot);
                }
                continue;
            }
        };
        copy_le(slot, word.to_le_bytes());
    }
}

#[inline]
fn address_of(views: &[ViewDesc], index: u32) -> u64 {
    views.get(index as usize).map_or(0, |v| {
        v.base
            .wrapping_add((v.offset as u64).wrapping_mul(v.dtype.size() as u64))
    })
}

/// A stride as the packet's signed 64-bit word (two's complement).
#[inline]
fn stride_of(views: &[ViewDesc], index: u32, axis: u32) -> u64 {
    views
        .get(index as usize)
        .and_then(|v| v.strides().get(axis as usize))
        .map_or(0, |&s| s as i64 as u64)
}
