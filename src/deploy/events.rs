//! What a switch or rollback reports as it goes: a stream of [`Event`]s,
//! kept apart from the logic that produces them (colmena style). The run
//! only emits; [`super::render`] turns events into lines for a person and
//! [`super::recap`] folds them into the final per-node summary.

use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// One thing that happened. `node` is the node's name in the cluster.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    Evaluated {
        nodes: usize,
        took: Duration,
        /// The cluster came from the evaluation cache (nothing its last
        /// evaluation read had changed).
        kept: bool,
    },
    NodeConnected {
        node: String,
    },
    NodeUnreachable {
        node: String,
        reason: String,
    },
    /// Unreachable, and the run goes on without it (`switch
    /// --max-unreachable`, the plan not needing it): left on its recorded
    /// generation. `behind`: its closure changed, and the change waits for
    /// a switch that reaches it.
    NodeSkipped {
        node: String,
        behind: bool,
    },
    NodeUnchanged {
        node: String,
    },
    /// The committed hash differs; these phases will be activated / staged / removed.
    NodeChanged {
        node: String,
        activate: Vec<String>,
        stage: Vec<String>,
        remove: Vec<String>,
    },
    /// Blobs sent over SSH (`count`, their `bytes`, and the bytes `sent`
    /// on the wire: fewer when compressed) and fetched by the node from
    /// the binary cache (`fetched`, `fetched_bytes`).
    BlobsPushed {
        node: String,
        count: usize,
        bytes: u64,
        sent: u64,
        fetched: usize,
        fetched_bytes: u64,
        took: Duration,
    },
    /// Every changed node holds the blobs its new phases need (pushed or
    /// fetched, checked): the transfer, from its start to the last node.
    Transferred {
        nodes: usize,
        took: Duration,
    },
    /// The node's new phases are staged (`files` copied into the
    /// generation); nothing live changed yet.
    Staged {
        node: String,
        phases: usize,
        files: usize,
        took: Duration,
    },
    /// The deployer put one blob into the binary cache.
    CacheUploaded {
        blob: String,
        bytes: u64,
        took: Duration,
    },
    /// `kubernetes.version` changes: phases run in the upgrade order.
    Upgrading {
        from: String,
        to: String,
    },
    /// A barrier phase begins on these nodes.
    PhaseStarted {
        phase: String,
        nodes: Vec<String>,
    },
    /// A rollout batch of a phase begins (only when the phase has more
    /// than one batch): these nodes, after the batches before passed.
    BatchStarted {
        phase: String,
        batch: usize,
        of: usize,
        nodes: Vec<String>,
    },
    /// A membership change step done: `what` says which (`added as a
    /// learner`, `promoted`, `removed`, …); `via` ran the command.
    Member {
        membership: String,
        member: String,
        what: String,
        via: String,
    },
    /// A snapshot of a membership's data taken from `node`, kept at
    /// `path` on the deployer; `removed` older ones went (`keep`).
    Snapshot {
        membership: String,
        node: String,
        path: std::path::PathBuf,
        bytes: u64,
        removed: usize,
    },
    NodePhaseFinished {
        node: String,
        phase: String,
        took: Duration,
    },
    PhaseFinished {
        phase: String,
        took: Duration,
    },
    UnitAction {
        node: String,
        phase: String,
        unit: String,
        action: String,
    },
    HookRan {
        node: String,
        phase: String,
        hook: String,
        skipped: bool,
    },
    CheckPassed {
        node: String,
        phase: String,
        check: String,
        tries: u32,
    },
    Failed {
        node: String,
        phase: Option<String>,
        unit: Option<String>,
        message: String,
        journal: Option<String>,
    },
    RolledBack {
        node: String,
        phase: String,
    },
    /// A self-rollback step confirmed: the node took a new connection
    /// after its phase switched, and will not move it back by itself.
    Confirmed {
        node: String,
        phase: String,
    },
    /// The node moved a phase back by itself: its deployer armed it and
    /// never confirmed (this run, cut off from it, or an earlier one).
    SelfRolledBack {
        node: String,
        rollback: crate::node::SelfRollback,
    },
    RollbackFailed {
        node: String,
        phase: String,
        message: String,
    },
    Committed {
        node: String,
        generation: u64,
    },
    Warning {
        node: String,
        message: String,
    },
    /// A managed file edited or replaced by hand, or an enabled unit not
    /// running: `switch` repairs it.
    Drift {
        node: String,
        phase: String,
        kind: String,
        what: String,
        why: String,
    },
    /// Ctrl-C: no new batch starts; touched nodes are put back.
    Interrupted,
    /// Deployed (in the latest record) but no longer in the definition:
    /// left as it is (`switch --prune` resets it).
    NodeLeft {
        node: String,
        address: String,
    },
    /// Removed from the cluster without being reached (`switch --prune`
    /// while it did not answer): its etcd member left through a live one,
    /// and the cluster's `removeNode` ran on `via` (none: the cluster has
    /// no such command). A later switch that reaches it resets it.
    NodeGone {
        node: String,
        via: Option<String>,
    },
    /// Every phase unlinked and kdeploy's state gone from the node
    /// (`removed`: the directories kdeploy had created).
    NodeReset {
        node: String,
        removed: Vec<String>,
    },
}

/// What the progress lines and the recap say of a node the run skipped
/// ([`Event::NodeSkipped`]).
pub fn skipped_note(behind: bool) -> &'static str {
    if behind {
        "skipped (--max-unreachable): left on its recorded generation; its change waits for the next switch that \
         reaches it"
    } else {
        "skipped (--max-unreachable): left on its recorded generation"
    }
}

/// Where events go. Shared by all the node tasks of a run.
pub trait Sink: Send + Sync {
    fn emit(&self, e: Event);
}

/// Forwards every event to several sinks, in order.
pub struct Tee<'a>(pub Vec<&'a dyn Sink>);

impl Sink for Tee<'_> {
    fn emit(&self, e: Event) {
        for s in &self.0 {
            s.emit(e.clone());
        }
    }
}

/// Keeps every event (tests).
#[derive(Default)]
pub struct Collect(pub Mutex<Vec<Event>>);

impl Sink for Collect {
    fn emit(&self, e: Event) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    }
}
