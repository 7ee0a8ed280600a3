use jitseam::{In, Out};
/// Out-first saxpy with an `int n`, one thread per element.
///
/// Signature of the `saxpy` kernel (`custom` abi, entry point `saxpy_out_first`). Launch a bound kernel with [`Saxpy::args`] / [`SaxpyArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Saxpy;
/// Launch arguments of [`Saxpy`], by their declared names.
#[derive(Debug)]
pub struct SaxpyArgs<'a> {
    pub out: ::jitseam::__private::Out<'a, ::core::primitive::f32>,
    pub x: ::jitseam::__private::In<'a, ::core::primitive::f32>,
    pub n: ::core::primitive::i32,
    pub a: ::core::primitive::f32,
}
impl Saxpy {
    /// Collects the launch arguments of [`Saxpy`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    pub fn args<'a>(
        out: impl ::jitseam::__private::IntoOut<'a, ::core::primitive::f32>,
        x: impl ::jitseam::__private::IntoIn<'a, ::core::primitive::f32>,
        n: ::core::primitive::i32,
        a: ::core::primitive::f32,
    ) -> SaxpyArgs<'a> {
        SaxpyArgs {
            out: ::jitseam::__private::IntoOut::into_handle(out),
            x: ::jitseam::__private::IntoIn::into_handle(x),
            n,
            a,
        }
    }
}
impl ::jitseam::__private::ChoosesGrid for Saxpy {}
impl ::jitseam::__private::TakesConfig for Saxpy {}
impl ::jitseam::__private::Declared for Saxpy {
    const SPEC: ::jitseam::__private::AbiSpec = {
        const PARAMS: &[::jitseam::__private::CustomParam] = &[
            ::jitseam::__private::CustomParam::new(
                "out",
                ::jitseam::__private::CustomKind::Out(
                    ::jitseam::__private::ElementKind::F32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "x",
                ::jitseam::__private::CustomKind::In(
                    ::jitseam::__private::ElementKind::F32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "n",
                ::jitseam::__private::CustomKind::Value(
                    ::jitseam::__private::ElementKind::I32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "a",
                ::jitseam::__private::CustomKind::Value(
                    ::jitseam::__private::ElementKind::F32,
                ),
            ),
        ];
        ::jitseam::__private::AbiSpec::new_custom(
            ::jitseam::__private::CustomAbi::new(
                PARAMS,
                &[
                    ::jitseam::__private::ExtentOp::Param(0u16),
                    ::jitseam::__private::ExtentOp::End,
                    ::jitseam::__private::ExtentOp::Param(0u16),
                    ::jitseam::__private::ExtentOp::Lit(2u64),
                    ::jitseam::__private::ExtentOp::DivCeil,
                    ::jitseam::__private::ExtentOp::Lit(2u64),
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::End,
                    ::jitseam::__private::ExtentOp::Param(0u16),
                    ::jitseam::__private::ExtentOp::End,
                ],
                true,
            ),
            &[::jitseam::__private::ElementKind::F32],
            &[::jitseam::__private::ElementKind::F32],
            &[
                ::jitseam::__private::ElementKind::I32,
                ::jitseam::__private::ElementKind::F32,
            ],
        )
    };
    const SYMBOL: &'static str = "saxpy_out_first";
    const NAMES: &'static [&'static str] = &["x", "out", "n", "a"];
    type Args<'a> = SaxpyArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: SaxpyArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_custom(
                &[::jitseam::__private::Arg::from(__jitseam_args.x)],
                &[::jitseam::__private::ArgMut::from(__jitseam_args.out)],
                &[
                    ::jitseam::__private::ParamValue::from(__jitseam_args.n),
                    ::jitseam::__private::ParamValue::from(__jitseam_args.a),
                ],
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
};
