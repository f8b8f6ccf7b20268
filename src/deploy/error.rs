//! The engine's errors: one enum, a variant per kind of failure, each
//! carrying what its message needs; a kind with several reasons (the
//! records, `--on`, the anchor, an upgrade, a rollback, a membership, a
//! blob) has an enum of its own. What an error means for the nodes is its
//! [`Stage`], which is what the exit code tells a script (`cli/exit.rs`
//! maps each stage to one code, in one place). A run either stops before
//! it changes anything (refused before reaching a node, or while planning
//! from what the nodes answered), or changes nodes and fails in a step,
//! which is not an error but an [`super::Outcome`] (the touched nodes are
//! put back); the one error after changes is a deployer record that could
//! not be written.

use std::path::{Path, PathBuf};

use super::plan::StepRef;
use super::upgrade::Version;
use crate::node::NodeError;
use crate::store::Digest;

/// What an error means for the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Refused before any node was reached: the selection, the deployer's
    /// records, or a rule of the plan (an anchor move, an upgrade jump, a
    /// plan that needs a node it was allowed to go on without).
    Refused,
    /// Stopped while planning, from what the nodes answered (a state that
    /// cannot be read, a membership kdeploy cannot tell, a delegate the
    /// run does not hold). Nothing was changed; the locks are let go.
    Planning,
    /// The nodes changed and committed, but the deployer's record of it
    /// could not be written: they run the new generation, and `rollback`
    /// does not know it. A `switch` again writes it.
    NotRecorded,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Refused: the rules and settings a run is checked against before it
    // reaches a node (found again while planning, they still refuse it).
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error(transparent)]
    Selection(#[from] Selection),
    #[error(transparent)]
    Anchor(#[from] AnchorMove),
    #[error(transparent)]
    Upgrade(#[from] UpgradeRefused),
    #[error(transparent)]
    Rollback(#[from] RollbackRefused),
    /// A reset of the anchor while other control planes stay.
    #[error(
        "{anchor} ran `kubeadm init` (the anchor) and {others} stay: reset would leave them without it and {anchor}, \
         switched again, would start a second cluster. Set settings.kubeadm.initNode to one of them, switch, then \
         reset {anchor}",
        others = .staying.join(", ")
    )]
    AnchorReset { anchor: String, staying: Vec<String> },
    /// A plan that does what a rollback cannot undo, not confirmed
    /// (`consent.rs`): answered no, or no one to ask and no `--yes`.
    #[error(
        "{}; nothing was changed. The plan would:\n  {}",
        if *.asked { "not confirmed" } else {
            "this plan needs confirmation and there is no terminal to ask on: run it on a terminal, or pass --yes"
        },
        .actions.join("\n  ")
    )]
    NotConfirmed { asked: bool, actions: Vec<String> },
    /// A switch allowed to go on without unreachable nodes
    /// (`--max-unreachable`) whose plan needs one of them (`partial.rs`).
    #[error(
        "{0}; nothing was changed. --max-unreachable skips a node only when the plan does not need it: \
         bring it back and switch again"
    )]
    NeedsUnreachable(#[from] NeedsUnreachable),
    /// A restore that cannot be planned (`restore.rs`).
    #[error("restore: {0}; nothing was changed")]
    Restore(#[from] RestoreRefused),
    /// How to reach the nodes (the SSH config) cannot be worked out.
    #[error(transparent)]
    Ssh(#[from] crate::transport::Error),
    /// How to reach one node (its jump host, its `ssh.become`) is wrong.
    #[error("node {node}: {source}")]
    NodeSsh { node: String, source: crate::transport::Error },

    // Planning: from what the nodes answered, or the plan itself.
    /// A node's answer that cannot be had or read.
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error("{node} is not a node of cluster {cluster}")]
    NotInCluster { node: String, cluster: String },
    #[error("{0}, which this run does not reach; add it to --on")]
    UnheldDelegate(HookOn),
    #[error(transparent)]
    Membership(#[from] MembershipError),
    /// The snapshot a change of etcd or the control planes comes after.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A blob the plan needs, or pushes, that cannot be had.
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error("generation {generation}: bad hash for {node}")]
    BadRecordedHash { generation: u64, node: String },
    #[error("internal error: the plan's nodes are not the nodes this run holds, in order")]
    PlanMismatch,
    #[error("internal error: the plan stages phases but no blob source was given")]
    NoBlobSource,
    #[error("internal error: the plan's waves name a step it does not hold: {}, phase {}", .0.node, .0.phase)]
    UnknownStep(StepRef),
    /// The deployer's store (its garbage collection).
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// An old record `gc` drops that cannot be removed.
    #[error(transparent)]
    RecordNotRemoved(RecordWrite),

    // After the nodes changed.
    #[error(
        "{0}: the nodes run the new generation but the deployer's record of it was not written; \
         fix the cause and run `kdeploy switch` again to record it"
    )]
    NotRecorded(RecordWrite),
}

impl Error {
    pub fn stage(&self) -> Stage {
        use Error::*;
        match self {
            Records(_)
            | Selection(_)
            | Anchor(_)
            | Upgrade(_)
            | Rollback(_)
            | AnchorReset { .. }
            | NotConfirmed { .. }
            | NeedsUnreachable(_)
            | Restore(_)
            | Ssh(_)
            | NodeSsh { .. } => Stage::Refused,
            Node(_)
            | NotInCluster { .. }
            | UnheldDelegate(_)
            | Membership(_)
            | Snapshot(_)
            | Blob(_)
            | BadRecordedHash { .. }
            | PlanMismatch
            | NoBlobSource
            | UnknownStep(_)
            | Store(_)
            | RecordNotRemoved(_) => Stage::Planning,
            NotRecorded(_) => Stage::NotRecorded,
        }
    }

    /// Did the run leave every node as it found it?
    pub fn nothing_changed(&self) -> bool {
        self.stage() != Stage::NotRecorded
    }
}

/// The deployer's records cannot be read; skipping one would let an older
/// record decide where the nodes are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordsError {
    /// What needs a recorded generation (`rollback`, `gc`) finds none.
    #[error("no generations recorded yet (.kdeploy/generations/ is empty)")]
    Empty,
    #[error("{}: {reason}", .dir.display())]
    Listing { dir: PathBuf, reason: String },
    #[error("deployer record {}: {reason}; {}", .path.display(), restore(.path))]
    Unreadable { path: PathBuf, reason: String },
    #[error("deployer record {}: it records generation {number} under another name; {}", .path.display(), restore(.path))]
    Misnamed { path: PathBuf, number: u64 },
}

fn restore(path: &Path) -> String {
    format!(
        "kdeploy will not guess where the nodes are: restore the file, or move it out of {} if the generation it \
         recorded is gone",
        path.parent().map_or(String::new(), |p| p.display().to_string())
    )
}

/// A deployer record that could not be written (or removed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", .path.display())]
pub struct RecordWrite {
    pub path: PathBuf,
    pub reason: String,
}

/// An `--on` that picks nothing: a typo must not shrink or widen a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Selection {
    /// `within`: where the nodes were looked for.
    #[error("--on {word}: no node, role, @tag or name pattern of that name in {within}")]
    Unmatched { word: String, within: String },
    #[error("--on {on}: every node is excluded")]
    AllExcluded { on: String },
}

/// A switch that would move the anchor (`anchor.rs`) from `recorded` to
/// `wanted` without being asked to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorMove {
    /// Named by `kubeadm.initNode` before it joined.
    #[error(
        "kubeadm.initNode = \"{wanted}\", but {wanted} has not been deployed yet: it would run `kubeadm init` and \
         start a second cluster beside {recorded}'s. Let it join first, then name it"
    )]
    NotJoined { recorded: String, wanted: String },
    #[error(
        "{wanted} would run `kubeadm init` because {recorded}, which ran it (the last switch recorded it as the first \
         control plane), is no longer a control plane: {wanted} would start a second cluster. Name a control plane \
         that has already joined in settings.kubeadm.initNode to move the anchor"
    )]
    NoLongerControlPlane { recorded: String, wanted: String },
    #[error(
        "{wanted} would run `kubeadm init` because its name sorts before {recorded}'s, but {recorded} ran it (the last \
         switch recorded {recorded} as the first control plane): {wanted} would start a second cluster. Set \
         settings.kubeadm.initNode = \"{recorded}\" to keep {recorded}, or name a control plane that has already \
         joined to move the anchor on purpose"
    )]
    SortsFirst { recorded: String, wanted: String },
}

/// A change of `kubernetes.version` that Kubernetes does not support, or
/// that a run does not make whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeRefused {
    #[error("kubernetes.version {version:?} is not a version")]
    NotAVersion { version: String },
    #[error("kubernetes.version {from} -> {to}: a change of major version is not supported")]
    Major { from: Version, to: Version },
    #[error(
        "kubernetes.version {from} -> {to}: Kubernetes does not support going back a version; \
         use `kdeploy rollback` to return to the generation that ran {to}"
    )]
    Downgrade { from: Version, to: Version },
    #[error(
        "kubernetes.version {from} -> {to}: Kubernetes upgrades one minor version at a time; \
         upgrade to {}.{}.x first, then to {to}",
        .from.major,
        .from.minor + 1
    )]
    MinorJump { from: Version, to: Version },
    #[error(
        "kubernetes.version {from} -> {to}: an upgrade runs on every node of the cluster; \
         run it without --on ({selected} of {all} nodes selected)"
    )]
    Partial { from: Version, to: Version, selected: usize, all: usize },
}

/// A hook a step of the plan runs on another node (`delegate`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{node}, phase {phase}: hook {hook} runs on {delegate}")]
pub struct HookOn {
    pub node: String,
    pub phase: String,
    pub hook: String,
    pub delegate: String,
}

/// What a switch's plan needs of a node that did not answer, so that it
/// cannot go on without it (`partial.rs`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NeedsUnreachable {
    /// An upgrade runs on every node (`upgrade::whole`).
    #[error(
        "kubernetes.version {from} -> {to}: an upgrade runs on every node of the cluster, and {} is unreachable",
        .nodes.join(", ")
    )]
    Upgrade { from: Version, to: Version, nodes: Vec<String> },
    #[error("{0}, which is unreachable")]
    Delegate(HookOn),
    /// A node joins (`kubeadm join` through the anchor's uploaded
    /// certificates and API) while the anchor is unreachable.
    #[error("{node}, phase {phase}: hook {hook} joins through {anchor} (the anchor), which is unreachable")]
    Anchor { node: String, phase: String, hook: String, anchor: String },
    /// A membership whose members this run changes, with one of its
    /// members (or the node of a member that would leave) unreachable.
    #[error(
        "{membership}: {node} is unreachable and this run changes the members ({}): a membership is changed only \
         with every member reached",
        .changes.join("; ")
    )]
    Members { membership: String, node: String, changes: Vec<String> },
    /// A membership this run disrupts (restarts or stops members) beyond
    /// what its quorum allows with the unreachable members counted down.
    #[error(
        "{membership}: {} unreachable, and phase {phase} restarts or stops {} at once: {up} of {members} members \
         would be up, below the quorum of {quorum}",
        .down.join(", "),
        .disrupted.join(", ")
    )]
    Quorum {
        membership: String,
        phase: String,
        down: Vec<String>,
        disrupted: Vec<String>,
        up: usize,
        members: usize,
        quorum: usize,
    },
    /// A node removed without being reached needs a control plane to
    /// delete it from the cluster's API, and none of them answers.
    #[error(
        "{node} is removed without being reached, which needs one of the control planes ({}) to delete it from \
         the cluster's API, and none of them answers",
        .on.join(", ")
    )]
    RemoveNode { node: String, on: Vec<String> },
}

/// A rollback with nowhere to go, or one that would change a membership
/// (no records at all is [`RecordsError::Empty`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RollbackRefused {
    #[error("--to {to}: no such recorded generation (have {})", numbers(.have))]
    NoSuchGeneration { to: u64, have: Vec<u64> },
    #[error("generation {in_effect} is the oldest recorded: nothing to roll back to")]
    Oldest { in_effect: u64 },
    /// A rollback moves links, it does not add or remove members.
    #[error(
        "generation {generation} has {membership} members [{was}], the nodes now have [{is}]: rollback does not \
         change a membership; edit the definition back and run `kdeploy switch` instead",
        was = .then.join(", "),
        is = .now.join(", ")
    )]
    Membership { generation: u64, membership: String, then: Vec<String>, now: Vec<String> },
}

fn numbers(ns: &[u64]) -> String {
    ns.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// A membership (etcd's) that cannot be read or changed safely.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    #[error("membership list: cannot read the line `{line}`")]
    ListLine { line: String },
    /// The list command failed; the end of its output.
    #[error("{output}")]
    ListFailed { output: String },
    /// `unanswered`: each node asked and the last line of its failure.
    #[error(
        "{membership}: no node answered the member list ({}), but {} ran a member at its last commit: the membership \
         would change but kdeploy cannot tell who is in the cluster, so it changes nothing; bring a member back first",
        .unanswered.iter().map(|(n, why)| format!("{n}: {why}")).collect::<Vec<_>>().join("; "),
        .ran.join(", ")
    )]
    Unknown { membership: String, unanswered: Vec<(String, String)>, ran: Vec<String> },
    /// A node leaving whose own member the list read does not show.
    #[error(
        "{membership}: {node} leaves, but the member list read ({shown}) does not show it, while its own member \
         answers as {own_member} of the same cluster ({answer}): its step would stop it without `member remove` and \
         remove its data. One of them is wrong — check both (`member list` on each) before running again",
        shown = .listed.join(", "),
        answer = .own.join(", ")
    )]
    UnlistedLeaver { membership: String, node: String, listed: Vec<String>, own_member: String, own: Vec<String> },
    #[error(
        "{membership}: {node} is a member as {listed_peer} but the definition wants {wanted_peer}: kdeploy does not \
         change a member's peer URL in place; take the {membership} role from {node}, switch, then give it back"
    )]
    PeerChanged { membership: String, node: String, listed_peer: String, wanted_peer: String },
    #[error("{membership}: no started member on a node this run reaches; cannot change the membership")]
    NoStartedMember { membership: String },
    #[error("member {id} ({peer}) was added but never started; it must go first")]
    NeverStarted { id: String, peer: String },
}

/// A blob that cannot be had, or not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// A user's secretFile is never made, but its hash needs the store's key.
    #[error("secret {name} is not made yet, or the secret store's hash key (a switch makes both)")]
    SecretNotMade { name: String },
    #[error(transparent)]
    Source(#[from] crate::store::Error),
    #[error("{}: {reason}", .path.display())]
    Size { path: PathBuf, reason: String },
    #[error("secret {0} must be sent from memory")]
    SecretOnDisk(Digest),
    #[error("the node asked for blob {0}, never offered")]
    NeverOffered(Digest),
    /// The blocking task that hashed or uploaded it did not finish.
    #[error("{what}: {reason}")]
    Task { what: String, reason: String },
}

/// Why a snapshot was not taken (nothing was changed: it comes first).
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{membership}: backups are off (etcd.backup.enable = false)")]
    Off { membership: String },
    #[error("{what} {}: {source}", .path.display())]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Node(#[from] NodeError),
    #[error("the snapshot command failed on {node} (exit {status}): {output}")]
    Failed { node: String, status: u32, output: String },
    #[error("the snapshot command on {node} printed nothing")]
    Empty { node: String },
    #[error("the snapshot from {node} is larger than {} GiB ({bytes} bytes): not kept", super::snapshot::MAX_SNAPSHOT >> 30)]
    TooLarge { node: String, bytes: u64 },
    /// No member the run holds could give one, though members ran.
    #[error(
        "{membership}: no member gave a snapshot ({}); nothing was changed. A switch that changes etcd, its \
         members or the control planes takes one first: bring a member back, or pass --no-snapshot",
        if .tried.is_empty() { "none could be held".to_string() } else {
            .tried.iter().map(|(n, why)| format!("{n}: {why}")).collect::<Vec<_>>().join("; ")
        }
    )]
    NoneTaken { membership: String, tried: Vec<(String, String)> },
}

impl SnapshotError {
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> SnapshotError {
        SnapshotError::Io { what, path: path.to_path_buf(), source }
    }
}

/// Why a restore is refused before it changes anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestoreRefused {
    #[error("the definition has no membership that can be restored (etcd with deploymentType \"host\")")]
    NoMembership,
    #[error("no snapshot kept in {}: take one with `kdeploy snapshot`, or name one with --snapshot", .0.display())]
    NoSnapshot(PathBuf),
    #[error("{} is not a file", .0.display())]
    NotAFile(PathBuf),
    #[error("the deployer's snapshots cannot be read: {0}")]
    Unreadable(String),
    #[error("{0} is not a member the definition wants")]
    NotAMember(String),
    #[error("{0}, the member to restore first, does not answer")]
    FirstUnreachable(String),
    #[error("no member answers")]
    NoneAnswered,
}
