//! `jitseam check FILE --entry NAME --abi … --inputs … --outputs … [--params …]` for a PTX,
//! cubin or fatbin file.

use std::process::ExitCode;

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
