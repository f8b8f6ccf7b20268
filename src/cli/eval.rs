//! `kdeploy eval`: evaluate a file (`-A` selects inside it) or `--expr`, with
//! `--arg`/`--argstr` inputs, and print the value readably or as `--json`
//! (the same JSON as `nix-instantiate --eval --strict --json`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kdeploy_lang::{Arg, EvalError, Session, Value};

use super::{EXIT_ERROR, EXIT_USAGE};

#[derive(Args)]
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
    /// Print the deeply evaluated value as JSON.
    #[arg(long)]
    json: bool,
    /// Pass NAME = EXPR to a file whose value is a function with formals.
    #[arg(long, num_args = 2, value_names = ["NAME", "EXPR"], action = clap::ArgAction::Append)]
    arg: Vec<String>,
    /// Pass NAME = VALUE (a string) likewise.
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append)]
    argstr: Vec<String>,
    /// Directory below which files may be read (default: the file's directory, or the current one).
    #[arg(long)]
    root: Vec<PathBuf>,
    /// Use this stdlib directory instead of the one built into kdeploy.
    #[arg(long, env = "KDEPLOY_STDLIB")]
    stdlib: Option<PathBuf>,
}

fn inputs(args: &EvalArgs) -> Vec<(String, Arg)> {
    let mut out = Vec::new();
    for pair in args.arg.chunks(2) {
        out.push((pair[0].clone(), Arg::Expr(pair[1].clone())));
    }
    for pair in args.argstr.chunks(2) {
        out.push((pair[0].clone(), Arg::Str(pair[1].clone())));
    }
    out
}

pub fn run(args: EvalArgs) -> ExitCode {
    let roots = if !args.root.is_empty() {
        args.root.clone()
    } else {
        match &args.file {
            Some(f) if f.is_dir() => vec![f.clone()],
            Some(f) => vec![f.parent().filter(|p| !p.as_os_str().is_empty()).map_or(PathBuf::from("."), |p| p.to_path_buf())],
            None => vec![PathBuf::from(".")],
        }
    };
    let mut session = Session::new(roots, crate::stdlib::stdlib(args.stdlib.clone()));
    let inputs = inputs(&args);
    let result = evaluate(&mut session, &args, &inputs);
    match result {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::Eval(e)) => {
            eprint!("{}", session.render_error(&e, std::io::stderr().is_terminal()));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

enum Failure {
    Usage(String),
    Eval(Box<EvalError>),
}

impl From<Box<EvalError>> for Failure {
    fn from(e: Box<EvalError>) -> Self {
        Failure::Eval(e)
    }
}

fn evaluate(session: &mut Session, args: &EvalArgs, inputs: &[(String, Arg)]) -> Result<String, Failure> {
    let value: Value = match (&args.file, &args.expr) {
        (_, Some(e)) => session.eval_expr(e, &PathBuf::from("."), inputs)?,
        (Some(f), None) => {
            if !f.exists() {
                return Err(Failure::Usage(format!("{}: no such file or directory", f.display())));
            }
            session.eval_file(f, inputs)?
        }
        (None, None) => return Err(Failure::Usage("give a FILE to evaluate or --expr EXPR (see kdeploy eval --help)".into())),
    };
    let value = match &args.attr {
        Some(a) => session.select(value, a, inputs)?,
        None => value,
    };
    Ok(if args.json { session.to_json(&value)? } else { session.print(&value)? })
}
