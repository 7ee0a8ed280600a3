use jitseam::{In, Out};
/// A tiled transpose written for blocks of exactly 32 × 8 threads.
///
/// Signature of the `transpose` kernel (`custom` abi, entry point `transpose`). Launch a bound kernel with [`Transpose::args`] / [`TransposeArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Transpose;
/// Launch arguments of [`Transpose`], by their declared names.
#[derive(Debug)]
pub struct TransposeArgs<'a> {
    pub odata: ::jitseam::__private::Out<'a, ::core::primitive::f32>,
    pub idata: ::jitseam::__private::In<'a, ::core::primitive::f32>,
    pub width: ::core::primitive::i32,
    pub height: ::core::primitive::i32,
}
impl Transpose {
    /// Collects the launch arguments of [`Transpose`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    pub fn args<'a>(
        odata: impl ::jitseam::__private::IntoOut<'a, ::core::primitive::f32>,
        idata: impl ::jitseam::__private::IntoIn<'a, ::core::primitive::f32>,
        width: ::core::primitive::i32,
        height: ::core::primitive::i32,
    ) -> TransposeArgs<'a> {
        TransposeArgs {
            odata: ::jitseam::__private::IntoOut::into_handle(odata),
            idata: ::jitseam::__private::IntoIn::into_handle(idata),
            width,
            height,
        }
    }
}
impl ::jitseam::__private::TakesConfig for Transpose {}
impl ::jitseam::__private::Declared for Transpose {
    const SPEC: ::jitseam::__private::AbiSpec = {
        const PARAMS: &[::jitseam::__private::CustomParam] = &[
            ::jitseam::__private::CustomParam::new(
                "odata",
                ::jitseam::__private::CustomKind::Out(
                    ::jitseam::__private::ElementKind::F32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "idata",
                ::jitseam::__private::CustomKind::In(
                    ::jitseam::__private::ElementKind::F32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "width",
                ::jitseam::__private::CustomKind::Value(
                    ::jitseam::__private::ElementKind::I32,
                ),
            ),
            ::jitseam::__private::CustomParam::new(
                "height",
                ::jitseam::__private::CustomKind::Value(
                    ::jitseam::__private::ElementKind::I32,
                ),
            ),
        ];
        ::jitseam::__private::AbiSpec::new_custom(
            ::jitseam::__private::CustomAbi::with_block(
                PARAMS,
                &[
                    ::jitseam::__private::ExtentOp::Lit(32u64),
                    ::jitseam::__private::ExtentOp::Grid(1u8),
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Param(1u16),
                    ::jitseam::__private::ExtentOp::Lit(32u64),
                    ::jitseam::__private::ExtentOp::Grid(0u8),
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Lit(1u64),
                    ::jitseam::__private::ExtentOp::Sub,
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Add,
                    ::jitseam::__private::ExtentOp::End,
                    ::jitseam::__private::ExtentOp::Lit(32u64),
                    ::jitseam::__private::ExtentOp::Grid(0u8),
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Param(0u16),
                    ::jitseam::__private::ExtentOp::Lit(32u64),
                    ::jitseam::__private::ExtentOp::Grid(1u8),
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Lit(1u64),
                    ::jitseam::__private::ExtentOp::Sub,
                    ::jitseam::__private::ExtentOp::Mul,
                    ::jitseam::__private::ExtentOp::Add,
                    ::jitseam::__private::ExtentOp::End,
                ],
                false,
                [32u32, 8u32, 1u32],
            ),
            &[::jitseam::__private::ElementKind::F32],
            &[::jitseam::__private::ElementKind::F32],
            &[
                ::jitseam::__private::ElementKind::I32,
                ::jitseam::__private::ElementKind::I32,
            ],
        )
    };
    const SYMBOL: &'static str = "transpose";
    const NAMES: &'static [&'static str] = &["idata", "odata", "width", "height"];
    type Args<'a> = TransposeArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: TransposeArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_custom(
                &[::jitseam::__private::Arg::from(__jitseam_args.idata)],
                &[::jitseam::__private::ArgMut::from(__jitseam_args.odata)],
                &[
                    ::jitseam::__private::ParamValue::from(__jitseam_args.width),
                    ::jitseam::__private::ParamValue::from(__jitseam_args.height),
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
