//! The numbers the deployer and the node program must agree on, defined
//! once: the exit statuses of the program's refusals and the timings of
//! the node lock. The program declares each as a shell variable at its top
//! (`SILENCE=30`, `EX_LOCK_LOST=77`, ...) and uses only the variable; a
//! test reads the embedded program and checks every declaration against
//! this file, and that no other exit status or lock timing is written out
//! as a number.
//!
//! Why checked rather than passed on each command line: the lock timings
//! are a contract between *different* runs contending for one node (the
//! holder's [`SILENCE`] against a contender's [`CONTEND`] and
//! [`TAKEOVER_WAIT`]), possibly of different kdeploy versions; fixed in the
//! program's text — which is installed keyed by its hash — they cannot
//! differ between two runs that install the same program, whereas values
//! passed as arguments could, and every argument is one more thing the
//! node would have to validate.

use std::time::Duration;

/// How often the deployer tells a node it still holds the lock: one byte
/// on the `lock` command's stdin.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How long the holding `lock` command waits for a heartbeat byte before
/// it lets go (`timeout $SILENCE head -c 1`): six beats, so a network
/// stalled for up to ~25 s costs nothing, and a holder cut off without a
/// TCP close blocks others for at most this long.
pub const SILENCE: Duration = Duration::from_secs(30);

/// How long a run that finds the lock taken watches `lock.owner` (touched
/// on every beat; mtime has a one-second grain) before it decides the
/// holder is gone: more than two beats, so one late beat does not make a
/// live holder look dead.
pub const CONTEND: Duration = Duration::from_secs(12);

/// How long a run that saw no beat then waits for the silent holder's lock
/// (`flock -w`): longer than [`SILENCE`], within which that holder's shell
/// lets go, with slack for a loaded node.
pub const TAKEOVER_WAIT: Duration = Duration::from_secs(40);

/// How long a new holder waits for the commands an earlier holder still
/// runs (they hold `lock.busy` shared) before it gives up (code `busy`).
pub const DRAIN_WAIT: Duration = Duration::from_secs(40);

/// How long a command that changes the node waits for `lock.busy` shared:
/// longer than [`DRAIN_WAIT`], the longest a new holder keeps it exclusive
/// (it then gives up and lets go), so a live holder's command is never
/// refused for a takeover attempt in progress.
pub const BUSY_WAIT: Duration = Duration::from_secs(60);

/// Exit status of a refusal or failure that needs no handling of its own
/// (code `failed`; the shell's own errors exit 1 too, without a code line).
pub const EX_FAILED: u32 = 1;
/// `units`: a unit failed to start, restart or reload.
pub const EX_UNIT_FAILED: u32 = 3;
/// What was asked for is not on the node (a manifest, a phase record, a
/// blob).
pub const EX_NOT_FOUND: u32 = 66;
/// The node lacks a tool or a feature of one the program needs (checked
/// when it is installed).
pub const EX_UNSUPPORTED: u32 = 69;
/// `lock`: another live run holds the node, or the commands of the run it
/// took over from still run (EX_TEMPFAIL).
pub const EX_LOCKED: u32 = 75;
/// The command line speaks another protocol version (EX_PROTOCOL).
pub const EX_VERSION: u32 = 76;
/// A command that changes the node, refused: the caller's lock token is
/// not the live holder's (EX_NOPERM).
pub const EX_LOCK_LOST: u32 = 77;
/// `timeout`'s status when it kills a command at its deadline (the
/// deployer wraps `units`, hooks and checks in it; not the program's own).
pub const EX_TIMED_OUT: u32 = 124;

/// Every number the program must declare, by its shell name, with its
/// value (seconds for durations).
pub fn declared() -> Vec<(&'static str, u64)> {
    vec![
        ("PROTOCOL", super::VERSION.into()),
        ("SILENCE", SILENCE.as_secs()),
        ("CONTEND", CONTEND.as_secs()),
        ("TAKEOVER_WAIT", TAKEOVER_WAIT.as_secs()),
        ("DRAIN_WAIT", DRAIN_WAIT.as_secs()),
        ("BUSY_WAIT", BUSY_WAIT.as_secs()),
        ("EX_FAILED", EX_FAILED.into()),
        ("EX_UNIT_FAILED", EX_UNIT_FAILED.into()),
        ("EX_NOT_FOUND", EX_NOT_FOUND.into()),
        ("EX_UNSUPPORTED", EX_UNSUPPORTED.into()),
        ("EX_LOCKED", EX_LOCKED.into()),
        ("EX_VERSION", EX_VERSION.into()),
        ("EX_LOCK_LOST", EX_LOCK_LOST.into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::script::SCRIPT;

    /// `NAME=VALUE` lines at the program's top level (no indentation).
    fn declarations() -> Vec<(String, String)> {
        SCRIPT
            .lines()
            .flat_map(|l| l.split("  #").next().unwrap_or(l).split(' '))
            .filter_map(|w| w.split_once('='))
            .filter(|(k, v)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') && !v.is_empty())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_program_declares_each_number_as_the_deployer_has_it() {
        let decl = declarations();
        for (name, value) in declared() {
            let found: Vec<&String> = decl.iter().filter(|(k, _)| k == name).map(|(_, v)| v).collect();
            assert_eq!(found, [&value.to_string()], "{name} in kdeploy-node.sh");
        }
    }

    #[test]
    fn the_program_writes_no_status_or_timing_as_a_bare_number() {
        for (i, line) in SCRIPT.lines().enumerate() {
            let code = line.split(" # ").next().unwrap_or(line).trim_start();
            if code.starts_with('#') {
                continue;
            }
            for w in code.split([';', '|', '&']).map(str::trim) {
                let bare = |cmd: &str| {
                    w.strip_prefix(cmd)
                        .and_then(|r| r.split_whitespace().next())
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                };
                let ok_exit = w == "exit 0" || w.starts_with("exit 0 ");
                assert!(ok_exit || !bare("exit "), "line {}: a bare exit status: {line}", i + 1);
                assert!(!bare("timeout ") && !bare("flock -w ") && !bare("flock -s -w "), "line {}: {line}", i + 1);
            }
        }
    }

    #[test]
    fn the_timings_fit_together() {
        assert!(CONTEND > HEARTBEAT * 2, "a contender must see a live holder's beat");
        assert!(TAKEOVER_WAIT > SILENCE, "a silent holder lets go within the wait");
        assert!(BUSY_WAIT > DRAIN_WAIT, "a holder's command outwaits a takeover attempt");
        assert!(SILENCE > HEARTBEAT * 4);
    }

    #[test]
    fn each_refusal_code_has_its_declared_status() {
        use super::super::Code;
        for c in Code::ALL {
            assert!(declared().iter().any(|(_, v)| *v == u64::from(c.status())), "{c:?}");
        }
    }
}
