use jitseam::{In, Out};
type Half = half::f16;
/// Two outputs, half-precision operands (one named through an alias, which the macro leaves to
/// the `Element` bound) and integer params.
///
/// Signature of the `add_sub` kernel (`vectorized(8)` abi, entry point `add_sub`). Launch a bound kernel with [`AddSub::args`] / [`AddSubArgs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct AddSub;
/// Launch arguments of [`AddSub`], by their declared names.
#[derive(Debug)]
struct AddSubArgs<'a> {
    a: ::jitseam::__private::In<'a, Half>,
    b: ::jitseam::__private::In<'a, ::jitseam::__private::half::f16>,
    sum: ::jitseam::__private::Out<'a, ::jitseam::__private::half::f16>,
    diff: ::jitseam::__private::Out<'a, ::jitseam::__private::half::f16>,
    count: ::core::primitive::u32,
    seed: ::core::primitive::i64,
}
impl AddSub {
    /// Collects the launch arguments of [`AddSub`]: inputs by shared reference, outputs by `&mut`, params by value.
    #[allow(clippy::too_many_arguments)]
    fn args<'a>(
        a: impl ::jitseam::__private::IntoIn<'a, Half>,
        b: impl ::jitseam::__private::IntoIn<'a, ::jitseam::__private::half::f16>,
        sum: impl ::jitseam::__private::IntoOut<'a, ::jitseam::__private::half::f16>,
        diff: impl ::jitseam::__private::IntoOut<'a, ::jitseam::__private::half::f16>,
        count: ::core::primitive::u32,
        seed: ::core::primitive::i64,
    ) -> AddSubArgs<'a> {
        AddSubArgs {
            a: ::jitseam::__private::IntoIn::into_handle(a),
            b: ::jitseam::__private::IntoIn::into_handle(b),
            sum: ::jitseam::__private::IntoOut::into_handle(sum),
            diff: ::jitseam::__private::IntoOut::into_handle(diff),
            count,
            seed,
        }
    }
}
impl ::jitseam::__private::ChoosesGrid for AddSub {}
impl ::jitseam::__private::Declared for AddSub {
    const SPEC: ::jitseam::__private::AbiSpec = ::jitseam::__private::AbiSpec::new(
        ::jitseam::__private::AbiKind::Vectorized {
            width: 8u8,
        },
        &[
            <Half as ::jitseam::__private::Element>::KIND,
            ::jitseam::__private::ElementKind::F16,
        ],
        &[
            ::jitseam::__private::ElementKind::F16,
            ::jitseam::__private::ElementKind::F16,
        ],
        &[::jitseam::__private::ElementKind::U32, ::jitseam::__private::ElementKind::I64],
    );
    const SYMBOL: &'static str = "add_sub";
    const NAMES: &'static [&'static str] = &["a", "b", "sum", "diff", "count", "seed"];
    type Args<'a> = AddSubArgs<'a>;
    fn launch(
        launch: ::jitseam::__private::Launch<'_>,
        __jitseam_args: AddSubArgs<'_>,
    ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
        launch
            .run_agreed(
                &[
                    ::jitseam::__private::Arg::from(__jitseam_args.a),
                    ::jitseam::__private::Arg::from(__jitseam_args.b),
                ],
                &[
                    ::jitseam::__private::ArgMut::from(__jitseam_args.sum),
                    ::jitseam::__private::ArgMut::from(__jitseam_args.diff),
                ],
                &[
                    ::jitseam::__private::ParamValue::from(__jitseam_args.count),
                    ::jitseam::__private::ParamValue::from(__jitseam_args.seed),
                ],
            )
    }
}
const _: () = {
    let _: ::core::marker::PhantomData<In<'static, Half>> = ::core::marker::PhantomData::<
        ::jitseam::__private::In<'static, Half>,
    >;
    let _: ::core::marker::PhantomData<Out<'static, ::jitseam::__private::half::f16>> = ::core::marker::PhantomData::<
        ::jitseam::__private::Out<'static, ::jitseam::__private::half::f16>,
    >;
    ::core::assert!(
        8usize * ::core::mem::size_of:: < Half > () <= 16,
        "`vectorized(8)` over `Half`: 8 lanes of `Half` span more than the 16 bytes a vector may span; use a smaller width",
    );
    ::core::assert!(
        8usize * ::core::mem::size_of:: < ::jitseam::__private::half::f16 > () <= 16,
        "`vectorized(8)` over `f16`: 8 lanes of `f16` span more than the 16 bytes a vector may span; use a smaller width",
    );
};
