//! Every kernel the reference elementwise synthesizer emits — ops × dtypes × ABIs (every vector
//! width, scalar, strided; ranks 1 to 8 for a three-op region) — is accepted by NVIDIA's real assembler,
//! `ptxas -arch=sm_90`, with no warnings.
//!
//! ptxas is found through `JITSEAM_PTXAS`, else `.venv-ptxas/**/bin/ptxas` (made by
//! `scripts/install-ptxas`), else `PATH`. Without one the test fails under CI (env `CI` set)
//! and otherwise prints a notice and passes, so a laptop without the wheel can still run the
//! suite.
//!
//! Kernels are assembled one module per (dtype, ABI), every op a separate entry, because
//! ptxas time is dominated by its start-up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use jitseam::ElementKind;
use jitseam::synth::elementwise::{OPS, op_signature, supports};
use jitseam::synth::{
    Arch, ElementwiseSynthesizer, JitBudget, JitRequest, OperandDesc, Region, SynthDecline,
    Synthesizer,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const DTYPES: [ElementKind; 4] = [
    ElementKind::F32,
    ElementKind::F64,
    ElementKind::F16,
    ElementKind::BF16,
];

fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("JITSEAM_PTXAS") {
        return Some(PathBuf::from(path));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-ptxas");
    if let Some(found) = find_in(&venv, 8) {
        return Some(found);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ptxas"))
        .find(|candidate| candidate.is_file())
}

/// Depth-limited search for `bin/ptxas` under `dir`.
fn find_in(dir: &Path, depth: usize) -> Option<PathBuf> {
    let candidate = dir.join("bin").join("ptxas");
    if candidate.is_file() {
        return Some(candidate);
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    entries.into_iter().find_map(|sub| find_in(&sub, depth - 1))
}

fn dense(dtype: ElementKind, shape: &[u64], align: u32) -> OperandDesc {
    OperandDesc::contiguous(dtype, shape, align)
}

fn view(dtype: ElementKind, shape: &[u64], strides: &[i64], align: u32) -> OperandDesc {
    OperandDesc {
        dtype,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        align,
    }
}

fn widths(dtype: ElementKind) -> &'static [u32] {
    match dtype.size() {
        2 => &[8, 4, 2],
        4 => &[4, 2],
        _ => &[2],
    }
}

/// Operand layouts (two inputs and the output) that steer the synthesizer to each ABI, and
/// whether every region is assembled in them (strided ranks other than 2 only get the three-op
/// region: the unravel code is what differs, and ptxas time grows with every entry).
fn layouts(dtype: ElementKind) -> Vec<(Vec<OperandDesc>, bool)> {
    let size = dtype.size() as u32;
    let mut out: Vec<(Vec<OperandDesc>, bool)> = widths(dtype)
        .iter()
        .map(|&w| (vec![dense(dtype, &[3 * u64::from(w)], w * size); 3], true))
        .collect();
    out.push((vec![dense(dtype, &[3, 5], 16); 3], true));
    for rank in 1..=8usize {
        let shape = vec![2u64; rank];
        let mut transposed: Vec<i64> = jitseam::synth::row_major_strides(&shape);
        transposed.reverse();
        transposed[0] = -transposed[0];
        let mut broadcast = jitseam::synth::row_major_strides(&shape);
        broadcast[0] = 0;
        let operands = vec![
            view(dtype, &shape, &transposed, size),
            view(dtype, &shape, &broadcast, size),
            dense(dtype, &shape, size),
        ];
        out.push((operands, rank == 2));
    }
    out
}

fn request(region: Region, operands: Vec<OperandDesc>) -> JitRequest {
    JitRequest {
        region,
        operands,
        arch: Arch::sm(80),
        budget: JitBudget::millis(10_000),
    }
}

/// Every op alone, plus a three-op region with two params.
fn regions() -> Vec<(Region, usize)> {
    let mut out: Vec<(Region, usize)> = OPS
        .iter()
        .map(|&name| {
            let (arity, scalars) = op_signature(name).unwrap_or((0, 0));
            let region = Region::op_with_scalars(
                name,
                (0..arity as u32).map(Region::bind).collect(),
                vec![1.5; scalars],
            );
            (region, arity)
        })
        .collect();
    let three = Region::op_with_scalars(
        "add_scalar",
        vec![Region::op(
            "max",
            vec![
                Region::op_with_scalars("mul_scalar", vec![Region::bind(0)], vec![2.0]),
                Region::bind(1),
            ],
        )],
        vec![3.0],
    );
    out.push((three, 2));
    out
}

#[test]
fn ptxas_accepts_every_emitted_kernel() -> TestResult {
    let Some(ptxas) = find_ptxas() else {
        if std::env::var_os("CI").is_some() {
            return Err(
                "ptxas not found under CI: run scripts/install-ptxas first, or set \
                        JITSEAM_PTXAS"
                    .into(),
            );
        }
        eprintln!(
            "\n!!! NOTICE: ptxas not found — the emitted PTX was NOT assembled.\n!!! Run \
             `scripts/install-ptxas` (or set JITSEAM_PTXAS) to check it.\n"
        );
        return Ok(());
    };

    let synth = ElementwiseSynthesizer::new();
    // (dtype, abi) -> entries (text after the module header).
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut kernels = 0usize;
    for dtype in DTYPES {
        for (layout, all_regions) in layouts(dtype) {
            let regions = regions();
            let skip = if all_regions { 0 } else { regions.len() - 1 };
            for (region, arity) in regions.into_iter().skip(skip) {
                let mut operands: Vec<OperandDesc> = layout[..arity].to_vec();
                operands.extend(layout.last().cloned());
                let name = match &region {
                    Region::Op { op, .. } => op.clone(),
                    Region::Bind { .. } => String::new(),
                };
                let result = synth.synthesize(&request(region, operands));
                if OPS.contains(&name.as_str()) && !supports(&name, dtype) {
                    assert!(
                        matches!(result, Err(SynthDecline::UnsupportedOp { .. })),
                        "{name} {dtype}: {result:?}"
                    );
                    continue;
                }
                let artifact = result?;
                let text = String::from_utf8(artifact.bytes)?;
                let (_, entry) = text
                    .split_once(".address_size 64\n")
                    .ok_or("no module header")?;
                // Strided kernels of every rank share a module: fewer ptxas start-ups.
                let abi = match artifact.abi.abi {
                    jitseam::AbiKind::Strided { .. } => "strided".to_owned(),
                    other => other.to_string().replace(':', ""),
                };
                modules
                    .entry(format!("{dtype}_{abi}"))
                    .or_default()
                    .push(entry.to_owned());
                kernels += 1;
            }
        }
    }

    let dir = std::env::temp_dir().join(format!("jitseam-synth-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let header = ".version 8.0\n.target sm_80\n.address_size 64\n";
    let mut children = Vec::new();
    for (name, entries) in &modules {
        let path = dir.join(format!("{name}.ptx"));
        std::fs::write(&path, format!("{header}{}", entries.concat()))?;
        let child = Command::new(&ptxas)
            .arg("-arch=sm_90")
            .arg(&path)
            .arg("-o")
            .arg(path.with_extension("cubin"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
        children.push((path, entries.len(), child));
    }
    let mut failures = Vec::new();
    for (path, entries, child) in children {
        let output = child.wait_with_output()?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() || !stderr.trim().is_empty() {
            failures.push(format!(
                "{} ({entries} entries): {}\n{stderr}",
                path.display(),
                output.status
            ));
        }
    }
    if failures.is_empty() {
        // Keep the files when something failed, for reading.
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected:\n{}",
        failures.join("\n")
    );
    // 18 regions × (f32: v4 v2 scalar r2; f64: v2 scalar r2; f16, bf16: v8 v4 v2 scalar r2)
    // less 5 f64 ops × 3, plus the three-op region at 7 other ranks × 4 dtypes.
    assert_eq!(kernels, 18 * (4 + 3 + 5 + 5) - 5 * 3 + 7 * 4);
    eprintln!(
        "ptxas ({}) accepted {kernels} kernels in {} modules",
        ptxas.display(),
        modules.len()
    );
    Ok(())
}
