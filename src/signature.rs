//! Kernel signatures: the typed face ([`Signature`], implemented by `#[jitseam::kernel]`) and the
//! runtime face ([`Erased`]), plus the typed operand handles a generated launcher takes.

use std::marker::PhantomData;

use crate::abi::AbiSpec;
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

    /// The launch arguments: the declared operands and params, by name.
    type Args<'a>;

    #[doc(hidden)]
    fn __jitseam_launch(
        kernel: &Kernel<Self, DeviceBound>,
        stream: &Stream,
        args: Self::Args<'_>,
        token: crate::__private::SignatureToken,
    ) -> Result<(), Error>;
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

macro_rules! operand_handle {
    ($(#[$doc:meta])* $name:ident, $borrow:ty, [$($src:ty),*]) => {
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

        $(impl<'a, T: Element> From<$src> for $name<'a, T> {
            fn from(source: $src) -> Self {
                Self { desc: source.desc(), _borrow: PhantomData }
            }
        })*
    };
}

operand_handle!(
    /// A dense input of a scalar or vectorized kernel: a whole buffer or a contiguous range.
    In, &'a T, [&'a DeviceBuffer<T>, &'a BufferView<'_, T>, &'a BufferViewMut<'_, T>]
);
operand_handle!(
    /// A dense output of a scalar or vectorized kernel, borrowed exclusively.
    Out, &'a mut T, [&'a mut DeviceBuffer<T>, &'a mut BufferViewMut<'_, T>]
);
operand_handle!(
    /// An input of a strided kernel: a strided view (shape, signed strides, offset).
    InStrided, &'a T, [&'a StridedView<'_, T>, &'a StridedViewMut<'_, T>]
);
operand_handle!(
    /// An output of a strided kernel, borrowed exclusively.
    OutStrided, &'a mut T, [&'a mut StridedViewMut<'_, T>]
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
