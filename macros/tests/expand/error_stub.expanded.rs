use jitseam::{In, Out};
::core::compile_error! {
    "vector width 3 is not supported: the vectorized abi takes a width of 2, 4 or 8"
}
const _: () = {
    let _: ::core::marker::PhantomData<In<'static, ()>>;
    let _: ::core::marker::PhantomData<Out<'static, ()>>;
};
#[allow(dead_code)]
pub struct BadWidth;
#[allow(dead_code)]
pub struct BadWidthArgs<'a>(::core::marker::PhantomData<&'a ()>);
