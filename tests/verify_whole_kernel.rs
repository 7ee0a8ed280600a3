//! The whole-kernel soundness check: every kernel `load()` proves is run on the emulator with
//! launches the launch checks allow, every access it makes is traced, and each one is checked
//! against exactly what the proof claimed for its line ([`jitseam::verify::Proof::claims`]):
//! through which operand, load, store or atomic, how many bytes, and within the bytes the
//! launch gives that operand (`0 ≤ offset ≤ reach − bytes`, `offset ≡ 0 (mod bytes)`; for a
//! strided view, at one of the view's elements).
//!
//! A hole in the proof shows at the first access that does something the proof did not claim,
//! not only when an access happens to leave every allocation.
//!
//! A kernel `load()` proves with run-time guards runs its guarded rewrite, whose proof claims
//! each guarded access at its line like any other (the rewrite keeps lines): each is checked
//! the same way, against the bytes the launch lends its operand — which are the guard's limit,
//! as every buffer here holds exactly its operand's extent for the launch. A guard that fails
//! on these legal launches is a violation too (the corpus's indices are in range), and so is
//! an access of the fault record unless the proof claims one at that line.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use jitseam::abi::AbiContract;
use jitseam::device::{Arg, ArgMut, EmulatorConfig};
use jitseam::{AbiKind, Device, ElementKind, Kernel, LaunchConfig};
use jitseam_emu::interp::{AccessEvent, AccessTrace, TracedKind, TracedSpace};
use jitseam_verify::{AccessClaim, AccessKind, ClaimTarget, Proof, verify_guarded_entry};

/// Keeps every access of the launches it traces.
#[derive(Default)]
struct Recorder(Mutex<Vec<AccessEvent>>);

impl AccessTrace for Recorder {
    fn access(&self, event: &AccessEvent) {
        self.0.lock().unwrap().push(*event);
    }
}

impl Recorder {
    fn take(&self) -> Vec<AccessEvent> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn traced_device() -> (Device, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let device = Device::emulator_with(EmulatorConfig {
        trace: Some(recorder.clone() as Arc<dyn AccessTrace>),
        ..EmulatorConfig::default()
    });
    (device, recorder)
}

/// What a launch lent one pointer parameter: its bytes, and for a strided view the element
/// offsets (in elements) it may reach.
struct Lent {
    param: u32,
    base: u64,
    bytes: u64,
    elem: u64,
    elements: Option<BTreeSet<i64>>,
}

/// Checks every traced access against the proof's claims; returns the violations, in words.
fn check(entry: &str, proof: &Proof, lent: &[Lent], events: &[AccessEvent]) -> Vec<String> {
    let mut by_line: HashMap<u32, Vec<&AccessClaim>> = HashMap::new();
    for claim in &proof.claims {
        by_line.entry(claim.line).or_default().push(claim);
    }
    let mut problems = Vec::new();
    for e in events {
        let kind = match e.kind {
            TracedKind::Load => AccessKind::Load,
            TracedKind::Store => AccessKind::Store,
            TracedKind::Atomic => AccessKind::Atomic,
        };
        let claims = by_line.get(&e.line).map_or(&[][..], |v| v.as_slice());
        let wrong = |what: String| format!("{entry}: line {}: {what} ({e:?})", e.line);
        match e.space {
            TracedSpace::Global => {
                let Some(op) = lent
                    .iter()
                    .find(|l| e.addr >= l.base && e.addr < l.base + l.bytes.max(1))
                else {
                    // A failing guard's write of the fault record, through a hidden parameter
                    // (no operand of the launch): the failure itself is a violation, reported
                    // by the synchronization.
                    let record = claims.iter().any(|c| {
                        matches!(c.target, ClaimTarget::Param(p) if !lent.iter().any(|l| l.param == p))
                            && c.kind == kind
                            && c.bytes == e.bytes
                    });
                    if !record {
                        problems.push(wrong("an access outside every operand".to_owned()));
                    }
                    continue;
                };
                let claimed = claims.iter().any(|c| {
                    c.target == ClaimTarget::Param(op.param) && c.kind == kind && c.bytes == e.bytes
                });
                if !claimed {
                    problems.push(wrong(format!(
                        "{kind:?} of {} bytes through param {}, which the proof does not claim here (claims: {claims:?})",
                        e.bytes, op.param
                    )));
                    continue;
                }
                let offset = e.addr - op.base;
                let bytes = u64::from(e.bytes);
                if offset % bytes != 0 || offset + bytes > op.bytes {
                    problems.push(wrong(format!(
                        "offset {offset} of {} bytes outside the operand's {} bytes or misaligned",
                        e.bytes, op.bytes
                    )));
                }
                if let Some(elements) = &op.elements {
                    let element = (offset / op.elem) as i64;
                    if offset % op.elem != 0 || !elements.contains(&element) {
                        problems.push(wrong(format!(
                            "element {element} is not one of the strided view's"
                        )));
                    }
                }
            }
            TracedSpace::Shared => {
                let claimed = claims.iter().any(|c| {
                    matches!(c.target, ClaimTarget::Shared(_))
                        && c.kind == kind
                        && c.bytes == e.bytes
                });
                if !claimed || e.addr % u64::from(e.bytes) != 0 {
                    problems.push(wrong(format!(
                        "a shared access the proof does not claim here (claims: {claims:?})"
                    )));
                }
            }
            // A thread's own frame, a parameter or a module variable: no operand of the launch.
            TracedSpace::Local | TracedSpace::Other => {}
        }
    }
    problems
}

/// How a launch of a kernel proven with `proof` ended, told apart: a guard fault of a guarded
/// kernel (these kernels include unsafe mutants, whose stray accesses the guards catch) is the
/// guard at work, not a fault.
fn settled(result: Result<(), jitseam::Error>, proof: &Proof) -> Result<(), jitseam::Error> {
    match result {
        Err(jitseam::Error::GuardFault(_)) if !proof.guards().is_empty() => Ok(()),
        other => other,
    }
}

/// The element offsets a strided view reaches: `Σ c_k · s_k` over `0 ≤ c_k < shape_k`.
fn view_elements(offset: i64, shape: &[usize], strides: &[isize]) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    let total: usize = shape.iter().product();
    for flat in 0..total {
        let mut rest = flat;
        let mut at = offset;
        for (k, &extent) in shape.iter().enumerate().rev() {
            let c = rest % extent;
            rest /= extent;
            at += c as i64 * strides[k] as i64;
        }
        out.insert(at);
    }
    out
}

/// A test value of an element type, from a small integer.
trait Value: jitseam::Element {
    fn value(i: usize) -> Self;
}

macro_rules! values {
    ($($t:ty => $f:expr),* $(,)?) => {$(
        impl Value for $t {
            fn value(i: usize) -> Self {
                let f: fn(usize) -> $t = $f;
                f(i)
            }
        }
    )*};
}

values! {
    f32 => |i| (i % 17) as f32 * 0.25 - 1.0,
    f64 => |i| (i % 17) as f64 * 0.25 - 1.0,
    half::f16 => |i| half::f16::from_f64((i % 17) as f64 * 0.25 - 1.0),
    half::bf16 => |i| half::bf16::from_f64((i % 17) as f64 * 0.25 - 1.0),
    i32 => |i| (i % 7) as i32,
    u32 => |i| (i % 7) as u32,
    i64 => |i| (i % 7) as i64,
    u64 => |i| (i % 7) as u64,
    i8 => |i| (i % 7) as i8,
    u8 => |i| (i % 7) as u8,
}

macro_rules! buffers {
    ($($variant:ident $t:ty),* $(,)?) => {
        /// Typed buffers of every element kind a dense kernel may take.
        enum Buf {
            $($variant(jitseam::DeviceBuffer<$t>),)*
        }

        /// A strided view of a [`Buf`], typed.
        enum View<'a> {
            $($variant(jitseam::device::StridedView<'a, $t>),)*
        }

        /// A writable strided view of a [`Buf`], typed.
        enum ViewMut<'a> {
            $($variant(jitseam::device::StridedViewMut<'a, $t>),)*
        }

        impl Buf {
            fn new(device: &Device, kind: ElementKind, len: usize) -> Buf {
                match kind {
                    $(ElementKind::$variant => Buf::$variant(
                        device.upload(&(0..len).map(<$t as Value>::value).collect::<Vec<_>>()).unwrap(),
                    ),)*
                    other => panic!("no dense buffers of {other}"),
                }
            }

            fn address(&self) -> u64 {
                match self { $(Buf::$variant(b) => b.address(),)* }
            }

            fn elem(&self) -> u64 {
                match self { $(Buf::$variant(_) => std::mem::size_of::<$t>() as u64,)* }
            }

            fn arg(&self) -> Arg<'_> {
                match self { $(Buf::$variant(b) => b.into(),)* }
            }

            fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(Buf::$variant(b) => b.into(),)* }
            }

            fn strided(&self, offset: usize, shape: &[usize], strides: &[isize]) -> View<'_> {
                match self {
                    $(Buf::$variant(b) => View::$variant(b.strided(offset, shape, strides).unwrap()),)*
                }
            }

            fn strided_mut(&mut self, offset: usize, shape: &[usize], strides: &[isize]) -> ViewMut<'_> {
                match self {
                    $(Buf::$variant(b) => ViewMut::$variant(b.strided_mut(offset, shape, strides).unwrap()),)*
                }
            }
        }

        impl View<'_> {
            fn arg(&self) -> Arg<'_> {
                match self { $(View::$variant(v) => v.into(),)* }
            }
        }

        impl ViewMut<'_> {
            fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(ViewMut::$variant(v) => v.into(),)* }
            }
        }
    };
}

buffers! {
    F32 f32, F64 f64, F16 half::f16, BF16 half::bf16, I32 i32, U32 u32, I64 i64, U64 u64,
    I8 i8, U8 u8,
}

/// Every dense-ABI kernel of the NVRTC fixtures and of the verifier corpus, accepted or not:
/// the test checks those `load()` proves (a rejected one that a hole let through is checked
/// too).
fn dense_kernels() -> Vec<(String, String, jitseam::AbiSpec)> {
    let mut out: Vec<(String, String, jitseam::AbiSpec)> = common::fixtures::all()
        .iter()
        .map(|f| (f.entry.to_owned(), f.ptx.to_owned(), f.spec.clone()))
        .collect();
    for e in common::verify_corpus::entries() {
        out.push((e.entry, e.ptx, e.spec));
    }
    out
}

fn params_for(spec: &jitseam::AbiSpec) -> Vec<jitseam::abi::ParamValue> {
    spec.params
        .iter()
        .map(|kind| match kind {
            ElementKind::F32 => jitseam::abi::ParamValue::from(1.5f32),
            ElementKind::F64 => jitseam::abi::ParamValue::from(-2.25f64),
            ElementKind::F16 => jitseam::abi::ParamValue::from(half::f16::from_f32(0.5)),
            ElementKind::BF16 => jitseam::abi::ParamValue::from(half::bf16::from_f32(0.5)),
            ElementKind::I32 => jitseam::abi::ParamValue::from(3i32),
            ElementKind::U32 => jitseam::abi::ParamValue::from(3u32),
            ElementKind::I64 => jitseam::abi::ParamValue::from(3i64),
            ElementKind::U64 => jitseam::abi::ParamValue::from(3u64),
            other => panic!("no param of {other}"),
        })
        .collect()
}

#[test]
fn every_access_of_every_proven_dense_kernel_is_one_its_proof_claims() {
    let (device, recorder) = traced_device();
    let stream = device.default_stream();
    let mut launches = 0;
    let mut accesses = 0;
    let mut problems = Vec::new();
    for (entry, ptx, spec) in dense_kernels() {
        let Ok(proof) = verify_guarded_entry(&ptx, &entry, &spec.contract()) else {
            continue;
        };
        let kernel = Kernel::describe(jitseam::Artifact::ptx(ptx.clone(), &entry, spec.clone()))
            .unwrap()
            .load()
            .unwrap()
            .bind(&device)
            .unwrap();
        let params = params_for(&spec);
        match &spec.abi {
            AbiKind::Scalar | AbiKind::Vectorized { .. } => {
                let width = match spec.abi {
                    AbiKind::Vectorized { width } => usize::from(width),
                    _ => 1,
                };
                for count in [0usize, 1, 2, 3, 31, 255, 257, 1030] {
                    let n = count * width;
                    let ins: Vec<Buf> = spec
                        .inputs
                        .iter()
                        .map(|k| Buf::new(&device, *k, n))
                        .collect();
                    let mut outs: Vec<Buf> = spec
                        .outputs
                        .iter()
                        .map(|k| Buf::new(&device, *k, n))
                        .collect();
                    let mut lent = Vec::new();
                    for (i, b) in ins.iter().chain(outs.iter()).enumerate() {
                        lent.push(Lent {
                            param: i as u32,
                            base: b.address(),
                            bytes: n as u64 * b.elem(),
                            elem: b.elem(),
                            elements: None,
                        });
                    }
                    let args: Vec<Arg<'_>> = ins.iter().map(Buf::arg).collect();
                    let mut out_args: Vec<ArgMut<'_>> = outs.iter_mut().map(Buf::arg_mut).collect();
                    kernel
                        .launch(&stream, &args, &mut out_args, &[n], &params)
                        .unwrap_or_else(|e| panic!("{entry} n={n}: {e}"));
                    drop(out_args);
                    if let Err(fault) = settled(stream.synchronize(), &proof) {
                        problems.push(format!("{entry} n={n}: a proven kernel faulted: {fault}"));
                    }
                    let events = recorder.take();
                    accesses += events.len();
                    launches += 1;
                    problems.extend(check(&entry, &proof, &lent, &events));
                }
            }
            AbiKind::Strided { rank } => {
                let rank = usize::from(*rank);
                // Shapes with odd extents, and views that broadcast (stride 0), run backwards
                // (negative strides) and are transposed.
                let shapes: Vec<Vec<usize>> = match rank {
                    1 => vec![vec![0], vec![1], vec![7], vec![300]],
                    2 => vec![vec![3, 5], vec![1, 9], vec![17, 2], vec![0, 4]],
                    3 => vec![vec![2, 3, 4], vec![1, 1, 5], vec![3, 1, 2]],
                    _ => {
                        let of = |sides: [usize; 8]| sides[..rank].to_vec();
                        vec![
                            of([2, 3, 1, 2, 1, 3, 1, 2]),
                            of([1; 8]),
                            of([3, 1, 2, 2, 1, 1, 2, 1]),
                        ]
                    }
                };
                for shape in shapes {
                    let n: usize = shape.iter().product();
                    let contiguous: Vec<isize> = {
                        let mut s = vec![1isize; rank];
                        for k in (0..rank.saturating_sub(1)).rev() {
                            s[k] = s[k + 1] * shape[k + 1] as isize;
                        }
                        s
                    };
                    let span = n.max(1) * 2 + 4;
                    let ins: Vec<Buf> = spec
                        .inputs
                        .iter()
                        .map(|k| Buf::new(&device, *k, span))
                        .collect();
                    let mut outs: Vec<Buf> = spec
                        .outputs
                        .iter()
                        .map(|k| Buf::new(&device, *k, span))
                        .collect();
                    let mut views: Vec<(usize, Vec<isize>)> = Vec::new();
                    for i in 0..ins.len() {
                        // Input 0 backwards along the last axis, input 1 broadcast along the
                        // first, others contiguous.
                        let mut strides = contiguous.clone();
                        let mut offset = 0usize;
                        if i == 0 && shape[rank - 1] > 1 {
                            strides[rank - 1] = -1;
                            offset = shape[rank - 1] - 1;
                        } else if i == 1 {
                            strides[0] = 0;
                        }
                        views.push((offset, strides));
                    }
                    let mut lent = Vec::new();
                    for (i, b) in ins.iter().enumerate() {
                        let (offset, strides) = &views[i];
                        lent.push(Lent {
                            param: i as u32,
                            base: b.address(),
                            bytes: span as u64 * b.elem(),
                            elem: b.elem(),
                            elements: Some(view_elements(*offset as i64, &shape, strides)),
                        });
                    }
                    for (j, b) in outs.iter().enumerate() {
                        lent.push(Lent {
                            param: (ins.len() + j) as u32,
                            base: b.address(),
                            bytes: span as u64 * b.elem(),
                            elem: b.elem(),
                            elements: Some(view_elements(0, &shape, &contiguous)),
                        });
                    }
                    let in_views: Vec<View<'_>> = ins
                        .iter()
                        .zip(&views)
                        .map(|(b, (offset, strides))| b.strided(*offset, &shape, strides))
                        .collect();
                    let mut out_views: Vec<ViewMut<'_>> = outs
                        .iter_mut()
                        .map(|b| b.strided_mut(0, &shape, &contiguous))
                        .collect();
                    let args: Vec<Arg<'_>> = in_views.iter().map(View::arg).collect();
                    let mut out_args: Vec<ArgMut<'_>> =
                        out_views.iter_mut().map(ViewMut::arg_mut).collect();
                    kernel
                        .launch(&stream, &args, &mut out_args, &shape, &params)
                        .unwrap_or_else(|e| panic!("{entry} shape {shape:?}: {e}"));
                    drop(out_args);
                    drop(out_views);
                    if let Err(fault) = settled(stream.synchronize(), &proof) {
                        problems.push(format!(
                            "{entry} shape {shape:?}: a proven kernel faulted: {fault}"
                        ));
                    }
                    let events = recorder.take();
                    accesses += events.len();
                    launches += 1;
                    problems.extend(check(&entry, &proof, &lent, &events));
                }
            }
            AbiKind::Custom(_) => {}
        }
    }
    println!("whole-kernel check (dense): {launches} launches, {accesses} accesses checked");
    assert!(launches > 100, "only {launches} launches");
    assert!(
        problems.is_empty(),
        "{} violations; the first:\n{}",
        problems.len(),
        problems[0]
    );
}

#[test]
fn every_access_of_every_proven_corpus_kernel_is_one_its_proof_claims() {
    let (device, recorder) = traced_device();
    let stream = device.default_stream();
    let mut launches = 0;
    let mut accesses = 0;
    let mut problems = Vec::new();
    let mut guarded = 0;
    for e in real_corpus::manifest() {
        let ptx = e.ptx();
        let Ok(proof) = verify_guarded_entry(&ptx, &e.entry, &e.spec.contract()) else {
            continue;
        };
        guarded += usize::from(!proof.guards().is_empty());
        let kernel = Kernel::describe(e.artifact())
            .unwrap()
            .load()
            .unwrap()
            .bind(&device)
            .unwrap();
        let case = real_corpus::prepare(&e);
        let table = e.params_table();
        // The recorded launch, and the same work on other legal blocks (odd sizes where the
        // kernel's extents do not depend on the geometry).
        let mut configs = vec![e.config];
        let signature = e.raw["signature"].as_str().unwrap_or_default();
        let depends_on_geometry = signature.contains("grid") || signature.contains("block");
        if !depends_on_geometry {
            let [gx, gy, gz] = e.config.grid;
            let [bx, by, bz] = e.config.block;
            configs.push(LaunchConfig::new(
                [gx * 2 + 1, gy, gz],
                [bx.div_ceil(2).max(1), by, bz],
            ));
        }
        for (c, config) in configs.into_iter().enumerate() {
            let mut inputs = Vec::new();
            let mut outputs = Vec::new();
            for (name, kind) in &table {
                match kind {
                    jitseam::abi::CustomKind::In(_) => {
                        inputs.push(real_corpus::DevBuf::upload(&device, case.data(name)).unwrap());
                    }
                    jitseam::abi::CustomKind::Out(_) => {
                        outputs
                            .push(real_corpus::DevBuf::upload(&device, case.data(name)).unwrap());
                    }
                    jitseam::abi::CustomKind::Value(_) => {}
                }
            }
            let mut lent = Vec::new();
            let (mut i, mut o) = (0, 0);
            for (index, (_, kind)) in table.iter().enumerate() {
                let buf = match kind {
                    jitseam::abi::CustomKind::In(_) => {
                        i += 1;
                        &inputs[i - 1]
                    }
                    jitseam::abi::CustomKind::Out(_) => {
                        o += 1;
                        &outputs[o - 1]
                    }
                    jitseam::abi::CustomKind::Value(_) => continue,
                };
                lent.push(Lent {
                    param: index as u32,
                    base: buf.address(),
                    bytes: buf.bytes(),
                    elem: 1,
                    elements: None,
                });
            }
            let ins: Vec<Arg<'_>> = inputs.iter().map(real_corpus::DevBuf::arg).collect();
            let mut outs: Vec<ArgMut<'_>> = outputs
                .iter_mut()
                .map(real_corpus::DevBuf::arg_mut)
                .collect();
            match kernel.launch_custom(&stream, Some(config), &ins, &mut outs, &e.params) {
                Ok(()) => {}
                // A geometry the launch checks refuse is no launch to check.
                Err(err) if err.is_decline() => continue,
                Err(err) => panic!("{}: {err}", e.entry),
            }
            drop(outs);
            match stream.synchronize() {
                Ok(()) => {}
                // Not a claim of the proof (which is of bounds, not of initialization): a
                // body that assumes the recorded block shape, run on another, reads shared
                // memory its block never wrote. A guard failing here is a violation: the
                // corpus's indices are in range.
                Err(jitseam::Error::MemoryFault(fault))
                    if c > 0
                        && fault.kind == jitseam_emu::interp::FaultKind::UninitializedShared => {}
                Err(fault) => {
                    problems.push(format!("{}: a proven kernel faulted: {fault}", e.entry));
                }
            }
            let events = recorder.take();
            accesses += events.len();
            launches += 1;
            problems.extend(check(&e.entry, &proof, &lent, &events));
        }
    }
    println!(
        "whole-kernel check (corpus): {launches} launches ({guarded} kernels guarded), {accesses} accesses checked"
    );
    assert!(launches >= 20, "only {launches} launches");
    assert!(guarded >= 20, "only {guarded} guarded kernels");
    assert!(
        problems.is_empty(),
        "{} violations; the first:\n{}",
        problems.len(),
        problems[0]
    );
}
