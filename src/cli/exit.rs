//! The exit codes of every command, defined once: the code, the short
//! phrase `kdeploy --help` prints for it, and the phrase that must open its
//! row of the README's "Exit codes" table (`tests/cli/exit_codes.rs` holds
//! both to this list).

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    /// The cluster or expression did not evaluate (and a few command-specific failures).
    Error,
    /// Bad flags, a missing file.
    Usage,
    /// A switch failed on some node (touched nodes were rolled back) or a node was locked.
    DeployFailed,
    /// Some node could not be reached; nothing was changed.
    Unreachable,
    /// A node's lock was lost to another run mid-run (the deployer was paused
    /// or cut off): stopped before its next change, nothing undone there.
    LockLost,
    /// The run was refused, before reaching a node or while planning from
    /// what the nodes answered, or a destructive plan was not confirmed;
    /// nothing was changed (the message says why).
    Refused,
    /// The nodes changed and committed, but the deployer's record of it
    /// could not be written (a `switch` again writes it).
    NotRecorded,
    /// `switch --max-unreachable`: the nodes reached converged, the
    /// unreachable ones it tolerates were skipped (left as they were).
    Partial,
    /// Stopped by Ctrl-C; touched nodes were put back (128 + SIGINT).
    Interrupted,
}

impl Exit {
    /// Every exit code, in order.
    pub const ALL: [Exit; 10] = [
        Exit::Success,
        Exit::Error,
        Exit::Usage,
        Exit::DeployFailed,
        Exit::Unreachable,
        Exit::LockLost,
        Exit::Refused,
        Exit::NotRecorded,
        Exit::Partial,
        Exit::Interrupted,
    ];

    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Error => 1,
            Exit::Usage => 2,
            Exit::DeployFailed => 3,
            Exit::Unreachable => 4,
            Exit::LockLost => 5,
            Exit::Refused => 6,
            Exit::NotRecorded => 7,
            Exit::Partial => 8,
            Exit::Interrupted => 130,
        }
    }

    /// What `kdeploy --help` says of the code, and how its README row begins.
    pub const fn summary(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::Error => "evaluation error",
            Exit::Usage => "usage error",
            Exit::DeployFailed => "deployment failed (touched nodes rolled back), or a node is locked by another run",
            Exit::Unreachable => "some node unreachable, or its login refused",
            Exit::LockLost => "a node's lock was lost mid-run",
            Exit::Refused => "run refused before changing anything",
            Exit::NotRecorded => "nodes changed but the deployer's record was not written",
            Exit::Partial => "partial: the nodes reached converged, the unreachable ones tolerated were skipped",
            Exit::Interrupted => "interrupted by Ctrl-C (touched nodes rolled back)",
        }
    }

    /// The line `kdeploy --help` ends with.
    pub fn help() -> String {
        let codes: Vec<String> = Exit::ALL.iter().map(|e| format!("{} {}", e.code(), e.summary())).collect();
        format!("Exit codes: {}.", codes.join("; "))
    }
}

impl From<&crate::deploy::Error> for Exit {
    /// The one place an engine error becomes an exit code.
    fn from(e: &crate::deploy::Error) -> Exit {
        use crate::deploy::error::Stage;
        match e.stage() {
            Stage::Refused | Stage::Planning => Exit::Refused,
            Stage::NotRecorded => Exit::NotRecorded,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}
