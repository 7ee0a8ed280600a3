//! Kernel signatures: the typed face ([`Signature`], implemented by `#[jitseam::kernel]`) and the
//! runtime face ([`Erased`]), plus the typed operand handles a generated launcher takes.

use std::marker::PhantomData;

use crate::abi::AbiSpec;
use crate::artifact::Artifact;
use crate::device::{
    BufferView, BufferViewMut, DeviceBuffer, Stream, StridedView, StridedViewMut, ViewDesc,
};
use crate::dtype::Element;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::state::DeviceBound;

/// A kernel's signature known at compile time.
///
/// Implemented by the `#[jitseam::kernel]` macro, never by hand: the hidden method takes a
/// token only jitseam can create and only the macro's expansion names, so a hand-written impl
/// that could claim a `SPEC` its launcher does not follow is visibly outside the API.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel signature",
    note = "declare kernel signatures with `#[jitseam::kernel(abi = ...)]` on a bodiless fn, or use `jitseam::Erased`"
)]
pub trait Signature: Sized + 'static {
    /// The ABI, operand and param types, as the artifact must carry them.
    const SPEC: AbiSpec;

    /// The entry point the kernel is declared with (`symbol = "..."`, by default the fn name).
    const SYMBOL: &'static str;

    /// The launch arguments: the declared operands and params, by name.
    type Args<'a>;

    #[doc(hidden)]
    fn __jitseam_launch(
        kernel: &Kernel<Self, DeviceBound>,
        stream: &Stream,
        args: Self::Args<'_>,
        token: crate::__private::SignatureToken,
    ) -> Result<(), Error>;

    /// A PTX artifact for this signature: entry point [`Signature::SYMBOL`], spec
    /// [`Signature::SPEC`]. `load()` still verifies the text against both.
    fn ptx_artifact(text: impl Into<String>) -> Artifact {
        Artifact::ptx(text, Self::SYMBOL, Self::SPEC)
    }
}

impl<K: Signature> Kernel<K, DeviceBound> {
    /// Launches with typed arguments: counts, element types, mutability and param types were
    /// checked by rustc; devices, lengths, alignment and bounds are checked here, through the
    /// same `check` and `marshal` as every other launch.
    pub fn launch(&self, stream: &Stream, args: K::Args<'_>) -> Result<(), Error> {
        K::__jitseam_launch(self, stream, args, crate::__private::SignatureToken::new())
    }
}

/// The runtime face: the spec is whatever the artifact carries, checked at `load()` and on every
/// launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Erased;

mod sealed {
    /// Keeps the operand conversions closed: only jitseam's buffers and views describe memory
    /// a launch may touch.
    pub trait Sealed {}
}

macro_rules! operand_handle {
    (
        $(#[$doc:meta])* $name:ident, $borrow:ty, [$($src:ty),*],
        $(#[$conv_attr:meta])* $conv:ident
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T: Element> {
            desc: ViewDesc,
            _borrow: PhantomData<$borrow>,
        }

        impl<T: Element> $name<'_, T> {
            /// The erased description a launch checks.
            pub fn desc(&self) -> ViewDesc {
                self.desc
            }
        }

        $(#[$conv_attr])*
        pub trait $conv<'a, T: Element>: sealed::Sealed {
            /// The operand handle, borrowing the source for `'a`.
            fn into_handle(self) -> $name<'a, T>;
        }

        $(
            impl<'a, T: Element> From<$src> for $name<'a, T> {
                fn from(source: $src) -> Self {
                    Self { desc: source.desc(), _borrow: PhantomData }
                }
            }

            impl<'a, T: Element> sealed::Sealed for $src {}

            impl<'a, T: Element> $conv<'a, T> for $src {
                fn into_handle(self) -> $name<'a, T> {
                    $name::from(self)
                }
            }
        )*
    };
}

operand_handle!(
    /// A dense input of a scalar or vectorized kernel: a whole buffer or a contiguous range.
    In, &'a T, [&'a DeviceBuffer<T>, &'a BufferView<'_, T>, &'a BufferViewMut<'_, T>],
    /// What a generated `args` constructor accepts for an `In<T>` operand.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a dense input of element type `{T}`",
        label = "expected `&DeviceBuffer<{T}>`, `&BufferView<{T}>` or `&BufferViewMut<{T}>`",
        note = "inputs of scalar and vectorized kernels are whole buffers or contiguous ranges (`buffer.slice(..)`) of the declared element type, borrowed shared",
        note = "strided views are operands of kernels declared with `abi = strided(R)`"
    )]
    IntoIn
);
operand_handle!(
    /// A dense output of a scalar or vectorized kernel, borrowed exclusively.
    Out, &'a mut T, [&'a mut DeviceBuffer<T>, &'a mut BufferViewMut<'_, T>],
    /// What a generated `args` constructor accepts for an `Out<T>` operand.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a dense output of element type `{T}`",
        label = "expected `&mut DeviceBuffer<{T}>` or `&mut BufferViewMut<{T}>`",
        note = "outputs of scalar and vectorized kernels are borrowed exclusively: pass `&mut buffer` or `&mut buffer.slice_mut(..)?`, of the declared element type",
        note = "strided views are operands of kernels declared with `abi = strided(R)`"
    )]
    IntoOut
);
operand_handle!(
    /// An input of a strided kernel: a strided view (shape, signed strides, offset).
    InStrided, &'a T, [&'a StridedView<'_, T>, &'a StridedViewMut<'_, T>],
    /// What a generated `args` constructor accepts for an input of a strided kernel.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a strided input of element type `{T}`",
        label = "expected `&StridedView<{T}>` or `&StridedViewMut<{T}>`",
        note = "operands of strided kernels are strided views that carry their shape and strides: make one with `buffer.shaped(&[..])?` or `buffer.strided(offset, &[..], &[..])?`"
    )]
    IntoInStrided
);
operand_handle!(
    /// An output of a strided kernel, borrowed exclusively.
    OutStrided, &'a mut T, [&'a mut StridedViewMut<'_, T>],
    /// What a generated `args` constructor accepts for an output of a strided kernel.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a strided output of element type `{T}`",
        label = "expected `&mut StridedViewMut<{T}>`",
        note = "outputs of strided kernels are exclusive strided views: make one with `buffer.shaped_mut(&[..])?` or `buffer.strided_mut(offset, &[..], &[..])?`"
    )]
    IntoOutStrided
);

impl<T: Element> Clone for In<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for In<'_, T> {}
impl<T: Element> Clone for InStrided<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for InStrided<'_, T> {}
