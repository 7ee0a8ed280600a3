//! `jitseam`: inspect, check and run PTX kernels; summarize telemetry.
// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod check;
mod inspect;
mod kernel_args;
mod run;
mod telemetry;

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

#[derive(Debug, Subcommand)]
enum Command {
    /// Print a PTX module's header and every entry's parameters and directives.
    Inspect(inspect::Args),
    /// Verify an entry's parameter list against an ABI, as `load()` does.
    Check(check::Args),
    /// Summarize telemetry flushed by a `TelemetrySink`.
    #[command(subcommand)]
    Telemetry(telemetry::TelemetryCommand),
    /// Run an entry on the emulator with checked memory, from files or generated inputs.
    Run(run::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Check(args) => check::run(&args),
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

/// Reads a file as UTF-8 text, naming it in the error.
fn read_text(path: &std::path::Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}
