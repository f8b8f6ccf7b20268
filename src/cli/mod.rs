//! Command-line definition (clap) and dispatch. The exit codes are
//! `exit::Exit`'s.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod certs;
mod confirm;
mod decode;
mod diff;
mod download_bars;
mod eval;
mod eval_cache;
mod exec;
pub mod exit;
mod fetch;
mod gc;
mod generations;
mod import;
mod inputs;
mod interrupt;
mod keeper;
mod options;
mod plan;
mod reset;
mod restore;
mod rollback;
mod shell;
mod snapshot;
mod status;
mod summary;
mod switch;
mod tasks;

pub use tasks::compress_names;

pub use exit::Exit;
// (the names the commands use; each is `Exit`'s code)
pub const EXIT_ERROR: u8 = Exit::Error.code();
pub const EXIT_USAGE: u8 = Exit::Usage.code();
pub const EXIT_DEPLOY_FAILED: u8 = Exit::DeployFailed.code();
pub const EXIT_UNREACHABLE: u8 = Exit::Unreachable.code();
pub const EXIT_LOCK_LOST: u8 = Exit::LockLost.code();
pub const EXIT_PARTIAL: u8 = Exit::Partial.code();
pub const EXIT_INTERRUPTED: u8 = Exit::Interrupted.code();

/// `error: E` on stderr, through [`crate::shown::shown`]: an error may
/// carry what a node said.
pub(crate) fn print_error(e: &dyn std::fmt::Display) {
    eprintln!("error: {}", crate::shown::shown(&e.to_string()));
}

#[derive(Parser)]
#[command(
    name = "kdeploy",
    version,
    about = "Declarative Kubernetes clusters: a pure configuration language, hashed per-node closures, atomic switch over SSH.",
    after_help = Exit::help()
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
    /// Converge the cluster's nodes: push what is missing, switch changed phases, roll back on failure.
    Switch(switch::SwitchArgs),
    /// Show what `switch` would change against what the nodes run: unified diffs per node and phase, unit actions.
    Diff(diff::DiffArgs),
    /// Print a cluster file made from another tool's inventory (Kubespray's).
    Import(import::ImportArgs),
    /// List the generations recorded by switches from this project: number, time, per-node hashes.
    Generations(generations::GenerationsArgs),
    /// Re-activate the previous (or --to N) recorded generation on every node: no evaluation, no transfer.
    Rollback(rollback::RollbackArgs),
    /// Return nodes to how they were before their first switch: units stopped, reset hooks, managed paths and kdeploy's state removed (--yes).
    Reset(reset::ResetArgs),
    /// Take an etcd snapshot now and keep it on the deployer (.kdeploy/snapshots/etcd/, 0600); a switch takes one before changing etcd.
    Snapshot(snapshot::SnapshotArgs),
    /// Bring an etcd cluster that lost its majority back from the newest snapshot (Kubespray's recover-control-plane; --yes).
    Restore(restore::RestoreArgs),
    /// Per node: the committed generation, a pending run, and drift (hand edits, stopped units); changes nothing.
    Status(status::StatusArgs),
    /// Run one shell command as root on the selected nodes at once; per node its output and exit status.
    Exec(exec::ExecArgs),
    /// Remove old generations and the blobs only they used, on the nodes and in the deployer's store (--keep N, --dry-run).
    Gc(gc::GcArgs),
    /// Fetch and verify every artifact the cluster needs into the deployer's store, ahead of a switch.
    Fetch(fetch::FetchArgs),
    /// List every certificate of the cluster with its expiry (from the deployer's secret store); --renew re-issues what is due.
    Certs(certs::CertsArgs),
    /// Print a completion script for bash, zsh or fish.
    Completions(shell::CompletionsArgs),
    /// Print kdeploy's man page (roff).
    Man(shell::ManArgs),
    /// The connection keeper a run given --persist starts (not run by hand).
    #[command(hide = true)]
    Keeper(keeper::KeeperArgs),
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
        Command::Switch(args) => switch::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Import(args) => import::run(args),
        Command::Generations(args) => generations::run(args),
        Command::Rollback(args) => rollback::run(args),
        Command::Reset(args) => reset::run(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Restore(args) => restore::run(args),
        Command::Certs(args) => certs::run(args),
        Command::Status(args) => status::run(args),
        Command::Exec(args) => exec::run(args),
        Command::Gc(args) => gc::run(args),
        Command::Fetch(args) => fetch::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
        Command::Keeper(args) => keeper::run(args),
    }
}
