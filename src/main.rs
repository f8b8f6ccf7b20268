//! The `kdeploy` command: sets up the allocator and the evaluation thread,
//! then hands over to `kdeploy::cli`. Exit codes are documented in the
//! README and in `kdeploy --help`.

use std::process::ExitCode;

// The evaluator allocates many small objects; mimalloc is markedly faster
// than glibc's allocator for that pattern (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Evaluation runs on a thread with a large stack: deep recursion then
/// needs no stack switching. Only touched pages cost memory; the evaluator
/// bounds its depth and still grows onto the heap past this (`stacker`).
const EVAL_STACK: usize = 4 << 30;

/// mimalloc reads its options once, before `main`; setting them later has
/// no effect. A purge delay of -1 keeps freed memory instead of handing it
/// back to the OS and re-zeroing it (up to half the run time of a large
/// evaluation), so kdeploy re-executes itself once with it set. Not for
/// the deploy commands: they stream blobs through many short-lived buffers
/// on several threads for seconds, and handing freed memory back keeps
/// their peak low (a first converge of the lab: 83 MB kept, 42-55 MB purged).
fn ensure_allocator_options() {
    use std::os::unix::process::CommandExt;
    let deploying =
        matches!(std::env::args_os().nth(1).as_deref().and_then(|a| a.to_str()), Some("switch" | "rollback"));
    if deploying || std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    if let Ok(exe) = std::env::current_exe() {
        let args: Vec<_> = std::env::args_os().skip(1).collect();
        // `exec` only returns on failure; then run as we are.
        let _ = std::process::Command::new(exe).args(args).env("MIMALLOC_PURGE_DELAY", "-1").exec();
    }
}

fn main() -> ExitCode {
    ensure_allocator_options();
    match std::thread::Builder::new().name("kdeploy".into()).stack_size(EVAL_STACK).spawn(kdeploy::cli::run) {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(_) => kdeploy::cli::run(),
    }
}
