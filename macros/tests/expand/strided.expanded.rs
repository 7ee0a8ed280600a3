use jitseam::{In, Out};
/// Signature of the `mul_scalar` kernel (`strided(2)` abi, entry point `mul_scalar`). Launch a bound kernel with [`MulScalar::args`] / [`MulScalarArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct MulScalar;
/// Launch arguments of [`MulScalar`], by their declared names.
#[derive(Debug)]
pub(crate) struct MulScalarArgs<'a> {
    pub(crate) x: ::jitseam::__private::InStrided<'a, ::core::primitive::f64>,
    pub(crate) out: ::jitseam::__private::OutStrided<'a, ::core::primitive::f64>,
    pub(crate) factor: ::core::primitive::f64,
}
impl MulScalar {
    /// Collects the launch arguments of [`MulScalar`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn args<'a>(
        x: impl ::jitseam::__private::IntoInStrided<'a, ::core::primitive::f64>,
        out: impl ::jitseam::__private::IntoOutStrided<'a, ::core::primitive::f64>,
        factor: ::core::primitive::f64,
    ) -> MulScalarArgs<'a> {
        MulScalarArgs {
            x: ::jitseam::__private::IntoInStrided::into_handle(x),
            out: ::jitseam::__private::IntoOutStrided::into_handle(out),
            factor,
        }
    }
}
impl ::jitseam::__private::ChoosesGrid for MulScalar {}
impl ::jitseam::__private::Declared for MulScalar {
    const SPEC: ::jitseam::__private::AbiSpec = ::jitseam::__private::AbiSpec::new(
        ::jitseam::__private::AbiKind::Strided {
            rank: 2u8,
        },
        &[::jitseam::__private::ElementKind::F64],
        &[::jitseam::__private::ElementKind::F64],
        &[::jitseam::__private::ElementKind::F64],
    );
    const SYMBOL: &'static str = "mul_scalar";
    const NAMES: &'static [&'static str] = &["x", "out", "factor"];
    type Args<'a> = MulScalarArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: MulScalarArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_agreed(
                &[::jitseam::__private::Arg::from(__jitseam_args.x)],
                &[::jitseam::__private::ArgMut::from(__jitseam_args.out)],
                &[::jitseam::__private::ParamValue::from(__jitseam_args.factor)],
            )
    }
}
const _: () = {
    let _: ::core::marker::PhantomData<In<'static, ::core::primitive::f64>> = ::core::marker::PhantomData::<
        ::jitseam::__private::In<'static, ::core::primitive::f64>,
    >;
    let _: ::core::marker::PhantomData<Out<'static, ::core::primitive::f64>> = ::core::marker::PhantomData::<
        ::jitseam::__private::Out<'static, ::core::primitive::f64>,
    >;
};
