//! `kdeploy diff CLUSTER`: what `switch` would change, against what each
//! node runs now — per node and phase, a unified diff of every changed text
//! file, binaries by size and hash, secrets masked, and the unit actions.
//! The same run as `switch --dry-run` (it locks the nodes to read a
//! consistent state, and changes nothing).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::inputs::Inputs;
use super::switch::{RunArgs, SwitchArgs};

#[derive(Args)]
#[command(after_help = "\
Exit codes: as `switch --dry-run`: 0 compared (whether or not anything differs),
1 evaluation error, 2 usage error, 3 a node locked by another run, 4 some node
unreachable.

Examples:
  kdeploy diff clusters/lab.nix
  kdeploy diff clusters/lab.nix --on k8s-master | less -R")]
pub struct DiffArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Only these nodes: names, roles, @TAG, name patterns (w*), !WORD to leave out (repeat or comma-separate).
    #[arg(long, value_name = "NAME|ROLE")]
    on: Vec<String>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: DiffArgs) -> ExitCode {
    super::switch::run(SwitchArgs {
        file: args.file,
        attr: args.attr,
        on: args.on,
        dry_run: true,
        prune: false,
        uploads: 0,
        // a diff shows every selected node, or stops (exit 4)
        max_unreachable: 0,
        no_snapshot: false,
        run: args.run,
        inputs: args.inputs,
    })
}
