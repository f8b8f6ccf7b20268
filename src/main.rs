//! The `kdeploy` command: parses the command line and dispatches to one
//! module per subcommand under `cli/`. Exit codes are documented in the
//! README and in `kdeploy --help`.

mod cli;
mod stdlib;

use std::process::ExitCode;

// The evaluator allocates many small objects; mimalloc is markedly faster
// than glibc's allocator for that pattern (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Evaluation runs on a thread with a large stack: deep recursion then
/// needs no stack switching. Only touched pages cost memory; the evaluator
/// bounds its depth and still grows onto the heap past this (`stacker`).
const EVAL_STACK: usize = 4 << 30;

fn main() -> ExitCode {
    match std::thread::Builder::new().name("kdeploy".into()).stack_size(EVAL_STACK).spawn(cli::run) {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(_) => cli::run(),
    }
}
