//! The node protocol: what the deployer sends the node program and what it
//! reads back, typed and in one place. A [`Request`] per command encodes its
//! argument vector (every value checked here, then quoted by `agent.rs`)
//! and, where the command reads one, its stdin; a decoder per command in
//! [`reply`] turns what the program printed into a typed reply, and any
//! line it does not know is an error, never skipped. A refusal is a
//! [`Code`] the program prints on one structured stderr line (one shell
//! helper, `fail`) and exits with that code's status ([`refusal`]).
//!
//! Versioned: every command line carries `--protocol` [`VERSION`] and the
//! program refuses another (code `version`), so a program and a deployer
//! that disagree on these shapes never read each other's text. The
//! numbers the two sides must share — exit statuses, the lock's timings —
//! are defined in [`constants`] and checked against the program's own
//! declarations by a test. The program itself is `kdeploy-node.sh`; its
//! commands are listed in `src/node/README.md`.

pub mod constants;
pub mod refusal;
pub mod reply;
pub mod request;

pub use refusal::{Code, Failure, Refusal};
pub use reply::{
    Drift, Malformed, NodeState, NodeStatus, NotFetched, PhaseEntry, PhaseRecord, SelfRollback, StoredBlob,
};
pub use request::{ArmedStep, BadRequest, Request, WantedBlob};

/// The protocol this deployer speaks: bumped whenever a request's or a
/// reply's shape changes. The node program declares its own (`PROTOCOL=`)
/// and refuses a command line that names another.
pub const VERSION: u32 = 3;
