//! `jitseam check FILE --entry NAME --abi … --inputs … --outputs … [--params …]` for a PTX,
//! cubin or fatbin file.

use std::process::ExitCode;

use jitseam::{ArtifactKind, Error, Kernel};
use jitseam_ptx::verify::Coverage;

use crate::kernel_args::KernelArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
    /// Print what was proven (coverage, launch conditions, accesses per pointer) as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let artifact = args.kernel.artifact()?;
    let spec = artifact.abi.clone();
    let kind = artifact.kind;
    let verdict = Kernel::describe(artifact).and_then(|k| match kind {
        // A bare cubin has no PTX to prove its body with: check what can be checked.
        // SAFETY: the kernel is only checked and dropped, never bound or launched, so no body
        // runs and the caller's promise is never relied on.
        ArtifactKind::Cubin => unsafe { k.load_unverified() }.map_err(jitseam::Error::from),
        _ => k.load().map_err(jitseam::Error::from),
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
                println!(
                    "body proven safe; coverage: {}",
                    coverage_name(proof.coverage)
                );
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

fn coverage_name(coverage: Coverage) -> &'static str {
    match coverage {
        Coverage::GridStride => "grid-stride (any grid covers every element)",
        Coverage::OneThreadPerElement => "one thread per element",
    }
}
