//! `jitseam check FILE.ptx --entry NAME --abi … --inputs … --outputs … [--params …]`.

use std::process::ExitCode;

use jitseam::Kernel;

use crate::kernel_args::KernelArgs;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let verdict = Kernel::describe(args.kernel.artifact()?)
        .and_then(|k| k.load().map_err(jitseam::Error::from));
    match verdict {
        Ok(_) => {
            println!("ok");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("{e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
