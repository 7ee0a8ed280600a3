//! `jitseam check FILE.ptx --entry NAME --abi … --inputs … --outputs … [--params …]`.

use std::process::ExitCode;

use jitseam::{Error, Kernel};

use crate::kernel_args::KernelArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let artifact = args.kernel.artifact()?;
    let spec = artifact.abi.clone();
    let verdict = Kernel::describe(artifact).and_then(|k| k.load().map_err(Error::from));
    match verdict {
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
