//! The real-kernel corpus of tests/fixtures/real/, written once and generic over the device: the
//! manifest read into typed entries, each pointer's buffer sized by its declared extent for the
//! entry's launch and filled as the manifest says (outputs with a sentinel, so an element never
//! written is caught), one launch through `load_unverified`, and the outputs compared with the
//! Rust references of real_reference.rs. tests/real_kernels.rs runs it on the emulator and
//! asserts today's `load()` verdicts; tests/cuda_model.rs runs it through the CUDA backend on
//! the driver model and tests/gpu_real.rs on a GPU.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jitseam::device::{Arg, ArgMut};
use jitseam::{AbiSpec, Artifact, Device, DeviceBuffer, Error, Kernel, LaunchConfig, ParamValue};
use jitseam_abi::{CustomKind, ElementKind, ExtentEnv};
use serde_json::Value;

use crate::real_reference;

/// The corpus directory.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real")
}

/// One entry of manifest.json, with its spec parsed and its launch built.
#[derive(Debug, Clone)]
pub struct Entry {
    pub entry: String,
    pub file: String,
    pub spec: AbiSpec,
    pub config: LaunchConfig,
    /// The by-value params of the launch, in declaration order.
    pub params: Vec<ParamValue>,
    /// The manifest object as written.
    pub raw: Value,
}

impl Entry {
    pub fn ptx(&self) -> String {
        std::fs::read_to_string(dir().join(&self.file))
            .unwrap_or_else(|e| panic!("{}: {e}", self.file))
    }

    pub fn artifact(&self) -> Artifact {
        Artifact::ptx(self.ptx(), self.entry.as_str(), self.spec.clone())
    }

    /// The custom table's parameters, in the kernel's order.
    pub fn params_table(&self) -> Vec<(String, CustomKind)> {
        let custom = self.spec.abi.custom().expect("a custom spec");
        custom
            .params
            .iter()
            .map(|p| (p.name.clone().into_owned(), p.kind))
            .collect()
    }

    /// What the emulator refuses in this kernel, if the manifest says it does.
    pub fn emulator_refuses(&self) -> Option<&str> {
        self.raw.get("emulator").map(|v| {
            v["refuses"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: emulator.refuses is not a string", self.entry))
        })
    }
}

fn three(v: &Value, what: &str) -> [u32; 3] {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not an array"));
    assert_eq!(a.len(), 3, "{what}");
    [0, 1, 2].map(|i| u32::try_from(a[i].as_u64().unwrap()).unwrap())
}

fn param_value(kind: ElementKind, v: &Value, name: &str) -> ParamValue {
    let int = || {
        v.as_i64()
            .unwrap_or_else(|| panic!("param {name} is not an integer"))
    };
    let float = || {
        v.as_f64()
            .unwrap_or_else(|| panic!("param {name} is not a number"))
    };
    match kind {
        ElementKind::I32 => ParamValue::I32(i32::try_from(int()).unwrap()),
        ElementKind::U32 => ParamValue::U32(u32::try_from(int()).unwrap()),
        ElementKind::I64 => ParamValue::I64(int()),
        ElementKind::U64 => ParamValue::U64(u64::try_from(int()).unwrap()),
        ElementKind::F32 => ParamValue::F32(float() as f32),
        ElementKind::F64 => ParamValue::F64(float()),
        other => panic!("param {name}: no test values of {other}"),
    }
}

/// Every entry of the manifest.
pub fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(dir().join("manifest.json")).unwrap();
    let raw: Vec<Value> = serde_json::from_str(&text).unwrap();
    raw.into_iter()
        .map(|e| {
            let entry = e["entry"].as_str().unwrap().to_owned();
            let covers = e.get("covers").map(|c| c.as_str().unwrap());
            let spec = AbiSpec::parse_custom(e["signature"].as_str().unwrap(), covers)
                .unwrap_or_else(|err| panic!("{entry}: signature: {err}"));
            let launch = &e["launch"];
            let config = LaunchConfig::new(
                three(&launch["grid"], "launch.grid"),
                three(&launch["block"], "launch.block"),
            )
            .dynamic_shared_bytes(u32::try_from(launch["shared"].as_u64().unwrap()).unwrap());
            let custom = spec.abi.custom().unwrap();
            let params = custom
                .params
                .iter()
                .filter_map(|p| match p.kind {
                    CustomKind::Value(kind) => {
                        let v = e["params"]
                            .get(p.name.as_ref())
                            .unwrap_or_else(|| panic!("{entry}: no value for param {}", p.name));
                        Some(param_value(kind, v, &p.name))
                    }
                    _ => None,
                })
                .collect();
            Entry {
                file: e["file"].as_str().unwrap().to_owned(),
                entry,
                spec,
                config,
                params,
                raw: e,
            }
        })
        .collect()
}

/// A buffer's contents, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    U8(Vec<u8>),
}

macro_rules! data_kinds {
    ($($variant:ident $t:ty, $get:ident;)*) => {
        impl Data {
            /// `len` elements of `kind`, each `f(i)` (a float or integer value, converted).
            pub fn from_fn(kind: ElementKind, len: usize, mut f: impl FnMut(usize) -> Scalar) -> Self {
                match kind {
                    $(ElementKind::$variant => Data::$variant((0..len).map(|i| f(i).$get()).collect()),)*
                    other => panic!("no test buffers of {other}"),
                }
            }

            pub fn len(&self) -> usize {
                match self { $(Data::$variant(v) => v.len(),)* }
            }

            /// Element `i` as a scalar.
            pub fn at(&self, i: usize) -> Scalar {
                match self { $(Data::$variant(v) => Scalar::from(v[i]),)* }
            }

            /// Sets element `i` to `value`.
            pub fn set(&mut self, i: usize, value: Scalar) {
                match self { $(Data::$variant(v) => v[i] = value.$get(),)* }
            }
        }

        /// A device copy of a [`Data`].
        pub enum DevBuf {
            $($variant(DeviceBuffer<$t>),)*
        }

        impl DevBuf {
            pub fn upload(device: &Device, data: &Data) -> Result<Self, Error> {
                Ok(match data { $(Data::$variant(v) => DevBuf::$variant(device.upload(v)?),)* })
            }

            pub fn arg(&self) -> Arg<'_> {
                match self { $(DevBuf::$variant(b) => b.into(),)* }
            }

            pub fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(DevBuf::$variant(b) => b.into(),)* }
            }

            pub fn read(&self, stream: &jitseam::Stream) -> Result<Data, Error> {
                Ok(match self { $(DevBuf::$variant(b) => Data::$variant(stream.read(b)?),)* })
            }

            /// The device address of the first element.
            pub fn address(&self) -> u64 {
                match self { $(DevBuf::$variant(b) => b.address(),)* }
            }

            /// Bytes the buffer holds.
            pub fn bytes(&self) -> u64 {
                match self { $(DevBuf::$variant(b) => (b.len() * std::mem::size_of::<$t>()) as u64,)* }
            }
        }
    };
}

data_kinds! {
    F32 f32, f32;
    F64 f64, f64;
    I32 i32, i32;
    U32 u32, u32;
    I64 i64, i64;
    U64 u64, u64;
    U8 u8, u8;
}

/// One element, as a float or an integer, converted on use (`as` semantics).
#[derive(Debug, Clone, Copy)]
pub enum Scalar {
    Float(f64),
    Int(i128),
}

macro_rules! scalar_from {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::$variant(v.into())
            }
        }
    )*};
}

scalar_from!(f32 => Float, f64 => Float, i32 => Int, u32 => Int, i64 => Int, u64 => Int, u8 => Int);

macro_rules! scalar_to {
    ($($name:ident $t:ty),*) => {
        impl Scalar {
            $(pub fn $name(self) -> $t {
                match self {
                    Scalar::Float(f) => f as $t,
                    Scalar::Int(i) => i as $t,
                }
            })*
        }
    };
}

scalar_to!(f32 f32, f64 f64, i32 i32, u32 u32, i64 i64, u64 u64, u8 u8);

/// The value an output starts with: NaN, or a bit pattern no kernel here computes.
pub fn sentinel(kind: ElementKind) -> Scalar {
    match kind {
        ElementKind::F32 | ElementKind::F64 => Scalar::Float(f64::NAN),
        ElementKind::U8 => Scalar::Int(0xa5),
        _ => Scalar::Int(0x7ead_beef),
    }
}

/// A small deterministic generator (splitmix64), seeded per entry and pointer.
pub struct Rng(u64);

impl Rng {
    pub fn new(entry: &str, pointer: &str) -> Self {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in entry.bytes().chain([0]).chain(pointer.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// An integer in `[lo, hi)`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo < hi, "empty range [{lo}, {hi})");
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}

/// Everything a reference needs: the launch, the params by name and every pointer's initial
/// contents by name.
#[derive(Debug, Clone)]
pub struct Case {
    pub entry: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: BTreeMap<String, ParamValue>,
    pub buffers: BTreeMap<String, Data>,
}

impl Case {
    /// An integer param.
    pub fn int(&self, name: &str) -> i64 {
        match self.params.get(name) {
            Some(ParamValue::I32(v)) => i64::from(*v),
            Some(ParamValue::U32(v)) => i64::from(*v),
            Some(ParamValue::I64(v)) => *v,
            Some(ParamValue::U64(v)) => i64::try_from(*v).unwrap(),
            other => panic!("{}: param {name} is not an integer: {other:?}", self.entry),
        }
    }

    /// A float param.
    pub fn float(&self, name: &str) -> f32 {
        match self.params.get(name) {
            Some(ParamValue::F32(v)) => *v,
            other => panic!("{}: param {name} is not an f32: {other:?}", self.entry),
        }
    }

    /// A double param.
    pub fn double(&self, name: &str) -> f64 {
        match self.params.get(name) {
            Some(ParamValue::F64(v)) => *v,
            other => panic!("{}: param {name} is not an f64: {other:?}", self.entry),
        }
    }

    pub fn data(&self, name: &str) -> &Data {
        self.buffers
            .get(name)
            .unwrap_or_else(|| panic!("{}: no pointer {name}", self.entry))
    }
}

macro_rules! case_slices {
    ($($name:ident $variant:ident $t:ty),*) => {
        impl Case {
            $(pub fn $name(&self, name: &str) -> &[$t] {
                match self.data(name) {
                    Data::$variant(v) => v,
                    other => panic!("{}: {name} is not {}: {other:?}", self.entry, stringify!($t)),
                }
            })*
        }
    };
}

case_slices!(f32 F32 f32, f64 F64 f64, i32 I32 i32, u32 U32 u32, i64 I64 i64, u64 U64 u64, u8 U8 u8);

/// The extent of every pointer for the entry's launch, in parameter order.
pub fn extents(e: &Entry) -> Vec<usize> {
    let custom = e.spec.abi.custom().unwrap();
    let env = ExtentEnv {
        params: &e.params,
        grid: e.config.grid,
        block: e.config.block,
    };
    let pointers = e
        .params_table()
        .iter()
        .filter(|(_, k)| k.is_pointer())
        .count();
    custom
        .evaluate(&env)
        .into_iter()
        .take(pointers)
        .map(|v| {
            let v = v.unwrap_or_else(|p| panic!("{}: extent has no value: {p:?}", e.entry));
            usize::try_from(v).unwrap()
        })
        .collect()
}

/// The entry's inputs: every pointer sized by its extent and filled as the manifest says.
pub fn prepare(e: &Entry) -> Case {
    let mut buffers = BTreeMap::new();
    let lens = extents(e);
    let pointers = e.params_table().into_iter().filter(|(_, k)| k.is_pointer());
    for ((name, kind), len) in pointers.zip(lens) {
        let dtype = kind.dtype();
        let fill = e.raw["fill"].get(name.as_str());
        let mut rng = Rng::new(&e.entry, &name);
        let data = match fill.map(|f| f.as_object().unwrap().iter().next().unwrap()) {
            None => {
                assert!(
                    matches!(kind, CustomKind::Out(_)),
                    "{}: input {name} has no fill",
                    e.entry
                );
                Data::from_fn(dtype, len, |_| sentinel(dtype))
            }
            Some((how, arg)) => match how.as_str() {
                "uniform" => {
                    let (lo, hi) = (arg[0].as_f64().unwrap(), arg[1].as_f64().unwrap());
                    Data::from_fn(dtype, len, |_| Scalar::Float(rng.uniform(lo, hi)))
                }
                "int" => {
                    let (lo, hi) = (arg[0].as_i64().unwrap(), arg[1].as_i64().unwrap());
                    Data::from_fn(dtype, len, |_| Scalar::Int(i128::from(rng.int(lo, hi))))
                }
                "zero" => Data::from_fn(dtype, len, |_| Scalar::Int(0)),
                "ones" => Data::from_fn(dtype, len, |_| Scalar::Int(1)),
                "ramp" => Data::from_fn(dtype, len, |i| Scalar::Int(i as i128)),
                "sentinel" => Data::from_fn(dtype, len, |_| sentinel(dtype)),
                "custom" => real_reference::custom_fill(&e.entry, &name, dtype, len, &mut rng),
                other => panic!("{}: fill {other} of {name}", e.entry),
            },
        };
        assert_eq!(data.len(), len, "{}: {name}", e.entry);
        buffers.insert(name, data);
    }
    let named = e
        .params_table()
        .into_iter()
        .filter(|(_, k)| !k.is_pointer())
        .map(|(n, _)| n)
        .zip(e.params.iter().copied())
        .collect();
    Case {
        entry: e.entry.clone(),
        grid: e.config.grid,
        block: e.config.block,
        params: named,
        buffers,
    }
}

/// Binds the entry on `device` through `load_unverified` (the verdict is another test's) and
/// launches it once with `case`'s buffers; returns every output's contents afterwards.
pub fn run(device: &Device, e: &Entry, case: &Case) -> Result<BTreeMap<String, Data>, Error> {
    let described = Kernel::describe(e.artifact())?;
    // SAFETY: every kernel of the corpus touches its pointers only within their declared
    // extents for the entry's own launch and inputs (each was written to, and its reference
    // computes exactly that); where a test breaks that on purpose (an index out of range) it
    // runs on the emulator, whose memory checker stops the first access outside the operands.
    let loaded = unsafe { described.load_unverified() }.map_err(|t| t.error)?;
    run_loaded(device, e, case, loaded)
}

/// [`run`] through `load()`, for a kernel it loads with run-time guards: `None` for one it
/// proves as written or declines.
pub fn run_guarded(
    device: &Device,
    e: &Entry,
    case: &Case,
) -> Option<Result<BTreeMap<String, Data>, Error>> {
    let loaded = Kernel::describe(e.artifact()).ok()?.load().ok()?;
    loaded.loaded().guarded()?;
    Some(run_loaded(device, e, case, loaded))
}

fn run_loaded(
    device: &Device,
    e: &Entry,
    case: &Case,
    loaded: Kernel<jitseam::Erased, jitseam::Loaded>,
) -> Result<BTreeMap<String, Data>, Error> {
    let kernel = loaded.bind(device).map_err(|t| t.error)?;
    let stream = device.default_stream();
    let table = e.params_table();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for (name, kind) in &table {
        match kind {
            CustomKind::In(_) => inputs.push((name, DevBuf::upload(device, case.data(name))?)),
            CustomKind::Out(_) => outputs.push((name, DevBuf::upload(device, case.data(name))?)),
            CustomKind::Value(_) => {}
        }
    }
    {
        let ins: Vec<Arg<'_>> = inputs.iter().map(|(_, b)| b.arg()).collect();
        let mut outs: Vec<ArgMut<'_>> = outputs.iter_mut().map(|(_, b)| b.arg_mut()).collect();
        kernel.launch_custom(&stream, Some(e.config), &ins, &mut outs, &e.params)?;
    }
    let mut got = BTreeMap::new();
    for (name, buf) in &outputs {
        got.insert((*name).clone(), buf.read(&stream)?);
    }
    Ok(got)
}

/// `(abs, rel)` tolerance of the entry's float outputs; integers compare exactly.
fn tolerance(e: &Entry) -> (f64, f64) {
    let t = &e.raw["tolerance"];
    if t.is_null() {
        return (0.0, 0.0);
    }
    (t["abs"].as_f64().unwrap(), t["rel"].as_f64().unwrap())
}

/// Compares `got` with the reference's expected outputs; returns what differs, in words.
pub fn compare(e: &Entry, got: &BTreeMap<String, Data>, want: &[(&str, Data)]) -> Vec<String> {
    let (abs, rel) = tolerance(e);
    let mut problems = Vec::new();
    for (name, expected) in want {
        let Some(actual) = got.get(*name) else {
            problems.push(format!("{name}: not an output"));
            continue;
        };
        if actual.len() != expected.len() {
            problems.push(format!(
                "{name}: {} elements, the reference has {}",
                actual.len(),
                expected.len()
            ));
            continue;
        }
        let mut wrong = 0;
        let mut first = String::new();
        for i in 0..actual.len() {
            let ok = match (actual.at(i), expected.at(i)) {
                (Scalar::Float(a), Scalar::Float(x)) => {
                    (a.is_nan() && x.is_nan()) || (a - x).abs() <= abs + rel * x.abs() || a == x
                }
                (Scalar::Int(a), Scalar::Int(x)) => a == x,
                (a, x) => panic!("{name}: {a:?} vs {x:?}"),
            };
            if !ok {
                if wrong == 0 {
                    first = format!("{:?} (reference {:?})", actual.at(i), expected.at(i));
                    let _ = write!(first, " at element {i}");
                }
                wrong += 1;
            }
        }
        if wrong > 0 {
            problems.push(format!(
                "{name}: {wrong} of {} elements differ, first {first}",
                actual.len()
            ));
        }
    }
    for name in got.keys() {
        if !want.iter().any(|(n, _)| n == name) {
            problems.push(format!("{name}: an output the reference does not check"));
        }
    }
    problems
}

/// Runs every kernel of the corpus on `device` and checks it against its reference; panics
/// naming every kernel that failed. With `skip_refused` (a device that runs PTX with jitseam's
/// interpreter), kernels whose manifest records a construct the interpreter refuses are left
/// out: tests/real_kernels.rs tests those refusals.
pub fn run_all(device: &Device, skip_refused: bool) {
    let mut failures = Vec::new();
    let mut guarded = 0;
    let entries = manifest();
    for e in &entries {
        if skip_refused && e.emulator_refuses().is_some() {
            continue;
        }
        let case = prepare(e);
        let want = real_reference::reference(&case);
        match run(device, e, &case) {
            Ok(got) => {
                for p in compare(e, &got, &want) {
                    failures.push(format!("{}: {p}", e.entry));
                }
            }
            Err(err) => failures.push(format!("{}: {err}", e.entry)),
        }
        // A kernel `load()` guards: its guarded rewrite gives the same outputs.
        match run_guarded(device, e, &case) {
            None => {}
            Some(Ok(got)) => {
                guarded += 1;
                for p in compare(e, &got, &want) {
                    failures.push(format!("{} (guarded): {p}", e.entry));
                }
            }
            Some(Err(err)) => failures.push(format!("{} (guarded): {err}", e.entry)),
        }
    }
    assert!(guarded >= 20, "only {guarded} guarded kernels ran");
    assert!(
        failures.is_empty(),
        "{} of {} kernels failed:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}
