//! `jitseam`: inspect, check and run PTX, cubin and fatbin kernels; compile CUDA C with NVRTC;
//! summarize telemetry.
// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod check;
mod compile;
mod inspect;
mod kernel_args;
mod run;
mod telemetry;
mod verdict;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "jitseam",
    version,
    about = "Inspect, check and run JIT-synthesized GPU kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// One `Command` is parsed per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Print a PTX module's header and every entry's parameters and directives (with `--abi`,
    /// also what the body verifier proves about each entry); for a cubin its architecture and
    /// every kernel's parameters (offsets and sizes), registers and shared memory; for a fatbin
    /// every image.
    Inspect(inspect::Args),
    /// Verify an entry's parameter list against an ABI, as `load()` does (a cubin: its
    /// parameter offsets and sizes; a fatbin: its PTX images).
    Check(check::Args),
    /// Compile CUDA C with NVRTC to PTX, or to a cubin and its PTX.
    Compile(compile::Args),
    /// Summarize telemetry flushed by a `TelemetrySink`.
    #[command(subcommand)]
    Telemetry(telemetry::TelemetryCommand),
    /// Run an entry on the emulator with checked memory, from files or generated inputs, with
    /// optional strided views per operand.
    Run(run::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Telemetry(command) => Ok(telemetry::run(command)),
        Command::Run(args) => run::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("jitseam: {message}");
            ExitCode::from(2)
        }
    }
}

/// The most bytes the CLI reads from one file (a kernel image, CUDA source, an input).
/// Reading stops there, so an endless file (`/dev/zero`) is an error, not a machine out of
/// memory, while pipes (`<(…)`) still work: nothing is asked of the file but its bytes.
const MAX_FILE_BYTES: u64 = 1 << 30;

/// Reads at most [`MAX_FILE_BYTES`] of a file, naming it in the error.
fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{} holds more than {MAX_FILE_BYTES} bytes, the most jitseam reads from one file",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Reads a file as UTF-8 text, naming it in the error.
fn read_text(path: &std::path::Path) -> Result<String, String> {
    String::from_utf8(read_bounded(path)?)
        .map_err(|e| format!("{} is not utf-8 text: {e}", path.display()))
}

/// A kernel file, told apart by its leading bytes.
enum Image {
    Ptx(String),
    Cubin(Vec<u8>),
    Fatbin(Vec<u8>),
}

/// Reads a PTX, cubin or fatbin file.
fn read_image(path: &std::path::Path) -> Result<Image, String> {
    let bytes = read_bounded(path)?;
    if bytes.starts_with(b"\x7fELF") {
        Ok(Image::Cubin(bytes))
    } else if jitseam_ptx::fatbin::is_fatbin(&bytes) {
        Ok(Image::Fatbin(bytes))
    } else {
        String::from_utf8(bytes).map(Image::Ptx).map_err(|e| {
            format!(
                "{} is neither a cubin, a fatbin nor utf-8 ptx: {e}",
                path.display()
            )
        })
    }
}
