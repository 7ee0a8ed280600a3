//! `jitseam check FILE --entry NAME --abi … --inputs … --outputs … [--params …]` for a PTX,
//! cubin or fatbin file.

use std::process::ExitCode;
use std::sync::Arc;

use jitseam::kernel::proof_cache::{DiskProofCache, ProofCache};
use jitseam::{Artifact, ArtifactKind, Error, Kernel};
use jitseam_verify::Coverage;

use crate::kernel_args::KernelArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
    /// Print what was proven (coverage, launch conditions, accesses per pointer, guards) as
    /// JSON.
    #[arg(long)]
    json: bool,
    /// Refuse a body that needs run-time guards, as `Kernel::load_proven` does: every access
    /// must be proven.
    #[arg(long)]
    no_guards: bool,
    /// Keep the proof on disk and take it from there on the next check of the same kernel,
    /// signature and verifier build: in DIR, or without one in `$XDG_CACHE_HOME/jitseam/proofs`
    /// (`~/.cache/jitseam/proofs`). `JITSEAM_PROOF_CACHE=DIR` does the same. Says on stderr
    /// whether the proof came from disk.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    proof_cache: Option<String>,
}

/// Where `--proof-cache` (or `JITSEAM_PROOF_CACHE`) puts proofs: `Some(None)` for the default
/// directory, `None` when the disk cache is off.
fn proof_cache_dir(args: &Args) -> Option<Option<std::path::PathBuf>> {
    let named = args
        .proof_cache
        .clone()
        .or_else(|| std::env::var("JITSEAM_PROOF_CACHE").ok())?;
    Some((!named.is_empty()).then(|| named.into()))
}

/// Turns the disk proof cache on for this process, as asked.
fn open_proof_cache(args: &Args) -> Result<Option<Arc<DiskProofCache>>, String> {
    let Some(dir) = proof_cache_dir(args) else {
        return Ok(None);
    };
    let disk = match dir {
        Some(dir) => DiskProofCache::open(dir),
        None => DiskProofCache::open_default(),
    }
    .map_err(|e| format!("proof cache: {e}"))?;
    let cache = ProofCache::global();
    cache.set_disk(Some(disk));
    Ok(cache.disk())
}

/// One line on stderr: what the disk proof cache answered (a hit is a proof taken from disk;
/// a proof verified after a miss is kept there, a decline is not).
fn report_proof_cache(disk: Option<&DiskProofCache>) {
    let Some(disk) = disk else {
        return;
    };
    let stats = disk.stats();
    let mut line = format!(
        "proof cache {}: {} hit{}, {} miss{}",
        disk.dir().display(),
        stats.hits,
        if stats.hits == 1 { "" } else { "s" },
        stats.misses,
        if stats.misses == 1 { "" } else { "es" },
    );
    if stats.corrupt > 0 {
        line.push_str(&format!(", {} damaged entries refused", stats.corrupt));
    }
    if stats.store_errors > 0 {
        line.push_str(&format!(", {} not stored", stats.store_errors));
    }
    eprintln!("{line}");
}

/// `load()`, or `load_proven()` under `--no-guards`.
fn load(
    args: &Args,
    kernel: Kernel<jitseam::Erased, jitseam::Described>,
) -> Result<Kernel<jitseam::Erased, jitseam::Loaded>, Error> {
    if args.no_guards {
        kernel.load_proven().map_err(Error::from)
    } else {
        kernel.load().map_err(Error::from)
    }
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let disk = open_proof_cache(args)?;
    let verdict = check(args);
    report_proof_cache(disk.as_deref());
    verdict
}

fn check(args: &Args) -> Result<ExitCode, String> {
    let artifact = args.kernel.artifact()?;
    let spec = artifact.abi.clone();
    let kind = artifact.kind;
    if spec.abi.is_custom() {
        return check_custom(args, artifact);
    }
    let verdict = Kernel::describe(artifact).and_then(|k| match kind {
        // A bare cubin has no PTX to prove its body with: check what can be checked.
        // SAFETY: the kernel is only checked and dropped, never bound or launched, so no body
        // runs and the caller's promise is never relied on.
        ArtifactKind::Cubin => unsafe { k.load_unverified() }.map_err(jitseam::Error::from),
        _ => load(args, k),
    });
    match verdict {
        Ok(_) if kind == ArtifactKind::Cubin => {
            println!(
                "ok: parameter count, offsets and sizes match (a cubin records no types, and its body cannot be verified)"
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(kernel) => {
            let proof = kernel.loaded().proof();
            if args.json {
                println!("{}", crate::verdict::proof_json(&spec, proof));
                return Ok(ExitCode::SUCCESS);
            }
            println!("ok");
            if let Some(proof) = proof {
                let how = if proof.guards().is_empty() {
                    "proven safe"
                } else {
                    "proven safe with run-time guards"
                };
                println!("body {how}; coverage: {}", coverage_name(proof.coverage));
                if let Some(summary) = crate::verdict::guarded_summary(&spec, proof) {
                    println!("{summary}");
                }
                for condition in &proof.conditions {
                    println!("every launch checks: {condition}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            if matches!(e, Error::ParamCount { .. } | Error::ParamMismatch { .. }) {
                eprintln!(
                    "a kernel with this abi is declared:\n{}",
                    spec.cuda_prototype(&args.kernel.entry)
                );
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A custom-abi kernel: its parameter list is checked exactly (order, class, size), then its
/// body against the declared extents; a body not proven fails the check, as for every ABI.
fn check_custom(args: &Args, artifact: Artifact) -> Result<ExitCode, String> {
    let spec = artifact.abi.clone();
    // SAFETY: the kernel is only checked and dropped, never bound or launched, so no body runs
    // and the caller's promise is never relied on.
    let params = Kernel::describe(artifact.clone())
        .and_then(|k| unsafe { k.load_unverified() }.map_err(Error::from));
    if let Err(e) = params {
        eprintln!("{e}");
        if matches!(e, Error::ParamCount { .. } | Error::ParamMismatch { .. }) {
            eprintln!(
                "a kernel with this signature is declared:\n{}",
                spec.cuda_prototype(&args.kernel.entry)
            );
        }
        return Ok(ExitCode::FAILURE);
    }
    let proven = Kernel::describe(artifact).and_then(|k| load(args, k));
    let (proof, body) = match proven {
        Ok(kernel) => (kernel.loaded().proof().cloned(), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let conditions: Vec<String> = proof
        .iter()
        .flat_map(|p| p.conditions.iter().map(ToString::to_string))
        .collect();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "verified": body.is_none(),
                "params_match": true,
                "body": body,
                "conditions": conditions,
                "guards": proof.as_ref().map(crate::verdict::guards_json),
            })
        );
        return Ok(verdict_code(body.is_none()));
    }
    println!("ok: the parameter list matches the signature (kernel order, class, size)");
    if let Some(custom) = spec.abi.custom() {
        println!("signature: {custom}");
    }
    match &body {
        Some(body) => {
            println!("body not proven: {body}");
            println!(
                "(`jitseam run --unverified` runs it on the emulator, whose memory checker stops any access outside the declared extents)"
            );
        }
        None => {
            println!("body proven safe against the declared extents");
            if let Some(summary) = proof
                .as_ref()
                .and_then(|p| crate::verdict::guarded_summary(&spec, p))
            {
                println!("{summary}");
            }
            for condition in &conditions {
                println!("every launch checks: {condition}");
            }
        }
    }
    Ok(verdict_code(body.is_none()))
}

/// A body the verifier could not prove fails the check, as for every ABI.
fn verdict_code(proven: bool) -> ExitCode {
    if proven {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn coverage_name(coverage: Coverage) -> &'static str {
    match coverage {
        Coverage::GridStride => "grid-stride (any grid covers every element)",
        Coverage::OneThreadPerElement => "one thread per element",
    }
}
