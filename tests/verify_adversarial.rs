//! An adversarial corpus: hand-written kernels, each unsafe for a launch that every launch check
//! allows. For each one, two things are shown:
//!
//! - loaded with `load_unverified` and launched on the emulator, it faults (out of bounds, a
//!   write to an input, a misaligned access, outside shared memory): the attack is real, and the
//!   emulator's memory checker sees it. Where the emulator refuses an instruction the kernel
//!   uses, the case says so and the refusal is asserted instead (or the fault, once it runs it);
//! - `load_proven()` (every access proven) declines it, naming the line of the attack and the
//!   kind of violation;
//! - `load()` declines it the same way, or — where the attack is an access whose operand and
//!   role are proven but whose bounds only the launch decides — guards that line: then the
//!   same launch of the guarded kernel on the emulator reports `Error::GuardFault` instead of
//!   reaching the memory checker (a guard caught the access before it happened).
//!
//! One attack per kernel, named in one line above it. Lines are marked in the PTX itself: the
//! line `load()` must name carries `// <- rejected`, the access the emulator stops at carries
//! `// <- faults` (both marks may share a line). The holes closed by hand before this corpus
//! existed are cases too, so each is a regression test.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam::device::{Arg, ArgMut, EmulatorConfig, StridedView, StridedViewMut};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Error,
    Kernel, LaunchConfig, ParamValue,
};
use jitseam_emu::interp::FaultKind;
use jitseam_verify::RejectKind;

// ---- the harness ---------------------------------------------------------------------------

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// A module with one entry `k`: `params` are its `.param` lines, `body` its instructions.
fn entry(params: &[&str], body: &str) -> String {
    module("", params, body)
}

/// A module with `prelude` (functions, module variables) before entry `k`.
fn module(prelude: &str, params: &[&str], body: &str) -> String {
    let params: Vec<String> = params.iter().map(|p| format!("\t.param {p}")).collect();
    format!(
        "{HEADER}\n{prelude}\n.visible .entry k(\n{}\n)\n{{\n{body}\n}}\n",
        params.join(",\n")
    )
}

/// The kernel's ABI.
enum Abi {
    /// A dense or strided spec: inputs, outputs, params of the spec's ABI.
    Spec(AbiSpec),
    /// A custom signature (its text) and its covered count, if any.
    Custom(&'static str, Option<&'static str>),
}

impl Abi {
    fn spec(&self) -> AbiSpec {
        match self {
            Abi::Spec(spec) => spec.clone(),
            Abi::Custom(signature, covers) => AbiSpec::parse_custom(signature, *covers).unwrap(),
        }
    }
}

/// The scalar ABI: `inputs` and `outputs` of these kinds, no params.
fn scalar(inputs: &[ElementKind], outputs: &[ElementKind]) -> Abi {
    Abi::Spec(AbiSpec::owned(
        AbiKind::Scalar,
        inputs.to_vec(),
        outputs.to_vec(),
        Vec::new(),
    ))
}

/// The scalar ABI with runtime params of these kinds.
fn scalar_with(inputs: &[ElementKind], outputs: &[ElementKind], params: &[ElementKind]) -> Abi {
    Abi::Spec(AbiSpec::owned(
        AbiKind::Scalar,
        inputs.to_vec(),
        outputs.to_vec(),
        params.to_vec(),
    ))
}

/// One operand of a launch: a buffer of `len` elements, lent whole or as a strided window
/// `(offset, shape, strides)`.
#[derive(Debug, Clone)]
struct Operand {
    len: usize,
    window: Option<(usize, Vec<usize>, Vec<isize>)>,
}

fn whole(len: usize) -> Operand {
    Operand { len, window: None }
}

fn window(len: usize, offset: usize, shape: &[usize], strides: &[isize]) -> Operand {
    Operand {
        len,
        window: Some((offset, shape.to_vec(), strides.to_vec())),
    }
}

/// A launch every launch check allows.
#[derive(Debug, Clone, Default)]
struct Launch {
    inputs: Vec<Operand>,
    outputs: Vec<Operand>,
    /// `[n]` for the dense ABIs, the extents for the strided one (unused for custom).
    shape: Vec<usize>,
    params: Vec<ParamValue>,
    /// Custom: the configuration (`None`: one thread per covered element).
    config: Option<LaunchConfig>,
}

/// A dense launch of `n` elements with exact-size operands.
fn dense(n: usize, inputs: usize, outputs: usize) -> Launch {
    Launch {
        inputs: vec![whole(n); inputs],
        outputs: vec![whole(n); outputs],
        shape: vec![n],
        ..Launch::default()
    }
}

/// A custom launch of `config` with these operand lengths (inputs, outputs) and params.
fn custom(
    config: LaunchConfig,
    inputs: &[usize],
    outputs: &[usize],
    params: &[ParamValue],
) -> Launch {
    Launch {
        inputs: inputs.iter().map(|&n| whole(n)).collect(),
        outputs: outputs.iter().map(|&n| whole(n)).collect(),
        params: params.to_vec(),
        config: Some(config),
        ..Launch::default()
    }
}

/// What the emulator does with the kernel loaded without the proof.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// It faults with this kind, at the line marked `// <- faults`.
    Memory(FaultKind),
    /// It refuses the kernel before it runs (loading or binding it fails with an error whose
    /// text contains this); should it ever run it, the launch must fault with the kind instead.
    RefusedOr(&'static str, FaultKind),
    /// It runs the kernel without a fault although a GPU would not (the emulator's own
    /// divergence, named here): the case stands for the verifier alone; should the emulator
    /// ever fault on it, the fault must have this kind.
    NotOnTheEmulator(&'static str, FaultKind),
}

/// One adversarial kernel.
struct Attack {
    ptx: String,
    abi: Abi,
    launch: Launch,
    fault: Fault,
    reject: RejectKind,
}

/// The 1-based line of the only line of `text` marked `// <- …mark…`.
fn marked(text: &str, mark: &str) -> u32 {
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.split_once("// <-").is_some_and(|(_, m)| m.contains(mark)))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "`{mark}` must mark exactly one line:\n{text}"
    );
    lines[0] as u32
}

macro_rules! buffers {
    ($($kind:ident($ty:ty): input $input:expr, sentinel $sentinel:expr;)*) => {
        /// A device buffer of any element kind the corpus uses.
        enum Buf {
            $($kind(DeviceBuffer<$ty>),)*
        }

        /// A strided window of a [`Buf`].
        enum Window<'b> {
            $($kind(StridedView<'b, $ty>),)*
        }

        /// An exclusive strided window of a [`Buf`].
        enum WindowMut<'b> {
            $($kind(StridedViewMut<'b, $ty>),)*
        }

        impl Buf {
            /// `len` elements: varied data for an input, a sentinel for an output.
            fn new(device: &Device, kind: ElementKind, len: usize, output: bool) -> Self {
                match kind {
                    $(ElementKind::$kind => {
                        let fill: fn(usize) -> $ty = if output { |_| $sentinel } else { $input };
                        let data: Vec<$ty> = (0..len).map(fill).collect();
                        Self::$kind(device.upload(&data).unwrap())
                    })*
                    other => panic!("no buffers of {other:?} in this corpus"),
                }
            }

            fn arg(&self) -> Arg<'_> {
                match self { $(Self::$kind(b) => b.into(),)* }
            }

            fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(Self::$kind(b) => b.into(),)* }
            }

            fn window(&self, (offset, shape, strides): &(usize, Vec<usize>, Vec<isize>)) -> Window<'_> {
                match self { $(Self::$kind(b) => Window::$kind(b.strided(*offset, shape, strides).unwrap()),)* }
            }

            fn window_mut(&mut self, (offset, shape, strides): &(usize, Vec<usize>, Vec<isize>)) -> WindowMut<'_> {
                match self { $(Self::$kind(b) => WindowMut::$kind(b.strided_mut(*offset, shape, strides).unwrap()),)* }
            }
        }

        impl Window<'_> {
            fn arg(&self) -> Arg<'_> {
                match self { $(Self::$kind(v) => v.into(),)* }
            }
        }

        impl WindowMut<'_> {
            fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(Self::$kind(v) => v.into(),)* }
            }
        }
    };
}

buffers! {
    F32(f32): input |i| i as f32 - 3.5, sentinel f32::NAN;
    F64(f64): input |i| i as f64 * 0.5, sentinel f64::NAN;
    U8(u8): input |i| (i * 7) as u8, sentinel u8::MAX;
    U32(u32): input |i| (i as u32).wrapping_mul(2_654_435_761), sentinel u32::MAX;
    I32(i32): input |i| (i as i32).wrapping_mul(-7919), sentinel i32::MIN;
    U64(u64): input |i| (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15), sentinel u64::MAX;
}

/// The emulator every attack runs on: one worker (deterministic lockstep order); its default
/// budget ends a kernel whose loop no longer stops.
fn emulator() -> Device {
    Device::emulator_with(EmulatorConfig {
        workers: 1,
        ..EmulatorConfig::default()
    })
}

/// Launches `kernel` once with `launch`'s operands (inputs varied, outputs sentinel-filled) and
/// waits for it.
fn run(
    device: &Device,
    kernel: &Kernel<Erased, DeviceBound>,
    spec: &AbiSpec,
    launch: &Launch,
) -> Result<(), Error> {
    let inputs: Vec<Buf> = spec
        .inputs
        .iter()
        .zip(&launch.inputs)
        .map(|(&k, op)| Buf::new(device, k, op.len, false))
        .collect();
    let mut outputs: Vec<Buf> = spec
        .outputs
        .iter()
        .zip(&launch.outputs)
        .map(|(&k, op)| Buf::new(device, k, op.len, true))
        .collect();
    let in_windows: Vec<Option<Window<'_>>> = inputs
        .iter()
        .zip(&launch.inputs)
        .map(|(b, op)| op.window.as_ref().map(|w| b.window(w)))
        .collect();
    let in_args: Vec<Arg<'_>> = inputs
        .iter()
        .zip(&in_windows)
        .map(|(b, w)| w.as_ref().map_or_else(|| b.arg(), Window::arg))
        .collect();
    let windowed: Vec<bool> = launch
        .outputs
        .iter()
        .map(|op| op.window.is_some())
        .collect();
    let mut out_windows: Vec<WindowMut<'_>> = Vec::new();
    let mut whole_outs: Vec<&mut Buf> = Vec::new();
    for (b, op) in outputs.iter_mut().zip(&launch.outputs) {
        match &op.window {
            Some(w) => out_windows.push(b.window_mut(w)),
            None => whole_outs.push(b),
        }
    }
    let mut out_windows = out_windows.iter_mut();
    let mut whole_outs = whole_outs.into_iter();
    let mut out_args: Vec<ArgMut<'_>> = windowed
        .iter()
        .map(|&w| {
            if w {
                out_windows.next().unwrap().arg_mut()
            } else {
                whole_outs.next().unwrap().arg_mut()
            }
        })
        .collect();
    let stream = device.default_stream();
    if spec.abi.is_custom() {
        kernel.launch_custom(
            &stream,
            launch.config,
            &in_args,
            &mut out_args,
            &launch.params,
        )?;
    } else {
        kernel.launch(
            &stream,
            &in_args,
            &mut out_args,
            &launch.shape,
            &launch.params,
        )?;
    }
    stream.synchronize()
}

/// Loads `ptx` (entry `k`) with `spec`, with or without the body proof, and binds it.
fn bind(
    device: &Device,
    ptx: &str,
    spec: &AbiSpec,
    verified: bool,
) -> Result<Kernel<Erased, DeviceBound>, Error> {
    let described = Kernel::describe(Artifact::ptx(ptx, "k", spec.clone()))?;
    let loaded = if verified {
        described.load().map_err(|e| e.error)?
    } else {
        // SAFETY: only ever bound to the emulator, which maps nothing but the launch's operands
        // and checks every access against them: a body that strays faults instead of touching
        // host memory.
        unsafe { described.load_unverified() }.map_err(|e| e.error)?
    };
    loaded.bind(device).map_err(|e| e.error)
}

/// Checks one attack: it faults on the emulator unverified, and `load()` declines it at the
/// marked line with the expected kind. Both are found out before either is asserted, so a
/// failure says what each side did.
fn check(attack: Attack) {
    let spec = attack.abi.spec();
    let text = &attack.ptx;
    // The verifier's verdict.
    let described = Kernel::describe(Artifact::ptx(text.as_str(), "k", spec.clone())).unwrap();
    let verdict: Result<String, String> = match described.load_proven() {
        Ok(loaded) => Err(format!(
            "load_proven() accepted it: {:?}",
            loaded.loaded().proof()
        )),
        Err(e) => match e.error {
            Error::BodyRejected { rejection, .. } => {
                let expected = (attack.reject, marked(text, "rejected"));
                if (rejection.kind, rejection.line) == expected {
                    Ok(rejection.to_string())
                } else {
                    Err(format!(
                        "expected {} at line {}, got {rejection}",
                        expected.0, expected.1
                    ))
                }
            }
            other => Err(format!("not a body rejection: {other}")),
        },
    };
    // The attack is real: without the proof, the emulator's memory checker stops it.
    let device = emulator();
    let (kind, refusal, clean) = match attack.fault {
        Fault::Memory(kind) => (kind, None, false),
        Fault::RefusedOr(why, kind) => (kind, Some(why), false),
        Fault::NotOnTheEmulator(_, kind) => (kind, None, true),
    };
    let outcome: Result<String, String> = match (bind(&device, text, &spec, false), refusal) {
        (Err(e), Some(why)) if e.to_string().contains(why) => Ok(format!("refused: {e}")),
        (Err(e), _) => Err(format!("the unverified kernel does not bind: {e}")),
        (Ok(kernel), _) => match run(&device, &kernel, &spec, &attack.launch) {
            Err(Error::MemoryFault(fault)) => {
                if (fault.kind, fault.line) == (kind, marked(text, "faults")) {
                    Ok(fault.to_string())
                } else {
                    Err(format!(
                        "expected a fault ({kind}) at the marked line, got {fault}"
                    ))
                }
            }
            Ok(()) if clean => match attack.fault {
                Fault::NotOnTheEmulator(why, _) => Ok(format!("runs clean on the emulator: {why}")),
                _ => Ok(String::new()),
            },
            other => Err(format!("the unverified launch did not fault: {other:?}")),
        },
    };
    let guarded = guarded_verdict(&attack, &spec, verdict.as_ref().ok().map(String::as_str));
    assert!(
        verdict.is_ok() && outcome.is_ok() && guarded.is_ok(),
        "verifier: {verdict:?}\nemulator: {outcome:?}\nguarded: {guarded:?}\n{text}"
    );
}

/// What `load()` makes of an attack: the decline `load_proven()` gave (`strict`), or a guard on
/// the attack's line whose launch — the attack's own — reports a guard fault on the emulator
/// and never reaches its memory checker.
fn guarded_verdict(
    attack: &Attack,
    spec: &AbiSpec,
    strict: Option<&str>,
) -> Result<String, String> {
    let text = &attack.ptx;
    let line = marked(text, "rejected");
    let described = Kernel::describe(Artifact::ptx(text.as_str(), "k", spec.clone())).unwrap();
    let loaded = match described.load() {
        Err(e) => {
            return match (&e.error, strict) {
                (Error::BodyRejected { rejection, .. }, Some(_))
                    if (rejection.kind, rejection.line) == (attack.reject, line) =>
                {
                    Ok(format!("declined: {rejection}"))
                }
                (other, _) => Err(format!(
                    "load() declined otherwise than load_proven(): {other}"
                )),
            };
        }
        Ok(loaded) => loaded,
    };
    let Some(guarded) = loaded.loaded().guarded() else {
        return Err(format!("load() proved it: {:?}", loaded.loaded().proof()));
    };
    let lines: Vec<u32> = guarded.table().sites.iter().map(|s| s.line).collect();
    if !lines.contains(&line) {
        return Err(format!(
            "guarded at lines {lines:?}, not at the attack's line {line}"
        ));
    }
    // A loop the unverified launch left at its first stray access runs on once its accesses
    // are guarded off: a smaller budget ends it sooner.
    let device = Device::emulator_with(EmulatorConfig {
        workers: 1,
        budget: Some(1 << 20),
        ..EmulatorConfig::default()
    });
    let kernel = loaded
        .bind(&device)
        .map_err(|e| format!("the guarded kernel does not bind: {}", e.error))?;
    let clean = matches!(attack.fault, Fault::NotOnTheEmulator(..));
    match run(&device, &kernel, spec, &attack.launch) {
        Err(Error::GuardFault(fault)) if lines.contains(&fault.line) => {
            // The device is usable after the fault.
            device
                .synchronize()
                .map_err(|e| format!("after the guard fault: {e}"))?;
            Ok(format!("guarded: {fault}"))
        }
        // The guard caught the access; the loop it was in never ended. The fault is in the
        // record, reported by the next synchronization.
        Err(Error::BudgetExceeded { .. }) => match device.synchronize() {
            Err(Error::GuardFault(fault)) if lines.contains(&fault.line) => {
                Ok(format!("guarded, then out of budget: {fault}"))
            }
            other => Err(format!("out of budget without a guard fault: {other:?}")),
        },
        Ok(()) if clean => Ok("guarded, runs clean on the emulator".to_owned()),
        other => Err(format!(
            "the guarded launch did not report a guard fault: {other:?}"
        )),
    }
}

/// One `#[test]` per attack.
macro_rules! attacks {
    ($($(#[$meta:meta])* $name:ident => $attack:expr;)*) => {
        $(
            $(#[$meta])*
            #[test]
            fn $name() {
                check($attack);
            }
        )*
    };
}

// ---- the corpus ----------------------------------------------------------------------------

use ElementKind::{F32, U32};
use FaultKind::{Misaligned, OutOfBounds, OutsideShared, UninitializedShared, WriteToInput};
use RejectKind::{
    CrossedStride, DataDependentIndex, MayWrap, Misaligned as RejMisaligned, OutOfBounds as RejOob,
    StoreThroughInput, UnattributedAddress, Unsupported, WrongWidth,
};

/// The scalar ABI's params for one output: `out`, `n`.
const OUT_N: [&str; 2] = [".u64 k_out", ".u64 k_n"];
/// One input and one output: `in`, `out`, `n`.
const IN_OUT_N: [&str; 3] = [".u64 k_in", ".u64 k_out", ".u64 k_n"];

/// Declarations and the start of a dense body: `%rd1` = out, `%rd2` = n, `%rd3` = the global
/// index `i` (64-bit), `%r3` = `%tid.x`; `%rd10` = in where the entry has one.
const DECLS: &str = "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<16>;\n\
    \t.reg .b64 %rd<32>;\n\t.reg .f32 %f<4>;\n";
const INDEX: &str = "\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_n];\n\
    \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
    \tmad.wide.u32 %rd3, %r1, %r2, 0;\n\tcvt.u64.u32 %rd4, %r3;\n\tadd.s64 %rd3, %rd3, %rd4;\n";
const GUARD: &str = "\tsetp.ge.u64 %p1, %rd3, %rd2;\n\t@%p1 ret;\n";

/// A dense body with the index guarded (`i < n` from here on), then `lines`.
fn guarded(lines: &str) -> String {
    format!("{DECLS}{INDEX}{GUARD}{lines}")
}

/// A dense body with the index computed but not guarded, then `lines`.
fn unguarded(lines: &str) -> String {
    format!("{DECLS}{INDEX}{lines}")
}

/// A guarded dense body that also loads `in` into `%rd10`.
fn guarded_in(lines: &str) -> String {
    format!("{DECLS}\tld.param.u64 %rd10, [k_in];\n{INDEX}{GUARD}{lines}")
}

/// `st.global.f32 [%rd1 + 4·idx]` for the 64-bit element index in `%rd<idx>` (the address in
/// `%rd20`), with `mark` on the store.
fn store_f32(idx: u32, mark: &str) -> String {
    format!(
        "\tshl.b64 %rd19, %rd{idx}, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
         \tst.global.f32 [%rd20], 0f00000000; // <- {mark}\n"
    )
}

/// `st.global.f32` at the signed 32-bit element index in `%r<idx>`.
fn store_f32_s32(idx: u32, mark: &str) -> String {
    format!(
        "\tmul.wide.s32 %rd19, %r{idx}, 4;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
         \tst.global.f32 [%rd20], 0f00000000; // <- {mark}\n"
    )
}

/// `st.global.f32` at the unsigned 32-bit element index in `%r<idx>`.
fn store_f32_u32(idx: u32, mark: &str) -> String {
    format!(
        "\tmul.wide.u32 %rd19, %r{idx}, 4;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
         \tst.global.f32 [%rd20], 0f00000000; // <- {mark}\n"
    )
}

/// The scalar ABI with one f32 output, `n` elements, sentinel-filled.
fn one_out(ptx: String, launch_n: usize, fault: FaultKind, reject: RejectKind) -> Attack {
    Attack {
        ptx,
        abi: scalar(&[], &[F32]),
        launch: dense(launch_n, 0, 1),
        fault: Fault::Memory(fault),
        reject,
    }
}

/// [`one_out`] of the scalar ABI's `out, n` entry with a guarded body of `lines`.
fn guarded_out(lines: &str, launch_n: usize, fault: FaultKind, reject: RejectKind) -> Attack {
    one_out(entry(&OUT_N, &guarded(lines)), launch_n, fault, reject)
}

/// The scalar ABI with one f32 input and one f32 output.
fn in_out(ptx: String, launch_n: usize, fault: FaultKind, reject: RejectKind) -> Attack {
    Attack {
        ptx,
        abi: scalar(&[F32], &[F32]),
        launch: dense(launch_n, 1, 1),
        fault: Fault::Memory(fault),
        reject,
    }
}

/// `out: out u32[n], n: u32` with `%rd1` = out, `%r4` = n, `%r5` = the global x index, guarded
/// by `%r5 < n`, then `lines`.
fn custom_guarded(lines: &str) -> String {
    entry(
        &[".u64 k_out", ".u32 k_n"],
        &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\
             \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
             \tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tsetp.ge.u32 %p1, %r5, %r4;\n\t@%p1 ret;\n{lines}"
        ),
    )
}

/// `out[k]` in a loop whose `depth` guards `r_j < p_j` (params `p1..`) test `r_j = k·2^(32−j)`:
/// each bounds `k` only if `r_j` reads exactly, which needs the bound of the guard before; the
/// first never does.
fn invariant_chain(depth: u32) -> String {
    let mut params = vec![".u64 k_out".to_owned()];
    let (mut init, mut guards, mut steps) = (String::new(), String::new(), String::new());
    for j in 1..=depth {
        params.push(format!(".u32 k_p{j}"));
        init.push_str(&format!(
            "\tld.param.u32 %r{}, [k_p{j}];\n\tmov.u32 %r{j}, 0;\n",
            10 + j
        ));
        guards.push_str(&format!(
            "\tsetp.ge.u32 %p{j}, %r{j}, %r{};\n\t@%p{j} bra $L_done;\n",
            10 + j
        ));
        steps.push_str(&format!("\tadd.u32 %r{j}, %r{j}, {};\n", 1u64 << (32 - j)));
    }
    let params: Vec<&str> = params.iter().map(String::as_str).collect();
    entry(
        &params,
        &format!(
            "\t.reg .pred %p<10>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<8>;\n\
             \tld.param.u64 %rd1, [k_out];\n{init}\tmov.u32 %r20, 0;\n$L_loop:\n\
             \tmul.wide.u32 %rd2, %r20, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
             \tst.global.u32 [%rd3], %r20; // <- rejected, faults\n\
             {guards}{steps}\tadd.u32 %r20, %r20, 1;\n\tbra $L_loop;\n$L_done:\n\tret;\n"
        ),
    )
}

/// Rank-2 strided params for one output: `out`, the shape, the output's strides, `n`.
const STRIDED_OUT: [&str; 6] = [
    ".u64 k_out",
    ".u64 k_s0",
    ".u64 k_s1",
    ".u64 k_t0",
    ".u64 k_t1",
    ".u64 k_n",
];

/// A rank-2 strided kernel with one f32 output (`%rd1` = out, then `lines`), launched over the
/// output window `output`, whose shape is the launch's.
fn strided_out(lines: &str, output: Operand, reject: RejectKind) -> Attack {
    let shape = output
        .window
        .as_ref()
        .map(|w| w.1.clone())
        .unwrap_or_default();
    Attack {
        ptx: entry(
            &STRIDED_OUT,
            &format!("{DECLS}\tld.param.u64 %rd1, [k_out];\n{lines}"),
        ),
        abi: Abi::Spec(AbiSpec::owned(
            AbiKind::Strided { rank: 2 },
            vec![],
            vec![F32],
            vec![],
        )),
        launch: Launch {
            outputs: vec![output],
            shape,
            ..Launch::default()
        },
        fault: Fault::Memory(OutOfBounds),
        reject,
    }
}

const OUT_U32_N: &str = "out: out u32[n], n: u32";

/// A static shared array of 32 `u32` slots, and the dynamic shared array.
const XOR_STATIC: (&str, &str) = ("", "\t.shared .align 4 .b8 s[128];\n\tmov.u64 %rd6, s;\n");
const XOR_DYNAMIC: (&str, &str) = (
    ".extern .shared .align 4 .b8 dyn[];\n",
    "\tmov.u64 %rd6, dyn;\n",
);

/// `shared[tid ^ j] = i` over `out: out u32[n]`, one block of `threads` threads (`n` of them)
/// with `dyn_bytes` of dynamic shared memory: the partner `tid ^ j` is past the array, and
/// `load()` rejects the store as `reject`.
fn xor_partner(
    (prelude, var): (&str, &str),
    j: &str,
    threads: u32,
    dyn_bytes: u32,
    reject: RejectKind,
) -> Attack {
    let body = format!(
        "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\
         \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
         \tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tsetp.ge.u32 %p1, %r5, %r4;\n\t@%p1 ret;\n{var}\
         \txor.b32 %r6, %r3, {j};\n\tmul.wide.u32 %rd5, %r6, 4;\n\tadd.s64 %rd7, %rd6, %rd5;\n\
         \tst.shared.u32 [%rd7], %r5; // <- rejected, faults\n"
    );
    Attack {
        ptx: module(prelude, &[".u64 k_out", ".u32 k_n"], &body),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom(
            LaunchConfig::linear(1, threads).dynamic_shared_bytes(dyn_bytes),
            &[],
            &[threads as usize],
            &[ParamValue::U32(threads)],
        ),
        fault: Fault::Memory(OutsideShared),
        reject,
    }
}

/// One block of `threads` threads over `out: out u32[n]` with `len = n` elements.
fn custom_one_block(threads: u32, n: u32) -> Launch {
    custom(
        LaunchConfig::linear(1, threads),
        &[],
        &[n as usize],
        &[ParamValue::U32(n)],
    )
}

/// `out[(m + b) − (m | b)]` over `out: out f32[n]`, two threads: `m` in `%r6` and `b` in
/// `%r10` (or the immediate `b`), computed by `lines`. Bits of `m` and `b` that overlap make the
/// difference positive for thread 1, past `n = 2`; the `or` must not be taken for the sum.
fn overlapping_or(lines: &str, b: &str) -> Attack {
    Attack {
        ptx: custom_guarded(&format!(
            "{lines}\tor.b32 %r7, %r6, {b};\n\tadd.s32 %r8, %r6, {b};\n\tsub.s32 %r9, %r8, %r7;\n{}",
            store_f32_u32(9, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: u32", None),
        launch: custom_one_block(2, 2),
        fault: Fault::Memory(OutOfBounds),
        reject: MayWrap,
    }
}

attacks! {
    // ---- bounds and integer widths -----------------------------------------------------

    // `out[i + 1]`: one past the end for the last thread.
    one_past_the_end => guarded_out(
        "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd1, %rd5;\n\
             \tst.global.f32 [%rd6+4], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // No guard at all: the grid's 256 threads store into 10 elements.
    no_guard => one_out(
        entry(&OUT_N, &unguarded(&store_f32(3, "rejected, faults"))),
        10, OutOfBounds, RejOob,
    );
    // `n = 0` and an unconditional store of element 0.
    store_with_no_elements => one_out(
        entry(&OUT_N, &format!("{DECLS}{INDEX}\tst.global.f32 [%rd1], 0f00000000; // <- rejected, faults\n")),
        0, OutOfBounds, RejOob,
    );
    // `i ≤ n` instead of `i < n`.
    guard_off_by_one => one_out(
        entry(&OUT_N, &unguarded(&format!(
            "\tsetp.gt.u64 %p1, %rd3, %rd2;\n\t@%p1 ret;\n{}", store_f32(3, "rejected, faults")
        ))),
        10, OutOfBounds, RejOob,
    );
    // A signed guard on an unsigned quantity: `n` read as `s64` is fine, but the index
    // `i − 1` compared signed passes for `i = 0` and stores at −1.
    signed_guard_negative_index => guarded_out(
        &format!(
            "\tadd.s64 %rd5, %rd3, -1;\n\tsetp.ge.s64 %p2, %rd5, %rd2;\n\t@%p2 ret;\n{}",
            store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // A 32-bit index pushed past 2^31: `mul.wide.s32` reads it negative.
    int32_index_wraps_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -2147483648;\n{}", store_f32_s32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // 16-bit arithmetic wraps: `tid + 65535` is `tid − 1` mod 2^16, 65535 for thread 0.
    u16_index_wraps => guarded_out(
        "\tcvt.u16.u32 %rs1, %r3;\n\tadd.u16 %rs2, %rs1, 65535;\n\tcvt.u64.u16 %rd5, %rs2;\n\
             \tshl.b64 %rd19, %rd5, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \tst.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, MayWrap,
    );
    // `i · 2^61` wraps modulo 2^64: byte offset 2^63 for `i = 1`.
    shl_wraps_64 => guarded_out(
        &format!(
            "\tshl.b64 %rd5, %rd3, 61;\n{}", store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // An arithmetic shift of a negative index: `(tid − 8) >> 1` is −4 for thread 0.
    shr_of_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -8;\n\tshr.s32 %r6, %r5, 1;\n{}", store_f32_s32(6, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // A logical shift of a negative index: `(tid − 1) >>u 1` is 2^31 − 1 for thread 0.
    shr_unsigned_of_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -1;\n\tshr.u32 %r6, %r5, 1;\n{}", store_f32_u32(6, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // A remainder of a negative dividend is negative: `(tid − 5) rem 4` is −1 for thread 0.
    rem_of_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -5;\n\trem.s32 %r6, %r5, 4;\n{}", store_f32_s32(6, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `mul.hi` of `tid` and −1 is −1 for every thread but 0.
    mul_hi_index => guarded_out(
        &format!(
            "\tmul.hi.s32 %r5, %r3, -1;\n{}", store_f32_s32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `−tid`.
    neg_index => guarded_out(
        &format!(
            "\tneg.s32 %r5, %r3;\n{}", store_f32_s32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // `|tid − 2^31|` is still −2^31 for thread 0.
    abs_of_min_int => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -2147483648;\n\tabs.s32 %r6, %r5;\n{}", store_f32_s32(6, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `~tid` is `−tid − 1`.
    not_index => guarded_out(
        &format!(
            "\tnot.b32 %r5, %r3;\n{}", store_f32_s32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // `i ^ 1` is `n` for `i = n − 1` when `n` is odd.
    xor_index => guarded_out(
        &format!(
            "\txor.b64 %rd5, %rd3, 1;\n{}", store_f32(5, "rejected, faults")
        ),
        9, OutOfBounds, RejOob,
    );
    // `i | 16` is at least 16.
    or_index => guarded_out(
        &format!(
            "\tor.b64 %rd5, %rd3, 16;\n{}", store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // A bit field of all ones: 4095.
    bfe_index => guarded_out(
        &format!(
            "\tbfe.u32 %r5, -1, 0, 12;\n{}", store_f32_u32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // A byte permutation of the index: `tid` byte-reversed is 2^24 for thread 1.
    prmt_index => guarded_out(
        &format!(
            "\tprmt.b32 %r5, %r3, 0, 291;\n{}", store_f32_u32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `n / d` for a param `d`: `n` itself when `d = 1`.
    div_by_a_param => Attack {
        ptx: entry(&[".u64 k_out", ".u32 k_n", ".u32 k_d"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\tld.param.u32 %r6, [k_d];\n\
             \tmov.u32 %r3, %tid.x;\n\tsetp.ge.u32 %p1, %r3, %r4;\n\t@%p1 ret;\n\
             \tsetp.eq.u32 %p2, %r6, 0;\n\t@%p2 ret;\n\tdiv.u32 %r7, %r4, %r6;\n{}",
            store_f32_u32(7, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: u32, d: u32", None),
        launch: custom(LaunchConfig::linear(1, 32), &[], &[10], &[ParamValue::U32(10), ParamValue::U32(1)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };

    // ---- carries -------------------------------------------------------------------------

    // The carry out of `i + (2^32 − 1)` (1 for every `i ≥ 1`) added to the index: `n` for the
    // last thread. (An emulator without extended-precision arithmetic refuses `add.cc`; the
    // ported one runs it, and faults here.)
    carry_added_to_the_index => Attack {
        ptx: entry(&OUT_N, &guarded(&format!(
            "\tcvt.u32.u64 %r5, %rd3;\n\tadd.cc.u32 %r6, %r5, -1;\n\taddc.u32 %r7, 0, 0;\n\
             \tcvt.u64.u32 %rd5, %r7;\n\tadd.s64 %rd6, %rd3, %rd5;\n{}",
            store_f32(6, "rejected, faults")
        ))),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("add", OutOfBounds),
        reject: RejOob,
    };
    // A borrow subtracted from the index: −1 for thread 0 (`0 − 1` borrows).
    borrow_subtracted_from_the_index => Attack {
        ptx: entry(&OUT_N, &guarded(&format!(
            "\tsub.cc.u32 %r5, 0, 1;\n\tsubc.u32 %r6, %r3, 0;\n{}",
            store_f32_s32(6, "rejected, faults")
        ))),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("sub", OutOfBounds),
        reject: RejOob,
    };

    // ---- predicates and boolean ops ----------------------------------------------------

    // A negated guard: the store runs exactly where it must not.
    negated_guard => one_out(
        entry(&OUT_N, &unguarded("\tsetp.lt.u64 %p1, %rd3, %rd2;\n\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \t@!%p1 st.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n")),
        10, OutOfBounds, RejOob,
    );
    // `(i < n) || (tid ≥ 0)` guards nothing.
    or_of_guards => one_out(
        entry(&OUT_N, &unguarded("\tsetp.lt.u64 %p1, %rd3, %rd2;\n\tsetp.ge.u32 %p2, %r3, 0;\n\tor.pred %p3, %p1, %p2;\n\
             \tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \t@%p3 st.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n")),
        10, OutOfBounds, RejOob,
    );
    // `xor` of the guard with a true predicate is its negation.
    xor_of_guards => one_out(
        entry(&OUT_N, &unguarded("\tsetp.lt.u64 %p1, %rd3, %rd2;\n\tsetp.ge.u32 %p2, %r3, 0;\n\txor.pred %p3, %p1, %p2;\n\
             \tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \t@%p3 st.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n")),
        10, OutOfBounds, RejOob,
    );
    // `setp.lt.or p|q, i, n, c` with `c` always true: `q = !(i < n) || c` is true everywhere
    // (it was taken for `!(i < n || c)`, false everywhere, so the store looked dead).
    setp_complement_combines_after_negating => one_out(
        entry(&OUT_N, &unguarded("\tsetp.ge.u32 %p3, %r3, 0;\n\tsetp.lt.or.u64 %p1|%p2, %rd3, %rd2, %p3;\n\
             \tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \t@%p2 st.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n")),
        10, OutOfBounds, RejOob,
    );
    // `setp.lt.and p|p, i, n, c`: the complement is written last, so `p = !(i < n) && c`
    // (it was taken for the first write, `i < n && c`).
    setp_same_destination_twice => one_out(
        entry(&OUT_N, &unguarded("\tsetp.ge.u32 %p3, %r3, 0;\n\tsetp.lt.and.u64 %p1|%p1, %rd3, %rd2, %p3;\n\
             \tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \t@%p1 st.global.f32 [%rd20], 0f00000000; // <- rejected, faults\n")),
        10, OutOfBounds, RejOob,
    );
    // A select between `i` and `n`: `n` where the predicate is false.
    selp_of_the_bound => guarded_out(
        &format!(
            "\tsetp.lt.u32 %p2, %r3, 4;\n\tselp.b64 %rd5, %rd3, %rd2, %p2;\n{}",
            store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // A select between the input and the output pointer, stored through.
    selp_of_two_pointers => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tsetp.lt.u32 %p2, %r3, 4;\n\tselp.b64 %rd5, %rd10, %rd1, %p2;\n\
             \tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        )),
        10, WriteToInput, UnattributedAddress,
    );
    // `max` of the output pointer and 4 KiB past it.
    max_of_pointers => guarded_out(
        "\tadd.s64 %rd5, %rd1, 4096;\n\tmax.u64 %rd6, %rd1, %rd5;\n\
             \tst.global.f32 [%rd6], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // A guard computed from loaded data, and the index too.
    index_from_data => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\tld.global.u32 %r5, [%rd6];\n\
             \tmul.wide.u32 %rd7, %r5, 4;\n\tadd.s64 %rd8, %rd1, %rd7;\n\
             \tst.global.f32 [%rd8], 0f00000000; // <- rejected, faults\n",
        )),
        10, OutOfBounds, DataDependentIndex,
    );

    // ---- vector forms --------------------------------------------------------------------

    // `ld.param.v2.u8` of a half param writes both registers: the second is the high byte of
    // the value (2.0 is 0x4000: 64), not the 0 an earlier `mov` put there (a vector
    // `ld.param` was taken to write only its first register).
    ld_param_v2_writes_every_register => Attack {
        ptx: entry(&[".u64 k_out", ".u64 k_n", ".align 2 .b8 k_h[2]"], &guarded(&format!(
            "\tmov.u16 %rs2, 0;\n\tld.param.v2.u8 {{%rs1, %rs2}}, [k_h];\n\tcvt.u64.u16 %rd5, %rs2;\n{}",
            store_f32(5, "rejected, faults")
        ))),
        abi: scalar_with(&[], &[F32], &[ElementKind::F16]),
        launch: Launch {
            params: vec![ParamValue::F16(jitseam::__private::half::f16::from_f32(2.0))],
            ..dense(10, 0, 1)
        },
        fault: Fault::Memory(OutOfBounds),
        reject: DataDependentIndex,
    };
    // `ld.param.v2.u32` of `out`: its two halves, put back together swapped.
    ld_param_v2_halves_swapped => guarded_out(
        "\tld.param.v2.u32 {%r5, %r6}, [k_out];\n\tmov.b64 %rd5, {%r6, %r5};\n\
             \tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // An 8-byte vector store through a 4-byte-element operand: misaligned for thread 1, past
    // the end for the last.
    st_v2_through_scalar_elements => guarded_out(
        "\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \tmov.f32 %f1, 0f00000000;\n\tst.global.v2.f32 [%rd20], {%f1, %f1}; // <- rejected, faults\n",
        10, Misaligned, WrongWidth,
    );
    // A 16-byte vector load of the input at `16·i`: past the end from `i = n/4` on.
    ld_v4_past_the_input => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 4;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tld.global.v4.f32 {%f1, %f2, %f3, %f3}, [%rd6]; // <- rejected, faults\n",
        )),
        16, OutOfBounds, WrongWidth,
    );
    // The vectorized ABI: a `float4` access 4 bytes off its vector.
    vector_abi_off_its_vector => Attack {
        ptx: entry(&OUT_N, &guarded(
            "\tshl.b64 %rd19, %rd3, 4;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tmov.f32 %f1, 0f00000000;\n\
             \tst.global.v4.f32 [%rd20+4], {%f1, %f1, %f1, %f1}; // <- rejected, faults\n",
        )),
        abi: Abi::Spec(AbiSpec::owned(AbiKind::Vectorized { width: 4 }, vec![], vec![F32], vec![])),
        launch: dense(16, 0, 1),
        fault: Fault::Memory(Misaligned),
        reject: RejMisaligned,
    };

    // ---- the param space -----------------------------------------------------------------

    // `mov` of a `.param` name is its address in the param space, not its value (it was taken
    // for the pointer it holds).
    mov_of_a_param_name => guarded_out(
        "\tmov.u64 %rd5, k_out;\n\tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, WriteToInput, UnattributedAddress,
    );
    // `ld.param` through a register holding a param's address (it was taken for a copy of the
    // register): here it reads `n`, used as an address.
    ld_param_through_a_register => guarded_out(
        "\tmov.u64 %rd5, k_out;\n\tld.param.u64 %rd6, [%rd5+8]; // <- rejected\n\
             \tst.global.f32 [%rd6], 0f00000000; // <- faults\n",
        16, OutOfBounds, Unsupported,
    );
    // The high half of a pointer (4 bytes into its param), widened: another address entirely.
    ld_param_pointer_at_offset_4 => guarded_out(
        "\tld.param.u32 %r5, [k_out+4];\n\tcvt.u64.u32 %rd5, %r5;\n\
             \tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // The low half of a pointer, widened again: another address entirely.
    ld_param_low_half_of_a_pointer => guarded_out(
        "\tld.param.u32 %r5, [k_out];\n\tcvt.u64.u32 %rd5, %r5;\n\
             \tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // The count used as an address.
    count_as_a_pointer => guarded_out(
        "\tst.global.f32 [%rd2], 0f00000000; // <- rejected, faults\n",
        16, OutOfBounds, UnattributedAddress,
    );
    // A runtime value param as the index.
    value_param_as_the_index => Attack {
        ptx: entry(&[".u64 k_out", ".u64 k_n", ".u32 k_v"], &guarded(&format!(
            "\tld.param.u32 %r5, [k_v];\n{}", store_f32_u32(5, "rejected, faults")
        ))),
        abi: scalar_with(&[], &[F32], &[U32]),
        launch: Launch { params: vec![ParamValue::U32(1000)], ..dense(10, 0, 1) },
        fault: Fault::Memory(OutOfBounds),
        reject: DataDependentIndex,
    };
    // A pointer through a 4-byte store into a `.param` variable, read back as 8 bytes: its
    // high half is not the pointer's (a pointer through 32 bits kept its provenance).
    pointer_through_st_param_b32 => guarded_out(
        "\t{\n\t.param .b64 t;\n\tst.param.b32 [t], %rd1;\n\tld.param.b64 %rd5, [t];\n\t}\n\
             \tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );

    // ---- addresses narrower than 64 bits -------------------------------------------------

    // 32-bit arithmetic on a pointer keeps its low half: `add.u32` of the output pointer is no
    // address of it.
    pointer_through_32_bit_add => guarded_out(
        "\tadd.u32 %r5, %rd1, 0;\n\tst.global.f32 [%r5], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // The same through `sub.u32` and back to 64 bits with `add.s64`.
    pointer_through_32_bit_sub => guarded_out(
        "\tsub.u32 %r5, %rd1, 0;\n\tcvt.u64.u32 %rd5, %r5;\n\tadd.s64 %rd6, %rd5, 0;\n\
             \tst.global.f32 [%rd6], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // `selp.b32` of a pointer keeps its low half (on a GPU, whose 32-bit register holds no
    // more; the emulator's `selp` copies all 64 bits of its source).
    pointer_through_32_bit_selp => Attack {
        ptx: entry(&OUT_N, &guarded(
            "\tsetp.lt.u32 %p2, %r3, 4;\n\tselp.b32 %r5, %rd1, %rd1, %p2;\n\
             \tst.global.f32 [%r5], 0f00000000; // <- rejected, faults\n",
        )),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::NotOnTheEmulator("selp does not truncate its sources", OutOfBounds),
        reject: UnattributedAddress,
    };
    // A 32-bit `cvta` of a pointer keeps its low half. (The emulator refuses 32-bit `cvta`.)
    pointer_through_32_bit_cvta => Attack {
        ptx: entry(&OUT_N, &guarded(
            "\tcvta.to.global.u32 %r5, %rd1;\n\tst.global.f32 [%r5], 0f00000000; // <- rejected, faults\n",
        )),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("32-bit addresses", OutOfBounds),
        reject: UnattributedAddress,
    };

    // The high-word test `(a | b) & ~0xffffffff == 0` on a 32-bit `or`, read by the 64-bit
    // `and` from its 32-bit register: always true, yet it was taken to prove each part (here
    // `tid − 1`) in `[0, 2^32)`, and `out[tid − 1]` in bounds.
    high_word_test_of_a_32_bit_or => Attack {
        ptx: custom_guarded(
            "\tadd.s32 %r6, %r3, -1;\n\tor.b32 %r7, %r6, %r3;\n\tand.b64 %rd6, %r7, -4294967296;\n\
             \tsetp.ne.s64 %p2, %rd6, 0;\n\t@%p2 ret;\n\tmul.wide.s32 %rd19, %r6, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(8, 8),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };

    // ---- address spaces, cvta, generic addressing ----------------------------------------

    // A store to a fixed address.
    absolute_address => guarded_out(
        "\tst.global.u32 [4096], %r3; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );
    // A generic store through the input pointer.
    generic_store_through_the_input => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tst.f32 [%rd6], 0f00000000; // <- rejected, faults\n",
        )),
        10, WriteToInput, StoreThroughInput,
    );
    // An atomic on the input.
    atomic_on_the_input => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tatom.global.add.f32 %f1, [%rd6], 0f3F800000; // <- rejected, faults\n",
        )),
        10, WriteToInput, StoreThroughInput,
    );
    // `cvta.to.global` is the identity: past the end stays past the end.
    cvta_to_global_keeps_the_offset => guarded_out(
        "\tcvta.to.global.u64 %rd5, %rd1;\n\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd5, %rd19;\n\
             \tst.global.f32 [%rd20+40], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // A global pointer used in the shared space.
    global_pointer_in_the_shared_space => guarded_out(
        "\tst.shared.u32 [%rd1], %r3; // <- rejected, faults\n",
        10, OutsideShared, UnattributedAddress,
    );
    // A module `.global` variable holding a pointer past the output's end.
    pointer_through_a_module_variable => one_out(
        module(".global .align 8 .u64 g;\n", &OUT_N, &guarded(
            "\tadd.s64 %rd5, %rd1, 4096;\n\tst.global.u64 [g], %rd5; // <- rejected\n\
             \tld.global.u64 %rd6, [g];\n\tst.global.f32 [%rd6], 0f00000000; // <- faults\n",
        )),
        10, OutOfBounds, Unsupported,
    );
    // `isspacep` is not a bound.
    isspacep_is_not_a_bound => guarded_out(
        "\tadd.s64 %rd5, %rd1, 4096;\n\tisspacep.global %p2, %rd5; // <- rejected\n\
             \t@%p2 st.f32 [%rd5], 0f00000000; // <- faults\n",
        10, OutOfBounds, Unsupported,
    );

    // ---- calls and `.func` parameters ----------------------------------------------------

    // A `.func` storing through its pointer argument, given the input.
    func_stores_through_the_input => in_out(
        module(
            ".func store(.param .b64 p)\n{\n\t.reg .b64 %a;\n\tld.param.b64 %a, [p];\n\
             \tst.global.f32 [%a], 0f00000000; // <- rejected, faults\n\tret;\n}\n",
            &IN_OUT_N,
            &guarded_in("\t{\n\t.param .b64 arg;\n\tst.param.b64 [arg], %rd10;\n\tcall store, (arg);\n\t}\n"),
        ),
        10, WriteToInput, StoreThroughInput,
    );
    // A pointer passed in a `.reg .b32` parameter is its low half.
    pointer_through_a_b32_reg_param => one_out(
        module(
            ".func store(.reg .b32 p)\n{\n\t.reg .b64 %a;\n\tcvt.u64.u32 %a, p;\n\
             \tst.global.f32 [%a], 0f00000000; // <- rejected, faults\n\tret;\n}\n",
            &OUT_N,
            &guarded("\tcall store, (%rd1);\n"),
        ),
        10, OutOfBounds, UnattributedAddress,
    );
    // A pointer passed in a `.param .b32` argument, read back as 8 bytes: past the param's end.
    // (The emulator refuses it too.)
    pointer_through_a_b32_param => Attack {
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("parameter accesses", OutOfBounds),
        reject: Unsupported,
        ptx:
        module(
            ".func store(.param .b32 p)\n{\n\t.reg .b64 %a;\n\tld.param.b64 %a, [p]; // <- rejected\n\
             \tst.global.f32 [%a], 0f00000000; // <- faults\n\tret;\n}\n",
            &OUT_N,
            &guarded("\t{\n\t.param .b64 arg;\n\tst.param.b64 [arg], %rd1;\n\tcall store, (arg);\n\t}\n"),
        ),
    };
    // A pointer returned through a 4-byte return param: 8 bytes stored into 4 (taken for the
    // whole pointer). The emulator refuses an access past a param's end.
    pointer_returned_through_b32 => Attack {
        ptx: module(
            ".func (.param .b32 r) id(.param .b64 p)\n{\n\t.reg .b64 %a;\n\tld.param.b64 %a, [p];\n\
             \tst.param.b64 [r], %a; // <- rejected\n\tret;\n}\n",
            &OUT_N,
            &guarded(
                "\t{\n\t.param .b64 arg;\n\t.param .b64 ret;\n\tst.param.b64 [arg], %rd1;\n\
                 \tcall (ret), id, (arg);\n\tld.param.b64 %rd5, [ret];\n\t}\n\
                 \tst.global.f32 [%rd5], 0f00000000; // <- faults\n",
            ),
        ),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("parameter accesses", OutOfBounds),
        reject: Unsupported,
    };
    // `exit` in a `.func` ends the thread: here it ends every thread in bounds, and the rest
    // store.
    exit_in_a_func => one_out(
        module(
            ".func check(.reg .b64 i, .reg .b64 n)\n{\n\t.reg .pred %q;\n\tsetp.lt.u64 %q, i, n;\n\
             \t@%q exit;\n\tret;\n}\n",
            &OUT_N,
            &unguarded(&format!("\tcall check, (%rd3, %rd2);\n{}", store_f32(3, "rejected, faults"))),
        ),
        10, OutOfBounds, RejOob,
    );

    // ---- loops -----------------------------------------------------------------------------

    // A loop stepping by 2 that exits on `j == n`: for odd `n` it steps over `n` and on.
    loop_stepping_over_its_exit => one_out(
        entry(&OUT_N, &unguarded(&format!(
            "\tmov.u64 %rd5, %rd3;\n$L_loop:\n\tsetp.eq.u64 %p1, %rd5, %rd2;\n\t@%p1 bra $L_done;\n{}\
             \tadd.s64 %rd5, %rd5, 2;\n\tbra $L_loop;\n$L_done:\n\tret;\n",
            store_f32(5, "rejected, faults")
        ))),
        9, OutOfBounds, RejOob,
    );
    // A grid-stride loop whose second store, after the step, is not re-checked.
    loop_second_store_after_the_step => one_out(
        entry(&OUT_N, &unguarded(
            "\tmov.u32 %r6, %nctaid.x;\n\tmul.wide.u32 %rd7, %r6, %r2;\n\tmov.u64 %rd5, %rd3;\n\
             $L_loop:\n\tsetp.ge.u64 %p1, %rd5, %rd2;\n\t@%p1 bra $L_done;\n\
             \tshl.b64 %rd19, %rd5, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.f32 [%rd20], 0f00000000;\n\
             \tadd.s64 %rd5, %rd5, %rd7;\n\
             \tshl.b64 %rd21, %rd5, 2;\n\tadd.s64 %rd22, %rd1, %rd21;\n\
             \tst.global.f32 [%rd22], 0f00000000; // <- rejected, faults\n\
             \tbra $L_loop;\n$L_done:\n\tret;\n",
        )),
        300, OutOfBounds, RejOob,
    );
    // An unsigned count-down loop `j ≥ 0`: always true, `j` wraps to 2^32 − 1.
    loop_unsigned_count_down => guarded_out(
        &format!(
            "\tmov.u32 %r5, %r3;\n$L_loop:\n{}\tadd.s32 %r5, %r5, -1;\n\
             \tsetp.ge.u32 %p2, %r5, 0;\n\t@%p2 bra $L_loop;\n\tret;\n",
            store_f32_u32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // Two exits, the second of which is taken only after the store past the end.
    loop_two_exits => guarded_out(
        &format!(
            "\tmov.u64 %rd5, %rd3;\n$L_loop:\n{}\tadd.s64 %rd5, %rd5, 1;\n\
             \tsetp.eq.u64 %p2, %rd5, 1000;\n\t@%p2 bra $L_done;\n\
             \tsetp.lt.u64 %p3, %rd5, 500;\n\t@%p3 bra $L_loop;\n$L_done:\n\tret;\n",
            store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // A loop bounded by a value loaded from memory (the input's first word, 0xC0600000 as
    // bits), not by `n`.
    loop_bound_from_data => in_out(
        entry(&IN_OUT_N, &guarded_in(&format!(
            "\tld.global.u32 %r5, [%rd10];\n\tcvt.u64.u32 %rd6, %r5;\n\tmov.u64 %rd5, %rd3;\n\
             $L_loop:\n\tsetp.ge.u64 %p2, %rd5, %rd6;\n\t@%p2 bra $L_done;\n{}\
             \tadd.s64 %rd5, %rd5, 1;\n\tbra $L_loop;\n$L_done:\n\tret;\n",
            store_f32(5, "rejected, faults")
        ))),
        10, OutOfBounds, RejOob,
    );

    // Loop invariants that each hold only given the one before, seven deep: `r_j = k·2^(32−j)`
    // reads exactly (so its guard `r_j < p_j` bounds `k`) only while the guard before bounds
    // `k`, and the first never does. Refinement dropped one candidate per round and stopped
    // after six, keeping the last unproven: `k ≤ 256` at the head, so `out[k]` looked in
    // bounds of 257 elements; with every `p_j = 2^32 − 1` the loop never ends.
    loop_invariants_that_need_many_rounds => Attack {
        ptx: invariant_chain(8),
        abi: Abi::Custom(
            "out: out u32[257], p1: u32, p2: u32, p3: u32, p4: u32, p5: u32, p6: u32, p7: u32, p8: u32",
            None,
        ),
        launch: custom(LaunchConfig::linear(1, 1), &[], &[257], &[ParamValue::U32(u32::MAX); 8]),
        fault: Fault::Memory(OutOfBounds),
        reject: MayWrap,
    };

    // `for (s = n; s > 0; s >>= 1) out[s]`: `out[n]` first.
    halving_loop_from_n => guarded_out(
        &format!(
            "\tsetp.ne.u64 %p2, %rd3, 0;\n\t@%p2 ret;\n\tmov.u64 %rd5, %rd2;\n$L_loop:\n\
             \tsetp.eq.u64 %p3, %rd5, 0;\n\t@%p3 bra $L_done;\n{}\tshr.u64 %rd5, %rd5, 1;\n\tbra $L_loop;\n\
             $L_done:\n\tret;\n",
            store_f32(5, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // A loop unrolled by two whose tail stores one stride too far: `out[i + S]` under `i < n`.
    unrolled_tail_one_stride_too_far => one_out(
        entry(&OUT_N, &unguarded(
            "\tmov.u32 %r6, %nctaid.x;\n\tmul.wide.u32 %rd7, %r6, %r2;\n\tmov.u64 %rd5, %rd3;\n\
             $L_loop:\n\tadd.s64 %rd8, %rd5, %rd7;\n\tsetp.ge.u64 %p1, %rd8, %rd2;\n\t@%p1 bra $L_tail;\n\
             \tshl.b64 %rd19, %rd5, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.f32 [%rd20], 0f00000000;\n\
             \tshl.b64 %rd21, %rd8, 2;\n\tadd.s64 %rd22, %rd1, %rd21;\n\tst.global.f32 [%rd22], 0f00000000;\n\
             \tadd.s64 %rd5, %rd8, %rd7;\n\tbra $L_loop;\n\
             $L_tail:\n\tsetp.ge.u64 %p2, %rd5, %rd2;\n\t@%p2 ret;\n\
             \tshl.b64 %rd23, %rd8, 2;\n\tadd.s64 %rd24, %rd1, %rd23;\n\
             \tst.global.f32 [%rd24], 0f00000000; // <- rejected, faults\n",
        )),
        300, OutOfBounds, RejOob,
    );
    // ---- more index arithmetic, operands and control ------------------------------------

    // A branch on loaded data between `out[i]` and `out[i + 1]`.
    branch_on_data => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\tld.global.f32 %f1, [%rd6];\n\
             \tsetp.gt.f32 %p2, %f1, 0f00000000;\n\tadd.s64 %rd7, %rd1, %rd5;\n\t@%p2 bra $L_far;\n\
             \tst.global.f32 [%rd7], %f1;\n\tret;\n$L_far:\n\
             \tst.global.f32 [%rd7+4], %f1; // <- rejected, faults\n",
        )),
        10, OutOfBounds, RejOob,
    );
    // `set` writes all ones for true: an index of 2^32 − 1.
    set_as_an_index => guarded_out(
        &format!(
            "\tset.lt.u32.u32 %r5, %r3, 1000;\n{}", store_f32_u32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `mul.wide.u32` of `tid − 1`, which is 2^32 − 1 for thread 0.
    wide_multiply_of_a_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -1;\n{}", store_f32_u32(5, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // `min.s32` with a negative index keeps it negative.
    min_keeps_a_negative => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -3;\n\tmin.s32 %r6, %r5, 9;\n{}", store_f32_s32(6, "rejected, faults")
        ),
        10, OutOfBounds, RejOob,
    );
    // `max.u32(x, 0)` is no clamp of a negative `int`: it is 2^32 − 1 for `tid − 1`.
    unsigned_max_is_no_clamp => guarded_out(
        &format!(
            "\tadd.s32 %r5, %r3, -1;\n\tmax.u32 %r6, %r5, 0;\n{}", store_f32_s32(6, "rejected, faults")
        ),
        10, OutOfBounds, MayWrap,
    );
    // The output pointer plus the difference of the operands' bases: the input.
    pointer_difference_of_two_operands => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tsub.s64 %rd5, %rd10, %rd1;\n\tadd.s64 %rd6, %rd1, %rd5;\n\
             \tst.global.f32 [%rd6], 0f00000000; // <- rejected, faults\n",
        )),
        10, WriteToInput, UnattributedAddress,
    );
    // The old value of a compare-and-swap on the input (data) as the index.
    atom_cas_result_as_an_index => Attack {
        ptx: entry(&[".u64 k_in", ".u64 k_out", ".u64 k_n"], &guarded(
            "\tld.param.u64 %rd10, [k_in];\n\tatom.global.cas.b32 %r5, [%rd1], 0, 7;\n\
             \tmul.wide.u32 %rd5, %r5, 4;\n\tadd.s64 %rd6, %rd1, %rd5;\n\
             \tst.global.u32 [%rd6], %r5; // <- rejected, faults\n",
        )),
        abi: scalar(&[U32], &[U32]),
        launch: dense(10, 1, 1),
        fault: Fault::Memory(OutOfBounds),
        reject: DataDependentIndex,
    };
    // A compare-and-swap on the input.
    atom_cas_on_the_input => Attack {
        ptx: entry(&[".u64 k_in", ".u64 k_out", ".u64 k_n"], &guarded(
            "\tld.param.u64 %rd10, [k_in];\n\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tatom.global.cas.b32 %r5, [%rd6], 0, 7; // <- rejected, faults\n",
        )),
        abi: scalar(&[U32], &[U32]),
        launch: dense(10, 1, 1),
        fault: Fault::Memory(WriteToInput),
        reject: StoreThroughInput,
    };
    // A reduction into the input.
    red_on_the_input => in_out(
        entry(&IN_OUT_N, &guarded_in(
            "\tshl.b64 %rd5, %rd3, 2;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tred.global.add.f32 [%rd6], 0f3F800000; // <- rejected, faults\n",
        )),
        10, WriteToInput, StoreThroughInput,
    );
    // `.ptr .align 16` on a scalar output licenses no 16-byte access.
    pointee_alignment_licenses_no_vector => one_out(
        entry(&[".u64 .ptr .global .align 16 k_out", ".u64 k_n"], &guarded(
            "\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tmov.f32 %f1, 0f00000000;\n\
             \tst.global.v4.f32 [%rd20], {%f1, %f1, %f1, %f1}; // <- rejected, faults\n",
        )),
        10, Misaligned, WrongWidth,
    );
    // The clock as an index.
    clock_as_an_index => guarded_out(
        "\tmov.u32 %r5, %clock; // <- rejected\n\tmul.wide.u32 %rd19, %r5, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- faults\n",
        10, OutOfBounds, Unsupported,
    );
    // The warp's active mask as an index: some 32-bit number, which nothing bounds (the store
    // is declined, or guarded by `load()`).
    activemask_as_an_index => guarded_out(
        "\tactivemask.b32 %r5;\n\tmul.wide.u32 %rd19, %r5, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n",
        10, OutOfBounds, MayWrap,
    );
    // A vote's ballot as an index: the same (the active lanes' mask, 1023 for 10 threads).
    ballot_as_an_index => guarded_out(
        "\tactivemask.b32 %r6;\n\tsetp.lt.u64 %p2, %rd3, 64;\n\tvote.sync.ballot.b32 %r5, %p2, %r6;\n\tmul.wide.u32 %rd19, %r5, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n",
        10, OutOfBounds, MayWrap,
    );
    // `cvta.to.global` of a param's name: its param-space address.
    cvta_of_a_param_name => Attack {
        ptx: entry(&OUT_N, &guarded(
            "\tcvta.to.global.u64 %rd5, k_out; // <- rejected\n\tst.global.f32 [%rd5], 0f00000000; // <- faults\n",
        )),
        abi: scalar(&[], &[F32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("cvta.to of a variable", OutOfBounds),
        reject: Unsupported,
    };
    // A predicated call of a function that stores past the end.
    predicated_call => one_out(
        module(
            ".func store(.reg .b64 p)\n{\n\tst.global.f32 [p+40], 0f00000000; // <- faults\n\tret;\n}\n",
            &OUT_N,
            &guarded("\tsetp.lt.u32 %p2, %r3, 4;\n\t@%p2 call store, (%rd1); // <- rejected\n"),
        ),
        10, OutOfBounds, Unsupported,
    );
    // A `.func` that stores one past the end of its pointer argument.
    func_stores_past_the_end => one_out(
        module(
            ".func store(.reg .b64 p, .reg .b64 i)\n{\n\t.reg .b64 %a;\n\tshl.b64 %a, i, 2;\n\tadd.s64 %a, p, %a;\n\
             \tst.global.f32 [%a+4], 0f00000000; // <- rejected, faults\n\tret;\n}\n",
            &OUT_N,
            &guarded("\tcall store, (%rd1, %rd3);\n"),
        ),
        10, OutOfBounds, RejOob,
    );
    // A loop entered in its middle (irreducible) that runs past the end.
    irreducible_loop => guarded_out(
        &format!(
            "\tmov.u64 %rd5, %rd3;\n\tsetp.lt.u32 %p2, %r3, 4;\n\t@%p2 bra $L_mid;\n$L_top:\n\
             \tadd.s64 %rd5, %rd5, 1;\n$L_mid:\n\tmov.u64 %rd9, %rd5; // <- rejected\n{}\tsetp.lt.u64 %p3, %rd5, 100;\n\
             \t@%p3 bra $L_top;\n\tret;\n",
            store_f32(5, "faults")
        ),
        10, OutOfBounds, Unsupported,
    );
    // `.local` memory past its end: the frame is the thread's own and of known size, so the
    // store is refused for reaching past it.
    local_memory => guarded_out(
        "\t.local .align 4 .b8 buf[16];\n\tst.local.u32 [buf+64], %r3; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // `.local` memory before its start, through a register.
    local_memory_negative => guarded_out(
        "\t.local .align 4 .b8 buf[16];\n\tmov.u64 %rd5, buf;\n\
             \tst.local.u32 [%rd5+-4], %r3; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // A thread-indexed slot of a frame of four: `buf[i]` for `i < n = 10`.
    local_memory_thread_indexed => guarded_out(
        "\t.local .align 4 .b8 buf[16];\n\tmov.u64 %rd5, buf;\n\tshl.b64 %rd6, %rd3, 2;\n\
             \tadd.s64 %rd5, %rd5, %rd6;\n\tst.local.u32 [%rd5], %r3; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // A generic frame address read in the local space (another number there).
    local_memory_generic_as_local => guarded_out(
        "\t.local .align 4 .b8 buf[16];\n\tcvta.local.u64 %rd5, buf;\n\
             \tst.local.u32 [%rd5], %r3; // <- rejected, faults\n",
        10, OutOfBounds, UnattributedAddress,
    );

    // A negative displacement: `out[i − 1]`, before the start for `i = 0`.
    negative_displacement => guarded_out(
        "\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \tst.global.f32 [%rd20+-4], 0f00000000; // <- rejected, faults\n",
        10, OutOfBounds, RejOob,
    );
    // `n` added to the pointer in bytes, not elements: 2 bytes into an element for `n = 10`.
    count_added_in_bytes => guarded_out(
        "\tadd.s64 %rd5, %rd1, %rd2;\n\tst.global.f32 [%rd5], 0f00000000; // <- rejected, faults\n",
        10, Misaligned, RejMisaligned,
    );
    // A destination that cannot be written: `ld` into `%tid.x` (it was taken for a load that
    // writes nothing). Both readers refuse the text.
    load_into_a_special_register => Attack {
        ptx: entry(&OUT_N, &guarded(
            "\tld.global.u32 %tid.x, [%rd1]; // <- rejected\n\tmov.u32 %r5, %tid.x;\n\
             \tst.global.u32 [%rd1], %r5; // <- faults\n",
        )),
        abi: scalar(&[], &[U32]),
        launch: dense(10, 0, 1),
        fault: Fault::RefusedOr("invalid instruction `ld.global.u32`", OutOfBounds),
        reject: Unsupported,
    };
    // The vectorized ABI's `n` counts vectors: `4·n` of them run past the end.
    vector_count_taken_for_elements => Attack {
        ptx: entry(&OUT_N, &unguarded(
            "\tshl.b64 %rd5, %rd2, 2;\n\tsetp.ge.u64 %p1, %rd3, %rd5;\n\t@%p1 ret;\n\
             \tshl.b64 %rd19, %rd3, 4;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tmov.f32 %f1, 0f00000000;\n\
             \tst.global.v4.f32 [%rd20], {%f1, %f1, %f1, %f1}; // <- rejected, faults\n",
        )),
        abi: Abi::Spec(AbiSpec::owned(AbiKind::Vectorized { width: 4 }, vec![], vec![F32], vec![])),
        launch: dense(16, 0, 1),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };

    // ---- strided views ---------------------------------------------------------------------

    // Axis 0's coordinate scaled by axis 1's stride (and the other way round).
    strided_crossed_axes => strided_out(
        "\tld.param.u64 %rd2, [k_s0];\n\tld.param.u64 %rd3, [k_s1];\n\
         \tld.param.u64 %rd4, [k_t0];\n\tld.param.u64 %rd5, [k_t1];\n\
         \tmov.u32 %r1, %tid.x;\n\tcvt.u64.u32 %rd6, %r1;\n\tmov.u32 %r2, %ctaid.x;\n\tcvt.u64.u32 %rd7, %r2;\n\
         \tsetp.ge.u64 %p1, %rd6, %rd2;\n\t@%p1 ret;\n\tsetp.ge.u64 %p2, %rd7, %rd3;\n\t@%p2 ret;\n\
         \tmul.lo.s64 %rd8, %rd6, %rd5;\n\tmad.lo.s64 %rd9, %rd7, %rd4, %rd8;\n\
         \tshl.b64 %rd10, %rd9, 2;\n\tadd.s64 %rd11, %rd1, %rd10;\n\
         \tst.global.f32 [%rd11], 0f00000000; // <- rejected, faults\n",
        window(16, 0, &[8, 2], &[1, 8]),
        CrossedStride,
    );

    // An empty strided view (axis 0 of extent 0) is never checked at launch, and the body
    // bounds only axis 1: `out[c1·so1]` for `c1 < shape1` with `c0 = 0`, which is no element
    // of an empty view (the proof took a coordinate it never named for a valid one).
    empty_strided_view_bounded_on_one_axis => strided_out(
        "\tld.param.u64 %rd3, [k_s1];\n\tld.param.u64 %rd5, [k_t1];\n\
         \tmov.u32 %r1, %tid.x;\n\tcvt.u64.u32 %rd6, %r1;\n\
         \tsetp.ge.u64 %p1, %rd6, %rd3;\n\t@%p1 ret;\n\
         \tmul.lo.s64 %rd8, %rd6, %rd5;\n\tshl.b64 %rd10, %rd8, 2;\n\tadd.s64 %rd11, %rd1, %rd10;\n\
         \tst.global.f32 [%rd11], 0f00000000; // <- rejected, faults\n",
        window(4, 0, &[0, 4], &[1, 1000]),
        RejOob,
    );

    // ---- custom-ABI extents and geometry ---------------------------------------------------

    // `i ≤ n` against `out[n]`.
    custom_extent_off_by_one => Attack {
        ptx: custom_guarded(&format!(
            "\tadd.s32 %r7, %r5, 1;\n{}",
            store_f32_u32(7, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: u32", None),
        launch: custom_one_block(32, 10),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // Reading `a[i]` for `i < n` where `a` has `m` elements.
    custom_bound_by_the_wrong_param => Attack {
        ptx: entry(&[".u64 k_a", ".u64 k_out", ".u32 k_m", ".u32 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd10, [k_a];\n\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\
             \tmov.u32 %r5, %tid.x;\n\tsetp.ge.u32 %p1, %r5, %r4;\n\t@%p1 ret;\n\
             \tmul.wide.u32 %rd5, %r5, 4;\n\tadd.s64 %rd6, %rd10, %rd5;\n\
             \tld.global.f32 %f1, [%rd6]; // <- rejected, faults\n\
             \tadd.s64 %rd7, %rd1, %rd5;\n\tst.global.f32 [%rd7], %f1;\n"
        )),
        abi: Abi::Custom("a: in f32[m], out: out f32[n], m: u32, n: u32", None),
        launch: custom(LaunchConfig::linear(1, 32), &[4], &[16], &[ParamValue::U32(4), ParamValue::U32(16)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // An offset param no extent names may be negative: `out[i + k]` with `k = −1`.
    custom_negative_offset_param => Attack {
        ptx: entry(&[".u64 k_out", ".u32 k_n", ".u32 k_k"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\tld.param.u32 %r6, [k_k];\n\
             \tmov.u32 %r5, %tid.x;\n\tsetp.ge.s32 %p1, %r5, %r4;\n\t@%p1 ret;\n\tadd.s32 %r7, %r5, %r6;\n{}",
            store_f32_s32(7, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: i32, k: i32", None),
        launch: custom(LaunchConfig::linear(1, 32), &[], &[10], &[ParamValue::I32(10), ParamValue::I32(-1)]),
        fault: Fault::Memory(OutOfBounds),
        reject: MayWrap,
    };
    // A wrapped index tested signed: `ctaid · 2^30 + tid` is −2^31 + tid in block 2, which
    // passes `i < n` and stores before `out`.
    custom_wrapped_index_tested_signed => Attack {
        ptx: entry(&[".u64 k_out", ".u32 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\tmov.u32 %r1, %ctaid.x;\n\
             \tmov.u32 %r3, %tid.x;\n\tmad.lo.s32 %r5, %r1, 1073741824, %r3;\n\
             \tsetp.ge.s32 %p1, %r5, %r4;\n\t@%p1 ret;\n{}",
            store_f32_s32(5, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: i32", None),
        launch: custom(LaunchConfig::linear(3, 4), &[], &[8], &[ParamValue::I32(8)]),
        fault: Fault::Memory(OutOfBounds),
        reject: MayWrap,
    };
    // The same wrapped index tested signed, then read unsigned: −2^31 + tid is 2^31 + tid.
    custom_wrapped_index_tested_signed_read_unsigned => Attack {
        ptx: entry(&[".u64 k_out", ".u32 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\tmov.u32 %r1, %ctaid.x;\n\
             \tmov.u32 %r3, %tid.x;\n\tmad.lo.s32 %r5, %r1, 1073741824, %r3;\n\
             \tsetp.ge.s32 %p1, %r5, %r4;\n\t@%p1 ret;\n{}",
            store_f32_u32(5, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[n], n: i32", None),
        launch: custom(LaunchConfig::linear(3, 4), &[], &[8], &[ParamValue::I32(8)]),
        fault: Fault::Memory(OutOfBounds),
        reject: MayWrap,
    };
    // A three-dimensional launch: `%tid.z` scales the index past the extent.
    custom_tid_z => Attack {
        ptx: custom_guarded(
            "\tmov.u32 %r6, %tid.z;\n\tmad.lo.s32 %r7, %r6, 1000, %r5;\n\tmul.wide.u32 %rd19, %r7, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom(LaunchConfig::new([1, 1, 1], [4, 1, 2]), &[], &[8], &[ParamValue::U32(8)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // The global index without a guard, launched with more threads than elements.
    custom_unguarded_grid => Attack {
        ptx: entry(&[".u64 k_out", ".u32 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\
             \tmov.u32 %r3, %tid.x;\n\tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tmul.wide.u32 %rd19, %r5, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n"
        )),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom(LaunchConfig::linear(2, 8), &[], &[10], &[ParamValue::U32(10)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // `min.relu` of a negative value is 0, not the value (`.relu` was dropped): `0 + 2000`.
    // (An emulator without integer `.relu` refuses it; the ported one faults here.)
    relu_clamps_at_zero => Attack {
        ptx: entry(&[".u64 k_out"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tmov.u32 %r3, %tid.x;\n\tsub.s32 %r5, %r3, 2000;\n\
             \tmin.relu.s32 %r6, %r5, %r5;\n\tadd.s32 %r7, %r6, 2000;\n{}",
            store_f32_s32(7, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[1024]", None),
        launch: custom(LaunchConfig::linear(1, 1), &[], &[1024], &[]),
        fault: Fault::RefusedOr("relu", OutOfBounds),
        reject: RejOob,
    };

    // `out: out u32[n / 2]` written for every `i < n`.
    custom_extent_halved => Attack {
        ptx: custom_guarded(
            "\tmul.wide.u32 %rd19, %r5, 4;\n\tadd.s64 %rd20, %rd1, %rd19;\n\
             \tst.global.u32 [%rd20], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom("out: out u32[n / 2], n: u32", None),
        launch: custom(LaunchConfig::linear(1, 32), &[], &[5], &[ParamValue::U32(10)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // `out: out u32[block.x]` indexed by the global thread index, on two blocks.
    custom_block_extent_global_index => Attack {
        ptx: entry(&[".u64 k_out"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\
             \tmov.u32 %r3, %tid.x;\n\tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tmul.wide.u32 %rd19, %r5, 4;\n\
             \tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.u32 [%rd20], %r5; // <- rejected, faults\n"
        )),
        abi: Abi::Custom("out: out u32[block.x]", None),
        launch: custom(LaunchConfig::linear(2, 8), &[], &[8], &[]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // ---- shared memory -------------------------------------------------------------------

    // Past a static shared array's end.
    shared_past_its_end => Attack {
        ptx: custom_guarded(
            "\t.shared .align 4 .b8 s[64];\n\tst.shared.u32 [s+64], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(OutsideShared),
        reject: RejOob,
    };
    // A 4-byte shared access 2 bytes into a 4-aligned array.
    shared_misaligned => Attack {
        ptx: custom_guarded(
            "\t.shared .align 4 .b8 s[64];\n\tst.shared.u32 [s+2], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(Misaligned),
        reject: RejMisaligned,
    };
    // After its `{ }` block closes, `s` names the module's 4-byte array again, not the
    // block's 256-byte one: `s+128` is past it (and read before anything wrote there).
    shared_name_after_its_block_closes => Attack {
        ptx: module(".shared .align 4 .b8 s[4];\n", &[".u64 k_out", ".u32 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tmov.u32 %r5, %tid.x;\n\
             \t{{\n\t.shared .align 4 .b8 s[256];\n\tst.shared.u32 [s], %r5;\n\t}}\n\
             \tld.shared.u32 %r6, [s+128]; // <- rejected, faults\n\tst.global.u32 [%rd1], %r6;\n"
        )),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(UninitializedShared),
        reject: RejOob,
    };
    // The shared-space address of a variable used as a global address.
    shared_address_as_global => Attack {
        ptx: custom_guarded(
            "\t.shared .align 4 .b8 s[64];\n\tmov.u64 %rd5, s;\n\tst.global.u32 [%rd5], %r5; // <- rejected, faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(OutOfBounds),
        reject: UnattributedAddress,
    };
    // A dynamic shared array of `4·block.x` bytes indexed by the flattened 2-D thread index.
    dynamic_shared_flattened_2d => Attack {
        ptx: module(
            ".extern .shared .align 4 .b8 dyn[];\n",
            &[".u64 k_out", ".u32 k_n"],
            &format!(
                "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\
                 \tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r6, %tid.y;\n\
                 \tmad.lo.s32 %r7, %r6, %r2, %r3;\n\tmul.wide.u32 %rd5, %r7, 4;\n\tmov.u64 %rd6, dyn;\n\
                 \tadd.s64 %rd7, %rd6, %rd5;\n\tst.shared.u32 [%rd7], %r7; // <- rejected, faults\n"
            ),
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom(
            LaunchConfig::new([1, 1, 1], [4, 2, 1]).dynamic_shared_bytes(16),
            &[],
            &[8],
            &[ParamValue::U32(8)],
        ),
        fault: Fault::Memory(OutsideShared),
        reject: RejOob,
    };
    // A generic address of a shared variable, 256 bytes past its 64.
    cvta_shared_past_the_end => Attack {
        ptx: custom_guarded(
            "\t.shared .align 4 .b8 s[64];\n\tmov.u64 %rd5, s;\n\tcvta.shared.u64 %rd6, %rd5; // <- rejected\n\
             \tst.u32 [%rd6+256], %r5; // <- faults\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(OutsideShared),
        reject: Unsupported,
    };

    // ---- XOR partners in shared memory: the unsafe variants ---------------------------------

    // `s[tid ^ 32]` of 32 slots, 32 threads: the partner sets bit 5, past every slot.
    xor_partner_at_the_array_size => xor_partner(XOR_STATIC, "32", 32, 0, RejOob);
    // `s[tid ^ 33]` of 32 slots: 33 is no power of two, and its bit 5 is past the slots too.
    xor_partner_not_a_power_of_two => xor_partner(XOR_STATIC, "33", 32, 0, RejOob);
    // `dyn[tid ^ 32]` of `4 · block.x` bytes, 96 threads: a block that is not a power of two
    // has partners past it (thread 64's is 96).
    xor_partner_in_a_block_not_a_power_of_two => xor_partner(XOR_DYNAMIC, "32", 96, 384, RejOob);
    // `s[tid ^ j]` with `j = n` a param: nothing bounds it below the slots.
    xor_partner_at_a_param => xor_partner(XOR_STATIC, "%r4", 32, 0, RejOob);

    // `for (k = 1; k <= 32; k <<= 1) s[k] = i` over 32 slots: the doubled register's bound
    // admits 32, one past the last slot.
    doubled_register_past_its_array => Attack {
        ptx: custom_guarded(
            "\t.shared .align 4 .b8 s[128];\n\tmov.u64 %rd6, s;\n\tmov.u32 %r6, 1;\n$Lk:\n\
             \tmul.wide.u32 %rd5, %r6, 4;\n\tadd.s64 %rd7, %rd6, %rd5;\n\
             \tst.shared.u32 [%rd7], %r5; // <- rejected, faults\n\tshl.b32 %r6, %r6, 1;\n\
             \tsetp.le.u32 %p2, %r6, 32;\n\t@%p2 bra $Lk;\n",
        ),
        abi: Abi::Custom(OUT_U32_N, None),
        launch: custom_one_block(1, 1),
        fault: Fault::Memory(OutsideShared),
        reject: RejOob,
    };

    // ---- idioms of real kernels: the unsafe variants --------------------------------------

    // `4i + 5 − (4i | 5)` taken for 0: bit 2 of `4i` and of 5 overlap, so for odd `i` it is 4.
    or_with_overlapping_bits => overlapping_or("\tshl.b32 %r6, %r5, 2;\n", "5");
    // `6i + 3 − (6i | 3)`: a multiple of 6 has only its lowest bit known zero, so 3 overlaps.
    or_with_a_multiple_of_too_few_twos => overlapping_or("\tmul.lo.s32 %r6, %r5, 6;\n", "3");
    // `4i + (4i & 7) − (4i | (4i & 7))`: `4i & 7` is in [0, 7], past the two low bits `4i`
    // leaves zero.
    or_with_a_part_too_wide => overlapping_or(
        "\tshl.b32 %r6, %r5, 2;\n\tand.b32 %r10, %r6, 7;\n",
        "%r10",
    );
    // The range test `(x | x) & −32 == 0` at 32 bits on `x = tid << 27`, which reads 0 for
    // tid 32: the test bounds the register, not `tid · 2^27`, which does not read exactly
    // (out[tid] of one element, 33 threads: thread 32 passes the test and stores at 32).
    range_test_of_a_part_that_wraps => Attack {
        ptx: entry(&[".u64 k_out"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tmov.u32 %r5, %tid.x;\n\tshl.b32 %r6, %r5, 27;\n\
             \tor.b32 %r7, %r6, %r6;\n\tand.b32 %r8, %r7, -32;\n\tsetp.ne.s32 %p1, %r8, 0;\n\t@%p1 ret;\n{}",
            store_f32_u32(5, "rejected, faults")
        )),
        abi: Abi::Custom("out: out f32[1]", None),
        launch: custom(LaunchConfig::linear(1, 33), &[], &[1], &[]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // An unrolled grid-stride loop whose body reaches three strides ahead of an index only
    // guarded by `i < n`: with `f = floor((n − 1 − I0) / S)` the guard gives `4k ≤ f`, not
    // `4k + 3 ≤ f` (n = 5, one thread: the second iteration stores at 7).
    unrolled_grid_stride_without_its_trip_count => Attack {
        ptx: entry(&[".u64 k_out", ".u64 k_n"], &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_n];\n\
             \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
             \tmad.wide.u32 %rd3, %r1, %r2, 0;\n\tcvt.u64.u32 %rd4, %r3;\n\tadd.s64 %rd3, %rd3, %rd4;\n\
             \tmov.u32 %r4, %nctaid.x;\n\tmul.wide.u32 %rd5, %r4, %r2;\n\
             \tsetp.ge.s64 %p1, %rd3, %rd2;\n\t@%p1 ret;\n\
             \tsub.s64 %rd6, %rd2, %rd3;\n\tadd.s64 %rd6, %rd6, -1;\n\tdiv.u64 %rd7, %rd6, %rd5;\n\
             \tsetp.lt.u64 %p2, %rd7, 3;\n\t@%p2 ret;\n\tshl.b64 %rd8, %rd5, 2;\n\
             $L_loop:\n\
             \tadd.s64 %rd9, %rd3, %rd5;\n\tadd.s64 %rd9, %rd9, %rd5;\n\tadd.s64 %rd9, %rd9, %rd5;\n\
             \tshl.b64 %rd10, %rd9, 2;\n\tadd.s64 %rd11, %rd1, %rd10;\n\
             \tst.global.f32 [%rd11], 0f00000000; // <- rejected, faults\n\
             \tadd.s64 %rd3, %rd3, %rd8;\n\tsetp.lt.s64 %p3, %rd3, %rd2;\n\t@%p3 bra $L_loop;\n\tret;\n"
        )),
        abi: Abi::Custom("out: out f32[n], n: i64", None),
        launch: custom(LaunchConfig::linear(1, 1), &[], &[5], &[ParamValue::I64(5)]),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
    // A pointer plus the `or` of two indices (`i | 8`, 8 overlapping `i`'s bit 3 and above):
    // an address of `out`, its bounds unproven (not an address of no operand).
    or_offset_of_a_pointer => Attack {
        ptx: custom_guarded(
            "\tcvt.u64.u32 %rd5, %r5;\n\tshl.b64 %rd5, %rd5, 2;\n\tor.b64 %rd6, %rd5, %rd5;\n\
             \tor.b64 %rd7, %rd6, 32;\n\tadd.s64 %rd8, %rd1, %rd7;\n\
             \tst.global.f32 [%rd8], 0f00000000; // <- rejected, faults\n",
        ),
        abi: Abi::Custom("out: out f32[n], n: u32", None),
        launch: custom_one_block(2, 2),
        fault: Fault::Memory(OutOfBounds),
        reject: RejOob,
    };
}

// ---- what the launch establishes ------------------------------------------------------------

/// `out: out u32[n - grid.x]`, written by a grid-stride loop over `i < n − %nctaid.x`: in
/// bounds exactly when the body sees the grid the extent was evaluated with.
const GRID_EXTENT: &str = "out: out u32[n - grid.x], n: u32";

fn grid_extent_kernel() -> String {
    entry(
        &[".u64 k_out", ".u32 k_n"],
        &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u32 %r4, [k_n];\n\
             \tmov.u32 %r6, %nctaid.x;\n\tsub.s32 %r7, %r4, %r6;\n\
             \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
             \tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tmul.lo.s32 %r8, %r6, %r2;\n\
             $L_loop:\n\tsetp.ge.u32 %p1, %r5, %r7;\n\t@%p1 bra $L_done;\n\
             \tmul.wide.u32 %rd2, %r5, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
             \tst.global.u32 [%rd3], %r5;\n\tadd.s32 %r5, %r5, %r8;\n\tbra $L_loop;\n\
             $L_done:\n\tret;\n"
        ),
    )
}

/// A custom kernel whose extent names the grid runs on exactly the grid its extents were
/// evaluated with: the emulator capped a grid-stride body's grid (to four blocks per worker),
/// so `%nctaid.x` in the body was smaller than the `grid.x` of the extent, and the loop ran
/// past `n − grid.x`.
#[test]
fn a_custom_kernel_runs_on_the_grid_its_extents_were_evaluated_with() {
    let spec = Abi::Custom(GRID_EXTENT, None).spec();
    let text = grid_extent_kernel();
    let device = emulator();
    let kernel = bind(&device, &text, &spec, true).unwrap();
    assert_eq!(
        kernel.loaded().proof().map(|p| p.coverage),
        Some(jitseam_verify::Coverage::GridStride)
    );
    let (grid, n) = (64u32, 4096u32);
    let launch = custom(
        LaunchConfig::linear(grid, 32),
        &[],
        &[(n - grid) as usize],
        &[ParamValue::U32(n)],
    );
    run(&device, &kernel, &spec, &launch).unwrap();
}

/// A grid-stride loop over an `int` index `i < (int)n`: in bounds only while `n + threads`
/// reads as an `int`.
fn int_index_kernel() -> String {
    entry(
        &OUT_N,
        &format!(
            "{DECLS}\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_n];\n\tcvt.u32.u64 %r4, %rd2;\n\
             \tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\
             \tmad.lo.s32 %r5, %r1, %r2, %r3;\n\tmov.u32 %r6, %nctaid.x;\n\tmul.lo.s32 %r8, %r6, %r2;\n\
             $L_loop:\n\tsetp.ge.s32 %p1, %r5, %r4;\n\t@%p1 bra $L_done;\n\
             \tmul.wide.s32 %rd3, %r5, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\tst.global.f32 [%rd4], 0f00000000;\n\
             \tadd.s32 %r5, %r5, %r8;\n\tbra $L_loop;\n$L_done:\n\tret;\n"
        ),
    )
}

/// The operands of a dense launch of `n` f32 elements, described without being allocated: the
/// checks read descriptions only.
fn described(device: &Device, n: usize) -> [jitseam::device::ViewDesc; 1] {
    [jitseam::device::ViewDesc::contiguous(
        device.id(),
        F32,
        1 << 40,
        n,
        0,
        n,
    )]
}

/// The condition an `int` index needs, `n + threads ≤ 2^31 − 1`, is checked at every dense
/// launch: a launch past it is declined before the device sees anything.
#[test]
fn a_dense_launch_outside_the_proofs_condition_is_declined() {
    use jitseam_verify::LaunchCondition;
    let spec = scalar(&[], &[F32]).spec();
    let device = emulator();
    let kernel = bind(&device, &int_index_kernel(), &spec, true).unwrap();
    let limit = (1u64 << 31) - 1;
    assert_eq!(
        kernel.loaded().proof().map(|p| p.conditions.clone()),
        Some(vec![LaunchCondition::CountPlusThreadsAtMost { limit }])
    );
    let inputs: [jitseam::device::ViewDesc; 0] = [];
    let check = |n: usize| {
        let outputs = described(&device, n);
        jitseam::launch::check(kernel.facts(), device.id(), &inputs, &outputs, &[n], &[])
            .map(|checked| checked.count())
    };
    assert_eq!(check(1000).unwrap(), 1000);
    // `n` alone below the limit, `n` plus the grid's threads (256 per block) above it.
    let n = (limit - 100) as usize;
    match check(n) {
        Err(Error::LaunchCondition { condition, .. }) => {
            assert_eq!(condition, LaunchCondition::CountPlusThreadsAtMost { limit });
        }
        other => panic!("expected a launch condition decline, got {other:?}"),
    }
}

/// A body that handles one element per thread is launched only with a grid of at least `n`
/// threads: past the device's largest grid it is declined, not run short.
#[test]
fn a_one_thread_per_element_body_gets_a_thread_per_element() {
    use jitseam_verify::Coverage;
    let spec = scalar(&[], &[F32]).spec();
    let device = emulator();
    let text = entry(&OUT_N, &guarded(&store_f32(3, "in bounds")));
    let kernel = bind(&device, &text, &spec, true).unwrap();
    assert_eq!(
        kernel.loaded().proof().map(|p| p.coverage),
        Some(Coverage::OneThreadPerElement)
    );
    let inputs: [jitseam::device::ViewDesc; 0] = [];
    let check = |n: usize| {
        let outputs = described(&device, n);
        jitseam::launch::check(kernel.facts(), device.id(), &inputs, &outputs, &[n], &[])
            .map(|checked| checked.geometry())
    };
    let geometry = check(1000).unwrap();
    assert!(u64::from(geometry.grid[0]) * u64::from(geometry.block[0]) >= 1000);
    let beyond =
        (u64::from(kernel.facts().max_grid_x) * u64::from(jitseam::launch::BLOCK) + 1) as usize;
    match check(beyond) {
        Err(Error::LaunchGeometry { .. }) => {}
        other => panic!("expected a geometry decline, got {other:?}"),
    }
}

/// A body that stores `out[i]` once per thread and then runs a grid-stride loop that only
/// reads is no grid-stride body: its coverage was taken from the loop, and the emulator,
/// running a grid-stride body on fewer blocks, left most of the output unwritten. (NVRTC's
/// grid-stride loops with a peeled first iteration write their output inside the loop too,
/// and stay grid-stride: `tests/verify_accept.rs`.)
#[test]
fn a_store_outside_the_grid_stride_loop_gets_a_thread_per_element() {
    use jitseam_verify::Coverage;
    let text = entry(
        &IN_OUT_N,
        &guarded_in(
            "\tshl.b64 %rd19, %rd3, 2;\n\tadd.s64 %rd20, %rd1, %rd19;\n\tst.global.f32 [%rd20], 0f3F800000;\n\
             \tmov.u32 %r6, %nctaid.x;\n\tmul.wide.u32 %rd7, %r6, %r2;\n\tmov.u64 %rd5, %rd3;\n\
             $L_loop:\n\tsetp.ge.u64 %p2, %rd5, %rd2;\n\t@%p2 bra $L_done;\n\
             \tshl.b64 %rd21, %rd5, 2;\n\tadd.s64 %rd22, %rd10, %rd21;\n\tld.global.f32 %f1, [%rd22];\n\
             \tadd.s64 %rd5, %rd5, %rd7;\n\tbra $L_loop;\n$L_done:\n\tret;\n",
        ),
    );
    let spec = scalar(&[F32], &[F32]).spec();
    let device = emulator();
    let kernel = bind(&device, &text, &spec, true).unwrap();
    assert_eq!(
        kernel.loaded().proof().map(|p| p.coverage),
        Some(Coverage::OneThreadPerElement)
    );
    let n = 5000;
    let input = device.upload(&vec![0.0f32; n]).unwrap();
    let mut out = device.upload(&vec![f32::NAN; n]).unwrap();
    let stream = device.default_stream();
    kernel
        .launch(
            &stream,
            &[(&input).into()],
            &mut [(&mut out).into()],
            &[n],
            &[],
        )
        .unwrap();
    let back = stream.read(&out).unwrap();
    assert!(
        back.iter().all(|&v| v == 1.0),
        "{} unwritten",
        back.iter().filter(|v| v.is_nan()).count()
    );
}

/// `0 ≤ n < 2^63` and, for the strided ABI, a shape whose element count does not overflow: a
/// launch past either is declined before the device sees anything.
#[test]
fn counts_the_kernel_cannot_read_are_declined() {
    let device = emulator();
    let inputs: [jitseam::device::ViewDesc; 0] = [];
    // A dense count of 2^63 elements does not fit the kernel's signed 64-bit `n`.
    let spec = scalar(&[], &[F32]).spec();
    let text = entry(&OUT_N, &guarded(&store_f32(3, "in bounds")));
    let kernel = bind(&device, &text, &spec, false).unwrap();
    let n = 1usize << 63;
    let outputs = [jitseam::device::ViewDesc::contiguous(
        device.id(),
        F32,
        0,
        n,
        0,
        n,
    )];
    match jitseam::launch::check(kernel.facts(), device.id(), &inputs, &outputs, &[n], &[]) {
        Err(Error::LaunchGeometry { reason, .. }) => {
            assert!(reason.contains("signed 64-bit"), "{reason}")
        }
        other => panic!("expected a geometry decline, got {other:?}"),
    }
    // A strided shape of 2^32 × 2^32 elements overflows the element count.
    let spec = AbiSpec::owned(AbiKind::Strided { rank: 2 }, vec![], vec![F32], vec![]);
    let text = entry(&STRIDED_OUT, "\tret;\n");
    let kernel = bind(&device, &text, &spec, false).unwrap();
    let shape = [1usize << 32, 1usize << 32];
    let mut view = jitseam::device::ViewDesc::contiguous(device.id(), F32, 0, 1, 0, 1);
    view.rank = 2;
    view.shape[..2].copy_from_slice(&shape);
    view.strides[..2].copy_from_slice(&[0, 0]);
    match jitseam::launch::check(kernel.facts(), device.id(), &inputs, &[view], &shape, &[]) {
        Err(Error::LaunchGeometry { reason, .. }) => {
            assert!(reason.contains("overflows"), "{reason}")
        }
        other => panic!("expected a geometry decline, got {other:?}"),
    }
}
