//! The node side of `kdeploy switch`: a small POSIX sh program
//! (`kdeploy-node.sh`, embedded in the binary and installed on the node keyed
//! by its hash) that owns `/var/lib/kdeploy` — store, generations, per-phase
//! links, managed symlinks, lock — and the Rust handle that drives it
//! ([`Node`]), plus the pure decisions of which units to restart ([`plan`])
//! and which generations garbage collection removes ([`gc`]).
//! Layout, commands and guarantees are described in `src/node/README.md`.

mod agent;
mod exit;
pub mod gc;
mod lock;
pub mod manifest;
pub mod plan;
mod put_stream;
pub mod script;

pub use agent::{Drift, Node, NodeError, NodeStatus, NotFetched, StoredBlob, WantedBlob};
pub use exit::NodeExit;
pub use lock::NodeLock;
pub use manifest::{changed_files, DirEntry, FileEntry, Manifest};
pub use plan::{plan_units, unit_action, Action, OnChange, UnitPlan, UnitSpec};
pub use put_stream::{Body, PutBlob};
