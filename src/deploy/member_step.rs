//! One membership change run around its node's step (`membership.rs`
//! decides them). A join: the member added as a learner through the
//! membership's `via` node (unless a cut-off run already did), its node's
//! old member data wiped and the join environment written, the node's step
//! applied (which starts it), the learner promoted once in sync, then the
//! step's checks. A leave: the member removed, then the node's step (which
//! stops it; the stdlib's hook removes its data). Each command reads a
//! fresh member list first, so a run finishes what a cut-off one began.
//!
//! Undo: a join is taken back (member removed, step undone, data wiped);
//! a member that has left is not brought back — its data is gone — and
//! the next run finishes the change.
//!
//! Before any wipe the node's own member is asked too ([`wipe`]): if it
//! answers as a started member of the same cluster, the via node's list
//! was wrong about it, and its data stays.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::error::{Error, MembershipError};
use super::events::{Event, Sink};
use super::failpoint;
use futures::future::join_all;

use super::membership::{
    answers_as_member, initial_cluster, parse_list, unlisted_member, url_host, Change, Listed, MembershipPlan,
};
use super::plan::Step;
use super::step::{self, output_tail, status_text, within, Deadlines, Fail, Peers};
use crate::node::Node;
use crate::schema::Membership;
use crate::transport::shell_quote;

/// How long a membership operation is retried (see [`apply`]).
const TRIES: u32 = 60;
const DELAY: Duration = Duration::from_secs(1);

/// The nodes a change involves: the one running the membership commands,
/// and the change's own node with its step in this wave.
pub struct Parties<'a, 'h> {
    pub via: &'a Node<'h>,
    /// The via node's address (to find its member in a list).
    pub via_address: &'a str,
    pub target: Option<(&'a Node<'h>, &'a Step)>,
    /// Every node the run holds (delegated hooks of the target's step).
    pub peers: Peers<'a, 'h>,
}

/// Run a membership command on `node`, its arguments in the environment.
pub(super) async fn run(
    node: &Node<'_>,
    m: &MembershipPlan,
    cmd: &str,
    env: &[(&str, &str)],
    d: &Deadlines,
) -> Result<String, Fail> {
    let vars: String = env.iter().map(|(k, v)| format!("{k}={} ", shell_quote(v))).collect();
    let out = node
        .exec_held(&format!("{vars}exec {}", within(d.hook, cmd)))
        .await
        .map_err(|e| Fail::msg(Some(&m.spec.phase), e.to_string()))?;
    if !out.success() {
        return Err(Fail {
            phase: Some(m.spec.phase.clone()),
            unit: None,
            message: format!(
                "{} membership command on {} {}",
                m.name,
                node.host().name(),
                status_text(out.status, d.hook)
            ),
            journal: Some(output_tail(&out)),
            cut_off: None,
        });
    }
    Ok(out.stdout_str().to_string())
}

async fn list(p: &Parties<'_, '_>, m: &MembershipPlan, d: &Deadlines) -> Result<Vec<Listed>, Fail> {
    let text = run(p.via, m, &m.spec.list, &[], d).await?;
    parse_list(&text).map_err(|e| Fail::msg(Some(&m.spec.phase), e))
}

/// The members as `node` lists them with the membership's `list`
/// command (planning: `Err` when this node cannot tell).
pub async fn read_list(node: &Node<'_>, list: &str, d: &Deadlines) -> Result<Vec<Listed>, Error> {
    let out = node.exec_held(&format!("exec {}", within(d.check, list))).await?;
    if !out.success() {
        return Err(MembershipError::ListFailed { output: output_tail(&out) }.into());
    }
    Ok(parse_list(&out.stdout_str())?)
}

fn emit(sink: &dyn Sink, m: &MembershipPlan, member: &str, what: &str) {
    sink.emit(Event::Member {
        membership: m.name.clone(),
        member: member.to_string(),
        what: what.to_string(),
        via: m.via.clone(),
    });
}

/// One membership operation, identified by the member's peer URL.
#[derive(Clone, Copy)]
enum Op<'a> {
    Add { name: &'a str, peer: &'a str },
    Promote { peer: &'a str },
    Remove { peer: &'a str },
}

impl Op<'_> {
    fn done(&self, listed: &[Listed]) -> bool {
        let find = |peer: &str| listed.iter().find(|l| l.peer == peer).cloned();
        match *self {
            Op::Add { peer, .. } => find(peer).is_some(),
            Op::Promote { peer } => find(peer).is_some_and(|l| !l.learner),
            Op::Remove { peer } => find(peer).is_none(),
        }
    }
}

/// Run `op` through the via node until the list shows it done, at most
/// [`TRIES`] times, [`DELAY`] apart: etcd refuses changes for a few seconds
/// after a member restarted ("unhealthy cluster") and a promotion until
/// the learner has caught up. The list is read before each try, so a try
/// that timed out but went through is not repeated. `Ok(true)` when this
/// call made the change, `Ok(false)` when it was already done.
async fn apply(p: &Parties<'_, '_>, m: &MembershipPlan, op: Op<'_>, d: &Deadlines) -> Result<bool, Fail> {
    let mut last = None;
    for t in 0..TRIES {
        let listed = list(p, m, d).await?;
        if op.done(&listed) {
            return Ok(t > 0);
        }
        let id = |peer: &str| listed.iter().find(|l| l.peer == peer).map(|l| l.id.clone()).unwrap_or_default();
        let r = match op {
            Op::Add { name, peer } => {
                run(p.via, m, &m.spec.add, &[("KDEPLOY_MEMBER_NAME", name), ("KDEPLOY_MEMBER_PEER", peer)], d).await
            }
            Op::Promote { peer } => run(p.via, m, &m.spec.promote, &[("KDEPLOY_MEMBER_ID", &id(peer))], d).await,
            Op::Remove { peer } => run(p.via, m, &m.spec.remove, &[("KDEPLOY_MEMBER_ID", &id(peer))], d).await,
        };
        match r {
            Ok(_) => return Ok(true),
            Err(f) => last = Some(f),
        }
        tokio::time::sleep(DELAY).await;
    }
    let mut f = last.unwrap_or_else(|| Fail::msg(Some(&m.spec.phase), String::new()));
    f.message = format!("{} (after {TRIES} tries, {} s apart)", f.message, DELAY.as_secs());
    Err(f)
}

/// `change` forward, with its node's step.
pub async fn forward(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    change: &Change,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    match change {
        Change::Join { node, name, peer, .. } => join(p, m, node, name, peer, d, sink).await,
        Change::Leave { member, down, .. } => {
            // a member that answers nothing leads nothing
            if !down {
                handoff(p, m, member, d, sink).await?;
            }
            if apply(p, m, Op::Remove { peer: &member.peer }, d).await? {
                emit(sink, m, &label(member), "removed");
                failpoint::hit("after-member-change");
            }
            match p.target {
                // never armed: a watchdog cannot take a member back into its cluster
                Some((node, s)) => {
                    step::apply(node, p.peers, s, d, sink).await?;
                    step::check(node, s, d, sink).await
                }
                None => Ok(()),
            }
        }
    }
}

/// A leader that is removed steps down and the others wait out an
/// election timeout before one takes over; a handoff first makes the via
/// member lead, at once. Best effort: a failed handoff is reported and
/// the removal goes on (etcd then elects a leader itself).
async fn handoff(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    leaving: &Listed,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let listed = list(p, m, d).await?;
    let Some(me) = listed.iter().find(|l| l.peer == leaving.peer && l.started && !l.learner) else { return Ok(()) };
    let is_via = |l: &&Listed| l.started && !l.learner && l.peer != me.peer && url_host(&l.peer) == p.via_address;
    let Some(via) = listed.iter().find(is_via) else { return Ok(()) };
    let endpoints: Vec<&str> = listed.iter().filter(|l| l.started && !l.learner).map(|l| l.client.as_str()).collect();
    let endpoints = endpoints.join(",");
    let env = [
        ("KDEPLOY_MEMBER_CLIENT", me.client.as_str()),
        ("KDEPLOY_TARGET_ID", &via.id),
        ("KDEPLOY_ENDPOINTS", &endpoints),
    ];
    if let Err(f) = run(p.via, m, &m.spec.handoff, &env, d).await {
        sink.emit(Event::Warning {
            node: m.via.clone(),
            message: format!("{}: leadership not handed off before removing {}: {}", m.name, label(me), f.message),
        });
    }
    Ok(())
}

fn label(l: &Listed) -> String {
    if l.name.is_empty() {
        format!("{} ({})", l.id, l.peer)
    } else {
        l.name.clone()
    }
}

async fn join(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    node: &str,
    name: &str,
    peer: &str,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let fail = |msg: String| Fail::msg(Some(&m.spec.phase), msg);
    let (target, s) = p.target.ok_or_else(|| fail(format!("{node} joins {} but has no step in this run", m.name)))?;
    let who = Joining { target, node, name, peer };
    enter(p, m, &who, d, sink).await?;
    step::apply(target, p.peers, s, d, sink).await?;
    promote(p, m, &who, d, sink).await?;
    step::check(target, s, d, sink).await
}

/// A member a restore set aside (`restore.rs`) joins the restored
/// cluster as [`join`] joins one, started with the membership's `start`
/// instead of a step (its node's files are in place).
pub async fn rejoin(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    who: &Joining<'_, '_>,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    let start =
        m.spec.start.as_deref().ok_or_else(|| {
            Fail::msg(Some(&m.spec.phase), format!("{}: the definition has no `start` command", m.name))
        })?;
    if enter(p, m, who, d, sink).await? {
        run(who.target, m, start, &[], d).await?;
    }
    promote(p, m, who, d, sink).await
}

/// A node joining a membership: its node, name in the definition, and
/// member name and peer URL.
pub struct Joining<'a, 'h> {
    pub target: &'a Node<'h>,
    pub node: &'a str,
    pub name: &'a str,
    pub peer: &'a str,
}

/// The member added as a learner through the via node (unless listed
/// already) and, when it has not started yet, its data wiped and its join
/// environment written: `true` then (it is to be started).
async fn enter(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    who: &Joining<'_, '_>,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<bool, Fail> {
    let fail = |msg: String| Fail::msg(Some(&m.spec.phase), msg);
    let (name, peer) = (who.name, who.peer);
    if apply(p, m, Op::Add { name, peer }, d).await? {
        emit(sink, m, name, "added as a learner");
        failpoint::hit("after-member-change");
    }
    let listed = list(p, m, d).await?;
    let me =
        listed.iter().find(|l| l.peer == peer).ok_or_else(|| fail(format!("{name} is not listed after its add")))?;
    if me.started {
        return Ok(false);
    }
    wipe(m, who.node, who.target, &listed, d).await?;
    let initial = initial_cluster(&listed, name, peer).map_err(|e| fail(e.to_string()))?;
    run(who.target, m, &m.spec.join, &[("KDEPLOY_INITIAL_CLUSTER", &initial)], d).await?;
    Ok(true)
}

/// The learner promoted once in sync (nothing when it votes already).
async fn promote(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    who: &Joining<'_, '_>,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    if apply(p, m, Op::Promote { peer: who.peer }, d).await? {
        emit(sink, m, who.name, "promoted to a voting member");
    }
    Ok(())
}

/// `Err` naming the first of `leaving` (nodes whose step stops a member
/// they ran, at their address, with no leave planned) whose own member
/// answers as a started member of the cluster `listed` shows, though
/// `listed` does not show it: the step would stop it without a `member
/// remove`, and the stdlib's hook would remove its data.
pub async fn refuse_unlisted_leavers(
    m: &str,
    spec: &Membership,
    leaving: &[(&str, &Node<'_>, &str)],
    listed: &[Listed],
    d: &Deadlines,
) -> Result<(), MembershipError> {
    let own = join_all(leaving.iter().map(|(_, node, _)| read_list(node, &spec.list, d))).await;
    for ((name, _, address), own) in leaving.iter().zip(own) {
        let own = own.unwrap_or_default();
        if let Some(me) = unlisted_member(&own, address, listed) {
            let labels = |l: &[Listed]| l.iter().map(label).collect();
            return Err(MembershipError::UnlistedLeaver {
                membership: m.to_string(),
                node: name.to_string(),
                listed: labels(listed),
                own_member: label(me),
                own: labels(&own),
            });
        }
    }
    Ok(())
}

/// Wipe the member data of `node` (on `target`), which `listed` (the via
/// node's list) does not show as a started member — unless `target`'s own
/// member answers as one of the same cluster ([`answers_as_member`]):
/// then nothing is wiped and the change fails, naming both answers.
async fn wipe(m: &MembershipPlan, node: &str, target: &Node<'_>, listed: &[Listed], d: &Deadlines) -> Result<(), Fail> {
    let fail = |msg: String| Fail::msg(Some(&m.spec.phase), msg);
    let member = m.spec.members.get(node).ok_or_else(|| fail(format!("{node} is not a wanted member")))?;
    // no answer (no member running there, or none yet): nothing to keep
    let own = read_list(target, &m.spec.list, d).await.unwrap_or_default();
    if answers_as_member(&own, &member.peer, listed) {
        let names = |l: &[Listed]| l.iter().map(label).collect::<Vec<_>>().join(", ");
        return Err(fail(format!(
            "{}: not wiping {node}'s member data: {} does not list {} as a started member ({}), but {node}'s own \
             member answers as a started member of the same cluster ({}); one of them is wrong — check both \
             (`member list` on each) before running again",
            m.name,
            m.via,
            member.name,
            names(listed),
            names(&own)
        )));
    }
    run(target, m, &member.wipe, &[], d).await.map(|_| ())
}

/// Take `change` back after a failed run. A join: the member removed, the
/// node's step undone (`changed`: the files the run changed on that node),
/// its data wiped. A leave that happened is not undone (see the module
/// comment); one that did not has nothing to undo.
pub async fn undo(
    p: &Parties<'_, '_>,
    m: &MembershipPlan,
    change: &Change,
    changed: &BTreeSet<PathBuf>,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), Fail> {
    match change {
        Change::Join { node, name, peer, .. } => {
            if apply(p, m, Op::Remove { peer }, d).await? {
                emit(sink, m, name, "removed again (undo)");
            }
            if let Some((target, s)) = p.target {
                step::undo(target, s, changed, d, sink).await?;
                // the via may be what failed: then the node's own answer decides
                let listed = list(p, m, d).await.unwrap_or_default();
                wipe(m, node, target, &listed, d).await?;
            }
            Ok(())
        }
        Change::Leave { member, .. } if Op::Remove { peer: &member.peer }.done(&list(p, m, d).await?) => {
            Err(Fail::msg(
                Some(&m.spec.phase),
                format!(
                    "{}: {} is not undone (its member data is gone); the next run finishes it",
                    m.name,
                    change.describe()
                ),
            ))
        }
        Change::Leave { .. } => Ok(()),
    }
}
