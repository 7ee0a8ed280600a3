//! What a view reaches: its lowest and highest element, and the device bytes in between — what
//! the launch checks test against the allocation and against each other operand (aliasing), and
//! what a checked launch lends the backends that ask (`lend.rs`).

use crate::device::ViewDesc;

/// Lowest and highest element index (in the allocation) the view can touch; `None` when it
/// covers nothing. Computed in `i128`, where no product of a `usize` extent and an `isize`
/// stride can overflow.
pub(super) fn reach(view: &ViewDesc) -> Option<(i128, i128)> {
    if view.is_empty() {
        return None;
    }
    let mut lowest = view.offset as i128;
    let mut highest = lowest;
    for (&extent, &stride) in view.shape().iter().zip(view.strides()) {
        let span = (extent as i128 - 1) * stride as i128;
        if span < 0 {
            lowest += span;
        } else {
            highest += span;
        }
    }
    Some((lowest, highest))
}

/// Half-open device byte range `[start, end)` a view can touch; `None` when it touches nothing.
pub(super) type ByteRange = Option<(u128, u128)>;

/// The byte range of any view (conservative: its whole reach).
pub(super) fn byte_range(view: &ViewDesc) -> ByteRange {
    byte_range_of_reach(view, reach(view)?)
}

/// The byte range of a view whose [`reach`] is `(lowest, highest)`.
pub(super) fn byte_range_of_reach(view: &ViewDesc, (lowest, highest): (i128, i128)) -> ByteRange {
    let size = view.dtype.size() as i128;
    let start = view.base as i128 + lowest * size;
    let end = view.base as i128 + (highest + 1) * size;
    Some((u128::try_from(start).ok()?, u128::try_from(end).ok()?))
}

/// [`byte_range`] of a view that the dense check accepted with `n` elements: dense row-major, so
/// its reach is `[offset, offset + n)` and no per-axis walk is needed. Every term is a `usize`
/// or `u64` widened to `u128`: no overflow.
#[inline]
pub(super) fn dense_byte_range(view: &ViewDesc, n: usize) -> ByteRange {
    if n == 0 {
        return None;
    }
    let size = view.dtype.size() as u128;
    let base = u128::from(view.base);
    let start = base + view.offset as u128 * size;
    Some((start, start + n as u128 * size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceId;
    use crate::dtype::ElementKind;

    #[test]
    fn dense_byte_range_is_the_reach_of_a_dense_view() {
        let device = DeviceId::from_raw(1);
        let views = [
            ViewDesc::contiguous(device, ElementKind::F32, 4096, 100, 3, 50),
            ViewDesc::contiguous(device, ElementKind::F64, 0, 10, 0, 0),
            ViewDesc {
                // 2 × 1 × 3 row-major, the middle axis with an arbitrary stride.
                rank: 3,
                shape: [2, 1, 3, 0, 0, 0, 0, 0],
                strides: [3, -7, 1, 0, 0, 0, 0, 0],
                ..ViewDesc::contiguous(device, ElementKind::U16, 1 << 40, 64, 5, 6)
            },
        ];
        for view in &views {
            assert!(view.is_contiguous());
            assert_eq!(dense_byte_range(view, view.len()), byte_range(view));
        }
    }
}
