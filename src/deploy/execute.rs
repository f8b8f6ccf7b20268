//! The one executor: every operation (`switch`, `rollback`, `reset`) opens its
//! nodes here, builds a [`Plan`], and runs it here. It owns what must be
//! the same for all of them: installing the node program and taking each
//! node's lock ([`Session`], released in one place), pushing and staging,
//! the waves with their barriers and rollout batches, undoing every step a
//! failed or interrupted run touched (last batch first), committing, and
//! recording the deployer generation. Progress goes out as events only.
//!
//! A failed step may be half done (link flipped, a unit failed to start):
//! it counts as touched and is undone with the rest.
//!
//! A lock lost on the way (the deployer paused or cut off for 30 s or
//! more, and the node's lock let go; another run may hold it now: the
//! node refused a command for want of it, or the lock's guard noticed)
//! stops the run before its next change: nothing more is started,
//! nothing is committed, and nothing is undone on a node whose lock is
//! lost — that would fight the run that holds it now. Touched nodes still
//! held are put back as after any failure. [`Outcome::LockLost`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;

use super::bounded;
use super::error::{Error, RecordWrite};
use super::events::{Event, Sink};
use super::failpoint;
use super::member_step::{self, Parties};
use super::membership::{Change, MembershipPlan};
use super::plan::{Batch, NodeWork, Plan, Step, StepRef, Steps, Wave};
use super::push::{self, Blobs};
use super::record;
use super::self_rollback;
use super::state;
use super::step::{self, Deadlines, Fail, Peers};
use crate::node::{Node, NodeLock, NodeStatus};
use crate::store::cache::BinaryCache;
use crate::store::Resolver;
use crate::transport::Host;

/// How a run ended (maps to the exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A step failed (touched nodes put back) or a node was locked: exit 3.
    Failed,
    /// Some node could not be reached; nothing was changed: exit 4.
    Unreachable,
    /// Every node reached ended as with [`Outcome::Ok`], and the run went
    /// on without the unreachable ones it was allowed to skip
    /// (`switch --max-unreachable`), whose records stay as they were: exit 8.
    Partial,
    /// Stopped by Ctrl-C; touched nodes put back: exit 130.
    Interrupted,
    /// Some node's lock was lost to another run; stopped before the next
    /// change, nothing undone there: exit 5.
    LockLost,
}

/// A node the run has reached: its connection, whatever the transport, and
/// the directory the node program keeps everything under ("" on a real
/// node; a scratch directory when a test drives a run over
/// [`crate::transport::LocalHost`]).
#[derive(Clone, Copy)]
pub struct Reached<'h> {
    pub host: &'h dyn Host,
    pub prefix: &'h str,
}

/// A node this run holds: the node program on it, its lock, its status.
pub struct Opened<'h> {
    pub name: String,
    pub node: Node<'h>,
    pub lock: NodeLock,
    pub status: NodeStatus,
}

/// Every node a run holds, and the targets it goes on without. Dropping
/// it lets go of the locks at once; [`Session::close`] also waits until
/// each node has let go.
pub struct Session<'h> {
    pub nodes: Vec<Opened<'h>>,
    /// Targets that did not answer, which the operation allowed the run to
    /// go on without ([`super::operation::Operation::without`]); empty in
    /// every run that holds all its targets.
    pub skipped: Vec<String>,
    /// Targets that did not answer, which the run removes without
    /// reaching them ([`super::operation::Operation::gone`]).
    pub gone: Vec<String>,
}

impl<'h> Session<'h> {
    /// Every held node by name, for hooks delegated to one of them.
    pub fn held(&self) -> Vec<(&str, &Node<'h>)> {
        self.nodes.iter().map(|o| (o.name.as_str(), &o.node)).collect()
    }

    /// The held node called `name`.
    pub fn get(&self, name: &str) -> Option<&Opened<'h>> {
        self.nodes.iter().find(|o| o.name == name)
    }

    /// Put a plan's nodes in the session's order, which [`execute`] runs
    /// them in (a node the session does not hold goes last, and is
    /// refused there).
    pub fn sort_like(&self, work: &mut [NodeWork]) {
        work.sort_by_key(|w| self.nodes.iter().position(|o| o.name == w.name).unwrap_or(usize::MAX));
    }

    pub async fn close(self) {
        join_all(self.nodes.into_iter().map(|o| o.lock.release())).await;
    }

    /// The nodes whose lock this run has lost (see [`crate::node::NodeLock::is_lost`]).
    pub fn lost(&self) -> Vec<&str> {
        self.nodes.iter().filter(|o| o.lock.is_lost()).map(|o| o.name.as_str()).collect()
    }

    /// Whether some lock is lost; if so, says so for each such node.
    fn stop_if_lost(&self, sink: &dyn Sink) -> bool {
        let lost = self.lost();
        for node in &lost {
            sink.emit(Fail::msg(None, LOST).event(node));
        }
        !lost.is_empty()
    }
}

/// What the run says about a node whose lock it lost.
const LOST: &str = "this run lost the node's lock (the deployer was paused or cut off for 30 s or more, \
                    and another run may hold it now): stopped before its next change; nothing is undone \
                    or committed on this node";

/// Install the node program, lock and read the status of every node, all
/// concurrently. `Err` (after reporting each failure and letting go of
/// the locks taken) when any node could not be opened.
pub async fn open<'h>(nodes: &[Reached<'h>], owner: &str, sink: &dyn Sink) -> Result<Session<'h>, Session<'h>> {
    let opened = join_all(nodes.iter().map(|r| async move {
        let (node, lock, status) = Node::open_locked(r.host, r.prefix, owner).await?;
        Ok::<_, crate::node::NodeError>(Opened { name: r.host.name().to_string(), node, lock, status })
    }))
    .await;
    let mut session = Session { nodes: Vec::new(), skipped: Vec::new(), gone: Vec::new() };
    let mut failed = false;
    for (r, o) in nodes.iter().zip(opened) {
        match o {
            Ok(o) => {
                // told once: the next commit clears the node's record
                for rollback in &o.status.rolled_back {
                    sink.emit(Event::SelfRolledBack { node: o.name.clone(), rollback: rollback.clone() });
                }
                session.nodes.push(o)
            }
            Err(e) => {
                failed = true;
                sink.emit(Fail::msg(None, e.to_string()).event(r.host.name()));
            }
        }
    }
    if failed {
        Err(session)
    } else {
        Ok(session)
    }
}

/// Set by the first Ctrl-C: no new batch starts, touched nodes are put back.
#[derive(Debug, Default, Clone)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the executor needs besides the plan.
pub struct Context<'a> {
    /// Where blob bytes come from (`None`: the plan pushes nothing).
    pub resolver: Option<&'a Resolver>,
    /// The binary cache the nodes fetch blobs from (`transfer.cache`).
    pub cache: Option<Arc<BinaryCache>>,
    /// The deployer's records as the run read them.
    pub records: &'a record::Records,
    /// `.kdeploy` of the project (generation records).
    pub state_dir: &'a Path,
    pub cancel: Cancel,
    pub deadlines: Deadlines,
    /// At most this many nodes push at once (0: the default).
    pub parallel: usize,
    /// Of those, at most this many stream blobs over SSH (0: the default).
    pub uploads: usize,
}

/// Tell the sink what each node will do.
pub fn announce(plan: &Plan, sink: &dyn Sink) {
    for n in &plan.nodes {
        if n.steps.is_empty() && n.stage.is_empty() && !n.resets() {
            sink.emit(Event::NodeUnchanged { node: n.name.clone() });
            continue;
        }
        let pick =
            |linked: bool| n.steps.iter().filter(|s| s.to.is_some() == linked).map(|s| s.phase.clone()).collect();
        sink.emit(Event::NodeChanged {
            node: n.name.clone(),
            activate: pick(true),
            stage: n.staged_only(),
            remove: pick(false),
        });
    }
}

/// Run `plan` on the session's nodes (same order as `plan.nodes`).
pub async fn execute(session: &Session<'_>, plan: &Plan, cx: &Context<'_>, sink: &dyn Sink) -> Result<Outcome, Error> {
    let nodes = &session.nodes;
    let planned = plan.nodes.iter().map(|w| w.name.as_str());
    if !planned.eq(nodes.iter().map(|o| o.name.as_str())) {
        return Err(Error::PlanMismatch);
    }
    let steps = Steps::of(plan);
    if let Some(r) = steps.unknown() {
        return Err(Error::UnknownStep(r.clone()));
    }
    if plan.unchanged() {
        return write_record(plan, cx).map(|_| Outcome::Ok).map_err(Error::NotRecorded);
    }

    // push missing blobs to every node, then stage; nothing live changes
    if plan.nodes.iter().any(|n| !n.stage.is_empty()) {
        let resolver = cx.resolver.ok_or(Error::NoBlobSource)?;
        let blobs = Blobs::new(resolver, cx.cache.clone(), cx.uploads);
        let changed = || plan.nodes.iter().zip(nodes).filter(|(w, _)| !w.stage.is_empty());
        let t0 = Instant::now();
        let pushes = changed().map(|(w, o)| {
            let blobs = &blobs;
            async move { (w, push::push(&o.node, o.status.zstd, w, blobs, sink).await) }
        });
        let failed = failures(bounded::all(cx.parallel, pushes).await, sink);
        if session.stop_if_lost(sink) {
            return Ok(Outcome::LockLost);
        }
        if failed {
            return Ok(Outcome::Failed);
        }
        sink.emit(Event::Transferred { nodes: changed().count(), took: t0.elapsed() });
        // Staged only once every node holds its bytes: on a deployer whose
        // nodes share its CPUs (a lab) the copies would slow the transfer.
        let stages = changed().map(|(w, o)| async move { (w, push::stage(&o.node, w, sink).await) });
        let failed = failures(bounded::all(cx.parallel, stages).await, sink);
        if session.stop_if_lost(sink) {
            return Ok(Outcome::LockLost);
        }
        if failed {
            return Ok(Outcome::Failed);
        }
        failpoint::hit("after-push");
    }

    // waves in order, barrier between batches
    let mut touched: Vec<(&Wave, &Batch)> = Vec::new();
    // nodes that took no new connection after an armed step: each moves
    // its steps back by itself (its phase, its deadline)
    let mut cut_off: BTreeMap<String, (String, Duration)> = BTreeMap::new();
    let mut outcome = Outcome::Ok;
    'waves: for wave in &plan.waves {
        sink.emit(Event::PhaseStarted {
            phase: wave.phase.clone(),
            nodes: wave.batches.iter().flat_map(|b| &b.steps).map(|r| r.node.clone()).collect(),
        });
        let t0 = Instant::now();
        for (b, batch) in wave.batches.iter().enumerate() {
            if session.stop_if_lost(sink) {
                outcome = Outcome::LockLost;
                break;
            }
            if cx.cancel.is_cancelled() {
                sink.emit(Event::Interrupted);
                outcome = Outcome::Interrupted;
                break;
            }
            if wave.batches.len() > 1 {
                sink.emit(Event::BatchStarted {
                    phase: wave.phase.clone(),
                    batch: b + 1,
                    of: wave.batches.len(),
                    nodes: batch.steps.iter().map(|r| r.node.clone()).collect(),
                });
            }
            let failures = run_batch(session, &steps, wave, batch, &touched, cx, sink).await;
            touched.push((wave, batch));
            for (node, f) in failures {
                outcome = Outcome::Failed;
                if let (Some(within), Some(phase)) = (f.cut_off, &f.phase) {
                    cut_off.insert(node.clone(), (phase.clone(), Duration::from_secs(within.into())));
                }
                sink.emit(f.event(&node));
            }
            if session.stop_if_lost(sink) {
                outcome = Outcome::LockLost;
            }
            if outcome != Outcome::Ok {
                break;
            }
        }
        sink.emit(Event::PhaseFinished { phase: wave.phase.clone(), took: t0.elapsed() });
        if outcome != Outcome::Ok {
            break 'waves;
        }
        failpoint::hit_after_phase(&wave.phase);
    }
    if outcome == Outcome::Ok && cx.cancel.is_cancelled() {
        // interrupted during the last wave: nothing is committed either
        sink.emit(Event::Interrupted);
        outcome = Outcome::Interrupted;
    }
    if outcome == Outcome::Ok {
        for r in &plan.removals {
            match remove(session, r, &cx.deadlines).await {
                Ok(()) => sink.emit(Event::NodeGone { node: r.node.clone(), via: r.via.clone() }),
                Err(f) => {
                    outcome = Outcome::Failed;
                    sink.emit(f.event(&r.node));
                }
            }
        }
    }
    if outcome != Outcome::Ok {
        for name in cut_off.keys() {
            if let Some(o) = session.get(name) {
                o.lock.let_go();
            }
        }
        undo(session, &steps, &touched, &cut_off, &cx.deadlines, sink).await;
        self_rollback::await_all(session, &cut_off, sink).await;
        return Ok(outcome);
    }

    failpoint::hit("before-commit");
    if session.stop_if_lost(sink) {
        undo(session, &steps, &touched, &cut_off, &cx.deadlines, sink).await;
        return Ok(Outcome::LockLost);
    }
    let commits = join_all(plan.nodes.iter().zip(nodes).filter_map(|(w, o)| {
        let c = w.commit()?;
        Some(async move { (w, o, state::commit(&o.node, c.generation, &c.hash, c.record.as_ref()).await) })
    }))
    .await;
    for (w, o, r) in commits {
        match r {
            Ok(()) => {
                sink.emit(Event::Committed { node: w.name.clone(), generation: w.commit().map_or(0, |c| c.generation) })
            }
            // refused for want of the lock (lost between the check above
            // and the commit): another run owns the node, nothing to undo
            Err(_) if o.lock.is_lost() => {
                if outcome != Outcome::Failed {
                    outcome = Outcome::LockLost;
                }
                sink.emit(Fail::msg(None, LOST).event(&w.name));
            }
            Err(e) => {
                outcome = Outcome::Failed;
                sink.emit(Fail::msg(None, e).event(&w.name));
            }
        }
    }
    // every step done: reset nodes forget kdeploy; one that did not keeps
    // its place in the record, so the next reset (or prune) finds it
    let kept = forget(session, plan, sink).await;
    if let Some(g) = &plan.record {
        record::write(cx.state_dir, &keep_in_record(g, &kept, cx.records)).map_err(Error::NotRecorded)?;
    }
    Ok(if kept.is_empty() { outcome } else { Outcome::Failed })
}

/// The cluster's `removeNode` for a node removed without being reached,
/// on the held control plane the plan names.
async fn remove(session: &Session<'_>, r: &super::plan::Removal, d: &Deadlines) -> Result<(), Fail> {
    let (Some(via), Some(run)) = (&r.via, &r.run) else { return Ok(()) };
    let Some(o) = session.get(via) else { return Err(Fail::msg(None, format!("{via} is not held by this run"))) };
    let env = format!("KDEPLOY_NODE_NAME={} ", crate::transport::shell_quote(&r.node));
    let out =
        o.node.exec_held(&format!("{env}exec {}", step::within(d.hook, run))).await.map_err(|e| Fail::msg(None, e))?;
    if out.success() {
        return Ok(());
    }
    Err(Fail {
        journal: Some(step::output_tail(&out)),
        ..Fail::msg(None, format!("removeNode on {via} {}", step::status_text(out.status, d.hook)))
    })
}

/// `g` with the entries the latest record had for `kept` (reset nodes
/// whose `forget` failed: still deployed as far as anyone can tell).
fn keep_in_record(g: &record::Generation, kept: &[String], records: &record::Records) -> record::Generation {
    let mut g = g.clone();
    if kept.is_empty() {
        return g;
    }
    if let Some(latest) = records.latest_of(&g.cluster) {
        for n in kept {
            if let Some(r) = latest.nodes.get(n) {
                g.nodes.insert(n.clone(), r.clone());
            }
        }
    }
    g
}

/// The last step of every reset node, once all steps succeeded: the node
/// program removes the directories switches created and its own state.
/// Returns the nodes where that failed.
async fn forget(session: &Session<'_>, plan: &Plan, sink: &dyn Sink) -> Vec<String> {
    let reset = plan.nodes.iter().zip(&session.nodes).filter(|(w, _)| w.resets());
    let done = join_all(reset.map(|(w, o)| async move { (w, o.node.forget().await) })).await;
    let mut failed = Vec::new();
    for (w, r) in done {
        match r {
            Ok(removed) => sink.emit(Event::NodeReset { node: w.name.clone(), removed }),
            Err(e) => {
                failed.push(w.name.clone());
                sink.emit(Fail::msg(None, e.to_string()).event(&w.name));
            }
        }
    }
    failed
}

fn write_record(plan: &Plan, cx: &Context<'_>) -> Result<(), RecordWrite> {
    match &plan.record {
        Some(g) => record::write(cx.state_dir, g),
        None => Ok(()),
    }
}

/// One batch: its steps concurrently, or its membership change with its
/// node's step. The failures, by node name.
async fn run_batch(
    session: &Session<'_>,
    steps: &Steps<'_>,
    wave: &Wave,
    batch: &Batch,
    touched: &[(&Wave, &Batch)],
    cx: &Context<'_>,
    sink: &dyn Sink,
) -> Vec<(String, Fail)> {
    let nodes = &session.nodes;
    let held = session.held();
    let peers = Peers(&held);
    if let Some((m, change)) = change_of(wave, batch) {
        let Some(p) = parties(session, steps, m, batch, peers) else {
            return vec![(m.via.clone(), Fail::msg(Some(&wave.phase), format!("{} is not held by this run", m.via)))];
        };
        let who = batch.steps.first().map_or(m.via.clone(), |r| r.node.clone());
        let t = Instant::now();
        return match member_step::forward(&p, m, change, &cx.deadlines, sink).await {
            Ok(()) => {
                finished(batch, t, sink);
                vec![]
            }
            Err(f) => vec![(who, f)],
        };
    }
    // Not bounded by --parallel: the steps of a batch may need each other
    // (etcd members starting together wait for a quorum).
    let results = join_all(batch.steps.iter().map(|r| {
        let (i, step) = steps.get(r);
        let node = &nodes[i].node;
        async move {
            let t = Instant::now();
            let earlier = done_on(steps, touched, &r.node);
            let done = step::forward(node, peers, step, &earlier, &cx.deadlines, sink).await;
            if done.is_ok() {
                sink.emit(Event::NodePhaseFinished { node: r.node.clone(), phase: r.phase.clone(), took: t.elapsed() });
            }
            done
        }
    }))
    .await;
    batch.steps.iter().zip(results).filter_map(|(r, done)| done.err().map(|f| (r.node.clone(), f))).collect()
}

/// The steps the run did on `node` before, in the order it did them
/// (those of membership changes left out: a watchdog cannot take a member
/// back out of its cluster).
fn done_on<'p>(steps: &Steps<'p>, touched: &[(&Wave, &Batch)], node: &str) -> Vec<&'p Step> {
    let plain = touched.iter().filter(|(_, b)| b.change.is_none()).flat_map(|(_, b)| &b.steps);
    plain.filter(|r| r.node == node).map(|r| steps.get(r).1).collect()
}

/// Reports each node's failure; whether there was one.
fn failures(done: Vec<(&NodeWork, Result<(), Fail>)>, sink: &dyn Sink) -> bool {
    let mut failed = false;
    for (w, r) in done {
        if let Err(f) = r {
            failed = true;
            sink.emit(f.event(&w.name));
        }
    }
    failed
}

fn finished(batch: &Batch, since: Instant, sink: &dyn Sink) {
    for r in &batch.steps {
        sink.emit(Event::NodePhaseFinished { node: r.node.clone(), phase: r.phase.clone(), took: since.elapsed() });
    }
}

fn change_of<'p>(wave: &'p Wave, batch: &Batch) -> Option<(&'p MembershipPlan, &'p Change)> {
    let m = wave.membership.as_ref()?;
    Some((m, &m.changes[batch.change?]))
}

/// The via node and the batch's own step (a change batch has at most one).
fn parties<'a, 'h>(
    session: &'a Session<'h>,
    steps: &Steps<'a>,
    m: &'a MembershipPlan,
    batch: &Batch,
    peers: Peers<'a, 'h>,
) -> Option<Parties<'a, 'h>> {
    let via = &session.get(&m.via)?.node;
    let target = batch.steps.first().map(|r| steps.get(r)).map(|(i, step)| (&session.nodes[i].node, step));
    Some(Parties { via, via_address: &m.via_address, target, peers })
}

/// Every touched step moved back: the batches in reverse of the order they
/// ran, the steps of one batch concurrently, so a rollout is undone one
/// batch at a time as it was done. A batch with a membership change is
/// undone by `member_step::undo`. Nodes whose lock is lost are left as
/// they are.
async fn undo(
    session: &Session<'_>,
    steps: &Steps<'_>,
    touched: &[(&Wave, &Batch)],
    cut_off: &BTreeMap<String, (String, Duration)>,
    d: &Deadlines,
    sink: &dyn Sink,
) {
    let nodes = &session.nodes;
    let plan = steps.plan();
    // restart triggers on the way back may name files of any touched step
    let mut by_node: BTreeMap<&str, Vec<&Step>> = BTreeMap::new();
    for r in touched.iter().flat_map(|(_, b)| &b.steps) {
        by_node.entry(r.node.as_str()).or_default().push(steps.get(r).1);
    }
    let changed: BTreeMap<&str, BTreeSet<PathBuf>> =
        by_node.into_iter().map(|(n, moved)| (n, step::changed_by(moved))).collect();
    let report = |name: &str, phase: &str, r: Result<(), Fail>| match r {
        Ok(()) => sink.emit(Event::RolledBack { node: name.to_string(), phase: phase.to_string() }),
        Err(f) => sink.emit(Event::RollbackFailed {
            node: name.to_string(),
            phase: phase.to_string(),
            message: format!("{}{}", f.message, f.journal.map(|j| format!("\n{j}")).unwrap_or_default()),
        }),
    };
    // A node whose lock is lost may be another run's now, one cut off
    // moves its steps back by itself: both left alone.
    let lost: BTreeSet<&str> = session.lost().into_iter().chain(cut_off.keys().map(String::as_str)).collect();
    let held = |r: &StepRef| !lost.contains(r.node.as_str());
    // Once a member has left, the members that joined in this run stay:
    // removing them too would shrink the cluster below what it had.
    let mut left = false;
    for &(wave, b) in touched.iter().rev() {
        if let Some((m, change)) = change_of(wave, b) {
            let who = b.steps.first().map_or(m.via.as_str(), |r| r.node.as_str());
            let r = match parties(session, steps, m, b, Peers::NONE) {
                Some(_) if lost.contains(m.via.as_str()) || !b.steps.iter().all(held) => Err(Fail::msg(
                    Some(&wave.phase),
                    format!("{}: not undone: this run lost a lock it needs", change.describe()),
                )),
                Some(_) if left && matches!(change, Change::Join { .. }) => Err(Fail::msg(
                    Some(&wave.phase),
                    format!(
                        "{}: kept, since a member left in this run; the next run finishes the change",
                        change.describe()
                    ),
                )),
                Some(p) => {
                    let none = BTreeSet::new();
                    let changed = b.steps.first().map_or(&none, |r| &changed[r.node.as_str()]);
                    member_step::undo(&p, m, change, changed, d, sink).await
                }
                None => Err(Fail::msg(Some(&wave.phase), format!("{} is not held by this run", m.via))),
            };
            left |= matches!(change, Change::Leave { .. }) && r.is_err();
            report(who, &wave.phase, r);
            continue;
        }
        // what a reset did (`kubeadm reset`, data removed) cannot be put
        // back: a failed reset stops where it failed, the next one finishes it
        let undone = b
            .steps
            .iter()
            .filter(|r| held(r))
            .map(|r| (r, steps.get(r)))
            .filter(|(_, (i, _))| !plan.nodes[*i].resets());
        join_all(undone.map(|(r, (i, step))| {
            let (node, changed) = (&nodes[i].node, &changed[r.node.as_str()]);
            async move { report(&r.node, &r.phase, step::undo(node, step, changed, d, sink).await) }
        }))
        .await;
    }
}
