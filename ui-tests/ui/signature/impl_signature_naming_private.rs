use jitseam::__private::{Declared, Launch};
use jitseam::{AbiKind, AbiSpec, ElementKind, Error, Signature};

// Everything the macro's expansion names, written by hand: the declaration makes `Add` a
// `Signature` through jitseam's own impl, which a hand-written one overlaps.
struct Add;

impl Declared for Add {
    const SPEC: AbiSpec = AbiSpec::new(AbiKind::Scalar, &[ElementKind::F32], &[ElementKind::F32], &[]);
    const SYMBOL: &'static str = "add";
    type Args<'a> = ();
    fn launch(launch: Launch<'_>, _: ()) -> Result<(), Error> {
        launch.run(&[], &[], &[1], &[])
    }
}

impl Signature for Add {
    const SPEC: AbiSpec = AbiSpec::new(AbiKind::Scalar, &[ElementKind::F64], &[ElementKind::F64], &[]);
    const SYMBOL: &'static str = "add";
    type Args<'a> = ();
    fn __jitseam_launch(launch: Launch<'_>, _: ()) -> Result<(), Error> {
        launch.run(&[], &[], &[1], &[])
    }
}

fn main() {}
