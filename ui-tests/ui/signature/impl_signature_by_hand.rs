use jitseam::__private::Launch;
use jitseam::{AbiKind, AbiSpec, ElementKind, Error, Signature};

// A hand-written signature, hidden launch item included, could claim a spec its launcher does
// not follow: `Signature` is implemented by jitseam for `#[jitseam::kernel]` declarations only.
struct Add;

impl Signature for Add {
    const SPEC: AbiSpec = AbiSpec::new(AbiKind::Scalar, &[ElementKind::F32], &[ElementKind::F32], &[]);
    const SYMBOL: &'static str = "add";
    type Args<'a> = ();
    fn __jitseam_launch(launch: Launch<'_>, _: ()) -> Result<(), Error> {
        launch.run(&[], &[], &[1], &[])
    }
}

fn main() {}
