//! `kdeploy snapshot CLUSTER [--on NODE]`: evaluate the cluster (for its
//! etcd members and how to reach them), then take an etcd snapshot now
//! from the first member that answers and keep it on the deployer
//! (`deploy::snapshot`); its path is printed on stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::inputs::{self, Inputs};
use super::switch::RunArgs;
use crate::deploy::live::Progress;

#[derive(Args)]
#[command(after_help = "\
Streams `etcdctl snapshot save` from one member (the first that answers, or --on) into
.kdeploy/snapshots/etcd/<time>-<node>.db on the deployer: a directory only you may enter,
files 0600, outside what the evaluator may read. settings.etcd.backup.keep decides how many
stay (the newest). A switch takes one by itself before it changes etcd, its members or the
control planes; `kdeploy restore` brings a cluster back from the newest.

Exit codes: 0 taken (its path on stdout), 1 evaluation error, 2 usage error, 6 none taken:
no member answered or gave one (each reason is shown), or backups are off
(etcd.backup.enable = false).

Examples:
  kdeploy snapshot clusters/lab.nix
  kdeploy snapshot clusters/lab.nix --on k8s-master")]
pub struct SnapshotArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Take it from this member only.
    #[arg(long, value_name = "NODE")]
    on: Option<String>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: SnapshotArgs) -> ExitCode {
    let (resolver, closures) = match inputs::closures_unsecreted(&args.inputs, &args.file, args.attr.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let opts = args.run.options(resolver.project_root().join(".kdeploy"), false, 0);
    let progress = Progress::for_stderr(args.run.verbose);
    let taken = super::switch::runtime().block_on(crate::deploy::snapshot::now(
        &closures,
        &opts,
        args.on.as_deref(),
        &progress,
    ));
    progress.finish();
    match taken {
        Ok(path) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            super::print_error(&e);
            ExitCode::from(super::exit::Exit::from(&e))
        }
    }
}
