//! The engine's errors, by what they mean for the nodes — which is what
//! the exit code tells a script (`cli/exit.rs` maps each variant to one
//! code, in one place). A run either stops before it changes anything
//! (refused before reaching a node, or while planning from what the nodes
//! answered), or changes nodes and fails in a step, which is not an error
//! but an [`super::Outcome`] (the touched nodes are put back); the one
//! error after changes is a deployer record that could not be written.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Refused before any node was reached: the selection, the deployer's
    /// records, or a rule of the plan (an anchor move, an upgrade jump).
    Refused(String),
    /// Stopped while planning, from what the nodes answered (a state that
    /// cannot be read, a membership kdeploy cannot tell, a delegate the
    /// run does not hold). Nothing was changed; the locks are let go.
    Planning(String),
    /// The nodes changed and committed, but the deployer's record of it
    /// could not be written: they run the new generation, and `rollback`
    /// does not know it. A `switch` again writes it.
    NotRecorded(String),
}

impl Error {
    /// Did the run leave every node as it found it?
    pub fn nothing_changed(&self) -> bool {
        !matches!(self, Error::NotRecorded(_))
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Refused(m) | Error::Planning(m) | Error::NotRecorded(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotRecorded(m) => write!(
                f,
                "{m}: the nodes run the new generation but the deployer's record of it was not written; \
                 fix the cause and run `kdeploy switch` again to record it"
            ),
            _ => f.write_str(self.message()),
        }
    }
}

impl std::error::Error for Error {}
