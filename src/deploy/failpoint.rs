//! Failpoints for crash tests: with `KDEPLOY_FAILPOINT=NAME` in its
//! environment the deployer dies at the first point of that name the way
//! `kill -9` would — no cleanup, no rollback, no lock released by us (the
//! kernel closes the connections) — so tests can show that the next plain
//! run finishes the job. Names: `after-push` (blobs pushed and staged,
//! nothing live changed), `after-flip` (a node's first phase link switched,
//! its units not yet acted on), `after-units` (a phase's unit operations
//! done, hooks and checks not run), `before-commit` (every step done,
//! nothing committed), `after-member-change` (an etcd member added or
//! removed, its node's step not run), `after-phase:PHASE` (PHASE done on
//! every node, hooks and checks included, the next phase not begun: e.g.
//! `after-phase:control-plane`, kubeadm init done and no CNI yet).
//!
//! `KDEPLOY_FAILPOINT=NAME:stop` stops the deployer there instead
//! (`SIGSTOP`, as Ctrl-Z would; `SIGCONT` resumes it where it stopped): how
//! the lab tests a deployer paused past its locks' 30 s while another run
//! takes them over (`tests/lab/crash.rs`). Test-only, like the names.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub const NAMES: [&str; 5] = ["after-push", "after-flip", "after-units", "before-commit", "after-member-change"];

fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED.get_or_init(|| std::env::var("KDEPLOY_FAILPOINT").ok().filter(|n| !n.is_empty())).as_deref()
}

/// Dies (or, armed as `NAME:stop`, stops) here if `name` is the armed
/// failpoint.
pub fn hit(name: &str) {
    debug_assert!(NAMES.contains(&name), "unknown failpoint {name}");
    let Some(armed) = armed() else { return };
    if armed == name {
        die(name);
    }
    // once: the points hit per node would stop it again after SIGCONT
    static STOPPED: AtomicBool = AtomicBool::new(false);
    if armed.strip_suffix(":stop") == Some(name) && !STOPPED.swap(true, Ordering::SeqCst) {
        eprintln!("kdeploy: failpoint {name}: stopping (SIGSTOP) until continued");
        // raise(), not kill(getpid()): a signal sent to the process may be
        // taken by another thread, and this one would go on for a moment
        // past the failpoint (it was seen sending the commits it stops
        // before); sent to this thread, it stops before its next instruction.
        // SAFETY: raising SIGSTOP on ourselves has no memory-safety effect;
        // the process resumes here on SIGCONT.
        unsafe {
            libc::raise(libc::SIGSTOP);
        }
    }
}

/// Dies here if `after-phase:PHASE` is the armed failpoint.
pub fn hit_after_phase(phase: &str) {
    if armed().and_then(|a| a.strip_prefix("after-phase:")) == Some(phase) {
        die(&format!("after-phase:{phase}"));
    }
}

fn die(name: &str) -> ! {
    eprintln!("kdeploy: failpoint {name}: dying as if killed");
    // SAFETY: raising SIGKILL on ourselves has no memory-safety effect.
    unsafe {
        libc::raise(libc::SIGKILL);
    }
    std::process::abort();
}
