//! Views of device buffers (contiguous ranges and strided windows) and the erased launch operands
//! [`Arg`]/[`ArgMut`], each built only from a borrow.

use std::marker::PhantomData;

use super::ViewDesc;
use super::access::AccessLog;
use super::desc::{AsViewDesc, sealed};
use super::operand::{Source, SourceMut};
use crate::dtype::Element;

/// A shared operand of a launch: an input. Built only from a borrowed buffer, view or cudarc
/// slice, so the memory it describes stays allocated and unwritten for as long as it exists,
/// and the launch can order itself after the memory's earlier writes on other streams.
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    pub(crate) desc: ViewDesc,
    pub(crate) source: Source<'a>,
}

/// An exclusive operand of a launch: an output. Built only from a mutably borrowed buffer,
/// view or cudarc slice.
///
/// Not `Sync`: an exclusive borrow of a cudarc slice inside is used mutably through the shared
/// slices of outputs a launch takes.
#[derive(Debug)]
pub struct ArgMut<'a> {
    pub(crate) desc: ViewDesc,
    pub(crate) source: SourceMut<'a>,
}

impl Arg<'_> {
    /// The erased description a launch checks. For a cudarc slice the address is known only
    /// at launch (it comes from cudarc's ordered `device_ptr`), and reads 0 here.
    pub fn desc(&self) -> ViewDesc {
        self.desc
    }
}

impl ArgMut<'_> {
    /// The erased description a launch checks; see [`Arg::desc`].
    pub fn desc(&self) -> ViewDesc {
        self.desc
    }
}

impl sealed::Sealed for Arg<'_> {}
impl sealed::Sealed for ArgMut<'_> {}

impl AsViewDesc for Arg<'_> {
    #[inline(always)]
    fn view_desc(&self) -> &ViewDesc {
        &self.desc
    }
}

impl AsViewDesc for ArgMut<'_> {
    #[inline(always)]
    fn view_desc(&self) -> &ViewDesc {
        &self.desc
    }
}

macro_rules! impl_arg_from_view {
    ($arg:ident: $($view:ident)&*) => {$(
        impl<'a, T: Element> From<&'a $view<'_, T>> for $arg<'a> {
            fn from(view: &'a $view<'_, T>) -> Self {
                Self {
                    desc: view.desc,
                    source: Source::Log(view.log),
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
                    source: SourceMut::Log(view.log),
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
    pub(super) log: &'a AccessLog,
    pub(super) _borrow: PhantomData<&'a [T]>,
}

/// An exclusive contiguous range of a buffer.
#[derive(Debug)]
pub struct BufferViewMut<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) log: &'a AccessLog,
    pub(super) _borrow: PhantomData<&'a mut [T]>,
}

/// A shared strided window of a buffer: shape, signed element strides and an origin offset.
#[derive(Debug, Clone, Copy)]
pub struct StridedView<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) log: &'a AccessLog,
    pub(super) _borrow: PhantomData<&'a [T]>,
}

/// An exclusive strided window of a buffer.
#[derive(Debug)]
pub struct StridedViewMut<'a, T: Element> {
    pub(super) desc: ViewDesc,
    pub(super) log: &'a AccessLog,
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
