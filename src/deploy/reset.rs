//! `reset`: return nodes to how they were before their first switch.
//! connect (the selected nodes of the definition, at their addresses) →
//! open (node program, lock, `status`) → read what each node runs
//! (`state.rs`: links and live manifests, with the phases' reset hooks) →
//! the pure plan (`plan_reset.rs`) → the executor: per phase, last first,
//! reset hooks, units stopped and disabled, files removed; then the node
//! program forgets kdeploy on each node. The nodes leave the deployer
//! record. A failed reset is not undone: run it again to finish.
//!
//! [`Reset`] is the operation the spine (`operation.rs`) runs; tests drive
//! it with [`reset_reached`] over `LocalHost` (`tests/local/reset.rs`).

use futures::future::join_all;

use super::connect::SshSettings;
use super::error::Error;
use super::events::Sink;
use super::execute::{Cancel, Opened, Reached, Session};
use super::operation::{self, Operation, Report, RunOptions};
use super::plan::{self, NodeWork, Plan};
use super::plan_reset::{self, Scope};
use super::record::{self, Records};
use super::select;
use super::state;
use crate::closure::Closures;
use crate::transport::NodeTarget;

#[derive(Debug, Clone, Default)]
pub struct ResetOptions {
    /// The cluster's name (its generation records).
    pub cluster: String,
    /// Node names or roles; empty: every node of the cluster.
    pub on: Vec<String>,
    pub run: RunOptions,
}

/// A reset: the operation the spine runs.
pub struct Reset<'a> {
    pub opts: &'a ResetOptions,
    /// The cluster's phase order (phases are reset in its reverse).
    pub order: &'a [String],
    /// Nodes held but not reset (see [`bystanders`]).
    pub bystanders: Vec<String>,
    pub scope: Scope,
    /// The nodes to reach: those to reset, then the bystanders.
    pub targets: Vec<NodeTarget>,
}

impl Operation for Reset<'_> {
    const NAME: &'static str = "reset";

    fn targets(&self, _: &Records, _: &SshSettings, _: &dyn Sink) -> Result<Vec<NodeTarget>, Error> {
        Ok(self.targets.clone())
    }

    async fn plan(&self, records: &Records, session: &Session<'_>, _: &dyn Sink) -> Result<Plan, Error> {
        let reset = session.nodes.iter().filter(|o| !self.bystanders.contains(&o.name));
        let mut work = gather(reset, self.scope).await?;
        let held: Vec<&str> = session.nodes.iter().map(|o| o.name.as_str()).collect();
        plan::unheld_delegate(&work, &held)?;
        // the bystanders without work
        work.extend(self.bystanders.iter().map(|n| NodeWork { name: n.clone(), ..Default::default() }));
        session.sort_like(&mut work);
        let waves = plan::waves(self.order, &work, &[]);
        let gone: Vec<String> = work.iter().filter(|w| w.resets()).map(|w| w.name.clone()).collect();
        let latest = records.latest_of(&self.opts.cluster);
        let record = plan_reset::record_without(latest, &gone, records.next_number(), record::now());
        Ok(Plan { nodes: work, waves, record, snapshots: Vec::new(), removals: Vec::new() })
    }
}

/// Reset the selected nodes of `closures`. Returns the outcome and, for
/// `--dry-run`, the plan text.
pub async fn reset(closures: &Closures, opts: &ResetOptions, cancel: Cancel, sink: &dyn Sink) -> Result<Report, Error> {
    let op = prepare(closures, opts)?;
    operation::run(&op, &opts.run, cancel, sink).await
}

/// The reset of the selected nodes, or why it is refused.
fn prepare<'a>(closures: &'a Closures, opts: &'a ResetOptions) -> Result<Reset<'a>, Error> {
    let selected = select::in_cluster(closures, &opts.on)?;
    let scope = if selected.len() == closures.cluster.nodes.len() { Scope::Cluster } else { Scope::Nodes };
    anchor_kept(closures, &selected)?;
    let bystanders = bystanders(closures, &selected);
    let targets = opts.run.ssh.targets_of(closures, &[&selected[..], &bystanders[..]].concat())?;
    Ok(Reset { opts, order: &closures.cluster.phase_order, bystanders, scope, targets })
}

/// The nodes a partial reset holds without resetting them: the anchor,
/// where reset hooks delegated to it run (a worker's drain and the
/// deletion of its Node object need the admin credentials only it has).
/// Locked, so no switch changes it meanwhile; nothing on it changes.
fn bystanders(closures: &Closures, selected: &[String]) -> Vec<String> {
    let anchor = closures.cluster.anchor.as_ref().filter(|a| !selected.contains(a));
    anchor.filter(|_| !selected.is_empty()).cloned().into_iter().collect()
}

/// Refuse to reset the anchor (the control plane that ran `kubeadm init`)
/// while other control planes stay: switched again, it would init a
/// second cluster beside theirs.
fn anchor_kept(closures: &Closures, selected: &[String]) -> Result<(), Error> {
    let c = &closures.cluster;
    let Some(a) = c.anchor.as_ref().filter(|a| selected.contains(a)) else { return Ok(()) };
    let staying: Vec<String> =
        c.anchor_candidates.iter().filter(|n| !selected.contains(n) && *n != a).cloned().collect();
    if staying.is_empty() {
        return Ok(());
    }
    Err(Error::AnchorReset { anchor: a.clone(), staying })
}

/// A reset of the nodes already reached (see [`Reset`]). The connections
/// stay open.
pub async fn reset_reached(
    op: &Reset<'_>,
    nodes: &[Reached<'_>],
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    operation::run_reached(op, &op.opts.run, nodes, cancel, sink).await
}

/// Read what each opened node runs and plan its reset.
pub async fn gather<'a, 'h: 'a>(
    nodes: impl IntoIterator<Item = &'a Opened<'h>>,
    scope: Scope,
) -> Result<Vec<NodeWork>, Error> {
    let nodes: Vec<&Opened<'_>> = nodes.into_iter().collect();
    let states = join_all(nodes.iter().map(|o| state::read_deployed(&o.node, &o.status))).await;
    nodes.into_iter().zip(states).map(|(o, st)| Ok(plan_reset::node_work(&o.name, &st?, scope))).collect()
}
