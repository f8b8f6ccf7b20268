//! `kdeploy reset CLUSTER [--on NODES] --yes`: evaluate the cluster (for
//! its nodes, addresses and phase order), then return the selected nodes
//! to how they were before their first switch (see `deploy::reset`). A
//! reset is destructive: without `--yes` it asks on a terminal, once the
//! nodes are reached and the plan is known (`cli::confirm`), and is
//! refused (exit 6) when there is none to ask on. Exit codes: 0 reset,
//! 1 evaluation error, 2 usage, 3 reset failed (not undone: run it again)
//! or a node locked, 4 a node unreachable (nothing changed), 6 refused
//! (not confirmed, the anchor while other control planes stay), 130
//! interrupted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::inputs::{self, Inputs};
use super::interrupt::run_cancellable;
use super::switch::{finish, RunArgs};
use super::EXIT_USAGE;
use crate::deploy::events::{Event, Sink, Tee};
use crate::deploy::live::Progress;
use crate::deploy::recap::Recap;
use crate::deploy::reset::{reset, ResetOptions};
use crate::deploy::select;
use crate::deploy::Cancel;

#[derive(Args)]
#[command(after_help = "\
Stops and disables every unit kdeploy installed, runs each phase's reset hooks
(kubeadm reset, CNI interfaces and iptables rules, etcd data; an etcd member
leaves the cluster when others remain), removes every managed file and each
directory kdeploy created, then /var/lib/kdeploy. Phases go last first.

Asks before it changes anything (without --yes; refused without a terminal).

Exit codes: 0 reset, 1 evaluation error, 2 usage error, 3 reset failed on some node (not
undone: run it again) or a node is locked by another run, 4 some node
unreachable (nothing was changed), 5 a node's lock lost to another run
mid-run (stopped there), 6 refused before changing anything (not confirmed: no --yes
and no terminal to ask on, or answered no; the anchor while other control planes stay,
a damaged deployer record), 7 reset but the deployer's record
could not be written, 130 interrupted by Ctrl-C.

Examples:
  kdeploy reset clusters/lab.nix --yes
  kdeploy reset clusters/lab.nix --on node3 --yes
  kdeploy reset clusters/lab.nix --dry-run")]
pub struct ResetArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Only these nodes: names, roles, @TAG, name patterns (w*), !WORD to leave out (repeat or comma-separate).
    #[arg(long, value_name = "NAME|ROLE")]
    on: Vec<String>,
    /// Print the plan (per node, the phases unlinked) and change nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: ResetArgs) -> ExitCode {
    let t0 = Instant::now();
    let (resolver, closures) = match inputs::closures_unsecreted(&args.inputs, &args.file, args.attr.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut opts = ResetOptions {
        cluster: closures.cluster.name.clone(),
        on: args.on.clone(),
        run: args.run.options(resolver.project_root().join(".kdeploy"), args.dry_run, 0),
    };
    let selected = match select::in_cluster(&closures, &opts.on) {
        Ok(s) => s,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let recap = Recap::new(&closures.cluster.name, selected);
    let progress = Progress::for_stderr(args.run.verbose);
    opts.run.consent = super::confirm::consent(args.run.yes, &progress);
    let sink = Tee(vec![&recap as &dyn Sink, &progress]);
    sink.emit(Event::Evaluated { nodes: closures.cluster.nodes.len(), took: t0.elapsed(), kept: false });
    let cancel = Cancel::default();
    let result = run_cancellable(reset(&closures, &opts, cancel.clone(), &sink), cancel);
    progress.finish();
    let mut data = recap.data();
    data.took = t0.elapsed().as_secs_f64();
    data.dry_run = args.dry_run;
    match result {
        Ok(r) => finish(&data, &r.plan_text, args.dry_run, args.run.output, r.outcome),
        Err(e) => {
            super::print_error(&e);
            ExitCode::from(super::exit::Exit::from(&e))
        }
    }
}
