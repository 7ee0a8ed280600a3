//! `jitseam`: inspect, check and run PTX kernels; summarize telemetry.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod telemetry;

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
    /// Summarize telemetry flushed by a `TelemetrySink`
    #[command(subcommand)]
    Telemetry(telemetry::TelemetryCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Telemetry(command) => telemetry::run(command),
    }
}
