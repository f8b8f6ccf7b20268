//! `switch`: converge the selected nodes onto their closures.
//!
//! connect (parallel, bounded; host keys verified) → open every node
//! (node program, lock, `status`) → committed hash equal and no run
//! pending: unchanged → read the changed nodes' state (`state.rs`) →
//! the pure plan (`plan_switch.rs`) → the executor (`execute.rs`) pushes,
//! stages, activates phase by phase with barriers, undoes on failure,
//! commits and records. Any locked node, or any unreachable one beyond
//! `--max-unreachable` or that the plan needs (`partial.rs`): stop before
//! changing anything.
//!
//! [`Switch`] is the operation the spine (`operation.rs`) runs; tests
//! drive it with [`switch_reached`] over `LocalHost` on directories
//! (`tests/local/deploy.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::join_all;

use super::anchor;
use super::connect::SshSettings;
use super::diff;
use super::error::{BlobError, Error, MembershipError, NeedsUnreachable, UpgradeRefused};
use super::events::{Event, Sink};
pub use super::execute::{Cancel, Outcome, Reached};
use super::execute::{Opened, Session};
use super::manifest::phase_manifest;
use super::member_step;
use super::membership::{self, MembershipPlan};
use super::operation::{self, Operation, Report, RunOptions};
use super::partial;
use super::plan::{self, Ending, NodeWork, Plan, Removal};
use super::plan_reset::Scope;
use super::plan_switch::{self as planner, Deployed, PhaseInput};
use super::prune;
use super::record::{self, Generation, NodeRecord, Records};
use super::reset;
use super::select;
use super::snapshot;
use super::state;
use super::upgrade::{self, Upgrade};
use crate::closure::{Closures, Source};
use crate::node::Manifest;
use crate::store::cache::BinaryCache;
use crate::store::{ContentId, Digest, Resolver};
use crate::transport::NodeTarget;

#[derive(Debug, Clone, Default)]
pub struct SwitchOptions {
    /// Node names or roles; empty: every node.
    pub on: Vec<String>,
    pub run: RunOptions,
    /// Reset the nodes the latest record lists but the definition no
    /// longer names (without it they are named and left as they are).
    pub prune: bool,
    /// A dry run shows the changed files' diffs coloured (a terminal).
    pub color: bool,
    /// The binary cache the nodes fetch blobs from (`transfer.cache`).
    pub cache: Option<Arc<BinaryCache>>,
    /// At most this many selected nodes may be unreachable: the run goes
    /// on without them unless the plan needs them (`partial.rs`). 0: any
    /// unreachable node stops the run with nothing changed.
    pub max_unreachable: usize,
    /// Change etcd or the control planes without the snapshot taken
    /// before (`snapshot.rs`): for a cluster whose members cannot give one.
    pub no_snapshot: bool,
}

fn blob_digest(resolver: &Resolver, source: &Source, cid: &ContentId) -> Result<Digest, BlobError> {
    match cid {
        ContentId::Blob { digest, .. } => Ok(*digest),
        ContentId::Artifact { .. } => Ok(resolver.store_source(source)?),
        ContentId::Secret { keyed: Some(k), .. } => Ok(*k),
        ContentId::Secret { name, keyed: None } => Err(BlobError::SecretNotMade { name: name.clone() }),
    }
}

/// A node's manifests (one per phase), the source of each blob they name,
/// and the files left out (see [`node_manifests`]).
type NodeManifests = (Vec<Manifest>, BTreeMap<Digest, Source>, Vec<String>);

/// New manifests for every phase of a node, the source of every blob, and
/// the files left out of generate-only phases because their artifact is
/// not in the store (such a phase is never activated: its downloads are
/// not fetched, and staging it without them beats refusing the switch).
fn node_manifests(closures: &Closures, name: &str, resolver: &Resolver) -> Result<NodeManifests, BlobError> {
    let node = &closures.cluster.nodes[name];
    let nc = &closures.nodes[name];
    let mut sources = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut manifests = Vec::new();
    for (p, pc) in node.phases.iter().zip(&nc.phases) {
        let mut phase = p.clone();
        let mut blobs = Vec::new();
        phase.files.clear();
        for (f, cid) in p.files.iter().zip(&pc.files) {
            // a generate-only phase never sends for a download
            if let (false, Source::Artifact(a)) = (p.activate, &f.source) {
                if !resolver.has_artifact(a) {
                    skipped.push(format!("{} {}: artifact {} not fetched", p.name, f.path, a.name));
                    continue;
                }
            }
            match blob_digest(resolver, &f.source, cid) {
                Ok(d) => {
                    sources.insert(d, f.source.clone());
                    blobs.push(d);
                    phase.files.push(f.clone());
                }
                Err(e) if !p.activate => skipped.push(format!("{} {}: {e}", p.name, f.path)),
                Err(e) => return Err(e),
            }
        }
        for (u, d) in p.units.iter().zip(&pc.units) {
            sources.insert(*d, Source::Text(u.text.clone()));
        }
        manifests.push(phase_manifest(&phase, pc, &blobs));
    }
    Ok((manifests, sources, skipped))
}

/// A switch of `closures`: the operation the spine runs.
pub struct Switch<'a> {
    pub closures: &'a Closures,
    pub resolver: &'a Resolver,
    pub opts: &'a SwitchOptions,
}

impl Operation for Switch<'_> {
    const NAME: &'static str = "switch";

    fn targets(&self, records: &Records, ssh: &SshSettings, sink: &dyn Sink) -> Result<Vec<NodeTarget>, Error> {
        let closures = self.closures;
        let selected = select::in_cluster(closures, &self.opts.on)?;
        anchor_check(closures, records)?;
        if let Some(u) = upgrade_of(closures, records)? {
            upgrade::whole(&u, selected.len(), closures.cluster.nodes.len())?;
            sink.emit(Event::Upgrading { from: u.from.to_string(), to: u.to.to_string() });
        }
        let targets = ssh.targets_of(closures, &selected)?;
        Ok([targets, prune::targets(closures, records, self.opts.prune, ssh)?].concat())
    }

    fn gone(&self, unreachable: &[String], records: &Records) -> Vec<String> {
        prune::unreached_gone(self.closures, records, self.opts.prune, unreachable)
    }

    fn without(&self, unreachable: &[String], records: &Records) -> Result<bool, Error> {
        if unreachable.len() > self.opts.max_unreachable {
            return Ok(false);
        }
        partial::before_plan(upgrade_of(self.closures, records)?.as_ref(), unreachable)?;
        Ok(true)
    }

    async fn plan(&self, records: &Records, session: &Session<'_>, sink: &dyn Sink) -> Result<Plan, Error> {
        let plan = gather_and_plan(self, records, session, sink).await?;
        if !self.opts.prune {
            prune::name_left(self.closures, records, sink);
        }
        for node in &session.skipped {
            sink.emit(Event::NodeSkipped { node: node.clone(), behind: behind(self.closures, records, node) });
        }
        Ok(plan)
    }

    async fn dry_run_text(&self, plan: &Plan, session: &Session<'_>) -> Result<String, Error> {
        let diffs = dry_run_diffs(self.closures, self.resolver, self.opts.color, session, plan).await?;
        Ok(plan::render_with(plan, &diffs))
    }

    fn blobs(&self) -> (Option<&Resolver>, Option<Arc<BinaryCache>>) {
        (Some(self.resolver), self.opts.cache.clone())
    }
}

/// Run a switch: connect, then as [`switch_reached`].
pub async fn switch(
    closures: &Closures,
    resolver: &Resolver,
    opts: &SwitchOptions,
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    operation::run(&Switch { closures, resolver, opts }, &opts.run, cancel, sink).await
}

/// A switch on the nodes already reached (each a node of `closures`, by
/// its host's name, or, with `opts.prune`, a node the latest record lists
/// that `closures` does not: it is reset). The connections stay open.
pub async fn switch_reached(
    closures: &Closures,
    resolver: &Resolver,
    opts: &SwitchOptions,
    nodes: &[Reached<'_>],
    cancel: Cancel,
    sink: &dyn Sink,
) -> Result<Report, Error> {
    operation::run_reached(&Switch { closures, resolver, opts }, &opts.run, nodes, cancel, sink).await
}

/// What the plan changes inside files, for the nodes of the definition
/// that change.
async fn dry_run_diffs(
    closures: &Closures,
    resolver: &Resolver,
    color: bool,
    session: &Session<'_>,
    plan: &Plan,
) -> Result<plan::Diffs, Error> {
    let mut sources = BTreeMap::new();
    let mut nodes = Vec::new();
    for o in &session.nodes {
        let changed = plan.nodes.iter().any(|n| n.name == o.name && !n.steps.is_empty());
        if changed && closures.cluster.nodes.contains_key(&o.name) {
            sources.insert(o.name.clone(), node_manifests(closures, &o.name, resolver)?.1);
            nodes.push((o.name.as_str(), &o.node));
        }
    }
    Ok(diff::collect(plan, &nodes, &sources, resolver, color).await)
}

/// Read what the changed nodes run, then plan every node: those of the
/// definition, and the nodes to prune (reset). The plan's nodes are in
/// the session's order.
async fn gather_and_plan(
    op: &Switch<'_>,
    records: &Records,
    session: &Session<'_>,
    sink: &dyn Sink,
) -> Result<Plan, Error> {
    let (closures, resolver, opts) = (op.closures, op.resolver, op.opts);
    let all = &session.nodes;
    let (nodes, pruned): (Vec<&Opened<'_>>, Vec<&Opened<'_>>) =
        all.iter().partition(|o| closures.cluster.nodes.contains_key(&o.name));
    if let Some(o) = pruned.iter().find(|o| !opts.prune && !prune::was_gone(closures, records, &o.name)) {
        return Err(Error::NotInCluster { node: o.name.clone(), cluster: closures.cluster.name.clone() });
    }
    for o in &nodes {
        for d in &o.status.drift {
            sink.emit(Event::Drift {
                node: o.name.clone(),
                phase: d.phase.clone(),
                kind: d.kind.clone(),
                what: d.what.clone(),
                why: d.why.clone(),
            });
        }
    }
    let changed: Vec<&Opened<'_>> =
        nodes.iter().copied().filter(|o| !planner::node_unchanged(&closures.nodes[&o.name].hash, &o.status)).collect();
    let states = join_all(changed.iter().map(|o| state::read_deployed(&o.node, &o.status))).await;
    let mut deployed: BTreeMap<&str, Deployed> = BTreeMap::new();
    for (o, st) in changed.iter().zip(states) {
        deployed.insert(&o.name, st?);
    }
    let upgrading = upgrade_of(closures, records)?.is_some() && !closures.cluster.upgrade_phase_order.is_empty();
    // one generation number for the run, free on every changed node
    let gen = changed.iter().map(|o| o.status.next).chain([records.next_number()]).max().unwrap_or(1);
    let mut work = Vec::new();
    for o in &nodes {
        let Some(dep) = deployed.get(o.name.as_str()) else {
            work.push(NodeWork { name: o.name.clone(), ..Default::default() });
            continue;
        };
        let (manifests, sources, skipped) = node_manifests(closures, &o.name, resolver)?;
        for s in skipped {
            sink.emit(Event::Warning {
                node: o.name.clone(),
                message: format!("not staged (generate-only phase): {s}"),
            });
        }
        let node = &closures.cluster.nodes[&o.name];
        let nc = &closures.nodes[&o.name];
        let inputs: Vec<PhaseInput<'_>> = node
            .phases
            .iter()
            .zip(&nc.phases)
            .zip(&manifests)
            .map(|((p, pc), m)| PhaseInput { name: &p.name, hash: pc.hash, activate: p.activate, manifest: m })
            .collect();
        let node_plan = planner::plan_node(&inputs, dep);
        let target = planner::Target { phases: &node.phases, manifests: &manifests, generation: gen, hash: nc.hash };
        let mut w = planner::node_work(&o.name, &node_plan, target, dep, sources);
        w.rollout = Some(node.rollout);
        w.leads = closures.cluster.anchor.as_deref() == Some(o.name.as_str());
        upgrade::keep_hooks(&mut w.steps, upgrading);
        // Nothing to stage and every step re-activates a phase at the
        // generation the committed record names (drift repaired, a phase
        // cut off half-way), with the committed hash already the new one:
        // the committed generation stands, so commit it again rather than
        // a new number nothing was staged into.
        let same_hash = o.status.current.as_ref().is_some_and(|(_, h)| *h == nc.hash);
        let relinks_only = w.stage.is_empty()
            && same_hash
            && w.steps.iter().all(|s| s.to.is_some() && dep.recorded.get(&s.phase).map(|r| r.generation) == s.to);
        if (w.steps.is_empty() && w.stage.is_empty()) || relinks_only {
            // links already right (a run cut off after its last step), or
            // only re-activated: only the commit is missing
            if let Ending::Commit(c) = &mut w.ending {
                c.generation = o.status.current.as_ref().map_or(gen, |(g, _)| *g);
                c.record = None;
            }
        }
        work.push(w);
    }
    let held: Vec<&str> = all.iter().map(|o| o.name.as_str()).collect();
    partial::delegate(&work, &session.skipped)?;
    plan::unheld_delegate(&work, &held)?;
    let order = if upgrading { &closures.cluster.upgrade_phase_order } else { &closures.cluster.phase_order };
    work.extend(reset::gather(pruned.iter().copied(), Scope::Pruned).await?);
    session.sort_like(&mut work);
    let memberships = gather_memberships(closures, records, session, &deployed, &work, opts).await?;
    let waves = plan::waves(order, &work, &memberships);
    let record = deployer_record(closures, records, &opts.run.ssh, &nodes, &work, &session.gone);
    let snapshots =
        if opts.no_snapshot { Vec::new() } else { snapshots_before(closures, session, &deployed, &work, &memberships) };
    let removals = removals(closures, session)?;
    let plan = Plan { nodes: work, waves, record, snapshots, removals };
    let anchor = closures.cluster.anchor.as_deref();
    partial::needed(&plan, &members(closures, records), anchor, &session.skipped)?;
    Ok(plan)
}

/// What removes each node gone without being reached from the cluster's
/// API: the definition's `removeNode` on the first of its nodes the run
/// holds. Refused when the cluster has such a command and none of them
/// answers.
fn removals(closures: &Closures, session: &Session<'_>) -> Result<Vec<Removal>, Error> {
    let Some(rm) = &closures.cluster.remove_node else {
        return Ok(session.gone.iter().map(|n| Removal { node: n.clone(), via: None, run: None }).collect());
    };
    let via = rm.on.iter().find(|n| session.get(n).is_some());
    session
        .gone
        .iter()
        .map(|n| match via {
            Some(v) => Ok(Removal { node: n.clone(), via: Some(v.clone()), run: Some(rm.run.clone()) }),
            None => Err(NeedsUnreachable::RemoveNode { node: n.clone(), on: rm.on.clone() }.into()),
        })
        .collect()
}

/// Every membership of the definition, with the nodes that run a member
/// of it: those it wants, and those the latest record made members.
fn members<'c>(closures: &'c Closures, records: &'c Records) -> Vec<partial::Members<'c>> {
    let recorded = records.latest_of(&closures.cluster.name).and_then(|g| g.members.as_ref());
    let memberships = &closures.cluster.memberships;
    memberships
        .iter()
        .map(|(name, spec)| {
            let mut nodes: BTreeSet<&str> = spec.members.keys().map(String::as_str).collect();
            nodes.extend(recorded.and_then(|r| r.get(name)).into_iter().flatten().map(String::as_str));
            partial::Members { name, phase: &spec.phase, nodes }
        })
        .collect()
}

/// Whether a node this run skips has a change waiting for it: its
/// closure is not the one the latest record has it on (or it is to be
/// pruned, so not in the definition).
fn behind(closures: &Closures, records: &Records, node: &str) -> bool {
    let recorded = records.latest_of(&closures.cluster.name).and_then(|g| g.nodes.get(node));
    closures.nodes.get(node).zip(recorded).is_none_or(|(c, r)| c.hash.hex() != r.hash)
}

/// The membership changes of this run. Only when some node has a step in
/// a membership's phase: the first node that answers lists the members
/// (wanted members asked first). When none answers, the members start as
/// a new cluster, as on a first switch, or come back as they were when
/// exactly the wanted nodes ran members at their last commit; when other
/// nodes did, kdeploy cannot tell who is in, and stops before touching
/// anything. A node leaving a membership that the list does not show,
/// while its own member answers as one of the same cluster, stops it too
/// ([`member_step::refuse_unlisted_leavers`]).
async fn gather_memberships(
    closures: &Closures,
    records: &Records,
    session: &Session<'_>,
    deployed: &BTreeMap<&str, Deployed>,
    work: &[NodeWork],
    opts: &SwitchOptions,
) -> Result<Vec<MembershipPlan>, Error> {
    let mut plans = Vec::new();
    let all = &session.nodes;
    let nodes: Vec<&Opened<'_>> = all.iter().filter(|o| closures.cluster.nodes.contains_key(&o.name)).collect();
    let addresses: BTreeMap<String, String> =
        closures.cluster.nodes.iter().map(|(n, node)| (n.clone(), node.address.clone())).collect();
    let recorded = records.latest_of(&closures.cluster.name);
    let address_of =
        |n: &str| addresses.get(n).or_else(|| Some(&recorded?.nodes.get(n)?.address)).map_or("", String::as_str);
    let held: Vec<&str> = nodes.iter().map(|o| o.name.as_str()).collect();
    let left = if opts.prune { Default::default() } else { prune::left_addresses(closures, records) };
    let gone_at: BTreeSet<&str> = session
        .gone
        .iter()
        .filter_map(|n| recorded.and_then(|g| g.nodes.get(n).or_else(|| g.gone.get(n))))
        .map(|r| r.address.as_str())
        .collect();
    for (name, spec) in &closures.cluster.memberships {
        // (a node removed without being reached may have run a member)
        if !work.iter().any(|w| w.steps.iter().any(|s| s.phase == spec.phase)) && session.gone.is_empty() {
            continue;
        }
        let mut asked: Vec<&Opened<'_>> =
            nodes.iter().copied().filter(|o| spec.members.contains_key(&o.name)).collect();
        asked.extend(nodes.iter().copied().filter(|o| !spec.members.contains_key(&o.name)));
        let mut listed = None;
        let mut unanswered = Vec::new();
        for o in asked {
            match member_step::read_list(&o.node, &spec.list, &opts.run.deadlines).await {
                Ok(l) => {
                    listed = Some(l);
                    break;
                }
                Err(e) => {
                    let why = e.to_string().lines().last().unwrap_or("failed").to_string();
                    unanswered.push((o.name.clone(), why));
                }
            }
        }
        let listed = match listed {
            Some(l) if !l.is_empty() => l,
            _ => {
                let mut ran: Vec<&str> = nodes
                    .iter()
                    .filter(|o| match deployed.get(o.name.as_str()) {
                        Some(d) => ran_member(d, &spec.phase),
                        None => spec.members.contains_key(&o.name),
                    })
                    .map(|o| o.name.as_str())
                    .collect();
                ran.sort_unstable();
                // Nobody ran a member (a first switch), or exactly the
                // wanted members did (all down; their steps bring them
                // back): no membership to change.
                let wanted: Vec<&str> = spec.members.keys().map(String::as_str).collect();
                if !ran.is_empty() && ran != wanted {
                    return Err(MembershipError::Unknown {
                        membership: name.clone(),
                        unanswered,
                        ran: ran.into_iter().map(str::to_string).collect(),
                    }
                    .into());
                }
                continue;
            }
        };
        let leaving: Vec<(&str, &crate::node::Node<'_>, &str)> = work
            .iter()
            .filter(|w| !spec.members.contains_key(&w.name) && stops_member(w, &spec.phase))
            .filter_map(|w| session.get(&w.name))
            .map(|o| (o.name.as_str(), &o.node, address_of(&o.name)))
            .collect();
        member_step::refuse_unlisted_leavers(name, spec, &leaving, &listed, &opts.run.deadlines).await?;
        let Some(mut plan) = membership::plan(name, spec, &listed, &addresses, &held)? else { continue };
        mark_down(&mut plan, &gone_at);
        // a node left out of the definition keeps its member until pruned;
        // a pruned one leaves like any member (hand-off, remove), before
        // its reset stops etcd
        plan.changes.retain(|c| match c {
            membership::Change::Leave { member, .. } => !left.contains(membership::url_host(&member.peer)),
            membership::Change::Join { .. } => true,
        });
        if !plan.changes.is_empty() {
            plans.push(plan);
        }
    }
    Ok(plans)
}

/// The members at the addresses of nodes gone without being reached are
/// down: each leaves first (see [`membership::Change::Leave`]).
fn mark_down(plan: &mut MembershipPlan, gone_at: &BTreeSet<&str>) {
    for c in &mut plan.changes {
        if let membership::Change::Leave { member, down, .. } = c {
            *down = gone_at.contains(membership::url_host(&member.peer));
        }
    }
    plan.changes.sort_by_key(|c| !matches!(c, membership::Change::Leave { down: true, .. }));
}

/// The snapshots this run takes before its first change: per membership
/// with backups on that the run changes (`snapshot::needed`), from the
/// held nodes that run a member — a node the run changes when its last
/// commit had the membership's phase and it is wanted as a member or ran
/// one, an unchanged node when the definition wants it as one — wanted
/// members first.
fn snapshots_before(
    closures: &Closures,
    session: &Session<'_>,
    deployed: &BTreeMap<&str, Deployed>,
    work: &[NodeWork],
    memberships: &[MembershipPlan],
) -> Vec<snapshot::SnapshotPlan> {
    let changing: BTreeSet<&str> = work.iter().flat_map(|w| w.steps.iter().map(|s| s.phase.as_str())).collect();
    let mut out = Vec::new();
    for (name, spec) in &closures.cluster.memberships {
        let wanted = |n: &str| spec.members.contains_key(n);
        let runs = |n: &str| match deployed.get(n) {
            Some(d) => {
                d.committed.is_some()
                    && d.recorded.contains_key(&spec.phase)
                    && (wanted(n) || ran_member(d, &spec.phase))
            }
            None => wanted(n),
        };
        let mut running: Vec<&str> = session.nodes.iter().map(|o| o.name.as_str()).filter(|n| runs(n)).collect();
        running.sort_by_key(|n| !spec.members.contains_key(*n));
        let running = running.into_iter().map(str::to_string).collect();
        let members_change = memberships.iter().any(|m| &m.name == name);
        out.extend(snapshot::needed(name, spec, &changing, members_change, running));
    }
    out
}

/// Does this node's work stop the member it ran in `phase` (the phase's
/// link now names units — etcd's — and the step takes them away)?
fn stops_member(w: &NodeWork, phase: &str) -> bool {
    let units = |m: &Option<Manifest>| m.as_ref().is_some_and(|m| !m.units.is_empty());
    w.steps.iter().any(|s| s.phase == phase && units(&s.from_manifest) && !units(&s.to_manifest))
}

/// Did this node run a member of the membership in `phase` at its last
/// commit (the phase committed, and its live manifest names units)?
fn ran_member(d: &Deployed, phase: &str) -> bool {
    d.committed.is_some()
        && d.recorded.contains_key(phase)
        && d.manifests.get(phase).is_some_and(|m| !m.units.is_empty())
}

/// The deployer generation to record after the run, or `None` when the
/// history already says where every node is (a no-op run).
fn deployer_record(
    closures: &Closures,
    history: &Records,
    ssh: &SshSettings,
    nodes: &[&Opened<'_>],
    work: &[NodeWork],
    unreached: &[String],
) -> Option<Generation> {
    let latest = history.latest_of(&closures.cluster.name);
    let mut records = latest.map(|g| g.nodes.clone()).unwrap_or_default();
    for o in nodes {
        let Some(w) = work.iter().find(|w| w.name == o.name) else { continue };
        let n = &closures.cluster.nodes[&o.name];
        let generation = match w.commit() {
            Some(c) => c.generation,
            None => o.status.current.as_ref().map_or(0, |c| c.0),
        };
        records.insert(
            o.name.clone(),
            NodeRecord {
                address: n.address.clone(),
                user: n.ssh.user.clone(),
                port: n.ssh.port,
                escalation: Some(n.ssh.escalation),
                key: ssh.key.as_ref().map(|k| k.display().to_string()).or_else(|| n.ssh.key.clone()),
                jump_host: ssh.jump_host.as_ref().map(|j| j.to_string()).or_else(|| n.ssh.jump_host.clone()),
                roles: n.roles.clone(),
                tags: n.tags.clone(),
                generation,
                hash: closures.nodes[&o.name].hash.hex(),
                rollout: Some(n.rollout),
            },
        );
    }
    // nodes left out of the definition stay recorded until pruned; those
    // removed without being reached move to `gone` until one is reset
    let pruned: Vec<&str> = work.iter().filter(|w| w.resets()).map(|w| w.name.as_str()).collect();
    let same_cluster = latest.is_some_and(|g| g.cluster == closures.cluster.name);
    let mut gone = latest.filter(|_| same_cluster).map(|g| g.gone.clone()).unwrap_or_default();
    for n in unreached {
        if let Some(r) = records.remove(n) {
            gone.insert(n.clone(), r);
        }
    }
    gone.retain(|n, _| !pruned.contains(&n.as_str()) && !closures.cluster.nodes.contains_key(n));
    records.retain(|n, _| closures.cluster.nodes.contains_key(n) || (same_cluster && !pruned.contains(&n.as_str())));
    let same = latest.is_some_and(|g| {
        g.cluster == closures.cluster.name
            && nodes.iter().all(|o| {
                g.nodes
                    .get(&o.name)
                    .zip(records.get(&o.name))
                    .is_some_and(|(a, b)| a.generation == b.generation && a.hash == b.hash)
            })
    });
    let gone_same = latest.is_some_and(|g| g.gone.keys().eq(gone.keys()));
    if same && gone_same && work.iter().all(NodeWork::unchanged) {
        return None;
    }
    Some(Generation {
        number: history.next_number(),
        cluster: closures.cluster.name.clone(),
        time: record::now(),
        phase_order: closures.cluster.phase_order.clone(),
        rollback_of: None,
        kubernetes_version: kubernetes_version(closures).map(str::to_string),
        members: Some(
            closures
                .cluster
                .memberships
                .iter()
                .map(|(n, m)| (n.clone(), m.members.keys().cloned().collect()))
                .collect(),
        ),
        anchor: closures.cluster.anchor.clone(),
        nodes: records,
        gone,
    })
}

/// Refuse a switch that would move the anchor implicitly (`anchor.rs`).
fn anchor_check(closures: &Closures, records: &Records) -> Result<(), Error> {
    let c = &closures.cluster;
    let latest = records.latest_of(&c.name);
    let recorded = latest.and_then(|g| g.anchor.as_deref());
    let still = recorded.is_some_and(|a| c.anchor_candidates.iter().any(|n| n == a));
    let deployed = c.anchor.as_ref().is_some_and(|b| latest.is_some_and(|g| g.nodes.contains_key(b)));
    anchor::refusal(recorded, c.anchor.as_deref(), c.anchor_pinned, still, deployed).map_or(Ok(()), |e| Err(e.into()))
}

fn kubernetes_version(closures: &Closures) -> Option<&str> {
    closures.cluster.kubernetes_version.as_deref()
}

/// The change of Kubernetes version from the latest recorded generation
/// of this cluster to `closures`, or why it is refused.
pub fn upgrade_of(closures: &Closures, records: &Records) -> Result<Option<Upgrade>, UpgradeRefused> {
    let Some(to) = kubernetes_version(closures) else { return Ok(None) };
    let latest = records.latest_of(&closures.cluster.name);
    upgrade::check(latest.and_then(|g| g.kubernetes_version.as_deref()), to)
}
