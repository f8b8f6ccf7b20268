//! The node program's exit statuses, as the deployer reads them: one enum
//! instead of numbers compared at each call site. The numbers are the
//! program's (`kdeploy-node.sh`: `die` exits 1, `lock` 75 when a live run
//! holds the node, `units` 3 when a unit failed, every command that changes
//! the node 77 when the caller's lock token is not the live holder's) and
//! `timeout`'s (124).

/// How a node program command (or a command run under `timeout`) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeExit {
    Ok,
    /// `die`: refused or failed, the reason on stderr.
    Failed,
    /// `units`: a unit failed; its status and journal lines on stderr.
    UnitFailed,
    /// `lock`: another live run holds the node (EX_TEMPFAIL).
    Locked,
    /// A command that changes the node, refused: the caller's lock token
    /// is not the live holder's (the lock was lost, taken over by another
    /// run). EX_NOPERM.
    LockLost,
    /// Killed by `timeout` at its deadline.
    TimedOut,
    /// Anything else (a shell error, a signal).
    Other(u32),
}

impl NodeExit {
    pub fn of(status: u32) -> NodeExit {
        match status {
            0 => NodeExit::Ok,
            1 => NodeExit::Failed,
            3 => NodeExit::UnitFailed,
            75 => NodeExit::Locked,
            77 => NodeExit::LockLost,
            124 => NodeExit::TimedOut,
            n => NodeExit::Other(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_s_statuses_read_back() {
        assert_eq!(NodeExit::of(0), NodeExit::Ok);
        assert_eq!(NodeExit::of(3), NodeExit::UnitFailed);
        assert_eq!(NodeExit::of(75), NodeExit::Locked);
        assert_eq!(NodeExit::of(77), NodeExit::LockLost);
        assert_eq!(NodeExit::of(124), NodeExit::TimedOut);
        assert_eq!(NodeExit::of(2), NodeExit::Other(2));
    }

    #[test]
    fn the_numbers_are_the_program_s() {
        let program = include_str!("kdeploy-node.sh");
        assert!(program.contains("exit 75"), "lock refusal");
        assert!(program.contains("exit 77"), "lock lost");
        assert!(program.contains("exit 3"), "unit failure");
        assert!(program.contains("exit 1; }"), "die");
    }
}
