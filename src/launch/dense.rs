//! The quick acceptance of a dense launch (scalar and vectorized ABIs, up to eight operands):
//! one pass over the operands that checks everything [`check`](super::check) checks and keeps
//! each operand's byte range on the stack for the aliasing test.
//!
//! It only says yes or "not sure": any failure — or anything unusual, such as a contiguous view
//! of rank above 1 or an address range that overflows 64 bits — sends the launch through the
//! full check, which decides and names the error. So the errors, and their precedence, are the
//! full check's alone.

use crate::abi::{AbiSpec, ParamValue};
use crate::device::{AsViewDesc, ViewDesc};
use crate::dtype::ElementKind;
use crate::liveness::DeviceId;

/// Operands the quick path takes; more go through the full check.
const MAX_OPERANDS: usize = 8;

/// The kernel's `n` (vectors for the vectorized ABI) when the launch passes every check, `None`
/// when the full check must decide. The caller has compared the stream's device with the
/// kernel's `device`; `width` is the vector width of `spec`'s ABI (1 for the scalar ABI), as the
/// kernel's launch plan holds it.
#[inline]
pub(super) fn accept<I: AsViewDesc, O: AsViewDesc>(
    device: DeviceId,
    width: usize,
    spec: &AbiSpec,
    inputs: &[I],
    outputs: &[O],
    shape: &[usize],
    params: &[ParamValue],
) -> Option<u64> {
    let operands = inputs.len() + outputs.len();
    if inputs.len() != spec.inputs.len()
        || outputs.len() != spec.outputs.len()
        || params.len() != spec.params.len()
        || operands > MAX_OPERANDS
    {
        return None;
    }
    let n = shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e))?;
    // The scalar ABI divides by nothing: a hardware division costs tens of cycles.
    let vectors = match width {
        1 => n,
        0 => return None,
        _ if !n.is_multiple_of(width) => return None,
        _ => n / width,
    };
    let count = u64::try_from(vectors)
        .ok()
        .filter(|&c| i64::try_from(c).is_ok())?;
    let mut ranges = [(0u64, 0u64); MAX_OPERANDS];
    let (in_ranges, out_ranges) = ranges
        .get_mut(..operands)?
        .split_at_mut_checked(inputs.len())?;
    let mut ok = true;
    // `&` rather than `&&` and no early exit: every operand is checked with straight-line code,
    // and the one branch is at the end. The counts match the spec's, so each zip pairs every
    // operand with its declared dtype and its range.
    for ((view, &expected), range) in inputs
        .iter()
        .zip(spec.inputs.iter())
        .zip(in_ranges.iter_mut())
    {
        ok &= operand(device, width, n, view.view_desc(), expected, range);
    }
    for ((view, &expected), range) in outputs
        .iter()
        .zip(spec.outputs.iter())
        .zip(out_ranges.iter_mut())
    {
        ok &= operand(device, width, n, view.view_desc(), expected, range);
    }
    for (value, &expected) in params.iter().zip(spec.params.iter()) {
        ok &= value.kind() == expected;
    }
    if !ok {
        return None;
    }
    // An empty launch touches no byte, so nothing can alias.
    if n > 0 {
        let (in_ranges, out_ranges) = (&*in_ranges, &*out_ranges);
        for (m, &(start, end)) in out_ranges.iter().enumerate() {
            let overlaps =
                |&(other_start, other_end): &(u64, u64)| other_start < end && start < other_end;
            if in_ranges.iter().any(overlaps)
                || out_ranges
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != m && overlaps(other))
            {
                return None;
            }
        }
    }
    Some(count)
}

/// One operand: device, dtype, a rank-1 unit-stride window of exactly `n` elements inside its
/// allocation, aligned for the vector width; writes its byte range to `range`. Returns whether
/// all of that holds. A byte range past `u64::MAX` (no allocation has one) is left to the full
/// check, which does its arithmetic in `u128`; here it is 64-bit words, half the stores.
#[inline(always)]
fn operand(
    device: DeviceId,
    width: usize,
    n: usize,
    view: &ViewDesc,
    expected: ElementKind,
    range: &mut (u64, u64),
) -> bool {
    let size = view.dtype.size() as u64;
    let shape_ok = view.rank == 1 && view.strides[0] == 1 && view.shape[0] == n;
    let in_bounds = view
        .offset
        .checked_add(n)
        .is_some_and(|end| end <= view.alloc_len);
    let Some((start, end)) = byte_range(view.base, view.offset as u64, n as u64, size) else {
        return false;
    };
    *range = (start, end);
    let aligned = width == 1 || start.is_multiple_of(width as u64 * size);
    (view.device == device) & (view.dtype == expected) & shape_ok & in_bounds & aligned
}

/// `[base + offset·size, base + (offset + n)·size)`, or `None` if it passes `u64::MAX`.
#[inline(always)]
fn byte_range(base: u64, offset: u64, n: u64, size: u64) -> Option<(u64, u64)> {
    let start = base.checked_add(offset.checked_mul(size)?)?;
    Some((start, start.checked_add(n.checked_mul(size)?)?))
}
