//! `kdeploy plan CLUSTER`: what a switch would do, phase by phase and node
//! by node, like `ansible-playbook --list-tasks`. Without deployed state to
//! compare with (that comes with `switch`) it lists every step.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::eval::report;
use super::inputs::{self, Failure, Inputs};
use super::tasks;

#[derive(Args)]
#[command(after_help = "\
Each phase lists its steps in the order the engine runs them — pre hooks, directories, files,
units, post hooks, checks — with the nodes they apply to (\"all\", or names such as
node[6-1000]), the number of distinct phase closures, and the nodes where the phase is
generated but not activated.

Example:
  kdeploy plan clusters/lab.nix
  kdeploy plan clusters/big.nix --node node7")]
pub struct PlanArgs {
    /// The cluster file.
    file: PathBuf,
    /// Select this attribute path from the file's value first.
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Only this node.
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: PlanArgs) -> ExitCode {
    let mut session = args.inputs.session(Some(&args.file));
    let result = (|| {
        let resolver = args.inputs.resolver(Some(&args.file));
        let (closures, _) =
            inputs::cluster_closures(&mut session, &args.inputs, &args.file, args.attr.as_deref(), &resolver, false)?;
        if let Some(n) = &args.node {
            if !closures.cluster.nodes.contains_key(n) {
                return Err(Failure::Usage(format!("no node {n:?} in cluster {}", closures.cluster.name)));
            }
        }
        Ok(tasks::listing(&closures, args.node.as_deref()))
    })();
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(f) => report(&session, f),
    }
}
