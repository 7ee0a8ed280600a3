//! `jitseam check FILE --entry NAME --abi … --inputs … --outputs … [--params …]` for a PTX,
//! cubin or fatbin file.

use std::process::ExitCode;

use jitseam::{ArtifactKind, Error, Kernel};

use crate::kernel_args::KernelArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
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
        Ok(_) => {
            println!("ok");
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
