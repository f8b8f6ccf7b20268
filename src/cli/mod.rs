//! Command-line definition (clap) and dispatch. Exit codes: 0 success,
//! 1 evaluation or deployment error, 2 usage error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod eval;
mod inputs;
mod options;
mod plan;
mod summary;
mod tasks;

pub use tasks::compress_names;

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
    /// Evaluate a file or expression; for a cluster, show its hashed per-node closures.
    Eval(eval::EvalArgs),
    /// List the steps of every phase on every node of a cluster (like ansible's --list-tasks).
    Plan(plan::PlanArgs),
    /// List the cluster options the stdlib declares: path, type, default, description.
    Options(options::OptionsArgs),
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
        Command::Plan(args) => plan::run(args),
        Command::Options(args) => options::run(args),
    }
}
