//! A property of guarded loading: for random guarded kernels (a gather, a scatter or an atomic
//! scatter-add through an index loaded from memory and scaled and shifted by constants) and
//! random indices, the kernel `load()` guards, launched on the emulator, gives exactly what the
//! same kernel loaded unverified gives whenever that launch does not fault — and reports
//! `Error::GuardFault` at the guarded line whenever it would (an index out of range: the
//! unverified launch reaches the emulator's memory checker), naming one failing thread and its
//! offset; a gather's faulting loads give 0 and its other elements are still gathered. The
//! gathers include loads under their own predicate (taken for even indices, or odd ones),
//! whose guard skips the fault record for the threads that do not load.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::device::{Arg, ArgMut, EmulatorConfig};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Error,
    Kernel,
};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Form {
    /// `out[i] = x[idx[i]·s + c]`.
    Gather,
    /// `out[idx[i]·s + c] = x[i]`.
    Scatter,
    /// `atom.add out[idx[i]·s + c], x[i]`.
    ScatterAdd,
    /// `out[i] = idx[i]` even ? `x[idx[i]·s + c]` : 7, the load under `@%p`.
    GatherEven,
    /// `out[i] = idx[i]` odd ? `x[idx[i]·s + c]` : 7, the load under `@!%p`.
    GatherOdd,
}

impl Form {
    /// Whether the guarded access runs for index `j`.
    fn runs(self, j: i32) -> bool {
        match self {
            Form::GatherEven => j % 2 == 0,
            Form::GatherOdd => j % 2 != 0,
            Form::Gather | Form::Scatter | Form::ScatterAdd => true,
        }
    }

    fn gathers(self) -> bool {
        matches!(self, Form::Gather | Form::GatherEven | Form::GatherOdd)
    }
}

fn ptx(form: Form, scale: i32, shift: i32) -> String {
    let access = match form {
        Form::Gather => {
            "add.s64 %rd13, %rd11, %rd10;\n\tld.global.u32 %r6, [%rd13]; // <- guarded\n\
             \tadd.s64 %rd14, %rd12, %rd8;\n\tst.global.u32 [%rd14], %r6;"
        }
        Form::Scatter => {
            "add.s64 %rd13, %rd11, %rd8;\n\tld.global.u32 %r6, [%rd13];\n\
             \tadd.s64 %rd14, %rd12, %rd10;\n\tst.global.u32 [%rd14], %r6; // <- guarded"
        }
        Form::ScatterAdd => {
            "add.s64 %rd13, %rd11, %rd8;\n\tld.global.u32 %r6, [%rd13];\n\
             \tadd.s64 %rd14, %rd12, %rd10;\n\tatom.global.add.u32 %r7, [%rd14], %r6; // <- guarded"
        }
        Form::GatherEven => {
            "and.b32 %r7, %r4, 1;\n\tsetp.eq.u32 %p0, %r7, 0;\n\tmov.u32 %r6, 7;\n\
             \tadd.s64 %rd13, %rd11, %rd10;\n\t@%p0 ld.global.u32 %r6, [%rd13]; // <- guarded\n\
             \tadd.s64 %rd14, %rd12, %rd8;\n\tst.global.u32 [%rd14], %r6;"
        }
        Form::GatherOdd => {
            "and.b32 %r7, %r4, 1;\n\tsetp.eq.u32 %p0, %r7, 0;\n\tmov.u32 %r6, 7;\n\
             \tadd.s64 %rd13, %rd11, %rd10;\n\t@!%p0 ld.global.u32 %r6, [%rd13]; // <- guarded\n\
             \tadd.s64 %rd14, %rd12, %rd8;\n\tst.global.u32 [%rd14], %r6;"
        }
    };
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\n\
         .visible .entry k(.param .u64 k_x, .param .u64 k_idx, .param .u64 k_out, .param .u64 k_n)\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<16>;\n\
         \tld.param.u64 %rd1, [k_x];\n\tld.param.u64 %rd2, [k_idx];\n\
         \tld.param.u64 %rd3, [k_out];\n\tld.param.u64 %rd4, [k_n];\n\
         \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
         \tmad.wide.u32 %rd5, %r1, %r2, 0;\n\tcvt.u64.u32 %rd6, %r3;\n\tadd.s64 %rd5, %rd5, %rd6;\n\
         \tsetp.ge.u64 %p1, %rd5, %rd4;\n\t@%p1 bra $done;\n\
         \tcvta.to.global.u64 %rd7, %rd2;\n\tshl.b64 %rd8, %rd5, 2;\n\tadd.s64 %rd9, %rd7, %rd8;\n\
         \tld.global.u32 %r4, [%rd9];\n\tmul.lo.s32 %r5, %r4, {scale};\n\tadd.s32 %r5, %r5, {shift};\n\
         \tmul.wide.s32 %rd10, %r5, 4;\n\
         \tcvta.to.global.u64 %rd11, %rd1;\n\tcvta.to.global.u64 %rd12, %rd3;\n\
         \t{access}\n$done:\n\tret;\n}}\n"
    )
}

fn spec() -> AbiSpec {
    AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::U32, ElementKind::I32],
        vec![ElementKind::U32],
        Vec::new(),
    )
}

fn bind(device: &Device, text: &str, verified: bool) -> Kernel<Erased, DeviceBound> {
    let described = Kernel::describe(Artifact::ptx(text, "k", spec())).unwrap();
    let loaded = if verified {
        let loaded = described
            .load()
            .unwrap_or_else(|e| panic!("load: {}\n{text}", e.error));
        assert!(loaded.loaded().guarded().is_some(), "not guarded:\n{text}");
        loaded
    } else {
        // SAFETY: bound to the emulator only, which lends a launch nothing but its operands
        // and stops every other access.
        unsafe { described.load_unverified() }.unwrap()
    };
    loaded.bind(device).unwrap()
}

/// One launch over `n` elements: `out` starts as `out0`. Spacer allocations around the
/// operands keep a stray index from landing in another operand.
fn launch(
    device: &Device,
    kernel: &Kernel<Erased, DeviceBound>,
    x: &[u32],
    idx: &[i32],
    out0: &[u32],
) -> Result<Vec<u32>, Error> {
    let spacer = || device.upload(&vec![0u32; 4096]).unwrap();
    let _s0 = spacer();
    let xs = device.upload(x).unwrap();
    let _s1 = spacer();
    let is: DeviceBuffer<i32> = device.upload(idx).unwrap();
    let _s2 = spacer();
    let mut out = device.upload(out0).unwrap();
    let _s3 = spacer();
    let stream = device.default_stream();
    {
        let ins: [Arg<'_>; 2] = [(&xs).into(), (&is).into()];
        let mut outs: [ArgMut<'_>; 1] = [(&mut out).into()];
        kernel.launch(&stream, &ins, &mut outs, &[x.len()], &[])?;
    }
    stream.synchronize()?;
    stream.read(&out)
}

/// [`launch`]'s output even where it faulted: the fault read off the stream first.
fn launch_out(
    device: &Device,
    kernel: &Kernel<Erased, DeviceBound>,
    x: &[u32],
    idx: &[i32],
    out0: &[u32],
) -> Vec<u32> {
    let xs = device.upload(x).unwrap();
    let is: DeviceBuffer<i32> = device.upload(idx).unwrap();
    let mut out = device.upload(out0).unwrap();
    let stream = device.default_stream();
    {
        let ins: [Arg<'_>; 2] = [(&xs).into(), (&is).into()];
        let mut outs: [ArgMut<'_>; 1] = [(&mut out).into()];
        kernel
            .launch(&stream, &ins, &mut outs, &[x.len()], &[])
            .unwrap();
    }
    assert!(matches!(stream.synchronize(), Err(Error::GuardFault(_))));
    stream.read(&out).unwrap()
}

fn device() -> Device {
    Device::emulator_with(EmulatorConfig {
        workers: 1,
        ..EmulatorConfig::default()
    })
}

fn guarded_line(text: &str) -> u32 {
    text.lines()
        .position(|l| l.contains("// <- guarded"))
        .unwrap() as u32
        + 1
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn guarded_runs_equal_unverified_ones_or_report_the_fault(
        form in prop_oneof![
            Just(Form::Gather),
            Just(Form::Scatter),
            Just(Form::ScatterAdd),
            Just(Form::GatherEven),
            Just(Form::GatherOdd),
        ],
        scale in 1i32..4,
        shift in -2i32..3,
        n in 1usize..200,
        seed in any::<u64>(),
        strays in 0usize..3,
    ) {
        let text = ptx(form, scale, shift);
        let device = device();
        let guarded = bind(&device, &text, true);
        let unverified = bind(&device, &text, false);
        // Indices that land in range, and `strays` of them past either end (by up to 300
        // elements: into the spacers, never another operand).
        let mut rng = seed | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // The in-range elements `idx·scale + shift` can reach: `first + scale·k < n`.
        let first = shift.rem_euclid(scale);
        let reachable = (n as i32 - first + scale - 1).div_euclid(scale).max(0);
        let index = |k: i32| (first + scale * k - shift) / scale;
        let mut idx: Vec<i32> = (0..n)
            .map(|_| match reachable {
                0 => 0,
                r => index((next() % r as u64) as i32),
            })
            .collect();
        for _ in 0..strays {
            let at = (next() % n as u64) as usize;
            let far = (next() % 300) as i32 + 1;
            idx[at] = if next() % 2 == 0 {
                (n as i32 - shift).div_euclid(scale) + far
            } else {
                -far
            };
        }
        let x: Vec<u32> = (0..n).map(|i| (i as u32).wrapping_mul(2_654_435_761)).collect();
        let out0 = vec![0xdead_beefu32; n];
        let plain = launch(&device, &unverified, &x, &idx, &out0);
        let checked = launch(&device, &guarded, &x, &idx, &out0);
        let element = |j: i32| i64::from(j) * i64::from(scale) + i64::from(shift);
        let in_range = idx
            .iter()
            .all(|&j| !form.runs(j) || (0..n as i64).contains(&element(j)));
        match (plain, checked) {
            (Ok(a), Ok(b)) => {
                prop_assert!(in_range, "an index out of range passed both");
                prop_assert_eq!(a, b);
            }
            (Err(Error::MemoryFault(_)), Err(Error::GuardFault(fault))) => {
                prop_assert!(!in_range);
                prop_assert_eq!(fault.line, guarded_line(&text), "{}", fault);
                prop_assert_eq!(fault.limit, n as u64);
                // One block: the thread is the element, and it is one that faults.
                let i = fault.thread[0] as usize;
                prop_assert_eq!(fault.block, [0, 0, 0]);
                let j = idx[i];
                prop_assert!(form.runs(j) && !(0..n as i64).contains(&element(j)), "{}", fault);
                prop_assert_eq!(fault.offset, (element(j) * 4) as u64, "{}", fault);
                if form.gathers() {
                    // The launch ran to its end: the faulting loads gave 0.
                    let got = launch_out(&device, &guarded, &x, &idx, &out0);
                    let want: Vec<u32> = idx
                        .iter()
                        .map(|&j| match usize::try_from(element(j)) {
                            _ if !form.runs(j) => 7,
                            Ok(e) if e < n => x[e],
                            _ => 0,
                        })
                        .collect();
                    prop_assert_eq!(got, want);
                }
            }
            (plain, checked) => {
                prop_assert!(false, "unverified {:?}, guarded {:?}\n{}", plain, checked, text);
            }
        }
        // The device stays usable: a launch with every index in range runs clean.
        if reachable > 0 {
            let good: Vec<i32> = (0..n as i32).map(|i| index(i % reachable)).collect();
            prop_assert!(launch(&device, &guarded, &x, &good, &out0).is_ok());
        }
    }
}
