//! Command-line definition (clap) and dispatch. Exit codes: 0 success,
//! 1 evaluation or deployment error, 2 usage error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod eval;

pub const EXIT_ERROR: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "kdeploy",
    version,
    about = "Declarative Kubernetes clusters: a pure configuration language, hashed per-node closures, atomic switch over SSH.",
    after_help = "Exit codes: 0 success, 1 evaluation or deployment error, 2 usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a file or expression and print its value (readably, or as JSON).
    Eval(eval::EvalArgs),
}

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
        }
    };
    match cli.command {
        Command::Eval(args) => eval::run(args),
    }
}
