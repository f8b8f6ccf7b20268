//! `reset`: return nodes to how they were before their first switch.
//! connect (the selected nodes of the definition, at their addresses) →
//! open (node program, lock, `status`) → read what each node runs
//! (`state.rs`: links and live manifests, with the phases' reset hooks) →
//! the pure plan (`plan_reset.rs`) → the executor: per phase, last first,
//! reset hooks, units stopped and disabled, files removed; then the node
//! program forgets kdeploy on each node. The nodes leave the deployer
//! record. A failed reset is not undone: run it again to finish.
//!
//! [`reset_reached`] works over any [`crate::transport::Host`], so tests
//! drive it over `LocalHost` (`tests/local/deploy.rs`).

use std::path::PathBuf;

use futures::future::join_all;

use super::connect::{connect_reporting, lock_owner, SshSettings};
use super::events::Sink;
use super::execute::{self, Cancel, Context, Opened, Outcome, Reached};
use super::plan::{self, NodeWork, Plan};
use super::plan_reset::{self, Scope};
use super::record;
use super::state;
use super::step::Deadlines;
use super::switch::select;
use crate::closure::Closures;
use crate::transport::Host;

#[derive(Debug, Clone, Default)]
pub struct ResetOptions {
    /// The cluster's name (its generation records).
    pub cluster: String,
    /// Node names or roles; empty: every node of the cluster.
    pub on: Vec<String>,
    pub dry_run: bool,
    pub parallel: usize,
    pub ssh: SshSettings,
    /// `.kdeploy` of the project (generation records).
    pub state_dir: PathBuf,
    pub deadlines: Deadlines,
}

/// Reset the selected nodes of `closures`. Returns the outcome and, for
/// `--dry-run`, the plan text.
pub async fn reset(
    closures: &Closures,
    opts: &ResetOptions,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<(Outcome, String), String> {
    let selected = select(closures, &opts.on)?;
    let scope = if selected.len() == closures.cluster.nodes.len() { Scope::Cluster } else { Scope::Nodes };
    anchor_kept(closures, &selected)?;
    let bystanders = bystanders(closures, &selected);
    let targets = opts.ssh.targets_of(closures, &[&selected[..], &bystanders[..]].concat())?;
    let (hosts, unreachable) = connect_reporting(&targets, opts.parallel, sink).await;
    let result = if unreachable {
        Ok((Outcome::Unreachable, String::new()))
    } else {
        let reached: Vec<Reached<'_>> = hosts.iter().map(|h| Reached { host: h, prefix: "" }).collect();
        let order = &closures.cluster.phase_order;
        reset_reached(&reached, &bystanders, order, scope, opts, cancel, sink).await
    };
    join_all(hosts.iter().map(|h| h.close())).await;
    result
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
fn anchor_kept(closures: &Closures, selected: &[String]) -> Result<(), String> {
    let c = &closures.cluster;
    let Some(a) = c.anchor.as_ref().filter(|a| selected.contains(a)) else { return Ok(()) };
    let others: Vec<&String> = c
        .nodes
        .iter()
        .filter(|(n, node)| !selected.contains(n) && node.roles.iter().any(|r| r == "control-plane"))
        .map(|(n, _)| n)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{a} ran `kubeadm init` (the anchor) and {} stay: reset would leave them without it and {a}, switched \
         again, would start a second cluster. Set settings.kubeadm.initNode to one of them, switch, then reset {a}",
        others.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    ))
}

/// A reset of the nodes already reached; `order` is the cluster's phase
/// order (phases are reset in its reverse). The connections stay open.
/// The nodes of `nodes` named in `bystanders` are only held (see
/// [`bystanders`]).
pub async fn reset_reached(
    nodes: &[Reached<'_>],
    bystanders: &[String],
    order: &[String],
    scope: Scope,
    opts: &ResetOptions,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<(Outcome, String), String> {
    let session = match execute::open(nodes, &lock_owner("reset"), sink).await {
        Ok(s) => s,
        Err(s) => {
            s.close().await;
            return Ok((Outcome::Failed, String::new()));
        }
    };
    let result = async {
        let reset = session.nodes.iter().filter(|o| !bystanders.contains(&o.name));
        let mut work = gather(reset, scope).await?;
        let held: Vec<&str> = session.nodes.iter().map(|o| o.name.as_str()).collect();
        if let Some(why) = plan::unheld_delegate(&work, &held) {
            return Err(why);
        }
        // the plan's nodes in the session's order: the bystanders without work
        work.extend(bystanders.iter().map(|n| NodeWork { name: n.clone(), ..Default::default() }));
        work.sort_by_key(|w| session.nodes.iter().position(|o| o.name == w.name));
        let waves = plan::waves(order, &work, &[]);
        let gone: Vec<String> = work.iter().filter(|w| w.reset).map(|w| w.name.clone()).collect();
        let latest = record::latest_of(&opts.state_dir, &opts.cluster);
        let next = record::next_number(&opts.state_dir);
        let record = plan_reset::record_without(latest.as_ref(), &gone, next, record::now());
        let plan = Plan { nodes: work, waves, record };
        execute::announce(&plan, sink);
        if opts.dry_run {
            return Ok((Outcome::Ok, plan::render(&plan)));
        }
        let cx = Context {
            resolver: None,
            cache: None,
            state_dir: &opts.state_dir,
            cancel,
            deadlines: opts.deadlines,
            parallel: opts.parallel,
            uploads: 0,
        };
        Ok((execute::execute(&session, &plan, &cx, sink).await?, String::new()))
    }
    .await;
    session.close().await;
    result
}

/// Read what each opened node runs and plan its reset.
pub async fn gather<'a, 'h: 'a>(
    nodes: impl IntoIterator<Item = &'a Opened<'h>>,
    scope: Scope,
) -> Result<Vec<NodeWork>, String> {
    let nodes: Vec<&Opened<'_>> = nodes.into_iter().collect();
    let states = join_all(nodes.iter().map(|o| state::read_deployed(&o.node, &o.status))).await;
    nodes
        .into_iter()
        .zip(states)
        .map(|(o, st)| Ok(plan_reset::node_work(&o.name, &st.map_err(|e| e.to_string())?, scope)))
        .collect()
}
