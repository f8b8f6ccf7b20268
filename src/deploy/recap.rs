//! The final summary, in the manner of Ansible's PLAY RECAP: per node one
//! of four words — unchanged, changed, failed, unreachable — with the
//! phases applied (and the generate-only phases staged), the units
//! restarted/started/reloaded/stopped, and time per phase. Built only from
//! events ([`Recap`] is a [`Sink`]); printed as text or JSON, either
//! through [`shown`] / [`shown_json`] (errors and drift are nodes' words).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use serde::Serialize;

use super::events::{Event, Sink};
use crate::shown::{shown, shown_json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    #[default]
    Unchanged,
    Changed,
    Failed,
    Unreachable,
    /// Reset: every phase unlinked, kdeploy's state removed.
    Reset,
    /// Deployed, no longer in the definition, left as it is.
    Left,
    /// Removed from the cluster without being reached (`switch --prune`).
    Gone,
}

impl NodeStatus {
    pub fn word(self) -> &'static str {
        match self {
            NodeStatus::Unchanged => "unchanged",
            NodeStatus::Changed => "changed",
            NodeStatus::Failed => "failed",
            NodeStatus::Unreachable => "unreachable",
            NodeStatus::Reset => "reset",
            NodeStatus::Left => "left",
            NodeStatus::Gone => "gone",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Units {
    pub restarted: Vec<String>,
    pub started: Vec<String>,
    pub reloaded: Vec<String>,
    pub stopped: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeRecap {
    pub status: NodeStatus,
    /// Phases switched (activated) on this node, in order.
    pub phases: Vec<String>,
    /// Generate-only phases pushed and staged, not activated.
    pub staged: Vec<String>,
    pub units: Units,
    pub hooks: Vec<String>,
    /// Seconds per phase on this node.
    pub durations: BTreeMap<String, f64>,
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub rolled_back: Vec<String>,
    /// Drift found (and, by `switch`, repaired): "phase: kind what why".
    pub drift: Vec<String>,
    /// Unreachable, and the run went on without it (`--max-unreachable`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RecapData {
    pub cluster: String,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    pub generation: Option<u64>,
    pub dry_run: bool,
    /// Seconds per barrier phase (all nodes), in run order.
    pub phases: Vec<(String, f64)>,
    pub took: f64,
    pub nodes: BTreeMap<String, NodeRecap>,
    pub transfer: Transfer,
}

/// Bytes (and blobs) that moved: from the deployer over SSH, from the
/// deployer into the binary cache, from the cache to the nodes.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transfer {
    pub ssh_blobs: usize,
    pub ssh_bytes: u64,
    /// What `ssh_bytes` took on the wire (less when compressed).
    pub ssh_sent_bytes: u64,
    pub cache_uploaded_blobs: usize,
    pub cache_uploaded_bytes: u64,
    pub cache_fetched_blobs: usize,
    pub cache_fetched_bytes: u64,
    /// From the transfer's start until the last node held its blobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_secs: Option<f64>,
}

impl Transfer {
    /// One line for the text recap; `None` when nothing moved.
    fn line(&self) -> Option<String> {
        let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
        let mut parts = Vec::new();
        if self.ssh_blobs > 0 {
            let wire = super::render::compressed(self.ssh_bytes, self.ssh_sent_bytes);
            parts.push(format!("{}{wire} in {} blob(s) over SSH", mb(self.ssh_bytes), self.ssh_blobs));
        }
        if self.cache_uploaded_blobs > 0 {
            parts.push(format!(
                "{} in {} blob(s) into the cache",
                mb(self.cache_uploaded_bytes),
                self.cache_uploaded_blobs
            ));
        }
        if self.cache_fetched_blobs > 0 {
            parts.push(format!(
                "{} in {} blob(s) fetched by the nodes from the cache",
                mb(self.cache_fetched_bytes),
                self.cache_fetched_blobs
            ));
        }
        let took = self.took_secs.map(|t| format!(" ({t:.2} s)")).unwrap_or_default();
        (!parts.is_empty()).then(|| format!("transfer: {}{took}", parts.join("; ")))
    }
}

/// Collects events into a [`RecapData`].
#[derive(Default)]
pub struct Recap(pub Mutex<RecapData>);

impl Recap {
    pub fn new(cluster: &str, nodes: impl IntoIterator<Item = String>) -> Recap {
        let data = RecapData {
            cluster: cluster.to_string(),
            nodes: nodes.into_iter().map(|n| (n, NodeRecap::default())).collect(),
            ..Default::default()
        };
        Recap(Mutex::new(data))
    }

    pub fn data(&self) -> RecapData {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Sink for Recap {
    fn emit(&self, e: Event) {
        let mut guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let d = &mut *guard;
        fn node<'a>(d: &'a mut RecapData, n: &str) -> &'a mut NodeRecap {
            d.nodes.entry(n.to_string()).or_default()
        }
        match e {
            Event::NodeUnreachable { node: n, reason } => {
                let r = node(d, &n);
                r.status = NodeStatus::Unreachable;
                r.error = Some(reason);
            }
            Event::NodeSkipped { node: n, behind } => {
                let r = node(d, &n);
                r.skipped = true;
                let note = super::events::skipped_note(behind);
                r.error = Some(r.error.take().map_or(note.to_string(), |e| format!("{e}\n{note}")));
            }
            Event::NodeChanged { node: n, stage, .. } => {
                let r = node(d, &n);
                r.staged = stage;
                if r.status == NodeStatus::Unchanged {
                    r.status = NodeStatus::Changed;
                }
            }
            Event::NodePhaseFinished { node: n, phase, took } => {
                let r = node(d, &n);
                r.durations.insert(phase.clone(), took.as_secs_f64());
                r.phases.push(phase);
            }
            Event::UnitAction { node: n, unit, action, .. } => {
                let u = &mut node(d, &n).units;
                match action.as_str() {
                    "restart" => u.restarted.push(unit),
                    "start" => u.started.push(unit),
                    "reload" => u.reloaded.push(unit),
                    "stop" => u.stopped.push(unit),
                    _ => {}
                }
            }
            Event::HookRan { node: n, hook, skipped: false, phase } => {
                node(d, &n).hooks.push(format!("{phase}/{hook}"))
            }
            Event::Failed { node: n, phase, unit, message, .. } => {
                let r = node(d, &n);
                r.status = NodeStatus::Failed;
                let mut m = String::new();
                if let Some(p) = phase {
                    let _ = write!(m, "phase {p}: ");
                }
                if let Some(u) = unit {
                    let _ = write!(m, "unit {u}: ");
                }
                m += &message;
                r.error = Some(m);
            }
            Event::RolledBack { node: n, phase } => node(d, &n).rolled_back.push(phase),
            Event::SelfRolledBack { node: n, rollback } => {
                node(d, &n).rolled_back.push(format!("{}(by-itself)", rollback.phase))
            }
            Event::Committed { node: n, generation } => {
                node(d, &n).generation = Some(generation);
                d.generation = Some(generation);
            }
            Event::PhaseFinished { phase, took } => d.phases.push((phase, took.as_secs_f64())),
            Event::BlobsPushed { count, bytes, sent, fetched, fetched_bytes, .. } => {
                d.transfer.ssh_blobs += count;
                d.transfer.ssh_bytes += bytes;
                d.transfer.ssh_sent_bytes += sent;
                d.transfer.cache_fetched_blobs += fetched;
                d.transfer.cache_fetched_bytes += fetched_bytes;
            }
            Event::Transferred { took, .. } => d.transfer.took_secs = Some(took.as_secs_f64()),
            Event::CacheUploaded { bytes, .. } => {
                d.transfer.cache_uploaded_blobs += 1;
                d.transfer.cache_uploaded_bytes += bytes;
            }
            Event::Interrupted => d.interrupted = true,
            Event::NodeLeft { node: n, address } => {
                let r = node(d, &n);
                r.status = NodeStatus::Left;
                r.error = Some(format!(
                    "not in the definition any more ({address}): left as it is; `kdeploy switch --prune` removes it"
                ));
            }
            Event::NodeReset { node: n, .. } => node(d, &n).status = NodeStatus::Reset,
            Event::NodeGone { node: n, .. } => {
                let r = node(d, &n);
                r.status = NodeStatus::Gone;
                r.error = Some("removed without reaching it; reset by the next switch that reaches it".into());
            }
            Event::Drift { node: n, phase, kind, what, why } => {
                node(d, &n).drift.push(format!("{phase}: {kind} {what} {why}"))
            }
            _ => {}
        }
    }
}

impl RecapData {
    pub fn count(&self, s: NodeStatus) -> usize {
        self.nodes.values().filter(|n| n.status == s).count()
    }

    pub fn text(&self) -> String {
        let mut o = String::new();
        let gen = self.generation.map_or(String::new(), |g| format!(", generation {g}"));
        let dry = if self.dry_run { " (dry run)" } else { "" };
        let _ = writeln!(o, "\nRECAP {}{gen}{dry} — {:.2} s", self.cluster, self.took);
        let w = self.nodes.keys().map(String::len).max().unwrap_or(4);
        for (name, n) in &self.nodes {
            let _ = write!(o, "{name:<w$} : {:<11}", n.status.word());
            if !n.phases.is_empty() {
                let _ = write!(o, " phases={}", n.phases.join(","));
            }
            if !n.staged.is_empty() {
                let _ = write!(o, " staged={}", n.staged.join(","));
            }
            for (k, v) in [
                ("restarted", &n.units.restarted),
                ("started", &n.units.started),
                ("reloaded", &n.units.reloaded),
                ("stopped", &n.units.stopped),
            ] {
                if !v.is_empty() {
                    let _ = write!(o, " {k}={}", v.join(","));
                }
            }
            if !n.rolled_back.is_empty() {
                let _ = write!(o, " rolled-back={}", n.rolled_back.join(","));
            }
            let _ = writeln!(o);
            for d in &n.drift {
                let _ = writeln!(o, "{:w$}     drift: {d}", "");
            }
            if let Some(e) = &n.error {
                for l in e.lines() {
                    let _ = writeln!(o, "{:w$}     {l}", "");
                }
            }
        }
        if self.interrupted {
            let _ = writeln!(o, "interrupted by Ctrl-C: nodes touched by this run were put back");
        }
        if !self.phases.is_empty() {
            let times: Vec<String> = self.phases.iter().map(|(p, t)| format!("{p} {t:.2} s")).collect();
            let _ = writeln!(o, "phase times: {}", times.join(", "));
        }
        if let Some(l) = self.transfer.line() {
            let _ = writeln!(o, "{l}");
        }
        shown(&o).into_owned()
    }

    pub fn json(&self) -> String {
        let phases: serde_json::Map<String, serde_json::Value> =
            self.phases.iter().map(|(p, t)| (p.clone(), serde_json::json!(t))).collect();
        let v = serde_json::json!({
            "cluster": self.cluster,
            "generation": self.generation,
            "dryRun": self.dry_run,
            "interrupted": self.interrupted,
            "took": self.took,
            "phases": phases,
            "phaseOrder": self.phases.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
            "counts": {
                "unchanged": self.count(NodeStatus::Unchanged),
                "changed": self.count(NodeStatus::Changed),
                "failed": self.count(NodeStatus::Failed),
                "unreachable": self.count(NodeStatus::Unreachable),
                "reset": self.count(NodeStatus::Reset),
                "left": self.count(NodeStatus::Left),
                "gone": self.count(NodeStatus::Gone),
            },
            "nodes": self.nodes,
            "transfer": self.transfer,
        });
        shown_json(&serde_json::to_string_pretty(&v).expect("recap serialises")).into_owned()
    }
}
