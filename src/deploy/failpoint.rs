//! Failpoints for crash tests: with `KDEPLOY_FAILPOINT=NAME` in its
//! environment the deployer dies at the first point of that name the way
//! `kill -9` would — no cleanup, no rollback, no lock released by us (the
//! kernel closes the connections) — so tests can show that the next plain
//! run finishes the job. Names: `after-push` (blobs pushed and staged,
//! nothing live changed), `after-flip` (a node's first phase link switched,
//! its units not yet acted on), `after-units` (a phase's unit operations
//! done, hooks and checks not run), `before-commit` (every step done,
//! nothing committed), `after-member-change` (an etcd member added or
//! removed, its node's step not run).

use std::sync::OnceLock;

pub const NAMES: [&str; 5] = ["after-push", "after-flip", "after-units", "before-commit", "after-member-change"];

fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED.get_or_init(|| std::env::var("KDEPLOY_FAILPOINT").ok().filter(|n| !n.is_empty())).as_deref()
}

/// Dies here if `name` is the armed failpoint.
pub fn hit(name: &str) {
    debug_assert!(NAMES.contains(&name), "unknown failpoint {name}");
    if armed() == Some(name) {
        eprintln!("kdeploy: failpoint {name}: dying as if killed");
        // SAFETY: raising SIGKILL on ourselves has no memory-safety effect.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort();
    }
}
