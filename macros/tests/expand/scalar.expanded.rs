use jitseam::{In, Out};
/// `x * scale + shift`, one element per thread.
///
/// Signature of the `axpb` kernel (`scalar` abi, entry point `baracuda_gen_add_scalar_mul_scalar_f32_scalar`). Launch a bound kernel with [`Axpb::args`] / [`AxpbArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Axpb;
/// Launch arguments of [`Axpb`], by their declared names.
#[derive(Debug)]
pub struct AxpbArgs<'a> {
    pub x: ::jitseam::__private::In<'a, ::core::primitive::f32>,
    pub out: ::jitseam::__private::Out<'a, ::core::primitive::f32>,
    pub scale: ::core::primitive::f32,
    pub shift: ::core::primitive::f32,
}
impl Axpb {
    /// Collects the launch arguments of [`Axpb`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    pub fn args<'a>(
        x: impl ::jitseam::__private::IntoIn<'a, ::core::primitive::f32>,
        out: impl ::jitseam::__private::IntoOut<'a, ::core::primitive::f32>,
        scale: ::core::primitive::f32,
        shift: ::core::primitive::f32,
    ) -> AxpbArgs<'a> {
        AxpbArgs {
            x: ::jitseam::__private::IntoIn::into_handle(x),
            out: ::jitseam::__private::IntoOut::into_handle(out),
            scale,
            shift,
        }
    }
}
impl ::jitseam::__private::ChoosesGrid for Axpb {}
impl ::jitseam::__private::Declared for Axpb {
    const SPEC: ::jitseam::__private::AbiSpec = ::jitseam::__private::AbiSpec::new(
        ::jitseam::__private::AbiKind::Scalar,
        &[::jitseam::__private::ElementKind::F32],
        &[::jitseam::__private::ElementKind::F32],
        &[::jitseam::__private::ElementKind::F32, ::jitseam::__private::ElementKind::F32],
    );
    const SYMBOL: &'static str = "baracuda_gen_add_scalar_mul_scalar_f32_scalar";
    const NAMES: &'static [&'static str] = &["x", "out", "scale", "shift"];
    type Args<'a> = AxpbArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: AxpbArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_agreed(
                &[::jitseam::__private::Arg::from(__jitseam_args.x)],
                &[::jitseam::__private::ArgMut::from(__jitseam_args.out)],
                &[
                    ::jitseam::__private::ParamValue::from(__jitseam_args.scale),
                    ::jitseam::__private::ParamValue::from(__jitseam_args.shift),
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
