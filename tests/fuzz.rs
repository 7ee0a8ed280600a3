//! No input crashes, hangs or exhausts the library: a deterministic mutation fuzzer (see
//! `tests/common/fuzz.rs`) over every reader of caller data — the PTX module scanner, body
//! parser and resolver; `describe → load` on mutated NVRTC, verifier-corpus and custom-ABI
//! kernels; the custom ABI's signature and extent parser; the cubin and fatbin readers (also
//! through `load`); the telemetry reader on mutated JSONL lines and whole flush directories.
//! Every case runs on its own thread with a small stack and under a time limit. The CI counts
//! take a few seconds in all; `JITSEAM_FUZZ_CASES=200000` runs a long campaign.

mod common;

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use common::fixtures;
use common::fuzz::{Bytes, Campaign, Rng, Shown, Verdict, mutate, mutate_text};
use common::nvrtc_env::{cubin_bytes, fatbin_fixture};
use jitseam::telemetry::reader::{
    parse_declines, parse_dispatches, parse_faults, parse_misses, parse_overflow,
};
use jitseam::telemetry::{
    Candidate, DeclineRecord, DispatchRecord, HwStamp, ImplId, MissRecord, ReadConfig, SinkConfig,
    StructureKey, TelemetryReport, TelemetrySink,
};
use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind, Kernel};
use jitseam_ptx::body::parse_body;
use jitseam_ptx::resolve::ResolvedModule;

/// The CI cases of every campaign below, together: `JITSEAM_FUZZ_CASES` is shared among them
/// in these proportions.
const SUITE_CI_CASES: usize =
    PTX_CASES + LOAD_CASES + EXTENT_CASES + CUBIN_CASES + FATBIN_CASES + LINE_CASES + DIR_CASES;
const PTX_CASES: usize = 3000;
const LOAD_CASES: usize = 300;
const EXTENT_CASES: usize = 3000;
const CUBIN_CASES: usize = 1500;
const FATBIN_CASES: usize = 400;
const LINE_CASES: usize = 2000;
const DIR_CASES: usize = 150;

const SMALL_STACK: usize = 256 * 1024;
/// `load` proves bodies too; its prover recurses (boundedly) deeper than the parsers.
const LOAD_STACK: usize = 512 * 1024;

fn campaign(name: &'static str, ci_cases: usize, stack: usize) -> Campaign {
    Campaign {
        name,
        ci_cases,
        suite_ci_cases: SUITE_CI_CASES,
        stack,
        // Proving a body takes up to about a second for the slowest corpus kernel on an idle
        // core (r25_strided_missing_mod); a busy machine stretches that several times.
        min_case_limit: if stack == LOAD_STACK {
            std::time::Duration::from_secs(10)
        } else {
            std::time::Duration::ZERO
        },
    }
}

/// Tokens that mean something to the PTX grammar and to the verifier.
const PTX_DICT: &[&[u8]] = &[
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b";",
    b",",
    b":",
    b"@",
    b"@!",
    b"!",
    b"|",
    b"<",
    b">",
    b"+",
    b"-",
    b"%r1",
    b"%rd1",
    b"%p1",
    b"%f1",
    b"%tid.x",
    b"%ntid.x",
    b"%ctaid.x",
    b"_",
    b".reg .b32 %r<100>;",
    b".reg .pred %p<9>;",
    b".reg .b64 %rd<4>;",
    b".reg .v4 .b32 %v;",
    b".param .u64 p",
    b".param .align 16 .b8 p[16]",
    b".local .u32 l[4];",
    b".shared .u32 s[4];",
    b".global .u32 g[2] = {1, 2};",
    b".const .f32 c = 1.0;",
    b".entry",
    b".func",
    b".visible",
    b".extern",
    b".weak",
    b".version 8.8",
    b".target sm_80",
    b".address_size 64",
    b".maxntid",
    b".reqntid 1, 1, 1",
    b".pragma \"nounroll\";",
    b"ld.param.u64",
    b"ld.global.f32",
    b"st.global.f32",
    b"cvta.to.global.u64",
    b"mov.u32",
    b"add.s32",
    b"mad.lo.s32",
    b"mul.wide.s32",
    b"setp.ge.s32",
    b"setp.lt.and.u32",
    b"and.pred",
    b"selp.b32",
    b"bra",
    b"bra.uni",
    b"ret;",
    b"exit;",
    b"call",
    b"call.uni (retval), f, (a);",
    b"bar.sync 0;",
    b"atom.global.add.u32",
    b"tex.1d.v4.f32.s32",
    b"cvt.rn.f32.s32",
    b"shl.b64",
    b"div.u32",
    b"rem.u32",
    b"0x7fffffff",
    b"0f3F800000",
    b"0d3FF0000000000000",
    b"4294967296",
    b"-1",
    b"1e308",
    b"/*",
    b"*/",
    b"//",
    b"\"",
    b"\n",
    b"$L__BB0_1",
    b"$L__BB0_1:",
    // Entry names the C++ demangler reads when the symbol is missing, nested a little and a lot.
    b"_Z8my_saxpyPKfPfx",
    b"_Z1kPPPPPPPPv",
    b"I1aI1aI1aI1a",
    b"PFvPFvPFv",
    b"N1aN1aN1a",
];

/// Every PTX text the tests carry: the NVRTC fixtures, the verifier corpus, the custom-ABI
/// kernels.
fn ptx_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds: Vec<Vec<u8>> = fixtures::all()
            .iter()
            .map(|f| f.ptx.as_bytes().to_vec())
            .collect();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for dir in ["verify/accept", "verify/reject", "custom", "custom_shared"] {
            let mut files: Vec<_> = fs::read_dir(root.join(dir))
                .map(|entries| entries.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            for path in files {
                if path.extension().is_some_and(|e| e == "ptx") {
                    seeds.extend(fs::read(&path).ok());
                }
            }
        }
        seeds.sort();
        seeds.dedup();
        seeds
    })
}

/// The module scanner and owned parser (which must agree), module variables, every body through
/// the body parser, every entry through the resolver.
fn read_ptx(src: &str) -> Verdict {
    let scanned = jitseam_ptx::scan_module(src).map(|index| index.to_module());
    let parsed = jitseam_ptx::parse_module(src);
    assert_eq!(scanned, parsed, "the scanner and the parser disagree");
    let _ = jitseam_ptx::module_variables(src);
    let Ok(module) = parsed else {
        return Verdict::Refused;
    };
    let bodies = module
        .entries
        .iter()
        .filter_map(|e| e.body.clone())
        .chain(module.functions.iter().filter_map(|f| f.body.clone()));
    let mut verdict = Verdict::Accepted;
    for body in bodies {
        if parse_body(src, body).is_err() {
            verdict = Verdict::Refused;
        }
    }
    match ResolvedModule::new(src) {
        Ok(resolved) => {
            for entry in &module.entries {
                match resolved.entry(src, &entry.name) {
                    Ok(entry) => {
                        let _ = entry.call_depth(&module);
                    }
                    Err(_) => verdict = Verdict::Refused,
                }
            }
        }
        Err(_) => verdict = Verdict::Refused,
    }
    verdict
}

#[test]
fn ptx_text() {
    let seeds = ptx_seeds();
    campaign("ptx_text", PTX_CASES, SMALL_STACK).run(
        |rng| {
            let seed = std::str::from_utf8(rng.pick(seeds).as_slice()).unwrap_or_default();
            Shown(mutate_text(rng, seed, PTX_DICT, seeds, 1 << 20))
        },
        |Shown(src)| read_ptx(&src),
    );
}

/// A kernel to load: its text or image, its entry and the spec it claims.
#[derive(Clone)]
struct LoadCase {
    kind: &'static str,
    bytes: Vec<u8>,
    entry: String,
    spec: AbiSpec,
}

impl std::fmt::Debug for LoadCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} `{}` as {:?}", self.kind, self.entry, self.spec)?;
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => f.write_str(text),
            Err(_) => write!(f, "{:?}", self.bytes),
        }
    }
}

impl LoadCase {
    fn artifact(self) -> Artifact {
        match self.kind {
            "cubin" => Artifact::cubin(self.bytes, self.entry, self.spec),
            "fatbin" => Artifact::fatbin(self.bytes, self.entry, self.spec),
            _ => Artifact::ptx(
                String::from_utf8_lossy(&self.bytes).into_owned(),
                self.entry,
                self.spec,
            ),
        }
    }
}

/// The custom-ABI kernels of tests/fixtures/custom/ with the signatures they are declared with.
const CUSTOM_KERNELS: &[(&str, &str, Option<&str>)] = &[
    (
        "saxpy_out_first",
        "out: out f32[n], x: in f32[n], n: i32, a: f32",
        Some("n"),
    ),
    (
        "vectorAdd",
        "a: in f32[num_elements], b: in f32[num_elements], c: out f32[num_elements], num_elements: i32",
        Some("num_elements"),
    ),
    (
        "matmul",
        "a: in f32[m * k], b: in f32[k * n], c: out f32[m * n], m: u32, n: u32, k: u32",
        None,
    ),
    (
        "stencil5",
        "input: in f32[width * height], out: out f32[width * height], width: i32, height: i32",
        None,
    ),
];

fn load_seeds() -> &'static [LoadCase] {
    static SEEDS: OnceLock<Vec<LoadCase>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds: Vec<LoadCase> = fixtures::all()
            .iter()
            .map(|f| LoadCase {
                kind: "ptx",
                bytes: f.ptx.as_bytes().to_vec(),
                entry: f.entry.to_owned(),
                spec: f.spec.clone(),
            })
            .collect();
        seeds.extend(
            common::verify_corpus::entries()
                .into_iter()
                .map(|e| LoadCase {
                    kind: "ptx",
                    bytes: e.ptx.into_bytes(),
                    entry: e.entry,
                    spec: e.spec,
                }),
        );
        let custom = fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/custom/custom.ptx"),
        )
        .unwrap_or_default();
        for (entry, signature, covers) in CUSTOM_KERNELS {
            if let Ok(spec) = AbiSpec::parse_custom(signature, *covers) {
                seeds.push(LoadCase {
                    kind: "ptx",
                    bytes: custom.clone(),
                    entry: (*entry).to_owned(),
                    spec,
                });
            }
        }
        seeds
    })
}

/// A spec other than the kernel's own now and then, so that the parameter check declines too.
fn some_spec(rng: &mut Rng, own: &AbiSpec) -> AbiSpec {
    use ElementKind::*;
    if !rng.one_in(8) {
        return own.clone();
    }
    let kinds = [F32, F64, F16, BF16, I32, I64, U32, U64, I8, U8];
    let mut list =
        |max| -> Vec<ElementKind> { (0..rng.below(max)).map(|_| *rng.pick(&kinds)).collect() };
    let (inputs, outputs, params) = (list(4), list(3), list(3));
    let abi = match rng.below(4) {
        0 => AbiKind::Scalar,
        1 => AbiKind::Vectorized {
            width: *rng.pick(&[1, 2, 3, 4, 8, 16]),
        },
        2 => AbiKind::Strided {
            rank: *rng.pick(&[0, 1, 2, 3, 8, 9]),
        },
        _ => return own.clone(),
    };
    AbiSpec::owned(abi, inputs, outputs, params)
}

fn load(case: LoadCase) -> Verdict {
    match Kernel::describe(case.artifact()) {
        Ok(described) => described.load().into(),
        Err(_) => Verdict::Refused,
    }
}

/// `text` with its entry `entry` renamed to a C++-mangled name of it (what NVRTC makes without
/// `extern "C"`), nested a little or a lot: the missing entry's name is then demangled.
fn mangle_entry(rng: &mut Rng, text: &str, entry: &str) -> String {
    let levels = rng.size(9);
    let tail = match rng.below(4) {
        0 => "PKfPfx".to_owned(),
        1 => format!("{}v", "P".repeat(levels)),
        2 => format!("I{}iEv", "1aI".repeat(levels)),
        _ => format!("{}v", "PFv".repeat(levels)),
    };
    text.replace(
        &format!(".entry {entry}("),
        &format!(".entry _Z{}{entry}{tail}(", entry.len()),
    )
}

#[test]
fn load_ptx() {
    let seeds = load_seeds();
    let texts: Vec<Vec<u8>> = seeds.iter().map(|s| s.bytes.clone()).collect();
    campaign("load_ptx", LOAD_CASES, LOAD_STACK).run(
        |rng| {
            let seed = rng.pick(seeds).clone();
            let text = std::str::from_utf8(&seed.bytes).unwrap_or_default();
            let mut text = mutate_text(rng, text, PTX_DICT, &texts, 1 << 20);
            if rng.one_in(8) {
                text = mangle_entry(rng, &text, &seed.entry);
            }
            let bytes = text.into_bytes();
            let spec = some_spec(rng, &seed.spec);
            LoadCase {
                bytes,
                spec,
                ..seed
            }
        },
        load,
    );
}

/// Words of the signature language, and the operators it lacks.
const SIGNATURE_DICT: &[&[u8]] = &[
    b"(",
    b")",
    b"[",
    b"]",
    b",",
    b":",
    b".",
    b"+",
    b"-",
    b"*",
    b"/",
    b"%",
    b"<<",
    b"n",
    b"m",
    b"k",
    b"grid.x",
    b"block.y",
    b"grid.w",
    b"div_ceil(",
    b"div_ceil(n, 4)",
    b"max(",
    b"in",
    b"out",
    b"f32",
    b"u64",
    b"i32",
    b"bf16",
    b"x: in f32[n]",
    b", y: out f32[n * 2]",
    b", n: u32",
    b", n: i64",
    b", a: f32",
    b"18446744073709551615",
    b"18446744073709551616",
    b"0",
    b"_",
];

const SIGNATURES: &[&str] = &[
    "out: out f32[n], x: in f32[n], n: i32, a: f32",
    "out: out f32[n], x: in f32[div_ceil(n, 4) * block.x], n: i32, a: f32",
    "a: in f32[m * k], b: in f32[k * n], c: out f32[(m + 1) * n - 1], m: u32, n: u32, k: u32",
    "input: in f32[width * height], out: out f32[width * height], width: i32, height: i32",
    "out: out f32[grid.x * block.x], x: in f32[block.x * grid.x], n: i32, a: f32",
    "x: in f32[n], partial: out f32[div_ceil(grid.x * block.x, 32)], n: u32",
    "x: in f32[(n 2)], n: i32",
    "x: in f32[div_ceil(n % 2, 2)], n: i32",
    "x: out f32[n], n: u64",
];

const COVERS: &[&str] = &[
    "n",
    "n * 2",
    "div_ceil(n, 4)",
    "width * height",
    "(n)",
    "m * k",
];

#[test]
fn extents() {
    let seeds: Vec<Vec<u8>> = SIGNATURES
        .iter()
        .chain(COVERS)
        .map(|s| s.as_bytes().to_vec())
        .collect();
    campaign("extents", EXTENT_CASES, SMALL_STACK).run(
        |rng| {
            let signature = *rng.pick(SIGNATURES);
            let signature = mutate_text(rng, signature, SIGNATURE_DICT, &seeds, 1 << 16);
            let covers = if rng.one_in(2) {
                let covers = *rng.pick(COVERS);
                Some(if rng.one_in(2) {
                    mutate_text(rng, covers, SIGNATURE_DICT, &seeds, 1 << 16)
                } else {
                    covers.to_owned()
                })
            } else {
                None
            };
            let env = (0..4).map(|_| rng.next_u64()).collect::<Vec<u64>>();
            (Shown(signature), covers.map(Shown), env)
        },
        |(Shown(signature), covers, env)| {
            let covers = covers.map(|Shown(c)| c);
            let Ok(spec) = AbiSpec::parse_custom(&signature, covers.as_deref()) else {
                return Verdict::Refused;
            };
            // What parses prints back to text that parses to the same spec, and survives serde.
            let json = serde_json::to_string(&spec).unwrap_or_default();
            let back: Result<AbiSpec, _> = serde_json::from_str(&json);
            assert_eq!(back.as_ref().ok(), Some(&spec), "{json}");
            if let AbiKind::Custom(custom) = &spec.abi {
                let again = AbiSpec::parse_custom(
                    &custom.signature_text(),
                    custom.covers_text().as_deref(),
                );
                assert_eq!(
                    again.as_ref().ok(),
                    Some(&spec),
                    "{}",
                    custom.signature_text()
                );
                // Evaluating never panics, whatever the params and geometry.
                let params: Vec<jitseam::ParamValue> = custom
                    .values()
                    .iter()
                    .zip(env.iter().cycle())
                    .map(|(kind, &bits)| param_value(*kind, bits))
                    .collect();
                let geometry =
                    |at: usize| [0, 1, 2].map(|i| (env[(at + i) % env.len()] >> 40) as u32);
                let _ = custom.evaluate(&jitseam::abi::ExtentEnv {
                    params: &params,
                    grid: geometry(0),
                    block: geometry(1),
                });
            }
            Verdict::Accepted
        },
    );
}

/// A param of `kind` made of `bits` (truncated, reinterpreted): any value, the extremes included.
fn param_value(kind: ElementKind, bits: u64) -> jitseam::ParamValue {
    use jitseam::ParamValue as V;
    match kind {
        ElementKind::F32 => V::F32(f32::from_bits(bits as u32)),
        ElementKind::F64 => V::F64(f64::from_bits(bits)),
        ElementKind::F16 => V::F16(half::f16::from_bits(bits as u16)),
        ElementKind::BF16 => V::BF16(half::bf16::from_bits(bits as u16)),
        ElementKind::I8 => V::I8(bits as i8),
        ElementKind::U8 => V::U8(bits as u8),
        ElementKind::I16 => V::I16(bits as i16),
        ElementKind::U16 => V::U16(bits as u16),
        ElementKind::I32 => V::I32(bits as i32),
        ElementKind::I64 => V::I64(bits as i64),
        ElementKind::U32 => V::U32(bits as u32),
        ElementKind::U64 => V::U64(bits),
    }
}

/// Every committed cubin.
fn cubin_seeds() -> &'static [(Vec<u8>, String, AbiSpec)] {
    static SEEDS: OnceLock<Vec<(Vec<u8>, String, AbiSpec)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds = Vec::new();
        for f in fixtures::all() {
            for arch in ["sm_80", "sm_90"] {
                seeds.push((
                    cubin_bytes(f.file, arch),
                    f.entry.to_owned(),
                    f.spec.clone(),
                ));
            }
        }
        seeds
    })
}

/// What an ELF or an `.nv.info` section is made of.
const BINARY_DICT: &[&[u8]] = &[
    b"\x7fELF",
    b"\x04\x17\x0c\x00",
    b"\x04\x0a\x08\x00",
    b"\x03\x19\x10\x00",
    b"\x04\x2f\x08\x00",
    b"\x04\x05\x0c\x00",
    b"\x04\x10\x0c\x00",
    b".nv.info.",
    b".nv.shared.",
    b"\x50\xed\x55\xba",
    b"\x01\x00",
    b"\x02\x00",
    b"\x00\x00\x00\x00\x00\x00\x00\x00",
    b"\xff\xff\xff\xff\xff\xff\xff\xff",
];

#[test]
fn cubins() {
    let seeds = cubin_seeds();
    let images: Vec<Vec<u8>> = seeds.iter().map(|s| s.0.clone()).collect();
    campaign("cubins", CUBIN_CASES, SMALL_STACK).run(
        |rng| {
            let (image, entry, spec) = rng.pick(seeds).clone();
            LoadCase {
                kind: "cubin",
                bytes: mutate(rng, &image, BINARY_DICT, &images, 1 << 20),
                entry,
                spec,
            }
        },
        |case| {
            let parsed = jitseam_ptx::parse_cubin(&case.bytes);
            if let Ok(cubin) = &parsed {
                for entry in &cubin.entries {
                    let _ = (
                        cubin.entry(&entry.name),
                        cubin.arch.capability(),
                        cubin.arch.runs_on(9, 0),
                    );
                }
            }
            let Ok(described) = Kernel::describe(case.artifact()) else {
                return Verdict::Refused;
            };
            // SAFETY: the kernel is never bound or launched: only the cubin's own checks run.
            let loaded = unsafe { described.load_unverified() };
            match (parsed, loaded) {
                (Ok(_), Ok(_)) => Verdict::Accepted,
                _ => Verdict::Refused,
            }
        },
    );
}

#[test]
fn fatbins() {
    let seeds: Vec<(Vec<u8>, String, AbiSpec)> = fixtures::all()
        .iter()
        .map(|f| (fatbin_fixture(f.file), f.entry.to_owned(), f.spec.clone()))
        .collect();
    let images: Vec<Vec<u8>> = seeds.iter().map(|s| s.0.clone()).collect();
    campaign("fatbins", FATBIN_CASES, LOAD_STACK).run(
        |rng| {
            let (image, entry, spec) = rng.pick(&seeds).clone();
            LoadCase {
                kind: "fatbin",
                bytes: mutate(rng, &image, BINARY_DICT, &images, 1 << 20),
                entry,
                spec,
            }
        },
        |case| {
            if let Ok(fatbin) = jitseam_ptx::parse_fatbin(&case.bytes) {
                for image in &fatbin.images {
                    let _ = image.arch_name();
                    if let Ok(text) = image.ptx_text(&case.bytes) {
                        let _ = jitseam_ptx::parse_module(text);
                    }
                    if let Ok(payload) = image.payload(&case.bytes) {
                        let _ = jitseam_ptx::parse_cubin(payload);
                    }
                }
                for sm in [0, 75, 80, 90, 100, u32::MAX] {
                    let _ = (fatbin.select(sm, true), fatbin.select(sm, false));
                }
            }
            load(case)
        },
    );
}

fn hw(rng: &mut Rng) -> HwStamp {
    if rng.one_in(2) {
        HwStamp::cpu("emulator", "")
    } else {
        HwStamp::gpu((9, 0), "H200", "570")
    }
}

/// A sink holding a few records of every kind, some of them sharing a cell.
fn filled_sink(rng: &mut Rng, config: SinkConfig) -> TelemetrySink {
    let sink = TelemetrySink::with_config(config);
    let kernel = |name: &str| ImplId::new("cuda", name, ["f32", "f32"], "synth", 0xab);
    for i in 0..1 + rng.below(6) {
        let key = StructureKey::new(format!("ew:add:{}", i % 3));
        let hw = hw(rng);
        let count = *rng.pick(&[1, 2, 1000, u64::MAX / 2, u64::MAX]);
        sink.record_dispatch(
            &DispatchRecord::new(Some(key.clone()), kernel("add"), hw.clone())
                .with_count(count)
                .with_candidates(vec![Candidate {
                    impl_id: kernel("generic"),
                    latency_ns: Some(i as u64),
                }]),
        );
        sink.record_miss(&MissRecord::new(key, kernel("generic"), hw.clone()).with_count(count));
        sink.record_decline(&DeclineRecord::new(
            None,
            kernel("add"),
            "element_count",
            hw,
        ));
    }
    sink
}

/// The JSONL of one flush, every file of it, as seeds for the line parsers.
fn flushed_files() -> &'static [Vec<u8>] {
    static FILES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut rng = Rng::new(7);
        let sink = filled_sink(
            &mut rng,
            SinkConfig::DEFAULT.with_fsync(false).with_max_cells(4),
        );
        let dir = tempfile::tempdir().expect("a temporary directory");
        sink.flush_all(dir.path()).expect("a flush");
        let set = jitseam::telemetry::reader::current_set(dir.path()).expect("a set");
        let mut files: Vec<Vec<u8>> = fs::read_dir(&set)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| fs::read(e.path()).ok())
                    .collect()
            })
            .unwrap_or_default();
        files.extend(fs::read(dir.path().join(jitseam::telemetry::MANIFEST_FILE)).ok());
        files.sort();
        files
    })
}

const JSON_DICT: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"true",
    b"-0",
    b"1e999",
    b"18446744073709551615",
    b"18446744073709551616",
    b"\"schema\":1",
    b"\"schema\":2",
    b"\"count\":",
    b"\"candidates\":[",
    b"\"kernel_revision_hash\":\"ffffffffffffffff\"",
    b"\n",
    b"\r\n",
    b"\"gen-1-2-3\"",
    b"\"layout\":2",
    b"\"files\":[",
    b"\"dispatches.jsonl\"",
];

#[test]
fn telemetry_lines() {
    let seeds = flushed_files();
    campaign("telemetry_lines", LINE_CASES, SMALL_STACK).run(
        |rng| {
            let seed = rng.pick(seeds);
            mutate(rng, seed, JSON_DICT, seeds, 1 << 20)
        },
        |bytes| {
            let results = [
                parse_dispatches(&bytes, "d").map(|r| r.len()),
                parse_misses(&bytes, "m").map(|r| r.len()),
                parse_declines(&bytes, "x").map(|r| r.len()),
                parse_faults(&bytes, "f").map(|r| r.len()),
                parse_overflow(&bytes, "o").map(|_| 0),
            ];
            // Whatever parses merges, totals and ranks.
            let report = TelemetryReport {
                dispatches: parse_dispatches(&bytes, "d").unwrap_or_default(),
                misses: parse_misses(&bytes, "m").unwrap_or_default(),
                declines: parse_declines(&bytes, "x").unwrap_or_default(),
                faults: parse_faults(&bytes, "f").unwrap_or_default(),
                overflow: parse_overflow(&bytes, "o")
                    .unwrap_or(jitseam::telemetry::OverflowRecord::empty()),
            };
            let merged = TelemetryReport::merge([report.clone(), report]);
            let _ = (
                merged.total_dispatches(),
                merged.total_misses(),
                merged.total_declines(),
                merged.total_faults(),
                merged.top_dispatches(3),
                merged.top_misses(3),
                merged.top_declines(3),
            );
            if results.iter().any(Result::is_ok) {
                Verdict::Accepted
            } else {
                Verdict::Refused
            }
        },
    );
}

/// One edit of a flushed directory.
#[derive(Debug, Clone)]
enum DirEdit {
    /// A file of the set (or the manifest, index past the set's files) replaced by these bytes.
    Rewrite(usize, Bytes),
    Remove(usize),
    /// A FIFO, a link to `/dev/zero`, a directory in its place.
    Fifo(usize),
    DevZero(usize),
    Directory(usize),
    /// The generation's directory removed.
    RemoveSet,
}

#[derive(Debug, Clone)]
struct DirCase {
    sink_seed: u64,
    edits: Vec<DirEdit>,
    limit: u64,
}

#[test]
fn telemetry_dirs() {
    let seeds = flushed_files();
    campaign("telemetry_dirs", DIR_CASES, SMALL_STACK).run(
        |rng| {
            let sink_seed = rng.next_u64();
            let edits = (0..rng.below(4))
                .map(|_| {
                    let file = rng.below(5);
                    match rng.below(12) {
                        0 => DirEdit::Remove(file),
                        1 => DirEdit::Fifo(file),
                        2 => DirEdit::DevZero(file),
                        3 => DirEdit::Directory(file),
                        4 => DirEdit::RemoveSet,
                        _ => {
                            let seed = rng.pick(seeds);
                            DirEdit::Rewrite(
                                file,
                                Bytes(mutate(rng, seed, JSON_DICT, seeds, 1 << 16)),
                            )
                        }
                    }
                })
                .collect();
            let limit = *rng.pick(&[1 << 20, 1 << 10, 64, 0]);
            DirCase {
                sink_seed,
                edits,
                limit,
            }
        },
        |case| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let mut rng = Rng::new(case.sink_seed);
            let sink = filled_sink(
                &mut rng,
                SinkConfig::DEFAULT.with_fsync(false).with_max_cells(4),
            );
            sink.flush_all(dir.path()).expect("a flush");
            let set = jitseam::telemetry::reader::current_set(dir.path()).expect("a set");
            let mut files: Vec<_> = fs::read_dir(&set)
                .map(|entries| entries.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            files.sort();
            files.push(dir.path().join(jitseam::telemetry::MANIFEST_FILE));
            let path = |i: usize| files[i % files.len()].clone();
            // Whatever stands at a path (a FIFO an earlier edit made must not block a write).
            let clear = |path: &Path| {
                let _ = fs::remove_file(path).or_else(|_| fs::remove_dir_all(path));
            };
            for edit in &case.edits {
                let _ = match edit {
                    DirEdit::Rewrite(i, Bytes(bytes)) => {
                        clear(&path(*i));
                        fs::write(path(*i), bytes)
                    }
                    DirEdit::Remove(i) => {
                        clear(&path(*i));
                        Ok(())
                    }
                    DirEdit::Fifo(i) => {
                        clear(&path(*i));
                        std::process::Command::new("mkfifo")
                            .arg(path(*i))
                            .stderr(std::process::Stdio::null())
                            .status()
                            .map(drop)
                    }
                    DirEdit::DevZero(i) => {
                        clear(&path(*i));
                        std::os::unix::fs::symlink("/dev/zero", path(*i))
                    }
                    DirEdit::Directory(i) => {
                        clear(&path(*i));
                        fs::create_dir(path(*i))
                    }
                    DirEdit::RemoveSet => fs::remove_dir_all(&set),
                };
            }
            let config = ReadConfig::DEFAULT.with_max_file_bytes(case.limit);
            let read = TelemetryReport::read_dir_with(dir.path(), config);
            if let Ok(report) = &read {
                let merged = TelemetryReport::merge([report.clone()]);
                let _ = (merged.total_dispatches(), merged.top_declines(2));
            }
            read.into()
        },
    );
}

// Failures found (by the campaigns above, or by reading the code they fuzz), each kept as a
// test. These exhaust memory or the stack, which aborts a test binary, so each runs in a child
// process of this binary capped at 4 GiB of address space and 60 seconds.

/// Runs the test `name` of this binary in a child process under a memory cap; fails if
/// the child fails, aborts or outlives the cap's minute. In the child (`JITSEAM_FUZZ_CHILD`
/// set), runs `body` itself.
fn in_a_capped_child(name: &str, body: impl FnOnce()) {
    if std::env::var_os("JITSEAM_FUZZ_CHILD").is_some() {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("this test binary");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            r#"ulimit -v 4194304 && exec "$0" --exact "$1" --include-ignored --nocapture --test-threads 1"#,
        )
        .arg(&exe)
        .arg(name)
        .env("JITSEAM_FUZZ_CHILD", "1")
        .spawn()
        .expect("a child starts");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child is waited for") {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{name}: the child ended with {status}");
}

/// Runs `work` on a 256 KiB stack and waits at most ten seconds for it.
fn small_and_quick<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || {
            let _ = done.send(work());
        })
        .expect("a thread starts");
    result
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("it returns within ten seconds")
}

/// Found by `ptx_text` (case 4824 of the default seed, `.reg .f32 %f<4294967295>;` in a
/// verifier-corpus kernel): the resolver declares every register of a range one at a time (a
/// name and a declaration each), so one line asks for 4 billion of them and exhausts memory;
/// `Body::regs.len() as u32` would wrap past that. The verifier and the emulator refuse the same
/// text at once ("too many registers", "more than 65535 register slots").
#[test]
fn the_resolver_bounds_a_register_range_before_declaring_it() {
    in_a_capped_child(
        "the_resolver_bounds_a_register_range_before_declaring_it",
        || {
            let src = ".version 8.8\n.target sm_80\n.address_size 64\n\
                       .visible .entry k(.param .u64 p)\n{\n\t.reg .f32 %f<4294967295>;\n\tret;\n}\n";
            let resolved =
                small_and_quick(move || ResolvedModule::new(src)?.entry(src, "k").map(|_| ()));
            assert!(
                resolved.is_err(),
                "a range of 2^32 - 1 registers is refused"
            );
        },
    );
}

/// A kernel with `and.pred %p1, %p1, %p1;` 40 times and the same through `setp`'s combining
/// form (found by reading the verifier's predicate transfer, which the campaigns do not reach
/// by chance): each instruction makes a predicate tree of two copies of the last one, so 22
/// lines take 15 s to prove and 40 would take 2^40 nodes.
#[test]
fn combining_a_predicate_with_itself_does_not_double_the_proof() {
    in_a_capped_child(
        "combining_a_predicate_with_itself_does_not_double_the_proof",
        || {
            for line in [
                "and.pred %p1, %p1, %p1;",
                "setp.lt.and.u32 %p1, %r1, 7, %p1;\n\tor.pred %p1, %p1, %p1;",
            ] {
                let text = predicate_kernel(&format!("\t{line}\n").repeat(40));
                let proved = small_and_quick(move || load_text(text));
                assert!(proved.is_some(), "{line}: a verdict");
            }
        },
    );
}

/// A chain of 20,000 `and.pred %p1, %p1, %p2;`: the predicate tree is as deep as the chain, and
/// the verifier walks (and drops) it recursively — a 256 KiB stack overflows at about 3,000 —
/// and copies it at each step, so the chain costs its square (10,000 lines took 21 s).
#[test]
fn a_long_chain_of_predicates_is_proved_on_a_small_stack() {
    in_a_capped_child(
        "a_long_chain_of_predicates_is_proved_on_a_small_stack",
        || {
            let text = predicate_kernel(&"\tand.pred %p1, %p1, %p2;\n".repeat(20_000));
            let proved = small_and_quick(move || load_text(text));
            assert!(proved.is_some(), "a verdict");
        },
    );
}

/// A scalar kernel with one output whose body is `lines` between two comparisons that make
/// `%p1` and `%p2`.
fn predicate_kernel(lines: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 k_out, .param .u64 k_n)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<4>;\n\tmov.u32 %r1, %tid.x;\n\
         \tsetp.lt.u32 %p1, %r1, 7;\n\tsetp.lt.u32 %p2, %r1, 9;\n{lines}\tret;\n}}\n"
    )
}

/// `load()` of `text` as a scalar kernel with one `f32` output: `Some` verdict.
fn load_text(text: String) -> Option<bool> {
    let spec = AbiSpec::new(AbiKind::Scalar, &[], &[ElementKind::F32], &[]);
    Kernel::describe(Artifact::ptx(text, "k", spec))
        .ok()
        .map(|described| described.load().is_ok())
}
