//! The `kdeploy` command: sets up the allocator and the evaluation thread,
//! then hands over to `kdeploy::cli`. Exit codes are documented in the
//! README and in `kdeploy --help`.

use std::process::ExitCode;

mod allocator;

// The evaluator allocates many small objects; mimalloc is markedly faster
// than glibc's allocator for that pattern (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: allocator::Mimalloc = allocator::Mimalloc;

/// Evaluation runs on a thread with a large stack: deep recursion then
/// needs no stack switching. Only touched pages cost memory; the evaluator
/// bounds its depth and still grows onto the heap past this (`stacker`).
const EVAL_STACK: usize = 4 << 30;

fn main() -> ExitCode {
    let deploying =
        matches!(std::env::args_os().nth(1).as_deref().and_then(|a| a.to_str()), Some("switch" | "rollback"));
    if deploying {
        allocator::small_pages();
    } else {
        allocator::keep_freed_memory();
    }
    match std::thread::Builder::new().name("kdeploy".into()).stack_size(EVAL_STACK).spawn(kdeploy::cli::run) {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(_) => kdeploy::cli::run(),
    }
}
