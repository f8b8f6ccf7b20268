//! `kdeploy gc CLUSTER [--keep N] [--dry-run]`: remove old generations and
//! the blobs only they used, on every node of the latest record and in the
//! deployer's store (see `deploy::gc`). The cluster is evaluated only to
//! know which downloads its next switch needs, so the store keeps them.
//! Recap on stdout (what went, bytes freed); exit codes: 0 done, 1
//! evaluation error or nothing recorded, 2 usage, 3 a node locked or
//! failed (nothing removed anywhere when a node cannot be opened), 4 a
//! node unreachable (nothing removed).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::inputs::{self, Inputs};
use super::switch::{runtime, OutputFormat, SshArgs};
use super::{EXIT_DEPLOY_FAILED, EXIT_ERROR, EXIT_UNREACHABLE};
use crate::closure::{Closures, Source};
use crate::deploy::gc::{gc, GcOptions, GcResult};
use crate::shown::{shown, shown_json};
use crate::store::{Digest, Store};

#[derive(Args)]
#[command(after_help = "\
Keeps, on each node, the N most recent committed generations, the committed one, the ones
phase links point into, the ones the remaining deployer records name (the rollback target
among them) and whatever those use; drops the deployer records of the cluster but the N
most recent (never the latest nor the rollback target). Takes each node's lock: never runs
while a switch or rollback holds it.

Exit codes: 0 done, 1 evaluation error or nothing recorded, 2 usage error, 3 a node is
locked or failed (when a node cannot be opened nothing is removed anywhere), 4 some node
unreachable (nothing removed).

Examples:
  kdeploy gc clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts
  kdeploy gc clusters/lab.nix --keep 2 --dry-run")]
pub struct GcArgs {
    /// The cluster file (its directory holds .kdeploy/).
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Generations (and deployer records) to keep besides the protected ones.
    #[arg(long, value_name = "N", default_value_t = 5)]
    keep: usize,
    /// Print what would be removed and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// At most this many nodes connecting at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    parallel: usize,
    /// Recap format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output: OutputFormat,
    #[command(flatten)]
    ssh: SshArgs,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: GcArgs) -> ExitCode {
    let (resolver, closures) = match inputs::closures_unsecreted(&args.inputs, &args.file, args.attr.as_deref()) {
        Ok(made) => made,
        Err(code) => return code,
    };
    let opts = GcOptions {
        keep: args.keep,
        dry_run: args.dry_run,
        parallel: args.parallel,
        ssh: args.ssh.settings(),
        state_dir: resolver.project_root().join(".kdeploy"),
        extra_keep: downloads(&closures, resolver.store()),
        store: Some(resolver.store().clone()),
    };
    let res = match runtime().block_on(gc(&opts)) {
        Ok(r) => r,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match args.output {
        OutputFormat::Json => {
            println!("{}", shown_json(&serde_json::to_string_pretty(&res).expect("gc result serialises")))
        }
        OutputFormat::Text => print!("{}", shown(&text(&res))),
    }
    if res.ok() {
        ExitCode::SUCCESS
    } else if res.nodes.values().any(|n| n.unreachable) {
        ExitCode::from(EXIT_UNREACHABLE)
    } else {
        ExitCode::from(EXIT_DEPLOY_FAILED)
    }
}

/// The stored downloads the cluster's artifacts name (what its next switch
/// would otherwise fetch again).
fn downloads(closures: &Closures, store: &Store) -> BTreeSet<Digest> {
    let files = closures.cluster.nodes.values().flat_map(|n| n.phases.iter().flat_map(|p| p.files.iter()));
    files
        .filter_map(|f| match &f.source {
            Source::Artifact(a) => store.by_sha256(&a.sha256.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn text(r: &GcResult) -> String {
    let verb = if r.dry_run { "would remove" } else { "removed" };
    let mut o = format!("GC {} (keep {}){}\n", r.cluster, r.keep, if r.dry_run { ", dry run" } else { "" });
    let list = |v: &[u64]| match v.is_empty() {
        true => "none".to_string(),
        false => v.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
    };
    o += &format!("records: {verb} {}\n", list(&r.records));
    let w = r.nodes.keys().map(String::len).max().unwrap_or(4);
    for (name, n) in &r.nodes {
        match &n.error {
            Some(e) => o += &format!("{name:<w$} : not collected: {e}\n"),
            None => {
                let g = &n.report;
                o += &format!(
                    "{name:<w$} : {verb} generations {}; {} blob(s), {} secret(s), {} partial upload(s); {}\n",
                    list(&g.generations),
                    g.blobs,
                    g.secrets,
                    g.partial,
                    mb(g.bytes)
                );
            }
        }
    }
    match &r.store.skipped {
        Some(why) => o += &format!("store: left as it is ({why})\n"),
        None => o += &format!("store: {verb} {} blob(s), {}\n", r.store.blobs, mb(r.store.bytes)),
    }
    o += &format!("{}: {}\n", if r.dry_run { "would free" } else { "freed" }, mb(r.bytes()));
    o
}
