//! Converging nodes: one plan-then-execute engine for every operation.
//!
//! - `plan` — the plan as a value: per node what to push, stage, move
//!   ([`plan::Step`]) and commit; waves and rollout batches across nodes.
//! - `plan_switch`, `plan_rollback` — the pure planners of `switch` and
//!   `rollback` (with `manifest`: closure phases → node manifests);
//!   `rollout` — how many nodes of a kind a wave may disrupt at once;
//!   `membership` — etcd members added and removed one at a time, decided
//!   from what a live member lists.
//! - `execute` — the one executor: open nodes (node program, lock,
//!   status), push and stage (`push`: blobs the node lacks or holds
//!   damaged), waves with barriers, undo, commit, record;
//!   `step` runs one step on one node (hooks, units, link, checks);
//!   `member_step` a membership change around its node's step;
//!   `failpoint` lets crash tests kill it at named points;
//!   `self_rollback` waits for a node an armed step cut off to move its
//!   steps back by itself (deploy-rs's magic rollback).
//! - `plan_reset` — the pure planner of `reset` and of pruning nodes
//!   left out of the definition: every linked phase unlinked, last first,
//!   after its reset hooks.
//! - `operation` — the spine every operation runs on: records read once,
//!   connect, open, plan, dry run or execute, close; `select` — the one
//!   `--on` rule; `error` — every kind of failure of the engine, and what
//!   each means for the nodes (its stage);
//!   `consent` — asking before a plan that resets, prunes, removes
//!   members or drains.
//! - `switch`, `rollback`, `reset` — the operations: whom to reach, what
//!   the planner needs from the nodes (`state`), the plan; `prune` —
//!   nodes left out of the definition, named by `switch`, reset by
//!   `switch --prune`; `upgrade` — which changes of Kubernetes version a
//!   switch may make, and in what phase order; `partial` — which
//!   unreachable nodes a switch may go on without (`--max-unreachable`).
//! - `anchor` — the control plane that ran `kubeadm init`, recorded, and
//!   never moved by a switch unless the definition asks.
//! - `gc` — old records, node generations and unused blobs removed;
//!   `status` — what each recorded node runs, read without changing it.
//! - `record` — the deployer's generation history; `connect` — SSH
//!   settings and connecting.
//! - Output driven by events (`events`; `render` for progress lines, `live`
//!   for terminal progress bars, `recap` for the final summary).

pub mod anchor;
pub mod bounded;
pub mod connect;
pub mod consent;
pub mod diff;
pub mod error;
pub mod events;
pub mod exec;
pub mod execute;
pub mod failpoint;
pub mod gc;
pub mod live;
pub mod manifest;
pub mod member_step;
pub mod membership;
pub mod operation;
pub mod partial;
pub mod plan;
pub mod plan_reset;
pub mod plan_rollback;
pub mod plan_switch;
pub mod prune;
pub mod push;
pub mod recap;
pub mod record;
pub mod render;
pub mod reset;
pub mod restore;
pub mod retry;
pub mod rollback;
pub mod rollout;
pub mod select;
pub mod self_rollback;
pub mod snapshot;
pub mod state;
pub mod status;
pub mod step;
pub mod switch;
pub mod upgrade;

pub use connect::SshSettings;
pub use error::Error;
pub use execute::{Cancel, Outcome};
pub use operation::{Report, RunOptions};
pub use switch::{switch, SwitchOptions};
