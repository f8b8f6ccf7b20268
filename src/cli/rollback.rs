//! `kdeploy rollback CLUSTER [--to N]`: return every node to the node
//! generation a recorded deployer generation left it on (default: the one
//! before the generation in effect). Evaluates nothing and transfers
//! nothing — see `deploy::rollback`. Progress on stderr, recap on stdout.
//! Exit codes as for switch: 0 done, 1 error (nothing to roll back to),
//! 2 usage, 3 failed (moved forward again) or locked, 4 unreachable, 5 a
//! node's lock lost to another run mid-run, 6 refused, 7 not recorded.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::generations::state_dir;
use super::interrupt::run_cancellable;
use super::switch::{finish, RunArgs};
use super::EXIT_ERROR;
use crate::deploy::events::{Sink, Tee};
use crate::deploy::live::Progress;
use crate::deploy::recap::Recap;
use crate::deploy::record::{self, Records};
use crate::deploy::rollback::{rollback_with, target, RollbackOptions};
use crate::deploy::Cancel;

#[derive(Args)]
#[command(after_help = "\
Exit codes: 0 rolled back (or nothing to do), 1 error (e.g. no earlier generation),
2 usage error, 3 rollback failed (nodes moved forward again) or a node is locked,
4 some node unreachable (nothing was changed on any node), 5 a node's lock lost
mid-run, 6 refused before changing anything (the target has other etcd members,
a damaged deployer record), 7 nodes rolled back but the deployer's record could
not be written, 130 interrupted by Ctrl-C (touched nodes moved forward again; a
second Ctrl-C exits at once).

Examples:
  kdeploy rollback clusters/lab.nix --ssh-key .lab/id_ed25519 --known-hosts .lab/known_hosts
  kdeploy rollback clusters/lab.nix --to 3 --dry-run")]
pub struct RollbackArgs {
    /// The cluster file (its directory holds .kdeploy/); it is not evaluated.
    file: PathBuf,
    /// The recorded generation to return to (see `kdeploy generations`); default: the previous one.
    #[arg(long, value_name = "N")]
    to: Option<u64>,
    /// Only these nodes: names, roles, @TAG, name patterns, !WORD to leave out (roles and tags as the generation recorded them); repeat or comma-separate.
    #[arg(long, value_name = "NAME")]
    on: Vec<String>,
    /// Project root (default: the file's directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Print which phase links would move and change nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    run: RunArgs,
}

pub fn run(args: RollbackArgs) -> ExitCode {
    let t0 = Instant::now();
    let mut opts = RollbackOptions {
        to: args.to,
        on: args.on.clone(),
        run: args.run.options(state_dir(&args.file, args.root.as_ref()), args.dry_run, 0),
    };
    let records = match Records::load(&opts.run.state_dir) {
        Ok(r) => r,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let tgt = match target(records.all(), opts.to) {
        Ok(t) => t,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(EXIT_ERROR);
        }
    };
    eprintln!("rolling back {} to generation {} ({})", tgt.cluster, tgt.number, record::format_time(tgt.time));
    let nodes = match crate::deploy::select::in_generation(tgt, &opts.on) {
        Ok(n) => n,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(super::EXIT_USAGE);
        }
    };
    let recap = Recap::new(&tgt.cluster, nodes);
    let progress = Progress::for_stderr(args.run.verbose);
    opts.run.consent = super::confirm::consent(args.run.yes, &progress);
    let sink = Tee(vec![&recap as &dyn Sink, &progress]);
    let cancel = Cancel::default();
    let result = run_cancellable(rollback_with(&opts, &records, cancel.clone(), &sink), cancel);
    progress.finish();
    let mut data = recap.data();
    data.took = t0.elapsed().as_secs_f64();
    data.dry_run = args.dry_run;
    match result {
        Ok(r) => {
            data.generation = r.recorded;
            finish(&data, &r.plan_text, args.dry_run, args.run.output, r.outcome)
        }
        Err(e) => {
            super::print_error(&e);
            ExitCode::from(super::exit::Exit::from(&e))
        }
    }
}
