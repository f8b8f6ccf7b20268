//! The node program's exit statuses, as the deployer reads them where the
//! status alone matters (a hook's or a unit operation's end under
//! `timeout`): one enum instead of numbers compared at each call site. The
//! numbers are defined once, in `protocol/constants.rs`; a refusal's
//! meaning is read from its code line (`protocol/refusal.rs`), not from
//! the status.

use super::protocol::constants::*;

/// How a node program command (or a command run under `timeout`) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeExit {
    Ok,
    /// Refused or failed, the reason on stderr.
    Failed,
    /// `units`: a unit failed; its status and journal lines on stderr.
    UnitFailed,
    /// `lock`: another live run holds the node (EX_TEMPFAIL).
    Locked,
    /// A command that changes the node, refused: the caller's lock token
    /// is not the live holder's. EX_NOPERM.
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
            EX_FAILED => NodeExit::Failed,
            EX_UNIT_FAILED => NodeExit::UnitFailed,
            EX_LOCKED => NodeExit::Locked,
            EX_LOCK_LOST => NodeExit::LockLost,
            EX_TIMED_OUT => NodeExit::TimedOut,
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
}
