//! Views of device buffers (contiguous ranges and strided windows) and the erased launch operands
//! [`Arg`]/[`ArgMut`], each built only from a borrow.

use std::marker::PhantomData;

use super::ViewDesc;
use crate::dtype::Element;

/// A shared operand of a launch: an input. Built only from a borrowed buffer or view, so the
/// memory it describes stays allocated and unwritten for as long as it exists.
// `repr(transparent)`: a slice of operands is a slice of their descriptions, so a launch reads
// them in place instead of copying them out (see `descs_of`).
#[derive(Debug, Clone, Copy)]
#[repr(transparent)]
pub struct Arg<'a> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a ()>,
}

/// An exclusive operand of a launch: an output. Built only from a mutably borrowed buffer or
/// view.
#[derive(Debug)]
#[repr(transparent)]
pub struct ArgMut<'a> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a mut ()>,
}

impl Arg<'_> {
    /// The erased description a launch checks.
    pub fn desc(&self) -> ViewDesc {
        self.desc
    }

    /// The descriptions of `args`, in place: no copy, no allocation.
    pub fn descs(args: &[Self]) -> &[ViewDesc] {
        // SAFETY: `Arg` is `repr(transparent)` over its one non-zero-sized field, a `ViewDesc`
        // (the other is `PhantomData`), so `[Arg]` and `[ViewDesc]` have the same layout, length
        // and alignment; the result borrows `args` immutably for as long as it lives, and a `ViewDesc` is
        // plain data with no invariant an `Arg` adds.
        unsafe { std::slice::from_raw_parts(args.as_ptr().cast::<ViewDesc>(), args.len()) }
    }
}

impl ArgMut<'_> {
    /// The erased description a launch checks.
    pub fn desc(&self) -> ViewDesc {
        self.desc
    }

    /// The descriptions of `args`, in place: no copy, no allocation. Takes a shared borrow: the
    /// descriptions are only read.
    pub fn descs(args: &[Self]) -> &[ViewDesc] {
        // SAFETY: as for `Arg::descs`: `ArgMut` is `repr(transparent)` over its `ViewDesc`, so
        // the layouts agree, and the result only reads through a shared borrow of `args`.
        unsafe { std::slice::from_raw_parts(args.as_ptr().cast::<ViewDesc>(), args.len()) }
    }
}

macro_rules! impl_arg_from_view {
    ($arg:ident: $($view:ident)&*) => {$(
        impl<'a, T: Element> From<&'a $view<'_, T>> for $arg<'a> {
            fn from(view: &'a $view<'_, T>) -> Self {
                Self {
                    desc: view.desc,
                    _borrow: PhantomData,
                }
            }
        }
    )*};
}

impl_arg_from_view!(Arg: BufferView & StridedView & BufferViewMut & StridedViewMut);

macro_rules! impl_arg_mut_from_view {
    ($($view:ident),*) => {$(
        impl<'a, T: Element> From<&'a mut $view<'_, T>> for ArgMut<'a> {
            fn from(view: &'a mut $view<'_, T>) -> Self {
                Self {
                    desc: view.desc,
                    _borrow: PhantomData,
                }
            }
        }
    )*};
}

impl_arg_mut_from_view!(BufferViewMut, StridedViewMut);

/// A shared contiguous range of a buffer.
#[derive(Debug, Clone, Copy)]
pub struct BufferView<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a [T]>,
}

/// An exclusive contiguous range of a buffer.
#[derive(Debug)]
pub struct BufferViewMut<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a mut [T]>,
}

/// A shared strided window of a buffer: shape, signed element strides and an origin offset.
#[derive(Debug, Clone, Copy)]
pub struct StridedView<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a [T]>,
}

/// An exclusive strided window of a buffer.
#[derive(Debug)]
pub struct StridedViewMut<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) _borrow: PhantomData<&'a mut [T]>,
}

macro_rules! impl_desc {
    ($($view:ident),*) => {$(
        impl<T: Element> $view<'_, T> {
            /// The erased description a launch checks.
            pub fn desc(&self) -> ViewDesc {
                self.desc
            }

            /// Elements covered.
            pub fn len(&self) -> usize {
                self.desc.len()
            }

            /// Whether no element is covered.
            pub fn is_empty(&self) -> bool {
                self.desc.is_empty()
            }
        }
    )*};
}

impl_desc!(BufferView, BufferViewMut, StridedView, StridedViewMut);
