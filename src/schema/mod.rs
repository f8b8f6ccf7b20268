//! The closure schema as Rust types: exactly what `kd.cluster` returns
//! (see `stdlib/README.md`, "The closure schema"). Its own module, below
//! both `closure` (which validates and hashes it) and `store` (which
//! makes the secrets and fetches the artifacts it names), so neither of
//! those imports the other's way round. Unknown fields are
//! rejected so a stdlib change cannot silently drop data the engine would
//! need. Fields are declared in alphabetical order of their JSON names:
//! the canonical encoding (`closure/hash.rs`) serialises some of these structs
//! directly and relies on sorted keys.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub mod rollout;
mod shared;
mod text;
pub use rollout::Rollout;
pub use shared::Phase;
pub use text::{Interning, Text};

/// The whole evaluated cluster.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cluster {
    /// The control plane that runs `kubeadm init` (none without control
    /// planes, or from an older stdlib).
    #[serde(default)]
    pub anchor: Option<String>,
    /// The nodes that could be the anchor (the control planes).
    #[serde(default)]
    pub anchor_candidates: Vec<String>,
    /// The definition names the anchor itself (`kubeadm.initNode`), so it
    /// may move it.
    #[serde(default)]
    pub anchor_pinned: bool,
    /// The Kubernetes version the nodes run, for the upgrade rules.
    #[serde(default)]
    pub kubernetes_version: Option<String>,
    /// Memberships the engine changes one member at a time (etcd's), by
    /// name; empty from an older stdlib.
    #[serde(default)]
    pub memberships: BTreeMap<String, Membership>,
    pub name: String,
    pub nodes: BTreeMap<String, Node>,
    pub phase_order: Vec<String>,
    /// How a node removed without being reached leaves the cluster's API
    /// (none: the cluster runs no Kubernetes, or an older stdlib).
    #[serde(default)]
    pub remove_node: Option<RemoveNode>,
    /// Proxies for the deployer's downloads.
    #[serde(default)]
    pub proxy: Proxy,
    pub schema_version: u32,
    /// The options as the definition set them, for readers of `kdeploy
    /// eval --json`; the engine never reads them (what it needs has a
    /// field of its own), so they are skipped, not kept.
    #[serde(default, skip_serializing)]
    pub settings: serde::de::IgnoredAny,
    /// The binary cache the nodes fetch blobs from (`transfer.cache`).
    #[serde(default)]
    pub transfer_cache: Option<String>,
    /// The phase order when `kubernetes.version` changes (the control
    /// plane before the kubelets); empty from an older stdlib.
    #[serde(default)]
    pub upgrade_phase_order: Vec<String>,
    pub warnings: Vec<String>,
}

/// The command that removes a node from the cluster's API without
/// reaching it (`kubectl delete node`): run under sh on the first node of
/// `on` (the control planes, in order) that the run holds, with
/// `KDEPLOY_NODE_NAME` set to the node's name.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemoveNode {
    pub on: Vec<String>,
    pub run: String,
}

/// `proxy.*`: for http:// URLs, for https:// ones (`None`: the http
/// one), and the hosts reached directly (comma-separated).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Proxy {
    pub http: Option<String>,
    pub https: Option<String>,
    pub no_proxy: Option<String>,
}

/// A membership as the stdlib describes it (`stdlib/membership.nix`): the
/// phase whose step starts or stops a member, the members wanted, and the
/// shell commands that list, add (as a learner), promote and remove
/// members and prepare a joining node. Arguments reach the commands in
/// `KDEPLOY_MEMBER_*` / `KDEPLOY_INITIAL_CLUSTER` environment variables.
/// With backups (`etcd.backup`): how a member prints a snapshot, before
/// which phases' changes one is taken, how many the deployer keeps; the
/// members' own `aside` and `restore` are what `kdeploy restore` runs.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Membership {
    pub add: String,
    /// Moves leadership from a member about to leave to the via member,
    /// if it leads (so no client waits out an election).
    pub handoff: String,
    pub join: String,
    pub list: String,
    /// Wanted members by node name.
    pub members: BTreeMap<String, Member>,
    pub phase: String,
    pub promote: String,
    pub remove: String,
    /// Starts a member whose node is converged already (a restore's
    /// rejoining members; a switch starts members through their steps).
    #[serde(default)]
    pub start: Option<String>,
    /// Prints a snapshot of the member's data on stdout (`None`: backups off).
    #[serde(default)]
    pub snapshot: Option<String>,
    /// The phases whose changes a snapshot comes before.
    #[serde(default)]
    pub snapshot_before: Vec<String>,
    /// How many snapshots the deployer keeps, newest first.
    #[serde(default)]
    pub keep: Option<u32>,
}

/// One wanted member.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub name: String,
    pub peer: String,
    /// Removes the member's data on its node (before a join, after a
    /// join undone).
    pub wipe: String,
    /// Stops the member and renames its data (a restore keeps what it replaces).
    #[serde(default)]
    pub aside: Option<String>,
    /// Makes the snapshot on stdin a cluster of this one member and starts it.
    #[serde(default)]
    pub restore: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub address: String,
    pub phases: Vec<Phase>,
    pub roles: Vec<String>,
    /// How the node's disrupting steps are batched (from an older stdlib
    /// or a hand-written closure: one node at a time).
    #[serde(default)]
    pub rollout: Rollout,
    /// The node's resolved settings: for readers of `kdeploy eval --json`;
    /// the engine reads the cluster's, so they are skipped, not kept.
    #[serde(default, skip_serializing)]
    pub settings: serde::de::IgnoredAny,
    pub ssh: Ssh,
    /// Names the user gave the node, for `--on @TAG`.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// How a non-root login becomes root (`ssh.become`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Become {
    #[default]
    Sudo,
    Doas,
    None,
}

impl Become {
    pub fn as_str(self) -> &'static str {
        match self {
            Become::Sudo => "sudo",
            Become::Doas => "doas",
            Become::None => "none",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Ssh {
    /// How a non-root `user` becomes root: "sudo", "doas" or "none"
    /// (closures written by hand may leave it out: sudo).
    #[serde(rename = "become", default)]
    pub escalation: Become,
    pub jump_host: Option<String>,
    pub key: Option<String>,
    /// null: the user's ~/.ssh/config, else 22.
    pub port: Option<u16>,
    /// null: the user's ~/.ssh/config, else root.
    pub user: Option<String>,
}

/// What a [`Phase`] holds (shared between the nodes that have the same phase).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseContent {
    pub activate: bool,
    pub checks: Vec<Check>,
    pub directories: Vec<Directory>,
    pub files: Vec<File>,
    pub hooks: Vec<Hook>,
    pub name: String,
    /// Seconds the node waits for the deployer to confirm a switch of the
    /// phase before it moves the phase back by itself (`null`: it does
    /// not; closures written by hand may leave it out). Not part of the
    /// phase's hash: it is how the phase is switched, not what it holds.
    #[serde(rename = "selfRollback", default)]
    pub self_rollback: Option<u32>,
    pub units: Vec<Unit>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub group: String,
    pub mode: String,
    pub owner: String,
    pub path: String,
    pub source: Source,
}

/// Exactly one of the six keys (`{ "text": … }`, …).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Inline content.
    Text(Text),
    /// A file of the project, relative to its root.
    File(String),
    /// A file on the deployer, absolute.
    Local(String),
    /// A verified download.
    Artifact(Artifact),
    /// A secret the engine makes or finds on the deployer (never a value).
    Secret(Secret),
    /// The user's own key or token: a file of the project (relative) or
    /// of the deployer (absolute) that travels, is stored and is shown as
    /// a secret — never in the blob store, the binary cache or a diff.
    #[serde(rename = "secretFile")]
    SecretFile(String),
    /// The user's own key or token as a program on the deployer prints it
    /// (`pass show …`, a vault client): its argv, run without a shell,
    /// once per run and only when the run allows it; then as `secretFile`.
    #[serde(rename = "secretCommand")]
    SecretCommand(Vec<String>),
}

impl Source {
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Text(_) => "text",
            Source::File(_) => "file",
            Source::Local(_) => "local",
            Source::Artifact(_) => "artifact",
            Source::Secret(_) => "secret",
            Source::SecretFile(_) => "secretFile",
            Source::SecretCommand(_) => "secretCommand",
        }
    }

    /// Whether its bytes are a secret: sent only over SSH into the node's
    /// private secrets, hashed with the deployer's key, never printed.
    pub fn is_secret(&self) -> bool {
        matches!(self, Source::Secret(_) | Source::SecretFile(_) | Source::SecretCommand(_))
    }

    /// What stands for a secret source in listings and messages (its
    /// name, never its bytes); `None` for other sources.
    pub fn secret_name(&self) -> Option<String> {
        match self {
            Source::Secret(s) => Some(s.name.clone()),
            Source::SecretFile(p) => Some(p.clone()),
            Source::SecretCommand(argv) => Some(command_line(argv)),
            _ => None,
        }
    }
}

/// A `secretCommand`'s argv as messages show it: space-separated, each
/// word with a space or a control character in it quoted.
pub fn command_line(argv: &[String]) -> String {
    let word = |w: &String| {
        if w.is_empty() || w.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\'') {
            format!("{w:?}")
        } else {
            w.clone()
        }
    };
    argv.iter().map(word).collect::<Vec<_>>().join(" ")
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    pub member: Option<String>,
    pub name: String,
    pub sha256: String,
    pub url: String,
}

/// A secret named by the stdlib: `name` is its file in the deployer's secret
/// store (relative, e.g. `lab/etcd/member-n1-key.pem`), `make` says how the
/// engine makes it when it is absent.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct Secret {
    pub make: Make,
    pub name: String,
}

/// How a secret is made. A key pair is one `Ca`/`Cert` make shared by the
/// files of the pair: both name the same `cert` and `key`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Make {
    /// A kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`.
    Token,
    /// `bytes` random bytes as lowercase hex (kubeadm's certificate key: 32).
    Hex { bytes: u32 },
    /// A self-signed CA; `key` stays on the deployer.
    Ca(CaSpec),
    /// A certificate and its key, signed by `ca`.
    Cert(CertSpec),
    /// The pin of `ca`'s public key, `sha256:<hex>` of its SubjectPublicKeyInfo
    /// (kubeadm's `caCertHashes`): public, derived from the CA on the
    /// deployer, so a joining node trusts only the API server of that CA.
    #[serde(rename = "ca-pin")]
    CaPin(CaPinSpec),
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaSpec {
    pub cert: String,
    pub common_name: String,
    pub key: String,
    /// The key may be pushed to nodes (Kubernetes' CA: kubeadm and the
    /// controller-manager sign with it on the control planes). False for
    /// etcd's CA, whose key never leaves the deployer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub key_on_nodes: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct CaPinSpec {
    pub ca: CaSpec,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CertSpec {
    pub ca: CaSpec,
    pub cert: String,
    /// Usable as a TLS client certificate.
    pub client: bool,
    pub common_name: String,
    pub dns_names: Vec<String>,
    pub ip_addresses: Vec<String>,
    pub key: String,
    pub organization: Option<String>,
    /// Usable as a TLS server certificate.
    pub server: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Directory {
    pub group: String,
    pub mode: String,
    pub owner: String,
    pub path: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Unit {
    pub enable: bool,
    pub name: String,
    pub on_change: OnChange,
    pub restart_triggers: Vec<String>,
    pub text: Text,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnChange {
    Restart,
    Reload,
    None,
}

impl OnChange {
    pub fn as_str(self) -> &'static str {
        match self {
            OnChange::Restart => "restart",
            OnChange::Reload => "reload",
            OnChange::None => "none",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    /// The node that runs it instead of this one (Kubespray's
    /// `delegate_to`): a drain runs where the admin credentials are.
    /// Fields are declared in sorted order (the hash encoding promises
    /// sorted keys); an absent field leaves older closures' hashes as
    /// they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegate: Option<String>,
    /// Its work disturbs the cluster (a control plane joining): a step
    /// carrying it goes in its node's rollout batches, not all at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disrupts: bool,
    pub name: String,
    pub run: Text,
    pub unless: Option<String>,
    /// Only during a Kubernetes upgrade (`kubernetes.version` changed):
    /// `kubeadm upgrade`, drain and uncordon.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub upgrade: bool,
    pub when: When,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum When {
    Pre,
    Post,
    /// Only when the phase is reset (`kdeploy reset`, `switch --prune`):
    /// run before its link is removed, with its files and units still in
    /// place; never by a switch.
    Reset,
}

impl When {
    pub fn as_str(self) -> &'static str {
        match self {
            When::Pre => "pre",
            When::Post => "post",
            When::Reset => "reset",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub delay: u32,
    pub name: String,
    pub retries: u32,
    pub run: String,
}
