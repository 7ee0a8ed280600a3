//! The quick acceptance of a dense launch (scalar and vectorized ABIs, up to eight operands):
//! one pass over the operands that checks everything [`check`](super::check) checks and keeps
//! each operand's byte range on the stack for the aliasing test.
//!
//! It only says yes or "not sure": any failure — or anything unusual, such as a contiguous view
//! of rank above 1 or an address range that overflows 64 bits — sends the launch through the
//! full check, which decides and names the error. So the errors, and their precedence, are the
//! full check's alone.

use crate::abi::{AbiKind, AbiSpec, ParamValue};
use crate::device::{AsViewDesc, ViewDesc};
use crate::dtype::ElementKind;
use crate::liveness::DeviceId;

/// Operands the quick path takes; more go through the full check.
const MAX_OPERANDS: usize = 8;

/// The kernel's `n` (vectors for the vectorized ABI) when the launch passes every check, `None`
/// when the full check must decide.
#[inline]
pub(super) fn accept<I: AsViewDesc, O: AsViewDesc>(
    device: DeviceId,
    stream: DeviceId,
    spec: &AbiSpec,
    inputs: &[I],
    outputs: &[O],
    shape: &[usize],
    params: &[ParamValue],
) -> Option<u64> {
    let width = match spec.abi {
        AbiKind::Scalar => 1,
        AbiKind::Vectorized { width } => usize::from(width),
        AbiKind::Strided { .. } | AbiKind::Custom(_) => return None,
    };
    let operands = inputs.len() + outputs.len();
    if stream != device
        || inputs.len() != spec.inputs.len()
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
    let mut ranges = [(0u128, 0u128); MAX_OPERANDS];
    let mut ok = true;
    // `&` rather than `&&` and no early exit: every operand is checked with straight-line code,
    // and the one branch is at the end.
    for (k, view) in inputs.iter().enumerate() {
        let expected = spec.inputs.get(k).copied();
        ok &= operand(device, width, n, view.view_desc(), expected, &mut ranges[k]);
    }
    for (m, view) in outputs.iter().enumerate() {
        let expected = spec.outputs.get(m).copied();
        ok &= operand(
            device,
            width,
            n,
            view.view_desc(),
            expected,
            &mut ranges[inputs.len() + m],
        );
    }
    for (p, value) in params.iter().enumerate() {
        ok &= Some(value.kind()) == spec.params.get(p).copied();
    }
    if !ok {
        return None;
    }
    // An empty launch touches no byte, so nothing can alias.
    if n > 0 {
        let ranges = &ranges[..operands];
        for (m, &(start, end)) in ranges.iter().enumerate().skip(inputs.len()) {
            for (j, &(other_start, other_end)) in ranges.iter().enumerate() {
                if j != m && other_start < end && start < other_end {
                    return None;
                }
            }
        }
    }
    Some(count)
}

/// One operand: device, dtype, a rank-1 unit-stride window of exactly `n` elements inside its
/// allocation, aligned for the vector width; writes its byte range to `range` (in `u128`, where
/// no address arithmetic on `usize`/`u64` values overflows). Returns whether all of that holds.
#[inline(always)]
fn operand(
    device: DeviceId,
    width: usize,
    n: usize,
    view: &ViewDesc,
    expected: Option<ElementKind>,
    range: &mut (u128, u128),
) -> bool {
    let size = view.dtype.size() as u128;
    let shape_ok = view.rank == 1 && view.strides[0] == 1 && view.shape[0] == n;
    let in_bounds = view
        .offset
        .checked_add(n)
        .is_some_and(|end| end <= view.alloc_len);
    let start = u128::from(view.base) + view.offset as u128 * size;
    *range = (start, start + n as u128 * size);
    let aligned = width == 1 || start.is_multiple_of(width as u128 * size);
    (view.device == device) & (Some(view.dtype) == expected) & shape_ok & in_bounds & aligned
}
