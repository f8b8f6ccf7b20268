//! `kdeploy generations CLUSTER`: the generations switches from this
//! project recorded in `.kdeploy/generations/` — number, time, and per
//! node the node generation and hash. Reads no node, evaluates nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::deploy::record;

#[derive(Args)]
pub struct GenerationsArgs {
    /// The cluster file (its directory holds .kdeploy/).
    file: PathBuf,
    /// Project root (default: the file's directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

pub fn state_dir(file: &std::path::Path, root: Option<&PathBuf>) -> PathBuf {
    let root = root.cloned().unwrap_or_else(|| {
        file.parent().filter(|p| !p.as_os_str().is_empty()).map_or(PathBuf::from("."), |p| p.to_path_buf())
    });
    root.join(".kdeploy")
}

pub fn run(args: GenerationsArgs) -> ExitCode {
    let records = match record::Records::load(&state_dir(&args.file, args.root.as_ref())) {
        Ok(r) => r,
        Err(e) => {
            super::print_error(&e);
            return ExitCode::from(super::EXIT_ERROR);
        }
    };
    let gens = records.all();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&gens).expect("JSON"));
        return ExitCode::SUCCESS;
    }
    if gens.is_empty() {
        println!("no generations recorded yet");
    }
    for g in gens {
        let extra = g.rollback_of.map_or(String::new(), |r| format!(" (rollback to {r})"));
        println!("generation {}  {}{extra}", g.number, record::format_time(g.time));
        for (n, r) in &g.nodes {
            println!("  {n:<16} node generation {:<4} {}", r.generation, &r.hash[..12.min(r.hash.len())]);
        }
    }
    ExitCode::SUCCESS
}
