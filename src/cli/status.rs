//! `kdeploy status CLUSTER`: per node, the committed generation, whether a
//! run moved links without committing (`pending`), and every drift — a
//! managed file edited or replaced by hand, an enabled unit not running.
//! Changes nothing, takes no lock and evaluates nothing: the latest
//! deployer record says how to reach each node and what it should run.
//! Exit codes: 0 every node as recorded, 1 error (nothing recorded yet),
//! 2 usage, 3 drift, pending or another generation found, 4 unreachable.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::generations::state_dir;
use super::switch::{runtime, OutputFormat, SshArgs};
use super::{EXIT_DEPLOY_FAILED, EXIT_ERROR, EXIT_UNREACHABLE};
use crate::deploy::record;
use crate::deploy::status::{status, NodeReport};
use crate::shown::{shown, shown_json};

#[derive(Args)]
#[command(after_help = "\
Exit codes: 0 every node runs what the latest generation recorded, 1 error (nothing
recorded yet), 2 usage error, 3 drift, a pending run or another generation found
on some node, 4 some node unreachable.

Examples:
  kdeploy status clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts
  kdeploy status clusters/lab.nix --output json")]
pub struct StatusArgs {
    /// The cluster file (its directory holds .kdeploy/); it is not evaluated.
    file: PathBuf,
    /// Project root (default: the file's directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// At most this many nodes connecting at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    parallel: usize,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
    #[command(flatten)]
    ssh: SshArgs,
}

pub fn run(args: StatusArgs) -> ExitCode {
    let dir = state_dir(&args.file, args.root.as_ref());
    let records = match record::Records::load(&dir) {
        Ok(r) => r,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let Some(latest) = records.latest().cloned() else {
        eprintln!("error: no generation recorded in {} yet: run `kdeploy switch` first", dir.display());
        return ExitCode::from(EXIT_ERROR);
    };
    let reports = match runtime().block_on(status(&latest, &args.ssh.settings(), args.parallel)) {
        Ok(r) => r,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            shown_json(
                &serde_json::to_string_pretty(
                    &serde_json::json!({"cluster": latest.cluster, "generation": latest.number, "nodes": reports})
                )
                .expect("status serialises")
            )
        ),
        OutputFormat::Text => print!("{}", shown(&text(&latest.cluster, latest.number, &reports))),
    }
    if reports.values().any(|r| !r.reachable) {
        ExitCode::from(EXIT_UNREACHABLE)
    } else if reports.values().all(NodeReport::clean) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DEPLOY_FAILED)
    }
}

fn text(cluster: &str, generation: u64, reports: &BTreeMap<String, NodeReport>) -> String {
    let mut o = format!("STATUS {cluster}, generation {generation}\n");
    let w = reports.keys().map(String::len).max().unwrap_or(4);
    for (name, r) in reports {
        let word = if !r.reachable {
            "unreachable".to_string()
        } else if let Some(e) = &r.error {
            format!("error: {e}")
        } else if r.clean() {
            "as recorded".to_string()
        } else if !r.as_recorded {
            let on = r.committed_generation.map_or("nothing".to_string(), |g| format!("generation {g}"));
            format!("on {on}, recorded {}", r.recorded_generation)
        } else {
            "drift".to_string()
        };
        o += &format!("{name:<w$} : {word}\n");
        if r.pending {
            o += &format!("{:w$}     pending: a run moved links and never committed\n", "");
        }
        for d in &r.drift {
            o += &format!("{:w$}     drift: {d}\n", "");
        }
    }
    o
}
