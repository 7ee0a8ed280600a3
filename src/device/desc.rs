//! [`ViewDesc`]: the erased description of one operand that every launch check reads, where the
//! checks read it from ([`AsViewDesc`]), and the shape-only validation of the windows views are
//! made from.

use std::ops::Range;

use crate::abi::MAX_RANK;
use crate::dtype::ElementKind;
use crate::error::Error;
use crate::liveness::DeviceId;

/// What a launch needs to know about one operand: its device, dtype, allocation and the window
/// into it. `Copy` and allocation-free, so checking a launch allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewDesc {
    /// The device holding the allocation.
    pub device: DeviceId,
    /// Element type.
    pub dtype: ElementKind,
    /// Device address of the allocation's first element.
    pub base: u64,
    /// Elements in the allocation.
    pub alloc_len: usize,
    /// Element index, in the allocation, of the view's origin (index `[0, 0, …]`).
    pub offset: usize,
    /// Number of axes in use (`shape[..rank]`, `strides[..rank]`).
    pub rank: u8,
    /// Extent of each axis.
    pub shape: [usize; MAX_RANK],
    /// Signed stride of each axis, in elements.
    pub strides: [isize; MAX_RANK],
}

/// What a launch check reads an operand's description from, in place: a [`ViewDesc`] itself, or
/// a launch operand ([`Arg`](super::Arg), [`ArgMut`](super::ArgMut)) that holds one. The checks
/// and the packet read the same description through the same shared borrow, so a launch never
/// copies its operands' descriptions.
///
/// Sealed: only jitseam's types describe operands, each by a plain field read, so what the
/// checks read is what the packet is built from.
pub trait AsViewDesc: sealed::Sealed + std::fmt::Debug {
    /// The description.
    fn view_desc(&self) -> &ViewDesc;
}

pub(super) mod sealed {
    /// Keeps [`AsViewDesc`](super::AsViewDesc) to jitseam's own types.
    pub trait Sealed {}
}

impl sealed::Sealed for ViewDesc {}

impl AsViewDesc for ViewDesc {
    #[inline(always)]
    fn view_desc(&self) -> &ViewDesc {
        self
    }
}

impl ViewDesc {
    /// A contiguous rank-1 window of `len` elements starting at `offset`.
    pub const fn contiguous(
        device: DeviceId,
        dtype: ElementKind,
        base: u64,
        alloc_len: usize,
        offset: usize,
        len: usize,
    ) -> Self {
        let mut shape = [0; MAX_RANK];
        let mut strides = [0; MAX_RANK];
        shape[0] = len;
        strides[0] = 1;
        Self {
            device,
            dtype,
            base,
            alloc_len,
            offset,
            rank: 1,
            shape,
            strides,
        }
    }

    /// The axes in use.
    pub fn shape(&self) -> &[usize] {
        &self.shape[..usize::from(self.rank).min(MAX_RANK)]
    }

    /// The strides in use.
    pub fn strides(&self) -> &[isize] {
        &self.strides[..usize::from(self.rank).min(MAX_RANK)]
    }

    /// Elements the view covers (saturating: an overflowing shape is refused by the checks).
    pub fn len(&self) -> usize {
        self.shape()
            .iter()
            .fold(1usize, |n, &e| n.saturating_mul(e))
    }

    /// Whether the view covers no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the view is dense row-major (axes of extent 1 may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expected: isize = 1;
        for (&extent, &stride) in self.shape().iter().zip(self.strides()).rev() {
            if extent == 1 {
                continue;
            }
            if stride != expected {
                return false;
            }
            let Some(next) = isize::try_from(extent)
                .ok()
                .and_then(|e| expected.checked_mul(e))
            else {
                return false;
            };
            expected = next;
        }
        true
    }
}

/// Builds the description of a window; geometry is validated for shape only (rank, matching
/// lengths, no overflow) — whether it stays inside the allocation is the launch check's job, so
/// that every path into a launch is checked the same way.
pub(super) fn strided_desc(
    whole: ViewDesc,
    offset: usize,
    shape: &[usize],
    strides: &[isize],
) -> Result<ViewDesc, Error> {
    if shape.is_empty() || shape.len() > MAX_RANK {
        return Err(Error::InvalidView {
            reason: format!("rank {} is outside 1..={MAX_RANK}", shape.len()),
        });
    }
    if shape.len() != strides.len() {
        return Err(Error::InvalidView {
            reason: format!("{} extents but {} strides", shape.len(), strides.len()),
        });
    }
    if shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .is_none()
    {
        return Err(Error::InvalidView {
            reason: format!("shape {shape:?} overflows the element count"),
        });
    }
    let mut desc = whole;
    desc.offset = offset;
    desc.rank = u8::try_from(shape.len()).unwrap_or(u8::MAX);
    desc.shape = [0; MAX_RANK];
    desc.strides = [0; MAX_RANK];
    desc.shape[..shape.len()].copy_from_slice(shape);
    desc.strides[..strides.len()].copy_from_slice(strides);
    Ok(desc)
}

/// The description of `range` of a contiguous buffer, refusing a range outside it.
pub(super) fn range_desc(whole: ViewDesc, range: Range<usize>) -> Result<ViewDesc, Error> {
    if range.start > range.end || range.end > whole.alloc_len {
        return Err(Error::InvalidView {
            reason: format!(
                "range {}..{} outside a buffer of {} elements",
                range.start, range.end, whole.alloc_len
            ),
        });
    }
    Ok(ViewDesc::contiguous(
        whole.device,
        whole.dtype,
        whole.base,
        whole.alloc_len,
        range.start,
        range.end - range.start,
    ))
}
