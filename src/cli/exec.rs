//! `kdeploy exec CLUSTER [--on NODES] -- COMMAND...`: evaluate the cluster
//! for its nodes and how to reach them, run one shell command on each
//! selected node at once, as root, and print each node's output and exit
//! status (see `deploy::exec`). Exit codes: 0 the command succeeded on
//! every node, 1 evaluation error, 2 usage, 3 it failed on some node,
//! 4 some node unreachable.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::inputs::{self, Inputs};
use super::switch::{runtime, OutputFormat, SshArgs};
use super::{EXIT_DEPLOY_FAILED, EXIT_UNREACHABLE, EXIT_USAGE};
use crate::deploy::exec::{exec, NodeRun, OUTPUT_LIMIT};
use crate::deploy::live::Progress;
use crate::deploy::select;
use crate::shown::{shown, shown_json};

#[derive(Args)]
#[command(after_help = "\
The command runs as root (through the login's sudo or doas, as every command kdeploy
runs), once per node, all nodes at once; no lock is taken and nothing is recorded.
Each node's stdout and stderr are kept to 1 MiB each.

Exit codes: 0 the command exited 0 on every node, 1 evaluation error, 2 usage error,
3 the command failed on some node, 4 some node unreachable.

Examples:
  kdeploy exec clusters/lab.nix -- systemctl is-active etcd
  kdeploy exec clusters/lab.nix --on worker,!@gpu -- 'crictl ps | wc -l'
  kdeploy exec clusters/lab.nix --output json -- uptime")]
pub struct ExecArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Only these nodes: names, roles, @TAG, name patterns (w*), !WORD to leave out (repeat or comma-separate).
    #[arg(long, value_name = "NAME|ROLE")]
    on: Vec<String>,
    /// At most this many nodes connecting at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    parallel: usize,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
    #[command(flatten)]
    ssh: SshArgs,
    #[command(flatten)]
    inputs: Inputs,
    /// The command (after `--`; several words are joined with spaces, as ssh does).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: ExecArgs) -> ExitCode {
    let (_, closures) = match inputs::closures_unsecreted(&args.inputs, &args.file, args.attr.as_deref()) {
        Ok(made) => made,
        Err(code) => return code,
    };
    let targets = select::in_cluster(&closures, &args.on)
        .map_err(crate::deploy::Error::from)
        .and_then(|n| args.ssh.settings().targets_of(&closures, &n));
    let targets = match targets {
        Ok(t) => t,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let command = args.command.join(" ");
    let progress = Progress::for_stderr(false);
    let runs = runtime().block_on(exec(&targets, &command, args.parallel, &progress));
    progress.finish();
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            shown_json(
                &serde_json::to_string_pretty(&serde_json::json!({"cluster": closures.cluster.name, "nodes": runs}))
                    .expect("exec results serialise")
            )
        ),
        OutputFormat::Text => print!("{}", shown(&text(&runs))),
    }
    if runs.values().any(|r| r.status.is_none()) {
        ExitCode::from(EXIT_UNREACHABLE)
    } else if runs.values().any(|r| r.status != Some(0)) {
        ExitCode::from(EXIT_DEPLOY_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Per node: a header with its exit status, its stdout, then its stderr
/// with each line marked.
fn text(runs: &BTreeMap<String, NodeRun>) -> String {
    let mut o = String::new();
    for (name, r) in runs {
        let how = match (r.status, &r.error) {
            (Some(s), _) => format!("exit {s}"),
            (None, Some(e)) => format!("not run: {e}"),
            (None, None) => "not run".to_string(),
        };
        o += &format!("── {name}: {how}\n");
        for line in r.stdout.lines() {
            o += &format!("{line}\n");
        }
        for line in r.stderr.lines() {
            o += &format!("stderr: {line}\n");
        }
        if r.truncated {
            o += &format!("(output beyond {} KiB per stream dropped)\n", OUTPUT_LIMIT >> 10);
        }
    }
    o
}
