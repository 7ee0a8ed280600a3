//! Parameter attributes jitseam cannot honour are declined at `load()`, and a pointee alignment a
//! kernel declares (`.ptr .align N`) is checked against every operand's address at launch.

use jitseam::abi::ParamRole;
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, ElementKind::F32, Erased, Error, Kernel, Loaded,
};

const SPEC: AbiSpec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);

/// A scalar `x → out` kernel that returns at once, whose three parameters are declared as given.
fn kernel(x: &str, out: &str, n: &str) -> Result<Kernel<Erased, Loaded>, Error> {
    let text = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 {x} k_x, .param .u64 {out} k_out, .param .u64 {n} k_n)\n\
         {{\n\tret;\n}}\n"
    );
    Ok(Kernel::describe(Artifact::ptx(text, "k", SPEC))?.load()?)
}

fn declined_attribute(result: Result<Kernel<Erased, Loaded>, Error>) -> (usize, ParamRole, String) {
    match result {
        Err(Error::ParamAttribute {
            index,
            role,
            attribute,
            ..
        }) => (index, role, attribute),
        other => panic!("expected a declined attribute, got {other:?}"),
    }
}

#[test]
fn an_operand_pointer_into_another_state_space_is_declined() {
    for space in ["shared", "const", "local"] {
        let (index, role, attribute) =
            declined_attribute(kernel(&format!(".ptr .{space}"), "", ""));
        assert_eq!((index, role), (0, ParamRole::Input(0)));
        assert_eq!(attribute, format!(".ptr .{space}"));
    }
    let (index, role, _) = declined_attribute(kernel("", ".ptr .shared .align 16", ""));
    assert_eq!((index, role), (1, ParamRole::Output(0)));
}

#[test]
fn a_ptr_attribute_on_the_count_is_declined() {
    let (index, role, attribute) = declined_attribute(kernel("", "", ".ptr"));
    assert_eq!(
        (index, role, attribute.as_str()),
        (2, ParamRole::Count, ".ptr")
    );
}

#[test]
fn alignments_that_are_not_powers_of_two_are_declined() {
    let (index, _, attribute) = declined_attribute(kernel(".ptr .global .align 3", "", ""));
    assert_eq!((index, attribute.as_str()), (0, ".ptr .align 3"));
    let (index, _, attribute) = declined_attribute(kernel("", ".ptr .align 0", ""));
    assert_eq!((index, attribute.as_str()), (1, ".ptr .align 0"));
}

#[test]
fn global_and_generic_pointers_load() {
    kernel(".ptr .global", ".ptr", "").unwrap();
    kernel(".ptr .global .align 16", ".ptr .align 4", "").unwrap();
}

#[test]
fn a_declared_pointee_alignment_is_checked_at_every_launch() {
    let device = Device::emulator();
    let kernel = kernel(".ptr .global .align 16", "", "")
        .unwrap()
        .bind(&device)
        .unwrap();
    let stream = device.default_stream();
    let x = device.upload(&[1.0f32; 64]).unwrap();
    let mut out = device.alloc::<f32>(32).unwrap();
    // Four f32 past a 256-byte-aligned allocation start: 16-byte aligned.
    let aligned = x.slice(4..36).unwrap();
    kernel
        .launch(
            &stream,
            &[(&aligned).into()],
            &mut [(&mut out).into()],
            &[32],
            &[],
        )
        .unwrap();
    let off_by_one = x.slice(1..33).unwrap();
    match kernel.launch(
        &stream,
        &[(&off_by_one).into()],
        &mut [(&mut out).into()],
        &[32],
        &[],
    ) {
        Err(Error::PointerMisaligned {
            operand,
            required,
            address,
            ..
        }) => {
            assert_eq!(operand, jitseam::error::Operand::Input(0));
            assert_eq!(required, 16);
            assert_eq!(address, x.address() + 4);
        }
        other => panic!("expected a misaligned pointer, got {other:?}"),
    }
}
