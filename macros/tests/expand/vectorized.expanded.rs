use jitseam::{In, Out};
/// Signature of the `relu_add` kernel (`vectorized(4)` abi, entry point `relu_add`). Launch a bound kernel with [`ReluAdd::args`] / [`ReluAddArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReluAdd;
/// Launch arguments of [`ReluAdd`], by their declared names.
#[derive(Debug)]
pub struct ReluAddArgs<'a> {
    pub a: ::jitseam::__private::In<'a, ::core::primitive::f32>,
    pub b: ::jitseam::__private::In<'a, ::core::primitive::f32>,
    pub out: ::jitseam::__private::Out<'a, ::core::primitive::f32>,
    pub alpha: ::core::primitive::f32,
}
impl ReluAdd {
    /// Collects the launch arguments of [`ReluAdd`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    pub fn args<'a>(
        a: impl ::jitseam::__private::IntoIn<'a, ::core::primitive::f32>,
        b: impl ::jitseam::__private::IntoIn<'a, ::core::primitive::f32>,
        out: impl ::jitseam::__private::IntoOut<'a, ::core::primitive::f32>,
        alpha: ::core::primitive::f32,
    ) -> ReluAddArgs<'a> {
        ReluAddArgs {
            a: ::jitseam::__private::IntoIn::into_handle(a),
            b: ::jitseam::__private::IntoIn::into_handle(b),
            out: ::jitseam::__private::IntoOut::into_handle(out),
            alpha,
        }
    }
}
impl ::jitseam::__private::ChoosesGrid for ReluAdd {}
impl ::jitseam::__private::Declared for ReluAdd {
    const SPEC: ::jitseam::__private::AbiSpec = ::jitseam::__private::AbiSpec::new(
        ::jitseam::__private::AbiKind::Vectorized {
            width: 4u8,
        },
        &[
            ::jitseam::__private::ElementKind::F32,
            ::jitseam::__private::ElementKind::F32,
        ],
        &[::jitseam::__private::ElementKind::F32],
        &[::jitseam::__private::ElementKind::F32],
    );
    const SYMBOL: &'static str = "relu_add";
    const NAMES: &'static [&'static str] = &["a", "b", "out", "alpha"];
    type Args<'a> = ReluAddArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: ReluAddArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_agreed(
                &[
                    ::jitseam::__private::Arg::from(__jitseam_args.a),
                    ::jitseam::__private::Arg::from(__jitseam_args.b),
                ],
                &[::jitseam::__private::ArgMut::from(__jitseam_args.out)],
                &[::jitseam::__private::ParamValue::from(__jitseam_args.alpha)],
            )
    }
}
const _: () = {
    let _: ::core::marker::PhantomData<In<'static, ::core::primitive::f32>> = ::core::marker::PhantomData::<
        ::jitseam::__private::In<'static, ::core::primitive::f32>,
    >;
    let _: ::core::marker::PhantomData<Out<'static, ::core::primitive::f32>> = ::core::marker::PhantomData::<
        ::jitseam::__private::Out<'static, ::core::primitive::f32>,
    >;
    ::core::assert!(
        4usize * ::core::mem::size_of:: < ::core::primitive::f32 > () <= 16,
        "`vectorized(4)` over `f32`: 4 lanes of `f32` span more than the 16 bytes a vector may span; use a smaller width",
    );
};
