//! Differential test: kernels from the reference [`ElementwiseSynthesizer`], run on the emulator
//! end to end (`adopt_request`: synthesize → describe → load → bind on `Device::emulator()`, then
//! the erased launch and a read-back), against a Rust reference of the same region.
//!
//! Random cases: regions of depth ≤ 3 over all 17 ops with random scalars; shapes of rank 1–4
//! with extents 1–5; every operand laid out independently — contiguous, transposed (permuted
//! axes), gapped (padded rows), broadcast (stride 0, inputs only), reversed (negative strides)
//! and offset into a larger allocation (which also varies the declared alignment, and with it
//! vectorized vs scalar); dtypes f32, f64, f16 and bf16. Deterministic: a fixed ChaCha seed and
//! no failure persistence, 128 cases.
//!
//! Every run must:
//! - never fault: the emulator checks every access and answers `Error::MemoryFault` for one
//!   outside an allocation (or misaligned), so a launch that returns `Ok` read and wrote only
//!   inside its operands' allocations;
//! - write every element the output view reaches, with the reference value (the output
//!   allocation starts filled with a NaN sentinel, so an unwritten element fails), and leave
//!   every other element of the output allocation untouched (still the sentinel's bits);
//! - decline exactly where the synthesizer documents it: f64 `exp log tanh sigmoid silu` are
//!   `SynthDecline::UnsupportedOp` (asserted), nothing else declines.
//!
//! # Reference and tolerances
//!
//! The reference evaluates the region per element in the synthesizer's compute type (f32 for
//! f32, f16 and bf16, whose inputs widen exactly; f64 for f64), one rounding per op, exactly as
//! the kernel does, and tracks for every node an absolute error bound (0 = must be identical):
//! - **Exact ops** (`add sub mul div sqrt neg abs max min relu add_scalar mul_scalar`): IEEE
//!   round-to-nearest (`div.rn`, `sqrt.rn`; the emulator runs the PTX as written, so no `fma`
//!   contraction), so a region of only these is compared **bit-exactly**, in every dtype. `min`,
//!   `max` and `relu` follow PTX: a NaN operand yields the other operand, `-0 < +0`.
//! - **Transcendentals** (f32 compute only; documented in `src/synth/elementwise/ops.rs`):
//!   `exp` and `log` ≤ 4 ulp (the docs: "within a few ulp") plus, for `log`, 2^-22 absolute
//!   (`lg2.approx` is accurate in absolute terms); `tanh` relative 2^-10 (`tanh.approx.f32`:
//!   about 2^-11 per the PTX ISA, doubled); `sigmoid` and `silu`, built on `exp`, ≤ 8 ulp.
//!   Results that flush (`ex2.approx.ftz`) get an absolute floor of 2^-126; `silu`'s of 2^-120,
//!   since for `x < -88.7` its `exp(-x)` overflows and the tiny result becomes `-0`. A subnormal
//!   `log` input flushes to zero and gives `-inf` (documented), and the reference does that too.
//! - **Propagation**: a node whose operands carry error gets their first-order propagated bound
//!   (Lipschitz bounds; `div`, `log` and `sqrt` give up — accept anything — when an operand's
//!   interval reaches their singularity) plus one ulp for the rounding, which may now differ.
//! - **Halves** compute in f32 and round once at the store: with bound 0 the half bits must be
//!   identical to the reference's f32 result rounded once to nearest-even; otherwise the output
//!   must lie between the half roundings of `reference ± bound` (rounding is monotone).
//! - A NaN reference with bound 0 requires a NaN (any payload).

use std::sync::atomic::{AtomicUsize, Ordering};

use half::{bf16, f16};
use jitseam::adopt::{AdoptDecline, adopt_request};
use jitseam::device::{Arg, ArgMut};
use jitseam::synth::elementwise::{OPS, op_signature};
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, SynthDecline,
};
use jitseam::{AbiKind, Device, DeviceBuffer, Element, ElementKind, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

const CASES: u32 = 128;
const MAX_RANK: usize = 4;
const TRANSCENDENTALS: [&str; 5] = ["exp", "log", "tanh", "sigmoid", "silu"];
/// The smallest normal f32: the flush-to-zero threshold.
const F32_MIN_NORMAL: f64 = 1.175_494_350_822_287_5e-38;

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

/// A dtype under test: its conversions and the sentinel the output starts filled with.
trait TestElem: Element + std::fmt::Debug {
    /// Whether the synthesizer computes in f64 (else f32).
    const COMPUTE_F64: bool;
    /// Nearest value (one rounding, ties to even).
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn bits(self) -> u64;
    /// A quiet NaN with a payload no arithmetic produces, so "still the sentinel" is a bit test.
    fn sentinel() -> Self;
}

impl TestElem for f32 {
    const COMPUTE_F64: bool = false;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn sentinel() -> Self {
        f32::from_bits(0x7fc0_5a5a)
    }
}

impl TestElem for f64 {
    const COMPUTE_F64: bool = true;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn sentinel() -> Self {
        f64::from_bits(0x7ff8_0000_5a5a_5a5a)
    }
}

impl TestElem for f16 {
    const COMPUTE_F64: bool = false;
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn sentinel() -> Self {
        f16::from_bits(0x7e5a)
    }
}

impl TestElem for bf16 {
    const COMPUTE_F64: bool = false;
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn sentinel() -> Self {
        bf16::from_bits(0x7fda)
    }
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

/// How one operand lies in its allocation, drawn for rank 4 and truncated to the case's rank.
#[derive(Debug, Clone)]
struct LayoutSpec {
    /// Dense row-major (possibly offset): ignores everything but `lead` and `tail`.
    dense: bool,
    /// Physical axis order, outermost first (identity = row-major).
    order: Vec<usize>,
    /// Extra elements per step of each axis (gapped rows).
    pad: Vec<usize>,
    /// Reversed axes (negative stride).
    reversed: Vec<bool>,
    /// Broadcast axes (stride 0); ignored for the output.
    broadcast: Vec<bool>,
    /// Elements before the lowest one the view reaches (an offset view).
    lead: usize,
    /// Elements after the highest one.
    tail: usize,
}

fn layout_spec() -> impl Strategy<Value = LayoutSpec> {
    (
        prop::bool::weighted(0.4),
        Just((0..MAX_RANK).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop_oneof![4 => Just(0usize), 1 => 1usize..3], MAX_RANK),
        prop::collection::vec(prop::bool::weighted(0.3), MAX_RANK),
        prop::collection::vec(prop::bool::weighted(0.2), MAX_RANK),
        prop_oneof![2 => Just(0usize), 1 => 1usize..9],
        0usize..3,
    )
        .prop_map(
            |(dense, order, pad, reversed, broadcast, lead, tail)| LayoutSpec {
                dense,
                order,
                pad,
                reversed,
                broadcast,
                lead,
                tail,
            },
        )
}

/// One operand's concrete layout: origin, strides and allocation length, in elements.
#[derive(Debug, Clone)]
struct Layout {
    origin: usize,
    strides: Vec<isize>,
    alloc_len: usize,
}

impl Layout {
    fn build(shape: &[usize], spec: &LayoutSpec, output: bool) -> Self {
        let rank = shape.len();
        let mut strides = vec![0isize; rank];
        let order: Vec<usize> = if spec.dense {
            (0..rank).collect()
        } else {
            spec.order.iter().copied().filter(|&a| a < rank).collect()
        };
        let mut step = 1isize;
        for &axis in order.iter().rev() {
            let extent = shape[axis] as isize;
            if !spec.dense && !output && spec.broadcast[axis] {
                continue; // stride 0
            }
            let pad = if spec.dense {
                0
            } else {
                spec.pad[axis] as isize
            };
            let reversed = !spec.dense && spec.reversed[axis];
            strides[axis] = if reversed { -step } else { step };
            step *= extent + pad;
        }
        let (mut low, mut high) = (0isize, 0isize);
        for (&extent, &stride) in shape.iter().zip(&strides) {
            let reach = (extent as isize - 1) * stride;
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
        }
        let origin = spec.lead + (-low) as usize;
        Layout {
            origin,
            strides,
            alloc_len: origin + high as usize + 1 + spec.tail,
        }
    }

    /// Element offset in the allocation of the logical multi-index `index`.
    fn at(&self, index: &[usize]) -> usize {
        let rel: isize = index
            .iter()
            .zip(&self.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        (self.origin as isize + rel) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F32,
    F64,
    F16,
    Bf16,
}

#[derive(Debug, Clone)]
struct Case {
    region: Region,
    inputs: usize,
    shape: Vec<usize>,
    dtype: Dtype,
    /// Inputs' layouts, then the output's.
    layouts: Vec<LayoutSpec>,
    /// Where the element values come from.
    data: Data,
    /// Seed of [`Data::Random`] values.
    seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Data {
    /// Mostly small values, some wide, some edge values ([`draw`]).
    Random,
    /// A dense sweep of each op's difficult ranges ([`sweep_value`]).
    Sweep,
}

/// Scalars chosen to mix exact, inexact-in-f32 (0.1) and sign-changing values.
fn scalar() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![2.5, -0.5, 0.0, 1.0, 0.1, -3.0, 1e-3, 7.25, -1.0e4])
}

/// Regions of op depth ≤ 3 over every op, leaves binding input 0, 1 or 2 (reduced modulo the
/// case's input count when the case is built).
fn region() -> impl Strategy<Value = Region> {
    let leaf = (0u32..3).prop_map(Region::bind);
    leaf.prop_recursive(3, 24, 2, |inner| {
        (0..OPS.len(), inner.clone(), inner, scalar()).prop_map(|(i, a, b, s)| {
            let name = OPS[i];
            let (arity, scalars) = op_signature(name).unwrap();
            let operands = if arity == 2 { vec![a, b] } else { vec![a] };
            let scalars = if scalars == 1 { vec![s] } else { Vec::new() };
            Region::op_with_scalars(name, operands, scalars)
        })
    })
}

fn rebind(region: Region, inputs: u32) -> Region {
    match region {
        Region::Bind { index } => Region::bind(index % inputs),
        Region::Op {
            op,
            operands,
            scalars,
        } => Region::op_with_scalars(
            op,
            operands.into_iter().map(|r| rebind(r, inputs)).collect(),
            scalars,
        ),
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        region(),
        1usize..=3,
        prop::collection::vec(
            prop_oneof![2 => Just(1usize), 5 => 2usize..=5],
            1..=MAX_RANK,
        ),
        prop::sample::select(vec![Dtype::F32, Dtype::F64, Dtype::F16, Dtype::Bf16]),
        prop::collection::vec(layout_spec(), 4),
        // Often every operand dense, so the vectorized and scalar ABIs get their share.
        prop::bool::weighted(0.35),
        any::<u64>(),
    )
        .prop_map(
            |(region, inputs, shape, dtype, mut layouts, all_dense, seed)| {
                layouts.truncate(inputs + 1);
                if all_dense {
                    for layout in &mut layouts {
                        layout.dense = true;
                    }
                }
                Case {
                    region: rebind(region, inputs as u32),
                    inputs,
                    shape,
                    dtype,
                    layouts,
                    data: Data::Random,
                    seed,
                }
            },
        )
}

/// splitmix64: element values from the case's seed.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn uniform(state: &mut u64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * ((next(state) >> 11) as f64 / (1u64 << 53) as f64)
}

/// Edge values: signed zeros, the ends of `log`'s series interval, `exp`'s overflow and flush
/// regions, large and tiny magnitudes, infinities and NaN.
const SPECIALS: [f64; 22] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.75,
    1.5,
    0.749_9,
    1.500_1,
    88.0,
    88.5,
    87.5,
    -87.5,
    -90.0,
    20.0,
    -20.0,
    1e-3,
    1e-40,
    1e30,
    -1e30,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn draw(state: &mut u64) -> f64 {
    match next(state) % 20 {
        0..=11 => uniform(state, -3.0, 3.0),
        12..=14 => uniform(state, 0.5, 2.0),
        15 => uniform(state, -100.0, 100.0),
        _ => SPECIALS[(next(state) % SPECIALS.len() as u64) as usize],
    }
}

/// Element `i` of the sweep: the whole `[-100, 100]`, then densely where the recipes switch
/// or lose accuracy — `exp` near overflow (`[86.5, 88.72]`) and near the flush threshold,
/// `log` around its series interval `[0.75, 1.5]`, `tanh`/`sigmoid`/`silu` around 0 — then
/// the edge values; cycling.
fn sweep_value(i: usize) -> f64 {
    let lin = |lo: f64, hi: f64, k: usize, n: usize| lo + (hi - lo) * k as f64 / (n - 1) as f64;
    let i = i % SWEEP_LEN;
    match i {
        0..400 => lin(-100.0, 100.0, i, 400),
        400..800 => lin(86.5, 88.72, i - 400, 400),
        800..900 => lin(-88.0, -86.5, i - 800, 100),
        900..1100 => lin(0.7, 1.6, i - 900, 200),
        1100..1300 => lin(-6.0, 6.0, i - 1100, 200),
        _ => SPECIALS[(i - 1300) % SPECIALS.len()],
    }
}

const SWEEP_LEN: usize = 1300 + SPECIALS.len();

// ---------------------------------------------------------------------------------------------
// Reference
// ---------------------------------------------------------------------------------------------

/// A reference value in the compute type (held as f64; exactly an f32 when computing in f32)
/// and an absolute bound on how far the kernel's value may be from it (0: identical).
#[derive(Debug, Clone, Copy)]
struct Val {
    v: f64,
    err: f64,
}

/// One ulp at magnitude `m` in the compute type.
fn ulp(m: f64, f64_compute: bool) -> f64 {
    let (bits, min_exp) = if f64_compute { (52, -1022) } else { (23, -126) };
    if !m.is_finite() {
        return f64::INFINITY;
    }
    let exp = if m == 0.0 {
        min_exp
    } else {
        (m.abs().log2().floor() as i32).max(min_exp)
    };
    2f64.powi(exp - bits)
}

/// PTX `max`: a NaN operand yields the other; `-0 < +0`.
fn ptx_max(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else {
        f64::from_bits(a.to_bits() & b.to_bits())
    }
}

fn ptx_min(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else {
        f64::from_bits(a.to_bits() | b.to_bits())
    }
}

struct Reference {
    f64_compute: bool,
}

impl Reference {
    /// Rounds to the compute type.
    fn r(&self, x: f64) -> f64 {
        if self.f64_compute {
            x
        } else {
            f64::from(x as f32)
        }
    }

    /// Exact op `v` whose operands carried `propagated` error: one more ulp for the rounding.
    fn exact(&self, v: f64, propagated: f64) -> Val {
        let err = if propagated == 0.0 {
            0.0
        } else {
            propagated + ulp(v.abs() + propagated, self.f64_compute)
        };
        Val {
            v,
            err: if err.is_nan() { f64::INFINITY } else { err },
        }
    }

    /// Approximate op with result `v`, propagated error and its own tolerance. A non-finite
    /// result from exact operands (overflow, `log(0)`, NaN in) must match exactly.
    fn approx(&self, v: f64, propagated: f64, own: f64) -> Val {
        let err = if propagated == 0.0 && !v.is_finite() {
            0.0
        } else {
            propagated + own
        };
        Val {
            v,
            err: if err.is_nan() { f64::INFINITY } else { err },
        }
    }

    fn eval(&self, region: &Region, inputs: &[f64]) -> Val {
        match region {
            Region::Bind { index } => Val {
                v: inputs[*index as usize],
                err: 0.0,
            },
            Region::Op {
                op,
                operands,
                scalars,
            } => {
                let args: Vec<Val> = operands.iter().map(|o| self.eval(o, inputs)).collect();
                let s = scalars.first().map(|&s| self.r(s)).unwrap_or(0.0);
                self.apply(op, &args, s)
            }
        }
    }

    fn apply(&self, op: &str, args: &[Val], s: f64) -> Val {
        let Val { v: a, err: ea } = args[0];
        let (b, eb) = args.get(1).map_or((0.0, 0.0), |x| (x.v, x.err));
        let f32_ulps = |n: f64, v: f64| n * ulp(v.abs(), false);
        match op {
            "add" => self.exact(self.r(a + b), ea + eb),
            "sub" => self.exact(self.r(a - b), ea + eb),
            "mul" => self.exact(self.r(a * b), a.abs() * eb + b.abs() * ea + ea * eb),
            "div" => {
                let v = self.r(a / b);
                if ea + eb == 0.0 {
                    return self.exact(v, 0.0);
                }
                if b.abs() <= eb || !b.is_finite() {
                    return self.exact(v, f64::INFINITY);
                }
                self.exact(v, (ea + (a / b).abs() * eb) / (b.abs() - eb))
            }
            "max" => self.exact(ptx_max(a, b), ea.max(eb)),
            "min" => self.exact(ptx_min(a, b), ea.max(eb)),
            "neg" => self.exact(-a, ea),
            "abs" => self.exact(a.abs(), ea),
            "relu" => self.exact(ptx_max(a, 0.0), ea),
            "sqrt" => {
                let v = self.r(a.sqrt());
                if ea == 0.0 {
                    return self.exact(v, 0.0);
                }
                if a - ea < 0.0 {
                    return self.exact(v, f64::INFINITY);
                }
                self.exact(v, (a + ea).sqrt() - (a - ea).sqrt())
            }
            "add_scalar" => self.exact(self.r(a + s), ea),
            "mul_scalar" => self.exact(self.r(a * s), s.abs() * ea),
            // Transcendentals: f32 compute only (f64 declines them).
            "exp" => {
                let v = self.r(a.exp());
                let propagated = if ea == 0.0 {
                    0.0
                } else {
                    (a + ea).exp() - a.exp()
                };
                self.approx(v, propagated, f32_ulps(4.0, v) + F32_MIN_NORMAL)
            }
            "log" => {
                // Documented: a subnormal input flushes to zero, so its log is -inf.
                let x = if (a as f32).is_subnormal() { 0.0 } else { a };
                let v = self.r(x.ln());
                let propagated = if ea == 0.0 {
                    0.0
                } else if a - ea <= F32_MIN_NORMAL {
                    f64::INFINITY
                } else {
                    a.ln() - (a - ea).ln()
                };
                self.approx(v, propagated, f32_ulps(4.0, v) + 2f64.powi(-22))
            }
            "tanh" => {
                let v = self.r(a.tanh());
                self.approx(v, ea, v.abs() * 2f64.powi(-10) + F32_MIN_NORMAL)
            }
            "sigmoid" => {
                let v = self.r(1.0 / (1.0 + (-a).exp()));
                self.approx(v, ea / 4.0, f32_ulps(8.0, v) + F32_MIN_NORMAL)
            }
            "silu" => {
                let v = self.r(a / (1.0 + (-a).exp()));
                self.approx(v, 1.1 * ea, f32_ulps(8.0, v) + 2f64.powi(-120))
            }
            other => panic!("the test draws no op `{other}`"),
        }
    }
}

/// Whether `got` (the kernel's stored value) agrees with the reference `want` of the compute
/// type (see the module docs).
fn agrees<T: TestElem>(got: T, want: Val) -> bool {
    let rounded = T::from_f64(want.v);
    let g = got.to_f64();
    if want.err == 0.0 {
        return got.bits() == rounded.bits() || (g.is_nan() && want.v.is_nan());
    }
    if want.err.is_infinite() {
        return true;
    }
    if want.v.is_nan() || g.is_nan() {
        return want.v.is_nan() && g.is_nan();
    }
    if g == rounded.to_f64() {
        return true;
    }
    let lo = T::from_f64(want.v - want.err).to_f64();
    let hi = T::from_f64(want.v + want.err).to_f64();
    lo <= g && g <= hi
}

// ---------------------------------------------------------------------------------------------
// One case
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct Stats {
    ran: AtomicUsize,
    declined: AtomicUsize,
    scalar: AtomicUsize,
    vectorized: AtomicUsize,
    strided: AtomicUsize,
    per_dtype: [AtomicUsize; 4],
    elements: AtomicUsize,
    bit_exact: AtomicUsize,
}

fn contains_op(region: &Region, names: &[&str]) -> bool {
    region
        .post_order()
        .iter()
        .any(|node| matches!(node, Region::Op { op, .. } if names.contains(&op.as_str())))
}

/// The largest power of two (up to 256, the emulator's allocation alignment) dividing `address`.
fn alignment(address: u64) -> u32 {
    if address == 0 {
        256
    } else {
        1u32 << address.trailing_zeros().min(8)
    }
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

fn run_case<T: TestElem>(case: &Case, stats: &Stats) -> Result<(), TestCaseError> {
    let device = Device::emulator();
    let size = T::KIND.size();
    let shape = &case.shape;
    let n: usize = shape.iter().product();
    let layouts: Vec<Layout> = case
        .layouts
        .iter()
        .enumerate()
        .map(|(k, spec)| Layout::build(shape, spec, k == case.inputs))
        .collect();
    let (input_layouts, output_layout) = layouts.split_at(case.inputs);
    let output_layout = &output_layout[0];

    let mut rng = case.seed;
    let host: Vec<Vec<T>> = input_layouts
        .iter()
        .enumerate()
        .map(|(k, l)| {
            (0..l.alloc_len)
                .map(|i| match case.data {
                    Data::Random => T::from_f64(draw(&mut rng)),
                    // Input k reads the sweep from the other end, so binary ops pair
                    // different values.
                    Data::Sweep => {
                        let j = if k % 2 == 0 { i } else { l.alloc_len - 1 - i };
                        T::from_f64(sweep_value(j))
                    }
                })
                .collect()
        })
        .collect();
    let inputs: Vec<DeviceBuffer<T>> = host
        .iter()
        .map(|data| device.upload(data))
        .collect::<Result<_, _>>()
        .map_err(|e| fail(format!("upload: {e}")))?;
    let mut output = device
        .upload(&vec![T::sentinel(); output_layout.alloc_len])
        .map_err(|e| fail(format!("upload: {e}")))?;

    let desc = |layout: &Layout, base: u64| OperandDesc {
        dtype: T::KIND,
        shape: shape.iter().map(|&e| e as u64).collect(),
        strides: layout.strides.iter().map(|&s| s as i64).collect(),
        align: alignment(base + (layout.origin * size) as u64),
    };
    let mut operands: Vec<OperandDesc> = inputs
        .iter()
        .zip(input_layouts)
        .map(|(buffer, layout)| desc(layout, buffer.address()))
        .collect();
    operands.push(desc(output_layout, output.address()));
    let request = JitRequest {
        region: case.region.clone(),
        operands,
        arch: Arch::sm(80),
        // Synthesis is far below this even in a loaded debug build; a tight budget would only
        // make the test flaky (`OverBudget`).
        budget: JitBudget::millis(60_000),
    };

    let expect_decline = T::COMPUTE_F64 && contains_op(&case.region, &TRANSCENDENTALS);
    let adopted = match adopt_request::<(), _>(&request, &ElementwiseSynthesizer::new(), &device) {
        Ok(adopted) if !expect_decline => adopted,
        Ok(_) => {
            return Err(fail(
                "an f64 transcendental was synthesized, not declined".into(),
            ));
        }
        Err(AdoptDecline::Synth(SynthDecline::UnsupportedOp { op, dtype }))
            if expect_decline
                && dtype == ElementKind::F64
                && TRANSCENDENTALS.contains(&op.as_str()) =>
        {
            stats.declined.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        Err(other) => return Err(fail(format!("adopt: {other}"))),
    };

    let abi = &adopted.kernel.artifact().abi.abi;
    match abi {
        AbiKind::Scalar => &stats.scalar,
        AbiKind::Vectorized { .. } => &stats.vectorized,
        AbiKind::Strided { .. } => &stats.strided,
        AbiKind::Custom(_) => return Err(fail("the synthesizer chose the custom abi".to_owned())),
    }
    .fetch_add(1, Ordering::Relaxed);
    // Strided views for every ABI: a dense view (any rank, unit axes with any stride) is what
    // the scalar and vectorized checks accept, with the launch shape `[n]`.
    let in_views = inputs
        .iter()
        .zip(input_layouts)
        .map(|(buffer, l)| buffer.strided(l.origin, shape, &l.strides))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(format!("view: {e}")))?;
    let args: Vec<Arg<'_>> = in_views.iter().map(Arg::from).collect();
    let mut out_view = output
        .strided_mut(output_layout.origin, shape, &output_layout.strides)
        .map_err(|e| fail(format!("view: {e}")))?;
    let launch_shape = match abi {
        AbiKind::Strided { .. } => shape.clone(),
        _ => vec![n],
    };
    let stream = device.default_stream();
    let launched = adopted.kernel.launch(
        &stream,
        &args,
        &mut [ArgMut::from(&mut out_view)],
        &launch_shape,
        &adopted.params,
    );
    match launched {
        Ok(()) => {}
        Err(Error::MemoryFault(fault)) => {
            return Err(fail(format!(
                "the kernel read or wrote out of bounds: {fault}"
            )));
        }
        Err(other) => return Err(fail(format!("launch ({abi}): {other}"))),
    }
    let got = stream
        .read(&output)
        .map_err(|e| fail(format!("read back: {e}")))?;

    let reference = Reference {
        f64_compute: T::COMPUTE_F64,
    };
    let mut reached = vec![false; got.len()];
    let mut index = vec![0usize; shape.len()];
    let mut values = vec![0.0f64; case.inputs];
    for _ in 0..n {
        for (k, layout) in input_layouts.iter().enumerate() {
            values[k] = host[k][layout.at(&index)].to_f64();
        }
        let want = reference.eval(&case.region, &values);
        let at = output_layout.at(&index);
        reached[at] = true;
        if !agrees(got[at], want) {
            return Err(fail(format!(
                "element {index:?} (allocation index {at}, abi {abi}): got {:?}, want {:?} ± {:e} \
                 (inputs {values:?})",
                got[at], want.v, want.err
            )));
        }
        stats.elements.fetch_add(1, Ordering::Relaxed);
        if want.err == 0.0 {
            stats.bit_exact.fetch_add(1, Ordering::Relaxed);
        }
        // Row-major increment of the multi-index.
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    for (at, (value, reached)) in got.iter().zip(&reached).enumerate() {
        if !reached && value.bits() != T::sentinel().bits() {
            return Err(fail(format!(
                "allocation index {at} lies outside the output view but was written: {value:?}"
            )));
        }
    }
    stats.ran.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[test]
fn synthesized_kernels_match_the_reference_on_the_emulator() {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 256,
        ..Config::default()
    };
    let seed: [u8; 32] = *b"jitseam synthesizer differential";
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let stats = Stats::default();
    let outcome = runner.run(&case(), |case| {
        let slot = match case.dtype {
            Dtype::F32 => 0,
            Dtype::F64 => 1,
            Dtype::F16 => 2,
            Dtype::Bf16 => 3,
        };
        stats.per_dtype[slot].fetch_add(1, Ordering::Relaxed);
        match case.dtype {
            Dtype::F32 => run_case::<f32>(&case, &stats),
            Dtype::F64 => run_case::<f64>(&case, &stats),
            Dtype::F16 => run_case::<f16>(&case, &stats),
            Dtype::Bf16 => run_case::<bf16>(&case, &stats),
        }
    });
    println!("{stats:#?}");
    if let Err(error) = outcome {
        panic!("{error}");
    }
    // The draw must actually cover what the test claims to cover.
    assert!(
        stats.ran.load(Ordering::Relaxed) >= CASES as usize / 2,
        "{stats:#?}"
    );
    assert!(stats.declined.load(Ordering::Relaxed) > 0, "{stats:#?}");
    for counter in [&stats.scalar, &stats.vectorized, &stats.strided] {
        assert!(counter.load(Ordering::Relaxed) > 0, "{stats:#?}");
    }
    for counter in &stats.per_dtype {
        assert!(counter.load(Ordering::Relaxed) > 0, "{stats:#?}");
    }
}

/// Every op alone, in every dtype, over [`sweep_value`]'s dense grid of its difficult ranges:
/// the random cases rarely land in a narrow bad interval (such as `exp` near overflow), this
/// covers each one deterministically. Two layouts per kernel: dense (scalar or vectorized ABI)
/// and a reversed, gapped, offset output (strided ABI).
#[test]
fn every_op_matches_the_reference_over_its_difficult_ranges() {
    let stats = Stats::default();
    let dense = LayoutSpec {
        dense: true,
        order: vec![0],
        pad: vec![0],
        reversed: vec![false],
        broadcast: vec![false],
        lead: 0,
        tail: 0,
    };
    let reversed = LayoutSpec {
        dense: false,
        pad: vec![1],
        reversed: vec![true],
        lead: 3,
        tail: 1,
        ..dense.clone()
    };
    for name in OPS {
        let (arity, scalars) = op_signature(name).unwrap();
        let region = Region::op_with_scalars(
            name,
            (0..arity as u32).map(Region::bind).collect(),
            vec![2.5; scalars],
        );
        for dtype in [Dtype::F32, Dtype::F64, Dtype::F16, Dtype::Bf16] {
            for output in [&dense, &reversed] {
                let mut layouts = vec![dense.clone(); arity];
                layouts.push(output.clone());
                let case = Case {
                    region: region.clone(),
                    inputs: arity,
                    shape: vec![SWEEP_LEN],
                    dtype,
                    layouts,
                    data: Data::Sweep,
                    seed: 0,
                };
                let result = match dtype {
                    Dtype::F32 => run_case::<f32>(&case, &stats),
                    Dtype::F64 => run_case::<f64>(&case, &stats),
                    Dtype::F16 => run_case::<f16>(&case, &stats),
                    Dtype::Bf16 => run_case::<bf16>(&case, &stats),
                };
                if let Err(error) = result {
                    panic!("{name} in {dtype:?}, output {output:?}: {error}");
                }
            }
        }
    }
    println!("{stats:#?}");
    // 17 ops × 4 dtypes × 2 layouts, of which f64's 5 transcendentals decline.
    assert_eq!(stats.ran.load(Ordering::Relaxed), (17 * 4 - 5) * 2);
    assert_eq!(stats.declined.load(Ordering::Relaxed), 5 * 2);
}
