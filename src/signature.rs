//! Kernel signatures: the typed face ([`Signature`], implemented by `#[jitseam::kernel]`) and the
//! runtime face ([`Erased`]), plus the typed operand handles a generated launcher takes.

use std::marker::PhantomData;

use crate::abi::AbiSpec;
use crate::artifact::Artifact;
use crate::device::{
    Arg, ArgMut, BufferView, BufferViewMut, DeviceBuffer, StridedView, StridedViewMut, ViewDesc,
};
use crate::dtype::Element;
use crate::error::Error;
use crate::launch::Launch;

/// A kernel's signature known at compile time.
///
/// Declared with `#[jitseam::kernel]` and never implemented by hand: jitseam implements it for
/// every declaration the macro writes, and for nothing else. A hand-written impl lacks the seal
/// only those declarations carry, and one written next to a hand-made declaration conflicts
/// with jitseam's own impl; either way it does not compile, so no signature can claim a `SPEC`
/// its launcher does not follow.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel signature",
    note = "declare kernel signatures with `#[jitseam::kernel(abi = ...)]` on a bodiless fn, or use `jitseam::Erased`"
)]
pub trait Signature: seal::Sealed + Sized + 'static {
    /// The ABI, operand and param types, as the artifact must carry them.
    const SPEC: AbiSpec;

    /// The entry point the kernel is declared with (`symbol = "..."`, by default the fn name).
    const SYMBOL: &'static str;

    /// The declared names of the inputs, then the outputs, then the params (the order of
    /// [`Signature::SPEC`]'s lists), as errors about the signature print them. Empty when
    /// unknown: errors then name each operand by its place.
    const NAMES: &'static [&'static str] = &[];

    /// The launch arguments: the declared operands and params, by name.
    type Args<'a>;

    /// Lowers `args` to operands and runs `launch` with them. Only jitseam can make a
    /// [`Launch`], so only its generic launch can call this.
    #[doc(hidden)]
    fn __jitseam_launch(launch: Launch<'_>, args: Self::Args<'_>) -> Result<(), Error>;

    /// A PTX artifact for this signature: entry point [`Signature::SYMBOL`], spec
    /// [`Signature::SPEC`]. `load()` still verifies the text against both.
    fn ptx_artifact(text: impl Into<String>) -> Artifact {
        Artifact::ptx(text, Self::SYMBOL, Self::SPEC)
    }
}

/// What `#[jitseam::kernel]` writes for a declaration; jitseam makes every declaration a
/// [`Signature`]. Not an API: the macro's expansion is its only intended implementer.
#[doc(hidden)]
pub trait Declared: 'static {
    /// See [`Signature::SPEC`].
    const SPEC: AbiSpec;
    /// See [`Signature::SYMBOL`].
    const SYMBOL: &'static str;
    /// See [`Signature::NAMES`].
    const NAMES: &'static [&'static str] = &[];
    /// See [`Signature::Args`].
    type Args<'a>;
    /// Lowers `args` to operands and runs `launch` with them.
    fn launch(launch: Launch<'_>, args: Self::Args<'_>) -> Result<(), Error>;
}

// The one implementation of `Signature`: a direct impl of it downstream either lacks the seal
// (which only declarations carry, and which no other crate can name) or, next to a declaration,
// overlaps this one.
impl<K: Declared> Signature for K {
    const SPEC: AbiSpec = <K as Declared>::SPEC;
    const SYMBOL: &'static str = <K as Declared>::SYMBOL;
    const NAMES: &'static [&'static str] = <K as Declared>::NAMES;
    type Args<'a> = <K as Declared>::Args<'a>;

    fn __jitseam_launch(launch: Launch<'_>, args: Self::Args<'_>) -> Result<(), Error> {
        <K as Declared>::launch(launch, args)
    }
}

/// A kernel whose launch grid jitseam chooses from its operands: every kernel of the dense ABIs,
/// and a custom-ABI kernel declared with `covers = EXPR` (one thread per covered element).
/// [`Kernel::launch`](crate::Kernel::launch) needs it.
#[diagnostic::on_unimplemented(
    message = "jitseam cannot choose a grid for `{Self}`: launch it with `launch_with` and a `LaunchConfig`",
    note = "a custom-abi kernel launches with `launch` only when it is declared with `covers = EXPR`"
)]
pub trait ChoosesGrid: Signature {}

/// A kernel that takes its launch configuration from the caller: a custom-ABI kernel.
/// [`Kernel::launch_with`](crate::Kernel::launch_with) needs it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a custom-abi kernel: jitseam chooses its grid, so it takes no `LaunchConfig`",
    note = "launch it with `launch`"
)]
pub trait TakesConfig: Signature {}

mod seal {
    /// Carried by `#[jitseam::kernel]` declarations only; unnameable outside jitseam.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not declared with `#[jitseam::kernel]`, so it cannot be a `Signature`",
        note = "`Signature` is implemented by jitseam for `#[jitseam::kernel(abi = ...)]` declarations and cannot be implemented by hand; declare the kernel with the macro, or launch it as `jitseam::Erased`"
    )]
    pub trait Sealed {}

    impl<K: super::Declared> Sealed for K {}
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

// The handles and conversion traits carry no `T: Element` bound of their own: only the
// conversions below (which require it) can make a handle, and leaving the bound off keeps a
// wrong element type in a declaration to one error (at the `SPEC`) instead of one per use.
macro_rules! operand_handle {
    ($(#[$doc:meta])* $name:ident, $arg:ident, $borrow:ty) => {
        $(#[$doc])*
        pub struct $name<'a, T> {
            arg: $arg<'a>,
            _elem: PhantomData<$borrow>,
        }

        impl<T> $name<'_, T> {
            /// The erased description a launch checks.
            pub fn desc(&self) -> ViewDesc {
                self.arg.desc()
            }
        }

        impl<'a, T> From<$name<'a, T>> for $arg<'a> {
            fn from(handle: $name<'a, T>) -> Self {
                handle.arg
            }
        }

        impl<T> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.arg).finish()
            }
        }
    };
}

operand_handle!(
    /// A dense input of a scalar or vectorized kernel: a whole buffer or a contiguous range.
    In, Arg, &'a T
);
operand_handle!(
    /// A dense output of a scalar or vectorized kernel, borrowed exclusively.
    Out, ArgMut, &'a mut T
);
operand_handle!(
    /// An input of a strided kernel: a strided view (shape, signed strides, offset).
    InStrided, Arg, &'a T
);
operand_handle!(
    /// An output of a strided kernel, borrowed exclusively.
    OutStrided, ArgMut, &'a mut T
);

impl<T> Clone for In<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for In<'_, T> {}
impl<T> Clone for InStrided<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for InStrided<'_, T> {}

/// What a generated `args` constructor accepts for an `In<T>` operand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dense input of element type `{T}`",
    label = "expected `&DeviceBuffer<{T}>`, `&BufferView<{T}>`, `&BufferViewMut<{T}>` or a cudarc `&CudaSlice<{T}>`/`&CudaView<{T}>`",
    note = "inputs of scalar and vectorized kernels are whole buffers or contiguous ranges (`buffer.slice(..)`) of the declared element type, borrowed shared",
    note = "strided views are operands of kernels declared with `abi = strided(R)`"
)]
pub trait IntoIn<'a, T>: sealed::Sealed {
    /// The operand handle, borrowing the source for `'a`.
    fn into_handle(self) -> In<'a, T>;
}

/// What a generated `args` constructor accepts for an `Out<T>` operand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dense output of element type `{T}`",
    label = "expected `&mut DeviceBuffer<{T}>`, `&mut BufferViewMut<{T}>` or a cudarc `&mut CudaSlice<{T}>`/`&mut CudaViewMut<{T}>`",
    note = "outputs of scalar and vectorized kernels are borrowed exclusively: pass `&mut buffer` or `&mut buffer.slice_mut(..)?`, of the declared element type",
    note = "strided views are operands of kernels declared with `abi = strided(R)`"
)]
pub trait IntoOut<'a, T>: sealed::Sealed {
    /// The operand handle, borrowing the source exclusively for `'a`.
    fn into_handle(self) -> Out<'a, T>;
}

/// What a generated `args` constructor accepts for an input of a strided kernel.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a strided input of element type `{T}`",
    label = "expected `&StridedView<{T}>` or `&StridedViewMut<{T}>`",
    note = "operands of strided kernels are strided views that carry their shape and strides: make one with `buffer.shaped(&[..])?` or `buffer.strided(offset, &[..], &[..])?`"
)]
pub trait IntoInStrided<'a, T>: sealed::Sealed {
    /// The operand handle, borrowing the source for `'a`.
    fn into_handle(self) -> InStrided<'a, T>;
}

/// What a generated `args` constructor accepts for an output of a strided kernel.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a strided output of element type `{T}`",
    label = "expected `&mut StridedViewMut<{T}>`",
    note = "outputs of strided kernels are exclusive strided views: make one with `buffer.shaped_mut(&[..])?` or `buffer.strided_mut(offset, &[..], &[..])?`"
)]
pub trait IntoOutStrided<'a, T>: sealed::Sealed {
    /// The operand handle, borrowing the source exclusively for `'a`.
    fn into_handle(self) -> OutStrided<'a, T>;
}

/// `From` for each (handle, source) pair, through the erased operand the source makes. Sources
/// are sealed so that only they can convert.
macro_rules! conversions {
    ($($handle:ident from $src:ty;)*) => {$(
        impl<'a, T: Element> From<$src> for $handle<'a, T> {
            fn from(source: $src) -> Self {
                Self { arg: source.into(), _elem: PhantomData }
            }
        }

        impl<'a, T: Element> sealed::Sealed for $src {}
    )*};
}

conversions! {
    In from &'a DeviceBuffer<T>;
    In from &'a BufferView<'_, T>;
    In from &'a BufferViewMut<'_, T>;
    Out from &'a mut DeviceBuffer<T>;
    Out from &'a mut BufferViewMut<'_, T>;
    InStrided from &'a StridedView<'_, T>;
    InStrided from &'a StridedViewMut<'_, T>;
    OutStrided from &'a mut StridedViewMut<'_, T>;
}

// The conversions the generated `args` constructors call, written out rather than generated:
// rustc lists these impls when an argument does not convert, and a macro would bury them.

impl<'a, T: Element> IntoIn<'a, T> for &'a DeviceBuffer<T> {
    fn into_handle(self) -> In<'a, T> {
        In::from(self)
    }
}

impl<'a, T: Element> IntoIn<'a, T> for &'a BufferView<'_, T> {
    fn into_handle(self) -> In<'a, T> {
        In::from(self)
    }
}

impl<'a, T: Element> IntoIn<'a, T> for &'a BufferViewMut<'_, T> {
    fn into_handle(self) -> In<'a, T> {
        In::from(self)
    }
}

impl<'a, T: Element> IntoOut<'a, T> for &'a mut DeviceBuffer<T> {
    fn into_handle(self) -> Out<'a, T> {
        Out::from(self)
    }
}

impl<'a, T: Element> IntoOut<'a, T> for &'a mut BufferViewMut<'_, T> {
    fn into_handle(self) -> Out<'a, T> {
        Out::from(self)
    }
}

impl<'a, T: Element> IntoInStrided<'a, T> for &'a StridedView<'_, T> {
    fn into_handle(self) -> InStrided<'a, T> {
        InStrided::from(self)
    }
}

impl<'a, T: Element> IntoInStrided<'a, T> for &'a StridedViewMut<'_, T> {
    fn into_handle(self) -> InStrided<'a, T> {
        InStrided::from(self)
    }
}

impl<'a, T: Element> IntoOutStrided<'a, T> for &'a mut StridedViewMut<'_, T> {
    fn into_handle(self) -> OutStrided<'a, T> {
        OutStrided::from(self)
    }
}

// cudarc slices as typed operands (interop): through the erased operand each makes, so the
// launch orders them with cudarc's own events. Element types without a cudarc `DeviceRepr`
// (`f16`, `bf16`: cudarc is built without its `f16` feature) are not accepted.
macro_rules! cudarc_conversions {
    ($($handle:ident: $into:ident from $src:ty;)*) => {$(
        impl<'a, T: Element + cudarc::driver::DeviceRepr> From<$src> for $handle<'a, T> {
            fn from(source: $src) -> Self {
                Self { arg: source.into(), _elem: PhantomData }
            }
        }

        impl<'a, T: Element + cudarc::driver::DeviceRepr> sealed::Sealed for $src {}

        impl<'a, T: Element + cudarc::driver::DeviceRepr> $into<'a, T> for $src {
            fn into_handle(self) -> $handle<'a, T> {
                $handle::from(self)
            }
        }
    )*};
}

cudarc_conversions! {
    In: IntoIn from &'a cudarc::driver::CudaSlice<T>;
    In: IntoIn from &'a cudarc::driver::CudaView<'_, T>;
    Out: IntoOut from &'a mut cudarc::driver::CudaSlice<T>;
    Out: IntoOut from &'a mut cudarc::driver::CudaViewMut<'_, T>;
}
