use jitseam::{AbiKind, AbiSpec, ElementKind, Signature};

// A hand-written signature could claim a spec its launcher does not follow; only the macro
// writes the hidden launch item.
struct Add;

impl Signature for Add {
    const SPEC: AbiSpec = AbiSpec::new(AbiKind::Scalar, &[ElementKind::F32], &[ElementKind::F32], &[]);
    const SYMBOL: &'static str = "add";
    type Args<'a> = ();
}

fn main() {}
