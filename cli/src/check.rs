//! `jitseam check FILE.ptx --entry NAME --abi … --inputs … --outputs … [--params …]`.

use std::path::PathBuf;
use std::process::ExitCode;

use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind, Kernel};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The PTX file.
    file: PathBuf,
    /// The entry point (symbol) to check.
    #[arg(long)]
    entry: String,
    /// `scalar`, `vectorized:W` or `strided:R`.
    #[arg(long)]
    abi: String,
    /// Input dtypes, comma-separated (f32, f64, f16, bf16, i8, u8, i16, u16, i32, i64, u32, u64).
    #[arg(long, value_delimiter = ',', default_value = "")]
    inputs: Vec<String>,
    /// Output dtypes, comma-separated.
    #[arg(long, value_delimiter = ',')]
    outputs: Vec<String>,
    /// Runtime param dtypes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    params: Vec<String>,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let abi: AbiKind = args.abi.parse()?;
    let spec = AbiSpec::owned(
        abi,
        dtypes(&args.inputs)?,
        dtypes(&args.outputs)?,
        dtypes(&args.params)?,
    );
    let text = crate::read_text(&args.file)?;
    let verdict = Kernel::describe(Artifact::ptx(text, args.entry.clone(), spec))
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

/// Parses a dtype list; an empty flag value means no dtypes.
pub(crate) fn dtypes(names: &[String]) -> Result<Vec<ElementKind>, String> {
    names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| ElementKind::from_name(n.trim()).ok_or_else(|| format!("unknown dtype `{n}`")))
        .collect()
}
