//! What a checked launch costs, against cudarc's unchecked one, measured in the same run.
//!
//! jitseam: a full launch of a 3-operand scalar f32 kernel (2 inputs, 1 output, `n`) on a no-op
//! backend — `check`, `marshal`, the access logs that order each buffer's uses across streams and
//! the hand-off through the backend trait, everything but the driver call — through each face:
//! erased (`Kernel<Erased>::launch`), typed (a `#[jitseam::kernel]` launcher) and a slot dispatch
//! (`SlotRef::launch`), all on one stream; the erased launch alternating between two streams
//! (each launch then waits for the other stream's write of the output: an event recorded there
//! and waited for, and the logs updated under their locks); and check + marshal alone.
//!
//! cudarc: `stream.launch_builder(&f).arg(&a).arg(&b).arg(&mut out).arg(&n).launch(cfg)`, its
//! packing reproduced exactly as cudarc 0.19 does it (`support/cudarc_packing.rs`) with the driver
//! calls replaced by an opaque call, in its two configurations: one stream (no event tracking)
//! and several streams (each slice's read/write events pushed to `waits`/`records`).
//!
//! The custom ABI: check + marshal of a naive matmul declared in its own parameter order
//! (`#[len(m * k)] a, #[len(k * n)] b, #[len(m * n)] c, m, n, k`) on a 2-D launch config —
//! three extents evaluated, the config checked against the device's limits — next to the
//! scalar kernel's check + marshal. Goal: ≤ 150 ns.
//!
//! Guards: the scalar gather of tests/fixtures/guards/ (`out[i] = x[idx[i]]`, 2 inputs and 1
//! output like the scalar kernel) loaded with `load()`, whose proof guards the data-dependent
//! load — its launch finds the stream's fault record and appends the hidden params (record,
//! tags, limit) — next to the same PTX loaded with `load_unverified()` (no guards, no proof),
//! both erased on one stream. Goal: guarded − unguarded ≤ 10 ns.
//!
//! Every figure is the median of 101 batches (with min and max); the summary prints the ratio
//! jitseam/cudarc for each face. Goal: the full erased launch ≤ 1.0× cudarc's single-stream
//! packing and ≤ 60 ns. Where `valgrind` is installed, instructions per call are counted by
//! callgrind too (this binary run twice with different call counts, so setup cancels out): a
//! figure load on a shared machine cannot move.
//!
//! `cargo bench --bench launch_overhead`

#[path = "../tests/common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "support/cudarc_packing.rs"]
mod cudarc_packing;
#[allow(dead_code)]
#[path = "support/stats.rs"]
mod stats;

use std::hint::black_box;
use std::sync::Arc;

use common::{fake, fixtures};
use jitseam::device::{Arg, ArgMut};
use jitseam::launch::{check, check_custom, marshal_with};
use jitseam::{
    AbiKind, AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, In, Kernel,
    LaunchConfig, Out, ParamValue, Signature, SlotRef, Stream,
};
use stats::{Summary, ns_per_call};

const N: usize = 1 << 20;
const ENTRY: &str = "baracuda_gen_add_f32_scalar";

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

#[jitseam::kernel(abi = custom)]
fn matmul(
    #[len(m * k)] a: In<f32>,
    #[len(k * n)] b: In<f32>,
    #[len(m * n)] c: Out<f32>,
    m: u32,
    n: u32,
    k: u32,
);

/// The matmul's shape: 1024 × 1024 by 1024, in 16 × 16 blocks.
const MATMUL: (u32, u32, u32) = (1024, 1024, 1024);

jitseam::slot_table!(static TABLE: 1);

struct Jitseam {
    _device: Device,
    stream: Stream,
    /// The stream the cross-stream face alternates with `stream`.
    other: Stream,
    /// Launches of the cross-stream face so far: odd ones go to `other`.
    flips: usize,
    erased: Kernel<Erased, DeviceBound>,
    typed: Kernel<Add, DeviceBound>,
    slot: SlotRef,
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
    /// The cross-stream face's own operands: the others stay on one stream, as they would in a
    /// program that keeps each buffer to its stream.
    cross: [DeviceBuffer<f32>; 3],
    /// The custom-ABI matmul and its operands (`a`, `b`, `c`).
    matmul: Kernel<Matmul, DeviceBound>,
    matrices: [DeviceBuffer<f32>; 3],
    /// The gather loaded with guards and unverified, and its operands (`x`, `idx`, `out`).
    guarded: Kernel<Erased, DeviceBound>,
    unguarded: Kernel<Erased, DeviceBound>,
    gather: (DeviceBuffer<f32>, DeviceBuffer<i32>, DeviceBuffer<f32>),
}

fn bind<K: Signature>(device: &Device) -> Kernel<K, DeviceBound> {
    let fixture = fixtures::by_entry(ENTRY);
    Kernel::<K, _>::describe_typed(K::ptx_artifact(fixture.ptx))
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap_or_else(|e| panic!("binding {ENTRY}: {e}"))
}

impl Jitseam {
    fn new() -> Self {
        let device = fake::noop();
        let erased = Kernel::describe(fixtures::by_entry(ENTRY).artifact())
            .and_then(|k| Ok(k.load()?.bind(&device)?))
            .unwrap_or_else(|e| panic!("binding {ENTRY}: {e}"));
        let slot = TABLE
            .claim(bind_erased(&device))
            .unwrap_or_else(|e| panic!("claim: {e}"));
        let alloc = || {
            device
                .alloc::<f32>(N)
                .unwrap_or_else(|e| panic!("alloc: {e}"))
        };
        Self {
            stream: device.default_stream(),
            other: device
                .new_stream()
                .unwrap_or_else(|e| panic!("new stream: {e}")),
            flips: 0,
            typed: bind::<Add>(&device),
            erased,
            slot,
            a: alloc(),
            b: alloc(),
            out: alloc(),
            cross: [alloc(), alloc(), alloc()],
            matmul: bind_matmul(&device),
            matrices: [alloc(), alloc(), alloc()],
            guarded: bind_gather(&device, true),
            unguarded: bind_gather(&device, false),
            gather: (
                alloc(),
                device
                    .alloc::<i32>(N)
                    .unwrap_or_else(|e| panic!("alloc: {e}")),
                alloc(),
            ),
            _device: device,
        }
    }

    fn erased(&mut self) -> Result<(), jitseam::Error> {
        self.erased.launch(
            &self.stream,
            &[(&self.a).into(), (&self.b).into()],
            &mut [(&mut self.out).into()],
            black_box(&[N]),
            &[],
        )
    }

    /// The gather, guarded or not, erased on the one stream.
    fn gather(&mut self, guarded: bool) -> Result<(), jitseam::Error> {
        let kernel = if guarded {
            &self.guarded
        } else {
            &self.unguarded
        };
        let (x, idx, out) = &mut self.gather;
        kernel.launch(
            &self.stream,
            &[(&*x).into(), (&*idx).into()],
            &mut [out.into()],
            black_box(&[N]),
            &[],
        )
    }

    /// The erased launch on `stream` and `other` in turn: the output was last written on the
    /// other stream, and both streams read the inputs.
    fn cross_stream(&mut self) -> Result<(), jitseam::Error> {
        self.flips += 1;
        let stream = if self.flips.is_multiple_of(2) {
            &self.stream
        } else {
            &self.other
        };
        let [a, b, out] = &mut self.cross;
        self.erased.launch(
            stream,
            &[(&*a).into(), (&*b).into()],
            &mut [out.into()],
            black_box(&[N]),
            &[],
        )
    }

    fn typed(&mut self) -> Result<(), jitseam::Error> {
        self.typed
            .launch(&self.stream, Add::args(&self.a, &self.b, &mut self.out))
    }

    fn slot(&mut self) -> Result<(), jitseam::Error> {
        let inputs = [Arg::from(&self.a), Arg::from(&self.b)];
        let mut outputs = [ArgMut::from(&mut self.out)];
        self.slot.launch(
            &self
                .slot
                .call(&self.stream, &inputs, &mut outputs, black_box(&[N]), &[]),
        )
    }

    /// `check` + `marshal`, no backend: one packet byte, so nothing is optimized away.
    fn check_marshal(&self) -> u8 {
        let (inputs, outputs) = ([self.a.desc(), self.b.desc()], [self.out.desc()]);
        let checked = check(
            black_box(self.erased.facts()),
            black_box(self.stream.device_id()),
            black_box(&inputs),
            black_box(&outputs),
            black_box(&[N]),
            black_box(&[]),
        )
        .unwrap_or_else(|e| panic!("check: {e}"));
        marshal_with(&checked, |packet| black_box(packet.bytes())[24])
    }

    /// The custom matmul's `check_custom` + `marshal`: three extents evaluated for the params
    /// and a 2-D config checked against the device's limits.
    fn custom_check_marshal(&self) -> u8 {
        let (m, n, k) = MATMUL;
        let [a, b, c] = &self.matrices;
        let (inputs, outputs) = ([a.desc(), b.desc()], [c.desc()]);
        let params = [ParamValue::U32(m), ParamValue::U32(n), ParamValue::U32(k)];
        let config = LaunchConfig::new([n.div_ceil(16), m.div_ceil(16), 1], [16, 16, 1]);
        let checked = check_custom(
            black_box(self.matmul.facts()),
            black_box(self.stream.device_id()),
            black_box(Some(config)),
            black_box(&inputs),
            black_box(&outputs),
            black_box(&params),
        )
        .unwrap_or_else(|e| panic!("check_custom: {e}"));
        marshal_with(&checked, |packet| black_box(packet.bytes())[24])
    }
}

fn bind_matmul(device: &Device) -> Kernel<Matmul, DeviceBound> {
    let ptx = include_str!("../tests/fixtures/custom/custom.ptx");
    let described = Kernel::<Matmul, _>::describe_typed(Matmul::ptx_artifact(ptx))
        .unwrap_or_else(|e| panic!("describing matmul: {e}"));
    // SAFETY: the kernel is bound to a no-op backend that runs nothing; only the launch path's
    // checks and packing are measured.
    unsafe { described.load_unverified() }
        .map_err(jitseam::Error::from)
        .and_then(|k| Ok(k.bind(device)?))
        .unwrap_or_else(|e| panic!("binding matmul: {e}"))
}

/// The gather of tests/fixtures/guards/, loaded with guards (`load()`) or unverified.
fn bind_gather(device: &Device, guarded: bool) -> Kernel<Erased, DeviceBound> {
    let spec = AbiSpec::owned(
        AbiKind::Scalar,
        vec![ElementKind::F32, ElementKind::I32],
        vec![ElementKind::F32],
        Vec::new(),
    );
    let ptx = include_str!("../tests/fixtures/guards/gather_scalar.ptx");
    let described = Kernel::describe(Artifact::ptx(ptx, "gather", spec))
        .unwrap_or_else(|e| panic!("describing the gather: {e}"));
    let loaded = if guarded {
        described.load()
    } else {
        // SAFETY: bound to a no-op backend that runs nothing; only the launch path is measured.
        unsafe { described.load_unverified() }
    }
    .unwrap_or_else(|e| panic!("loading the gather: {e}"));
    assert_eq!(
        loaded.loaded().guarded().is_some(),
        guarded,
        "the gather's load() must guard it"
    );
    loaded
        .bind(device)
        .unwrap_or_else(|e| panic!("binding the gather: {e}"))
}

fn bind_erased(device: &Device) -> Kernel<Erased, DeviceBound> {
    Kernel::describe(fixtures::by_entry(ENTRY).artifact())
        .and_then(|k| Ok(k.load()?.bind(device)?))
        .unwrap_or_else(|e| panic!("binding {ENTRY}: {e}"))
}

/// cudarc's side: a context in one configuration, its stream, three slices and a function.
struct Cudarc {
    stream: Arc<cudarc_packing::Stream>,
    func: cudarc_packing::Function,
    a: cudarc_packing::Slice,
    b: cudarc_packing::Slice,
    out: cudarc_packing::Slice,
    n: u64,
}

impl Cudarc {
    // cudarc holds its stream in an `Arc` (and declares it `Send + Sync`); the copy here stays on
    // one thread.
    #[allow(clippy::arc_with_non_send_sync)]
    fn new(extra_streams: usize) -> Self {
        let ctx = cudarc_packing::Context::new(extra_streams);
        let stream = Arc::new(cudarc_packing::Stream::new(ctx));
        let slice = |address| cudarc_packing::Slice::new(&stream, address, N);
        Self {
            a: slice(0x1_0000),
            b: slice(0x50_0000),
            out: slice(0x90_0000),
            func: cudarc_packing::Function::new(),
            n: N as u64,
            stream,
        }
    }

    fn launch(&mut self) -> Result<(), i32> {
        let grid = (N as u32).div_ceil(1024);
        let mut builder = cudarc_packing::launch_builder(&self.stream, &self.func);
        builder
            .arg_slice(&self.a)
            .arg_slice(&self.b)
            .arg_slice_mut(&mut self.out)
            .arg_value(black_box(&self.n));
        builder.launch(grid, 1024)
    }
}

/// Set to `face:k` for a run of `k` calls of one face and nothing else (see [`instructions`]).
const CALLS_VAR: &str = "LAUNCH_OVERHEAD_CALLS";

const FACES: [&str; 10] = [
    "erased",
    "erased-cross-stream",
    "typed",
    "slot",
    "check+marshal",
    "custom-check+marshal",
    "cudarc-1-stream",
    "cudarc-n-streams",
    "gather-guarded",
    "gather-unguarded",
];

fn run_face(face: &str, calls: usize, jit: &mut Jitseam, one: &mut Cudarc, many: &mut Cudarc) {
    for _ in 0..calls {
        match face {
            "erased" => drop(black_box(jit.erased())),
            "erased-cross-stream" => drop(black_box(jit.cross_stream())),
            "typed" => drop(black_box(jit.typed())),
            "slot" => drop(black_box(jit.slot())),
            "check+marshal" => drop(black_box(jit.check_marshal())),
            "custom-check+marshal" => drop(black_box(jit.custom_check_marshal())),
            "cudarc-1-stream" => drop(black_box(one.launch())),
            "gather-guarded" => drop(black_box(jit.gather(true))),
            "gather-unguarded" => drop(black_box(jit.gather(false))),
            _ => drop(black_box(many.launch())),
        }
    }
}

/// Instructions per call of `face`: this binary run twice under callgrind with different call
/// counts, so setup and process start cancel out. `None` without valgrind.
fn instructions(face: &str) -> Option<u64> {
    let run = |calls: u64| stats::callgrind(CALLS_VAR, &format!("{face}:{calls}"));
    let (low, high) = (run(1_000)?, run(11_000)?);
    Some(high.checked_sub(low)? / 10_000)
}

fn main() {
    let mut jit = Jitseam::new();
    let mut one = Cudarc::new(0);
    let mut many = Cudarc::new(1);
    for result in [
        jit.erased(),
        jit.cross_stream(),
        jit.typed(),
        jit.slot(),
        jit.gather(true),
        jit.gather(false),
    ] {
        result.unwrap_or_else(|e| panic!("launch refused: {e}"));
    }

    if let Some((face, calls)) = std::env::var(CALLS_VAR).ok().and_then(|v| {
        Some((
            v.split_once(':')?.0.to_owned(),
            v.split_once(':')?.1.parse().ok()?,
        ))
    }) {
        run_face(&face, calls, &mut jit, &mut one, &mut many);
        return;
    }

    const SAMPLES: usize = 101;
    const BATCH: usize = 20_000;
    // Interleaved: each round measures every face once, so all see the same machine state.
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(SAMPLES); FACES.len()];
    for _ in 0..SAMPLES {
        for (face, out) in FACES.iter().zip(&mut samples) {
            let s = ns_per_call(1, BATCH, || {
                run_face(face, 1, &mut jit, &mut one, &mut many)
            });
            out.push(s.median);
        }
    }
    let summaries: Vec<Summary> = samples.into_iter().map(Summary::of).collect();
    let [
        erased,
        cross,
        typed,
        slot,
        check_marshal,
        custom,
        cudarc1,
        cudarcn,
        guarded,
        unguarded,
    ] = summaries[..]
    else {
        unreachable!()
    };
    println!(
        "launch_overhead: ns per launch, 3-operand scalar f32 kernel, {SAMPLES} batches of {BATCH}"
    );
    for (face, s) in FACES.iter().zip(&summaries) {
        println!("  {face:<19} {s:.1} ns");
    }
    for (face, s) in [
        ("erased", erased),
        ("erased-cross-stream", cross),
        ("typed", typed),
        ("slot", slot),
    ] {
        println!(
            "  {face:<19} / cudarc 1 stream: {:.2}x   / cudarc n streams: {:.2}x",
            s.median / cudarc1.median,
            s.median / cudarcn.median
        );
    }
    println!(
        "  check+marshal alone / cudarc 1 stream: {:.2}x",
        check_marshal.median / cudarc1.median
    );
    println!(
        "  custom (matmul, 3 extents, 2-D config) check+marshal: {:.1} ns, {:.2}x the scalar kernel's; goal <= 150 ns: {}",
        custom.median,
        custom.median / check_marshal.median,
        if custom.median <= 150.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  event bookkeeping, cross stream - same stream: {:+.1} ns per launch",
        cross.median - erased.median
    );
    let met = erased.median <= cudarc1.median && erased.median <= 60.0;
    println!(
        "  goal (erased <= 1.0x cudarc 1 stream and <= 60 ns): {}",
        if met { "met" } else { "NOT met" }
    );
    println!(
        "  goal (same-stream launch <= 100 ns): {}",
        if erased.median <= 100.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    let guard_cost = guarded.median - unguarded.median;
    println!(
        "  guarded - unguarded gather: {guard_cost:+.1} ns per launch; goal <= 10 ns: {}",
        if guard_cost <= 10.0 { "met" } else { "NOT met" }
    );
    let mut counts = Vec::new();
    for face in FACES {
        match instructions(face) {
            Some(count) => {
                println!("  {face:<19} {count} instructions per call (callgrind)");
                counts.push(count);
            }
            None => {
                println!("  instruction counts skipped (no valgrind)");
                break;
            }
        }
    }
    if let [.., guarded, unguarded] = counts[..]
        && counts.len() == FACES.len()
    {
        println!(
            "  guarded - unguarded gather: {:+} instructions per launch (callgrind)",
            guarded as i64 - unguarded as i64
        );
    }
}
