//! `kdeploy restore CLUSTER [--snapshot FILE] [--on NODE] --yes`: evaluate
//! the cluster (for its etcd members and how to reach them), then bring an
//! etcd cluster that lost its majority back from a snapshot the deployer
//! kept (`deploy::restore`): shown and confirmed first, as every plan that
//! a rollback cannot undo.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::inputs::{self, Inputs};
use super::switch::{finish, RunArgs};
use crate::deploy::events::{Event, Sink, Tee};
use crate::deploy::live::Progress;
use crate::deploy::recap::Recap;
use crate::deploy::restore::{restore, RestoreOptions};

#[derive(Args)]
#[command(after_help = "\
Kubespray's recover-control-plane, for an etcd cluster that lost its majority (members
wiped, disks gone): every member that answers is stopped and its data set aside (renamed
member.before-restore.<time> in its data directory: nothing is deleted); the snapshot
(the newest in .kdeploy/snapshots/etcd/, or --snapshot) is restored on one member (the
first that answers, or --on) as a cluster of one, which starts; each other member then
joins it as a learner and is promoted once in sync. Every write the snapshot holds is
there; writes after it are not. The nodes' files and generations do not change: a switch
afterwards changes nothing, and adds back a member that did not answer.

Asks before it changes anything (without --yes; refused without a terminal).

Exit codes: 0 restored, 1 evaluation error, 2 usage error, 3 a step failed (the message
names it; the members' earlier data stays set aside: fix the cause and run restore again)
or a member is locked by another run, 6 refused before changing anything (no snapshot kept
or named, --on not a member or not answering, no member answering, not confirmed).
Ctrl-C stops at once; run restore again.

Examples:
  kdeploy restore clusters/lab.nix
  kdeploy restore clusters/lab.nix --snapshot .kdeploy/snapshots/etcd/2026-12-06T141500Z-k8s-master.db --yes
  kdeploy restore clusters/lab.nix --dry-run")]
pub struct RestoreArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// The snapshot to restore (default: the newest the deployer keeps).
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// The member restored first, which the others join (default: the first that answers).
    #[arg(long, value_name = "NODE")]
    on: Option<String>,
    /// Print what it would do and change nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: RestoreArgs) -> ExitCode {
    let t0 = Instant::now();
    let (resolver, closures) = match inputs::closures_unsecreted(&args.inputs, &args.file, args.attr.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut opts = RestoreOptions {
        run: args.run.options(resolver.project_root().join(".kdeploy"), args.dry_run, 0),
        snapshot: args.snapshot.clone(),
        first: args.on.clone(),
    };
    let members: Vec<String> = crate::deploy::restore::membership_of(&closures)
        .map(|(_, m)| closures.cluster.nodes.keys().filter(|n| m.members.contains_key(*n)).cloned().collect())
        .unwrap_or_default();
    let recap = Recap::new(&closures.cluster.name, members);
    let progress = Progress::for_stderr(args.run.verbose);
    opts.run.consent = super::confirm::consent(args.run.yes, &progress);
    let sink = Tee(vec![&recap as &dyn Sink, &progress]);
    sink.emit(Event::Evaluated { nodes: closures.cluster.nodes.len(), took: t0.elapsed(), kept: false });
    let result = super::switch::runtime().block_on(restore(&closures, &opts, &sink));
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
