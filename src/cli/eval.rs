//! `kdeploy eval`: evaluate a file (`-A` selects inside it) or `--expr`, with
//! `--arg`/`--argstr` inputs. `--json` prints the value exactly as
//! `nix-instantiate --eval --strict --json` would. When the value is a
//! cluster (it has `schemaVersion` and `nodes`), the default output is the
//! hashed closures per node instead of the raw value; `--closures`,
//! `--list-tasks` and `--node/--file` are other views of those closures.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kdeploy_lang::Session;

use super::inputs::{self, Failure, Inputs};
use super::{summary, tasks, EXIT_ERROR, EXIT_USAGE};

#[derive(Args)]
#[command(after_help = "\
For a cluster file the default output lists, per node, each phase with its hash (first 12 hex
digits) and its files (path, mode, size), directories, units, hooks and checks. Equal hashes
mean byte-for-byte equal configurations.

Examples:
  kdeploy eval clusters/lab.nix                                   # closures per node, with hashes
  kdeploy eval clusters/lab.nix --node k8s-master --file /etc/etcd.env
  kdeploy eval clusters/lab.nix --closures > closures.json
  kdeploy eval clusters/lab.nix --json                            # the plain value, as nix-instantiate
  kdeploy eval --expr '1 + 2'")]
pub struct EvalArgs {
    /// The file to evaluate (a directory means its default.nix).
    #[arg(conflicts_with = "expr")]
    file: Option<PathBuf>,
    /// Evaluate this expression instead of a file.
    #[arg(long, short = 'E')]
    expr: Option<String>,
    /// Select this attribute path from the value (e.g. `nodes.k8s-master`).
    #[arg(long = "attr", short = 'A')]
    attr: Option<String>,
    /// Print the deeply evaluated value as JSON (the value itself, even for a cluster).
    #[arg(long, conflicts_with_all = ["closures", "list_tasks", "node_file", "value"])]
    json: bool,
    /// Print the value itself readably, even when it is a cluster.
    #[arg(long, conflicts_with_all = ["closures", "list_tasks", "node_file"])]
    value: bool,
    /// Cluster: print the closures with their hashes as JSON (contents by hash).
    #[arg(long, conflicts_with_all = ["list_tasks", "node_file"])]
    closures: bool,
    /// Cluster: list the steps of every phase on every node (as `kdeploy plan`).
    #[arg(long, conflicts_with = "node_file")]
    list_tasks: bool,
    /// Cluster: only this node (for the listing, --closures, --list-tasks; required by --file).
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// Cluster: print the content of this generated file of --node to stdout.
    #[arg(long = "file", value_name = "PATH", requires = "node")]
    node_file: Option<String>,
    #[command(flatten)]
    inputs: Inputs,
}

pub fn run(args: EvalArgs) -> ExitCode {
    let mut session = args.inputs.session(args.file.as_deref());
    match evaluate(&mut session, &args) {
        Ok(bytes) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&bytes).and_then(|_| out.flush());
            // as the closures: the evaluator's values need no freeing at exit
            std::mem::forget(session);
            ExitCode::SUCCESS
        }
        Err(f) => report(&session, f),
    }
}

fn evaluate(session: &mut Session, args: &EvalArgs) -> Result<Vec<u8>, Failure> {
    let inputs = args.inputs.args();
    let value = match (&args.file, &args.expr) {
        (_, Some(e)) => {
            let v = session.eval_expr(e, &PathBuf::from("."), &inputs)?;
            match &args.attr {
                Some(a) => session.select(v, a, &inputs)?,
                None => v,
            }
        }
        (Some(f), None) => inputs::eval_file(session, f, args.attr.as_deref(), &inputs)?,
        (None, None) => {
            return Err(Failure::Usage("give a FILE to evaluate or --expr EXPR (see kdeploy eval --help)".into()))
        }
    };
    let wants_closures = args.closures || args.list_tasks || args.node_file.is_some() || args.node.is_some();
    if args.json {
        return Ok(line(session.to_json(&value)?));
    }
    if args.value || !inputs::is_cluster(&value) {
        if wants_closures {
            return Err(Failure::Usage(
                "--closures, --list-tasks, --node and --file need a cluster value (with schemaVersion and nodes)"
                    .into(),
            ));
        }
        return Ok(line(session.print(&value)?));
    }
    let resolver = args.inputs.resolver(args.file.as_deref());
    let closures = inputs::closures(session, &value, &resolver, origin(args))?;
    if let Some(node) = &args.node {
        if !closures.cluster.nodes.contains_key(node) {
            return Err(Failure::Usage(format!(
                "no node {node:?} in cluster {} (nodes: {})",
                closures.cluster.name,
                tasks::compress_names(&closures.cluster.nodes.keys().map(String::as_str).collect::<Vec<_>>())
            )));
        }
    }
    if let (Some(node), Some(path)) = (&args.node, &args.node_file) {
        let source = summary::find_file(&closures, node, path).map_err(Failure::Usage)?;
        if source.is_secret() {
            return Ok(crate::store::secrets::placeholder(&source).into_bytes());
        }
        return Ok(resolver.bytes(&source)?);
    }
    let node = args.node.as_deref();
    if args.closures {
        return Ok(line(serde_json::to_string_pretty(&summary::json(&closures, node)).expect("JSON")));
    }
    if args.list_tasks {
        return Ok(tasks::listing(&closures, node).into_bytes());
    }
    let text = summary::text(&closures, node).into_bytes();
    // The process ends after printing: freeing a thousand nodes' closures
    // one allocation at a time would only delay the exit.
    std::mem::forget(closures);
    Ok(text)
}

/// Where the value came from, for helper evaluators: a file (not `--expr`).
fn origin(args: &EvalArgs) -> Option<inputs::Origin<'_>> {
    let file = args.file.as_deref().filter(|_| args.expr.is_none())?;
    Some(inputs::Origin { inputs: &args.inputs, file, attr: args.attr.as_deref() })
}

fn line(mut s: String) -> Vec<u8> {
    s.push('\n');
    s.into_bytes()
}

/// Exit code for a failure, after printing it.
pub(super) fn report(session: &Session, f: Failure) -> ExitCode {
    match f {
        Failure::Usage(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(EXIT_USAGE)
        }
        Failure::Eval(e) => {
            eprint!("{}", session.render_error(&e, std::io::stderr().is_terminal()));
            ExitCode::from(EXIT_ERROR)
        }
        Failure::Closure(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}
