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
use futures::future::join_all;
use serde::Serialize;

use super::generations::state_dir;
use super::switch::{runtime, OutputFormat, SshArgs};
use super::{EXIT_DEPLOY_FAILED, EXIT_ERROR, EXIT_UNREACHABLE};
use crate::deploy::connect::connect_reporting;
use crate::deploy::events::Collect;
use crate::deploy::record;
use crate::node::{Drift, Node};
use crate::shown::{shown, shown_json};
use crate::transport::Host;

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

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeReport {
    reachable: bool,
    /// (generation, hash) recorded by the deployer's latest generation.
    recorded_generation: u64,
    committed_generation: Option<u64>,
    /// The node is on the recorded generation and hash.
    as_recorded: bool,
    pending: bool,
    drift: Vec<Drift>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl NodeReport {
    fn clean(&self) -> bool {
        self.reachable && self.as_recorded && !self.pending && self.drift.is_empty() && self.error.is_none()
    }
}

pub fn run(args: StatusArgs) -> ExitCode {
    let dir = state_dir(&args.file, args.root.as_ref());
    let Some(latest) = record::latest(&dir) else {
        eprintln!("error: no generation recorded in {} yet: run `kdeploy switch` first", dir.display());
        return ExitCode::from(EXIT_ERROR);
    };
    let ssh = args.ssh.settings();
    let targets: Result<Vec<_>, String> =
        latest.nodes.iter().map(|(n, r)| ssh.target(n, &r.address, &r.ssh())).collect();
    let targets = match targets {
        Ok(t) => t,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let mut reports: BTreeMap<String, NodeReport> = latest
        .nodes
        .iter()
        .map(|(n, r)| (n.clone(), NodeReport { recorded_generation: r.generation, ..Default::default() }))
        .collect();
    runtime().block_on(async {
        let (hosts, _) = connect_reporting(&targets, args.parallel, &Collect::default()).await;
        let read = join_all(hosts.iter().map(|h| async move {
            let node = Node::install(h).await?;
            node.status_verified().await
        }))
        .await;
        for (h, st) in hosts.iter().zip(read) {
            let rep = reports.get_mut(h.name()).expect("a recorded node");
            rep.reachable = true;
            let rec = &latest.nodes[h.name()];
            match st {
                Ok(st) => {
                    rep.committed_generation = st.current.as_ref().map(|c| c.0);
                    rep.as_recorded =
                        st.current.as_ref().is_some_and(|(g, hash)| *g == rec.generation && hash.hex() == rec.hash);
                    rep.pending = st.pending;
                    rep.drift = st.drift;
                }
                Err(e) => rep.error = Some(e.to_string()),
            }
        }
        join_all(hosts.iter().map(|h| h.close())).await;
    });
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
