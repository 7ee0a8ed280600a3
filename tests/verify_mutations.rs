//! Random mutations of kernels the verifier accepts. Three properties, fixed seeds:
//! - moving any global access by whole elements past its index (`[%rd]` → `[%rd+k·w]`) is
//!   always unsafe for the last thread (index n − 1), so it must be rejected;
//! - the verifier never panics, whatever the text;
//! - a mutation of an address computation (an immediate of an `add`/`mul`/`mad`/`shl`, a
//!   register operand, a `setp` comparison or its signedness, the signedness of a `cvt` or a
//!   `mul.wide`, a guard predicate dropped or negated, `add` ↔ `sub`) is either rejected by
//!   `load()`, or accepted and then runs on the emulator — exact-size operands, inputs
//!   read-only, every access checked — without a memory fault for every `n` tried (0, 1, a
//!   partial block, several grid-stride rounds). An accepted mutant that faults is a
//!   verifier bug.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use half::{bf16, f16};
use jitseam::abi::AbiContract;
use jitseam::device::{Arg, ArgMut, EmulatorConfig};
use jitseam::{
    AbiSpec, Artifact, Device, DeviceBound, DeviceBuffer, ElementKind, Erased, Error, Kernel,
    ParamValue,
};
use jitseam_verify::verify_entry;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Scalar-ABI kernels of the synthesizer (cheap to verify) and the scalar NVRTC fixtures.
fn kernels() -> Vec<(String, String, jitseam_verify::EntryContract)> {
    let mut out = Vec::new();
    for a in common::synth_matrix::artifacts() {
        if a.abi.abi == jitseam::AbiKind::Scalar {
            let text = String::from_utf8(a.bytes.clone()).unwrap_or_default();
            out.push((text, a.link.entry_point.clone(), a.abi.contract()));
        }
    }
    for f in common::fixtures::all() {
        if f.spec.abi == jitseam::AbiKind::Scalar && f.file != "two_entries.ptx" {
            out.push((f.ptx.to_owned(), f.entry.to_owned(), f.spec.contract()));
        }
    }
    out
}

/// Byte offsets of the `]` of every global access (`ld.global`, `st.global`).
fn access_brackets(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if (t.starts_with("ld.global") || t.starts_with("st.global"))
            && let Some(close) = line.find(']')
        {
            out.push(at + close);
        }
        at += line.len();
    }
    out
}

fn dump_verdict(tag: &str, text: &str, entry: &str, c: &jitseam_verify::EntryContract) {
    let Ok(path) = std::env::var("VERIFY_DUMP_MUT") else {
        return;
    };
    use std::io::Write;
    let v = match verify_entry(text, entry, c) {
        Ok(p) => format!("ok {:?} {:?}", p.coverage, p.conditions),
        Err(r) => format!("reject {} {}", r.kind.as_str(), r.line),
    };
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(text, &mut h);
    if let Ok(dir) = std::env::var("VERIFY_DUMP_TEXT") {
        let _ = std::fs::write(
            format!("{dir}/{:x}.ptx", std::hash::Hasher::finish(&h.clone())),
            text,
        );
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    let line = format!("{tag} {entry} {:x} {v}\n", std::hash::Hasher::finish(&h));
    f.write_all(line.as_bytes()).unwrap();
}

#[test]
fn displaced_accesses_are_rejected() {
    let kernels = kernels();
    assert!(!kernels.is_empty());
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    // At least four elements of the widest type: the first access of a loop unrolled by four
    // (`i`, `i + S`, `i + 2S`, `i + 3S` while `i + 3S < n`) displaced by fewer elements than
    // that is still in bounds (`i + 1 ≤ i + 3S < n`), and the prover proves it so.
    let strategy = (0..kernels.len(), any::<prop::sample::Index>(), 4i64..64);
    runner
        .run(&strategy, |(k, which, elems)| {
            let (text, entry, contract) = &kernels[k];
            let brackets = access_brackets(text);
            prop_assume!(!brackets.is_empty());
            let at = brackets[which.index(brackets.len())];
            // Element size of the operand: 2, 4 or 8 bytes; k·8 is whole elements for all.
            let mutated = format!("{}+{}{}", &text[..at], elems * 8, &text[at..]);
            dump_verdict("disp", &mutated, entry, contract);
            let result = verify_entry(&mutated, entry, contract);
            prop_assert!(result.is_err(), "{entry}: displaced access accepted");
            Ok(())
        })
        .unwrap();
}

#[test]
fn arbitrary_edits_never_panic() {
    let kernels = kernels();
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let tokens = prop::sample::select(vec![
        "",
        "1",
        "-1",
        "%rd1",
        "%r1",
        "4294967296",
        "-4294967296",
        ".lt",
        ".le",
        "@%p1 ",
        "ret;",
        "bra $L__BB0_1;",
        "}",
        "{",
        "[",
        "]",
        "+",
        ",",
        ";",
        "%tid.x",
        "ld.global.u32 %r1, [0];",
    ]);
    let strategy = (
        0..kernels.len(),
        any::<prop::sample::Index>(),
        0usize..12,
        tokens,
    );
    runner
        .run(&strategy, |(k, at, cut, token)| {
            let (text, entry, contract) = &kernels[k];
            let mut pos = at.index(text.len().max(1));
            while !text.is_char_boundary(pos) {
                pos -= 1;
            }
            let end = (pos + cut).min(text.len());
            let end = (end..=text.len())
                .find(|&e| text.is_char_boundary(e))
                .unwrap_or(text.len());
            let mutated = format!("{}{}{}", &text[..pos], token, &text[end..]);
            dump_verdict("edit", &mutated, entry, contract);
            let _ = verify_entry(&mutated, entry, contract);
            Ok(())
        })
        .unwrap();
}

// ---- mutations of address computations, run on the emulator when accepted ----------------

/// Accepted corpus kernels cheap enough to verify thousands of times in a debug build, between
/// them every index idiom: `int`, `unsigned`, `size_t` and `long long`; single-shot, early
/// return and grid-stride; a `.func` that stores; integer, half and mixed params.
const CORPUS: [&str; 12] = [
    "a03_sub_f32_gs_unsigned",
    "a04_mul_f32_gs_size_t",
    "a05_scale_f32_single_int",
    "a06_axpb_f64_early_ll",
    "a10_add_f32_ldg",
    "a11_add_f16_single_unsigned",
    "a12_mul_bf16_early_int",
    "a13_add_i32_gs_size_t",
    "a16_max_u64_single_ll",
    "a20_func_store_two_out",
    "a21_params_mixed_f32",
    "a22_axpb_f16_param",
];

/// Element counts every accepted mutant runs with: none, one, a partial block (the block is
/// 256), and more than the emulator's capped grid-stride grid has threads (4 blocks per worker,
/// one worker), so a grid-stride loop goes round twice.
const COUNTS: [usize; 4] = [0, 1, 300, 1100];

/// A kernel to mutate: its text split in lines, its entry point and its ABI.
struct Subject {
    name: String,
    lines: Vec<String>,
    entry: String,
    spec: AbiSpec,
    sites: Vec<Site>,
}

/// One place a mutation can go: a line, and the lines it may become.
struct Site {
    line: usize,
    what: &'static str,
    options: Vec<String>,
}

/// One mutant: its text and what was changed.
struct Mutant {
    text: String,
    description: String,
}

impl Subject {
    fn new(name: &str, text: &str, entry: &str, spec: AbiSpec) -> Self {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let sites = sites(&lines);
        assert!(!sites.is_empty(), "{name}: nothing to mutate");
        Self {
            name: name.to_owned(),
            lines,
            entry: entry.to_owned(),
            spec,
            sites,
        }
    }

    /// The kernel with one site changed, or two sites on different lines.
    fn mutate(&self, picks: &[(prop::sample::Index, prop::sample::Index)]) -> Mutant {
        let mut lines = self.lines.clone();
        let mut changed = Vec::new();
        let mut description = Vec::new();
        for (site, option) in picks {
            let site = &self.sites[site.index(self.sites.len())];
            if changed.contains(&site.line) {
                continue;
            }
            let new = &site.options[option.index(site.options.len())];
            description.push(format!(
                "line {} ({}): `{}` → `{}`",
                site.line + 1,
                site.what,
                lines[site.line].trim(),
                new.trim()
            ));
            lines[site.line] = new.clone();
            changed.push(site.line);
        }
        Mutant {
            text: lines.join("\n"),
            description: format!("{}: {}", self.name, description.join("; ")),
        }
    }
}

/// The kernels mutated: the synthesizer's scalar kernels (one per dtype and operand shape), the
/// NVRTC half-precision scalar fixtures, and the cheap scalar kernels of the verifier corpus.
fn subjects() -> Vec<Subject> {
    let mut out = Vec::new();
    let mut shapes = HashSet::new();
    for a in common::synth_matrix::artifacts() {
        let shape = (
            a.abi.abi.clone(),
            a.abi.inputs.to_vec(),
            a.abi.outputs.to_vec(),
            a.abi.params.len(),
        );
        if a.abi.abi == jitseam::AbiKind::Scalar && shapes.insert(shape) {
            let text = String::from_utf8(a.bytes.clone()).unwrap_or_default();
            let entry = a.link.entry_point.clone();
            out.push(Subject::new(&entry, &text, &entry, a.abi.clone()));
        }
    }
    for entry in [
        common::launch_suite::ADD_F16,
        common::launch_suite::ADD_BF16,
    ] {
        let f = common::fixtures::by_entry(entry);
        out.push(Subject::new(f.entry, f.ptx, f.entry, f.spec.clone()));
    }
    let corpus = common::verify_corpus::entries();
    for name in CORPUS {
        let e = corpus
            .iter()
            .find(|e| e.entry == name)
            .unwrap_or_else(|| panic!("no corpus entry {name}"));
        out.push(Subject::new(name, &e.ptx, &e.entry, e.spec.clone()));
    }
    out
}

/// An instruction line taken apart: `@guard opcode operands;`.
struct Ins<'t> {
    guard: Option<&'t str>,
    opcode: &'t str,
    operands: Vec<&'t str>,
}

impl<'t> Ins<'t> {
    fn parse(line: &'t str) -> Option<Self> {
        let t = line.trim();
        if !t.ends_with(';') || t.starts_with('.') || t.starts_with("//") {
            return None;
        }
        let body = t.trim_end_matches(';').trim();
        let (guard, rest) = match body.strip_prefix('@') {
            Some(_) => {
                let (g, rest) = body.split_once(char::is_whitespace)?;
                (Some(g), rest.trim())
            }
            None => (None, body),
        };
        let (opcode, operands) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let operands = operands
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        Some(Self {
            guard,
            opcode,
            operands,
        })
    }

    /// The line written back, with `opcode` and `operands` in place of its own.
    fn write(&self, guard: Option<&str>, opcode: &str, operands: &[String]) -> String {
        let guard = guard.map(|g| format!("{g} ")).unwrap_or_default();
        format!("\t{guard}{opcode} \t{};", operands.join(", "))
    }

    fn owned_operands(&self) -> Vec<String> {
        self.operands.iter().map(|&o| o.to_owned()).collect()
    }

    fn is_global_access(&self) -> bool {
        ["ld.", "st.", "atom.", "red."]
            .iter()
            .any(|p| self.opcode.starts_with(p))
            && ![".param", ".shared", ".local", ".const"]
                .iter()
                .any(|s| self.opcode.contains(s))
    }

    /// Whether the first operand is written (not a store or a reduction, which only read).
    fn defines(&self) -> bool {
        !(self.opcode.starts_with("st.") || self.opcode.starts_with("red."))
    }
}

/// The numbered registers (`%rd12`, `%p1`) in `text`, with their class (`rd`, `p`).
fn registers(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                i += 1;
            }
            let class_end = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let dotted = i < bytes.len() && bytes[i] == b'.';
            if i > class_end && class_end > start + 1 && !dotted {
                out.push((&text[start..i], &text[start + 1..class_end]));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// An integer immediate operand (`4`, `-1`, `0xff`); float immediates (`0f3F800000`) are not.
fn immediate(operand: &str) -> Option<i64> {
    if let Some(hex) = operand.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    operand.parse().ok()
}

/// Flips the signedness of a type suffix: `s32` ↔ `u32`.
fn flip_sign(part: &str) -> Option<String> {
    let bits = part.get(1..)?;
    if !bits.chars().all(|c| c.is_ascii_digit()) || bits.is_empty() {
        return None;
    }
    match part.as_bytes().first() {
        Some(b's') => Some(format!("u{bits}")),
        Some(b'u') => Some(format!("s{bits}")),
        _ => None,
    }
}

/// The lines that compute an address or decide whether an access runs: every global access,
/// every guarded instruction, and, backwards, every definition of a register they read.
fn address_lines(ins: &[Option<Ins<'_>>]) -> Vec<bool> {
    let mut wanted: HashSet<&str> = HashSet::new();
    let mut relevant = vec![false; ins.len()];
    for (i, ins) in ins.iter().enumerate() {
        let Some(ins) = ins else { continue };
        if ins.is_global_access() {
            relevant[i] = true;
            for o in ins.operands.iter().filter(|o| o.starts_with('[')) {
                wanted.extend(registers(o).into_iter().map(|r| r.0));
            }
        }
        if let Some(g) = ins.guard {
            relevant[i] = true;
            wanted.extend(registers(g).into_iter().map(|r| r.0));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (i, ins) in ins.iter().enumerate() {
            let Some(ins) = ins else { continue };
            if !ins.defines() || ins.operands.is_empty() {
                continue;
            }
            let defined = registers(ins.operands[0]);
            if defined.iter().any(|r| wanted.contains(r.0)) {
                for o in &ins.operands[1..] {
                    for (r, _) in registers(o) {
                        changed |= wanted.insert(r);
                    }
                }
                if !relevant[i] {
                    relevant[i] = true;
                    changed = true;
                }
            }
        }
    }
    relevant
}

/// Every mutation site of the address computations of `lines`.
fn sites(lines: &[String]) -> Vec<Site> {
    let parsed: Vec<Option<Ins<'_>>> = lines.iter().map(|l| Ins::parse(l)).collect();
    let relevant = address_lines(&parsed);
    let mut pool: Vec<(&str, &str)> = lines.iter().flat_map(|l| registers(l)).collect();
    pool.sort_unstable();
    pool.dedup();
    let mut out = Vec::new();
    for (line, ins) in parsed.iter().enumerate() {
        let Some(ins) = ins else { continue };
        if !relevant[line] || ins.opcode.starts_with("ld.param") || ins.opcode == "ret" {
            continue;
        }
        let arithmetic = [
            "add.", "sub.", "mul.", "mad.", "shl.", "shr.", "and.", "or.",
        ]
        .iter()
        .any(|p| ins.opcode.starts_with(p));
        let parts: Vec<&str> = ins.opcode.split('.').collect();
        // Immediates of integer arithmetic and compares.
        if arithmetic || ins.opcode.starts_with("setp.") {
            for (j, o) in ins.operands.iter().enumerate().skip(1) {
                let Some(v) = immediate(o) else { continue };
                let mut values = vec![
                    v.wrapping_add(1),
                    v.wrapping_sub(1),
                    v.wrapping_mul(2),
                    v / 2,
                    v.wrapping_add(16),
                    0,
                    1,
                    -1,
                ];
                values.sort_unstable();
                values.dedup();
                values.retain(|&x| x != v);
                let options = values
                    .into_iter()
                    .map(|x| {
                        let mut ops = ins.owned_operands();
                        ops[j] = x.to_string();
                        ins.write(ins.guard, ins.opcode, &ops)
                    })
                    .collect();
                out.push(Site {
                    line,
                    what: "immediate",
                    options,
                });
            }
        }
        // Register operands read: another register of the same class.
        let reads = if ins.is_global_access() {
            ins.operands
                .iter()
                .enumerate()
                .filter(|(_, o)| o.starts_with('['))
                .map(|(j, _)| j)
                .collect::<Vec<_>>()
        } else if ins.guard.is_some() && ins.opcode.starts_with("bra") {
            Vec::new()
        } else {
            (1..ins.operands.len()).collect()
        };
        for j in reads {
            for (r, class) in registers(ins.operands[j]) {
                let options: Vec<String> = pool
                    .iter()
                    .filter(|(other, c)| *c == class && *other != r)
                    .map(|(other, _)| {
                        let mut ops = ins.owned_operands();
                        ops[j] = ops[j].replacen(r, other, 1);
                        ins.write(ins.guard, ins.opcode, &ops)
                    })
                    .collect();
                if !options.is_empty() {
                    out.push(Site {
                        line,
                        what: "register",
                        options,
                    });
                }
            }
        }
        // A compare's condition or signedness.
        if let ["setp", cmp, ty] = parts[..] {
            let mut options: Vec<String> = ["eq", "ne", "lt", "le", "gt", "ge"]
                .iter()
                .filter(|c| **c != cmp)
                .map(|c| ins.write(ins.guard, &format!("setp.{c}.{ty}"), &ins.owned_operands()))
                .collect();
            if let Some(flipped) = flip_sign(ty) {
                options.push(ins.write(
                    ins.guard,
                    &format!("setp.{cmp}.{flipped}"),
                    &ins.owned_operands(),
                ));
            }
            out.push(Site {
                line,
                what: "compare",
                options,
            });
        } else {
            // The signedness of a conversion, a widening multiply, a shift, a min or max.
            let options: Vec<String> = (1..parts.len())
                .filter_map(|k| {
                    let flipped = flip_sign(parts[k])?;
                    let mut p: Vec<String> = parts.iter().map(|&s| s.to_owned()).collect();
                    p[k] = flipped;
                    Some(ins.write(ins.guard, &p.join("."), &ins.owned_operands()))
                })
                .filter(|_| !ins.is_global_access())
                .collect();
            if !options.is_empty() {
                out.push(Site {
                    line,
                    what: "signedness",
                    options,
                });
            }
        }
        // `add` ↔ `sub`, `min` ↔ `max`.
        let swapped = [
            ("add", "sub"),
            ("sub", "add"),
            ("min", "max"),
            ("max", "min"),
        ]
        .iter()
        .find(|(from, _)| parts.first() == Some(from))
        .map(|(_, to)| format!("{to}{}", &ins.opcode[parts[0].len()..]));
        if let Some(opcode) = swapped
            && !ins.opcode.contains(".f")
        {
            out.push(Site {
                line,
                what: "operation",
                options: vec![ins.write(ins.guard, &opcode, &ins.owned_operands())],
            });
        }
        // A guard dropped or negated.
        if let Some(g) = ins.guard {
            let negated = match g.strip_prefix("@!") {
                Some(p) => format!("@{p}"),
                None => format!("@!{}", &g[1..]),
            };
            let ops = ins.owned_operands();
            out.push(Site {
                line,
                what: "guard",
                options: vec![
                    ins.write(None, ins.opcode, &ops),
                    ins.write(Some(&negated), ins.opcode, &ops),
                ],
            });
        }
    }
    out
}

/// A device buffer of any element type.
macro_rules! buffers {
    ($($kind:ident($ty:ty): input $input:expr, sentinel $sentinel:expr;)*) => {
        enum Buf {
            $($kind(DeviceBuffer<$ty>),)*
        }

        impl Buf {
            /// `n` elements: a varied input (large integers, so an index taken from data goes
            /// out of bounds), or an output filled with a sentinel.
            fn new(device: &Device, kind: ElementKind, n: usize, output: bool) -> Result<Self, Error> {
                Ok(match kind {
                    $(ElementKind::$kind => {
                        let fill: fn(usize) -> $ty = if output { |_| $sentinel } else { $input };
                        let data: Vec<$ty> = (0..n).map(fill).collect();
                        Self::$kind(device.upload(&data)?)
                    })*
                })
            }

            fn arg(&self) -> Arg<'_> {
                match self { $(Self::$kind(b) => b.into(),)* }
            }

            fn arg_mut(&mut self) -> ArgMut<'_> {
                match self { $(Self::$kind(b) => b.into(),)* }
            }
        }
    };
}

/// A large, varied integer for element `i`.
fn spread(i: usize) -> u64 {
    (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

buffers! {
    F32(f32): input |i| i as f32 * 0.5 - 7.0, sentinel f32::NAN;
    F64(f64): input |i| i as f64 * 0.25 + 1.0, sentinel f64::NAN;
    F16(f16): input |i| f16::from_f32((i % 64) as f32 - 9.0), sentinel f16::NAN;
    BF16(bf16): input |i| bf16::from_f32((i % 64) as f32 + 0.5), sentinel bf16::NAN;
    I8(i8): input |i| spread(i) as i8, sentinel i8::MIN;
    U8(u8): input |i| spread(i) as u8, sentinel u8::MAX;
    I16(i16): input |i| spread(i) as i16, sentinel i16::MIN;
    U16(u16): input |i| spread(i) as u16, sentinel u16::MAX;
    I32(i32): input |i| spread(i) as i32, sentinel i32::MIN;
    I64(i64): input |i| spread(i) as i64, sentinel i64::MIN;
    U32(u32): input |i| spread(i) as u32, sentinel u32::MAX;
    U64(u64): input |i| spread(i), sentinel u64::MAX;
}

fn param(kind: ElementKind) -> ParamValue {
    match kind {
        ElementKind::F32 => ParamValue::F32(1.5),
        ElementKind::F64 => ParamValue::F64(-2.5),
        ElementKind::F16 => ParamValue::F16(f16::from_f32(0.5)),
        ElementKind::BF16 => ParamValue::BF16(bf16::from_f32(3.0)),
        ElementKind::I8 => ParamValue::I8(-3),
        ElementKind::U8 => ParamValue::U8(200),
        ElementKind::I16 => ParamValue::I16(-300),
        ElementKind::U16 => ParamValue::U16(60_000),
        ElementKind::I32 => ParamValue::I32(-70_000),
        ElementKind::I64 => ParamValue::I64(1 << 40),
        ElementKind::U32 => ParamValue::U32(3_000_000_000),
        ElementKind::U64 => ParamValue::U64(1 << 50),
    }
}

/// One launch with exact-size operands of `n` elements, waited for.
fn run(
    device: &Device,
    kernel: &Kernel<Erased, DeviceBound>,
    spec: &AbiSpec,
    n: usize,
) -> Result<(), Error> {
    let ins = spec
        .inputs
        .iter()
        .map(|&k| Buf::new(device, k, n, false))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outs = spec
        .outputs
        .iter()
        .map(|&k| Buf::new(device, k, n, true))
        .collect::<Result<Vec<_>, _>>()?;
    let params: Vec<ParamValue> = spec.params.iter().map(|&k| param(k)).collect();
    let in_args: Vec<Arg<'_>> = ins.iter().map(Buf::arg).collect();
    let mut out_args: Vec<ArgMut<'_>> = outs.iter_mut().map(Buf::arg_mut).collect();
    let stream = device.default_stream();
    kernel.launch(&stream, &in_args, &mut out_args, &[n], &params)?;
    stream.synchronize()
}

/// The emulator every mutant runs on: one worker (deterministic, and the grid-stride cap is
/// smallest), and a budget that ends a mutant that no longer terminates quickly.
fn emulator() -> Device {
    Device::emulator_with(EmulatorConfig {
        budget: Some(20_000),
        workers: 1,
        ..EmulatorConfig::default()
    })
}

fn bind(
    device: &Device,
    text: &str,
    subject: &Subject,
    verified: bool,
) -> Result<Kernel<Erased, DeviceBound>, Error> {
    let described = Kernel::describe(Artifact::ptx(text, &subject.entry, subject.spec.clone()))?;
    let loaded = if verified {
        described.load().map_err(|e| e.error)?
    } else {
        // SAFETY: only on the emulator, which maps nothing but the launch's operands and checks
        // every access against them: a body that strays faults instead of touching host memory.
        unsafe { described.load_unverified() }.map_err(|e| e.error)?
    };
    loaded.bind(device).map_err(|e| e.error)
}

#[test]
fn unmutated_kernels_run_clean_and_a_displaced_store_faults() {
    let device = emulator();
    for s in subjects() {
        let text = s.lines.join("\n");
        let kernel = bind(&device, &text, &s, true).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        for n in COUNTS {
            if let Err(e) = run(&device, &kernel, &s.spec, n) {
                panic!("{} n = {n}: {e}", s.name);
            }
        }
        // The oracle is live: the last store moved one whole operand further, loaded without
        // the proof, faults on the emulator.
        let store = s
            .lines
            .iter()
            .rposition(|l| l.trim_start().starts_with("st.global"))
            .unwrap_or_else(|| panic!("{}: no store", s.name));
        let mut lines = s.lines.clone();
        lines[store] = lines[store].replacen(']', "+65536]", 1);
        let kernel = bind(&device, &lines.join("\n"), &s, false)
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        match run(&device, &kernel, &s.spec, 1) {
            Err(Error::MemoryFault(_)) => {}
            other => panic!("{}: a displaced store did not fault: {other:?}", s.name),
        }
    }
}

#[test]
fn accepted_address_mutants_run_clean_on_the_emulator() {
    let subjects = subjects();
    let device = emulator();
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[13; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let pick = || (any::<prop::sample::Index>(), any::<prop::sample::Index>());
    // One site in four mutants, two in one.
    let strategy = (
        0..subjects.len(),
        pick(),
        prop::option::weighted(0.25, pick()),
    );
    let (verified, accepted) = (Cell::new(0u32), Cell::new(0u32));
    let launched: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
    let outcomes: RefCell<std::collections::BTreeMap<&'static str, u32>> = RefCell::default();
    runner
        .run(&strategy, |(k, first, second)| {
            let s = &subjects[k];
            let picks: Vec<_> = std::iter::once(first).chain(second).collect();
            let mutant = s.mutate(&picks);
            dump_verdict("addr", &mutant.text, &s.entry, &s.spec.contract());
            verified.set(verified.get() + 1);
            let kernel = match bind(&device, &mutant.text, s, true) {
                Ok(kernel) => kernel,
                Err(Error::BodyRejected { .. }) => return Ok(()),
                Err(e) => {
                    prop_assert!(false, "{}: not a body rejection: {e}", mutant.description);
                    unreachable!()
                }
            };
            accepted.set(accepted.get() + 1);
            if !launched.borrow_mut().insert(mutant.text.clone()) {
                return Ok(());
            }
            for n in COUNTS {
                let outcome = run(&device, &kernel, &s.spec, n);
                if let Err(Error::MemoryFault(fault)) = &outcome {
                    prop_assert!(
                        false,
                        "verifier bug: an accepted mutant faults at n = {n}: {}\n{fault}",
                        mutant.description
                    );
                }
                let kind = outcome.err().map_or("ok", |e| e.kind_name());
                *outcomes.borrow_mut().entry(kind).or_default() += 1;
            }
            Ok(())
        })
        .unwrap();
    let launched = launched.borrow().len();
    eprintln!(
        "{} mutants verified, {} accepted, {launched} distinct accepted mutants run; launch outcomes {:?}",
        verified.get(),
        accepted.get(),
        outcomes.borrow()
    );
    assert!(verified.get() >= 2000);
    // Not vacuous: a good share of the mutants are accepted and run.
    assert!(launched >= 100, "only {launched} accepted mutants ran");
}
