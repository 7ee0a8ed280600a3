//! `jitseam`: inspect, check and run PTX kernels; summarize telemetry.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "jitseam", version, about = "Inspect, check and run JIT-synthesized GPU kernels")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {}
}
