//! `jitseam compile FILE.cu --arch sm_90|compute_80 [-I DIR] [-D X=Y] [-o OUT]`: CUDA C to PTX
//! (and, for `sm_XY`, a cubin from the same NVRTC program).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use jitseam::nvrtc::{self, CompileCache, CompileOptions, CompileTarget};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The CUDA C source.
    file: PathBuf,
    /// `sm_XY` (PTX and cubin), `sm_XYa`, or `compute_XY` (PTX only).
    #[arg(long)]
    arch: String,
    /// An include directory (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// A macro definition `NAME` or `NAME=VALUE` (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// `--use_fast_math`.
    #[arg(long)]
    fast_math: bool,
    /// A further NVRTC flag, passed verbatim (repeatable).
    #[arg(long = "flag", value_name = "FLAG", allow_hyphen_values = true)]
    flags: Vec<String>,
    /// Output file: the cubin for `sm_XY` (its PTX goes beside it, as `.ptx`), else the PTX.
    /// Default: the source's name with `.cubin` or `.ptx`.
    #[arg(short = 'o', value_name = "OUT")]
    output: Option<PathBuf>,
    /// Use the on-disk compile cache (`$XDG_CACHE_HOME/jitseam/nvrtc` or
    /// `~/.cache/jitseam/nvrtc`).
    #[arg(long)]
    cache: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let source = crate::read_text(&args.file)?;
    let target = CompileTarget::parse(&args.arch).map_err(|e| e.to_string())?;
    let mut options = CompileOptions::new(target).named(args.file.file_name().map_or_else(
        || "kernel.cu".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    ));
    for dir in &args.include {
        options = options.include(dir);
    }
    for define in &args.define {
        options.defines.push(match define.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (define.clone(), None),
        });
    }
    options.fast_math = args.fast_math;
    options.extra.clone_from(&args.flags);

    let result = if args.cache {
        let cache = CompileCache::open_default().map_err(|e| format!("compile cache: {e}"))?;
        cache.compile(&source, &options)
    } else {
        nvrtc::compile(&source, &options)
    };
    let compiled = match result {
        Ok(compiled) => compiled,
        Err(jitseam::Error::Compile { log, status, .. }) => {
            eprintln!("{log}");
            eprintln!("{}: compilation failed ({status})", args.file.display());
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.to_string()),
    };
    if !compiled.log().trim().is_empty() {
        eprintln!("{}", compiled.log().trim_end());
    }
    let default_ext = if compiled.cubin().is_some() {
        "cubin"
    } else {
        "ptx"
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.file.with_extension(default_ext));
    match compiled.cubin() {
        Some(cubin) => {
            write(&output, cubin)?;
            let ptx_path = output.with_extension("ptx");
            write(&ptx_path, compiled.ptx().as_bytes())?;
            println!(
                "{}: {} cubin ({} bytes) and its ptx {}",
                output.display(),
                compiled.target(),
                cubin.len(),
                ptx_path.display()
            );
        }
        None => {
            write(&output, compiled.ptx().as_bytes())?;
            println!("{}: {} ptx", output.display(), compiled.target());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
