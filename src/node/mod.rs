//! The node side of `kdeploy switch`: a small shell program
//! (`kdeploy-node.sh`, embedded in the binary and installed on the node keyed
//! by its hash) that owns `/var/lib/kdeploy` — store, generations, per-phase
//! links, managed symlinks, lock — the typed protocol the deployer speaks
//! with it ([`protocol`]: a request and a reply per command, its version,
//! its refusal codes and shared constants), and the Rust handle that drives
//! it ([`Node`]), plus the pure decisions of which units to restart
//! ([`plan`]) and which generations garbage collection removes ([`gc`]).
//! Layout, commands and guarantees are described in `src/node/README.md`.

mod agent;
mod exit;
pub mod gc;
mod lock;
pub mod manifest;
pub mod plan;
pub mod protocol;
mod put_stream;
pub mod script;

pub use agent::{Node, NodeError, BULK_FROM};
pub use exit::NodeExit;
pub use lock::NodeLock;
pub use manifest::{changed_files, DirEntry, FileEntry, Manifest};
pub use plan::{plan_units, unit_action, Action, OnChange, UnitPlan, UnitSpec};
pub use protocol::{
    ArmedStep, Drift, NodeState, NodeStatus, NotFetched, PhaseEntry, PhaseRecord, SelfRollback, StoredBlob, WantedBlob,
};
pub use put_stream::{Body, PutBlob, Ready, Sha256};
