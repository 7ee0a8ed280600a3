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

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::ptxas::find_ptxas;
use common::synth_matrix;
use jitseam::synth::SynthDecline;

type TestResult = Result<(), Box<dyn std::error::Error>>;

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

    // (dtype, abi) -> entries (text after the module header).
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut kernels = 0usize;
    for outcome in synth_matrix::outcomes() {
        if !outcome.supported() {
            assert!(
                matches!(outcome.result, Err(SynthDecline::UnsupportedOp { .. })),
                "{} {}: {:?}",
                outcome.op,
                outcome.dtype,
                outcome.result.map(|a| a.link.entry_point)
            );
            continue;
        }
        let artifact = outcome.result?;
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
            .entry(format!("{}_{abi}", outcome.dtype))
            .or_default()
            .push(entry.to_owned());
        kernels += 1;
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
