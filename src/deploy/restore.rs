//! `kdeploy restore`: a membership that lost its majority (etcd's) brought
//! back from a snapshot the deployer kept (`snapshot.rs`), as Kubespray's
//! recover-control-plane does. The plan ([`plan`], pure) names the
//! snapshot, the member restored first, the members that rejoin it and the
//! ones that did not answer; it is shown and confirmed before anything
//! changes. Then, holding every member that answers: each member's `aside`
//! stops it and renames its data (nothing is deleted); the first member's
//! `restore` makes the snapshot, streamed to its stdin, a cluster of that
//! one member and starts it; the others join it one at a time as learners
//! and are promoted once in sync (`member_step::rejoin`). The nodes' files
//! and generations do not change: a switch afterwards is a no-op, and one
//! that finds a member still missing (it did not answer) adds it back.

use std::path::{Path, PathBuf};

use futures::future::join_all;

use super::error::{Error, RestoreRefused};
use super::events::{Event, Sink};
use super::execute::{Outcome, Session};
use super::member_step::{self, Joining, Parties};
use super::membership::MembershipPlan;
use super::operation::{self, Held, Report, RunOptions};
use super::snapshot::Snapshots;
use super::step::{output_tail, status_text, within, Deadlines, Fail, Peers};
use crate::closure::Closures;
use crate::node::Node;
use crate::schema::Membership;
use crate::transport::shell_quote;

/// What `kdeploy restore` is run with.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    pub run: RunOptions,
    /// The snapshot file (`None`: the newest the deployer keeps).
    pub snapshot: Option<PathBuf>,
    /// The member restored first (`None`: the first wanted member that answers).
    pub first: Option<String>,
}

/// What a restore will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePlan {
    pub membership: String,
    pub snapshot: PathBuf,
    /// Restored from the snapshot, a cluster of one member.
    pub first: String,
    /// Set aside, then joined to the first one by one.
    pub rejoin: Vec<String>,
    /// Members that did not answer: left as they are (a switch that
    /// reaches them later adds them back).
    pub unreachable: Vec<String>,
}

impl RestorePlan {
    /// The plan as the operator confirms it, a line per action.
    pub fn actions(&self) -> Vec<String> {
        let mut out = vec![format!(
            "stop every {} member that answers ({}) and set its data aside (renamed member.before-restore.*)",
            self.membership,
            [std::slice::from_ref(&self.first), &self.rejoin[..]].concat().join(", ")
        )];
        out.push(format!("restore {} on {} as a cluster of one member", self.snapshot.display(), self.first));
        for n in &self.rejoin {
            out.push(format!("{n} joins it as a learner, promoted once in sync"));
        }
        if !self.unreachable.is_empty() {
            out.push(format!("left as they are (no answer): {}", self.unreachable.join(", ")));
        }
        out
    }
}

/// The one membership the definition restores: the first with `restore`
/// commands for its members.
pub fn membership_of(closures: &Closures) -> Result<(&str, &Membership), RestoreRefused> {
    closures
        .cluster
        .memberships
        .iter()
        .find(|(_, m)| !m.members.is_empty() && m.members.values().all(|x| x.restore.is_some() && x.aside.is_some()))
        .map(|(n, m)| (n.as_str(), m))
        .ok_or(RestoreRefused::NoMembership)
}

/// The snapshot to restore: the one named, which must be a file, or the
/// newest kept under `state_dir`.
pub fn snapshot_of(state_dir: &Path, membership: &str, named: Option<&Path>) -> Result<PathBuf, RestoreRefused> {
    if let Some(p) = named {
        return if p.is_file() { Ok(p.to_path_buf()) } else { Err(RestoreRefused::NotAFile(p.to_path_buf())) };
    }
    let kept = Snapshots::at(state_dir, membership);
    match kept.newest() {
        Ok(Some(p)) => Ok(p),
        Ok(None) => Err(RestoreRefused::NoSnapshot(kept.dir().to_path_buf())),
        Err(e) => Err(RestoreRefused::Unreadable(e.to_string())),
    }
}

/// The plan, from the wanted members (in the definition's order), the
/// ones that answered and the operator's choice of first member.
pub fn plan(
    membership: &str,
    members: &[String],
    answered: &[String],
    first: Option<&str>,
    snapshot: PathBuf,
) -> Result<RestorePlan, RestoreRefused> {
    let first = match first {
        Some(f) if !members.iter().any(|m| m == f) => return Err(RestoreRefused::NotAMember(f.to_string())),
        Some(f) if !answered.iter().any(|m| m == f) => return Err(RestoreRefused::FirstUnreachable(f.to_string())),
        Some(f) => f.to_string(),
        None => members.iter().find(|m| answered.contains(m)).cloned().ok_or(RestoreRefused::NoneAnswered)?,
    };
    let rejoin = members.iter().filter(|m| **m != first && answered.contains(m)).cloned().collect();
    let unreachable = members.iter().filter(|m| !answered.contains(m)).cloned().collect();
    Ok(RestorePlan { membership: membership.to_string(), snapshot, first, rejoin, unreachable })
}

/// Run a restore of `closures`' membership (see the module comment).
pub async fn restore(closures: &Closures, opts: &RestoreOptions, sink: &dyn Sink) -> Result<Report, Error> {
    let (name, spec) = membership_of(closures)?;
    let snapshot = snapshot_of(&opts.run.state_dir, name, opts.snapshot.as_deref())?;
    let members: Vec<String> =
        closures.cluster.nodes.keys().filter(|n| spec.members.contains_key(*n)).cloned().collect();
    let targets = opts.run.ssh.targets_of(closures, &members)?;
    let work = async |session: &Session<'_>| {
        let answered: Vec<String> = session.nodes.iter().map(|o| o.name.clone()).collect();
        let plan = plan(name, &members, &answered, opts.first.as_deref(), snapshot)?;
        if opts.run.dry_run {
            let plan_text = plan.actions().iter().map(|a| format!("{a}\n")).collect();
            return Ok(Report { outcome: Outcome::Ok, recorded: None, plan_text });
        }
        if let Some(refused) = opts.run.consent.refusal_for(plan.actions()) {
            return Err(refused);
        }
        let address = closures.cluster.nodes.get(&plan.first).map_or("", |n| n.address.as_str());
        let outcome = match restore_held(session, &plan, spec, address, &opts.run.deadlines, sink).await {
            Ok(()) => Outcome::Ok,
            Err((node, f)) => {
                sink.emit(f.event(&node));
                Outcome::Failed
            }
        };
        Ok(Report { outcome, recorded: None, plan_text: String::new() })
    };
    match operation::on_answering("restore", &targets, opts.run.parallel, sink, work).await {
        Held::Done(r) => r,
        Held::Unreachable | Held::NotOpened => {
            Ok(Report { outcome: Outcome::Failed, recorded: None, plan_text: String::new() })
        }
    }
}

/// The restore itself, holding every member that answered: `Err` names
/// the node of the step that failed, which ends it.
async fn restore_held(
    session: &Session<'_>,
    plan: &RestorePlan,
    spec: &Membership,
    address: &str,
    d: &Deadlines,
    sink: &dyn Sink,
) -> Result<(), (String, Fail)> {
    let m = MembershipPlan {
        name: plan.membership.clone(),
        spec: spec.clone(),
        via: plan.first.clone(),
        via_address: address.to_string(),
        changes: Vec::new(),
    };
    // (its error is the function's own, returned at once: no boxing)
    #[allow(clippy::result_large_err)]
    let node = |n: &str| session.get(n).map(|o| &o.node).ok_or_else(|| (n.to_string(), fail(&m, "not held")));
    // every member stopped before any starts again: none of the old
    // cluster may answer the restored one
    let everyone: Vec<&String> = std::iter::once(&plan.first).chain(&plan.rejoin).collect();
    let mut asides = Vec::new();
    for n in &everyone {
        let aside = spec.members[*n].aside.as_deref().unwrap_or_default();
        let target = node(n)?;
        let m = &m;
        asides.push(async move { (n.to_string(), member_step::run(target, m, aside, &[], d).await) });
    }
    for (n, r) in join_all(asides).await {
        r.map_err(|f| (n.clone(), f))?;
        let what = "stopped, its data set aside".to_string();
        sink.emit(Event::Member { membership: m.name.clone(), member: n, what, via: plan.first.clone() });
    }
    let first = node(&plan.first)?;
    restore_first(first, &m, &spec.members[&plan.first], &plan.snapshot, d)
        .await
        .map_err(|f| (plan.first.clone(), f))?;
    sink.emit(Event::Member {
        membership: m.name.clone(),
        member: spec.members[&plan.first].name.clone(),
        what: format!("restored from {}, a cluster of one", plan.snapshot.display()),
        via: plan.first.clone(),
    });
    answers(first, &m, d).await.map_err(|f| (plan.first.clone(), f))?;
    let peers: Vec<(&str, &Node<'_>)> = session.held();
    for n in &plan.rejoin {
        let p = Parties { via: first, via_address: address, target: None, peers: Peers(&peers) };
        let member = &spec.members[n];
        let who = Joining { target: node(n)?, node: n, name: &member.name, peer: &member.peer };
        member_step::rejoin(&p, &m, &who, d, sink).await.map_err(|f| (n.clone(), f))?;
    }
    Ok(())
}

fn fail(m: &MembershipPlan, message: &str) -> Fail {
    Fail::msg(Some(&m.spec.phase), format!("{}: {message}", m.name))
}

/// The first member's `restore`, the snapshot streamed to its stdin.
async fn restore_first(
    node: &Node<'_>,
    m: &MembershipPlan,
    member: &crate::schema::Member,
    snapshot: &Path,
    d: &Deadlines,
) -> Result<(), Fail> {
    let command = member.restore.as_deref().unwrap_or_default();
    let mut file =
        std::fs::File::open(snapshot).map_err(|e| fail(m, &format!("cannot read {}: {e}", snapshot.display())))?;
    let env =
        format!("KDEPLOY_MEMBER_NAME={} KDEPLOY_MEMBER_PEER={} ", shell_quote(&member.name), shell_quote(&member.peer));
    let out = node
        .exec_held_input(&format!("{env}exec {}", within(d.hook, command)), &mut file)
        .await
        .map_err(|e| fail(m, &e.to_string()))?;
    if !out.success() {
        return Err(Fail {
            journal: Some(output_tail(&out)),
            ..fail(m, &format!("restore on {} {}", node.host().name(), status_text(out.status, d.hook)))
        });
    }
    Ok(())
}

/// Wait until the restored member lists its cluster (it elects itself
/// leader within an election timeout or two).
async fn answers(node: &Node<'_>, m: &MembershipPlan, d: &Deadlines) -> Result<(), Fail> {
    const TRIES: u32 = 30;
    let mut last = String::new();
    for _ in 0..TRIES {
        match member_step::read_list(node, &m.spec.list, d).await {
            Ok(l) if !l.is_empty() => return Ok(()),
            Ok(_) => last = "an empty list".into(),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    Err(fail(m, &format!("the restored member does not answer after {TRIES} tries: {last}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_first_member_that_answers_is_restored_and_the_others_rejoin_it() {
        let members = names(&["m1", "m2", "m3"]);
        let p = plan("etcd", &members, &names(&["m3", "m2"]), None, "s.db".into()).expect("plan");
        assert_eq!((p.first.as_str(), p.rejoin.clone(), p.unreachable.clone()), ("m2", names(&["m3"]), names(&["m1"])));
        let p = plan("etcd", &members, &members, Some("m3"), "s.db".into()).expect("plan");
        assert_eq!((p.first.as_str(), p.rejoin.clone()), ("m3", names(&["m1", "m2"])));
        let actions = p.actions().join("\n");
        assert!(actions.contains("restore s.db on m3") && actions.contains("m1 joins it"), "{actions}");
    }

    #[test]
    fn a_first_member_that_is_not_one_or_did_not_answer_is_refused() {
        let members = names(&["m1", "m2"]);
        let e = plan("etcd", &members, &names(&["m1"]), Some("w1"), "s.db".into());
        assert_eq!(e, Err(RestoreRefused::NotAMember("w1".into())));
        let e = plan("etcd", &members, &names(&["m1"]), Some("m2"), "s.db".into());
        assert_eq!(e, Err(RestoreRefused::FirstUnreachable("m2".into())));
        assert_eq!(plan("etcd", &members, &[], None, "s.db".into()), Err(RestoreRefused::NoneAnswered));
    }

    #[test]
    fn without_a_snapshot_kept_or_named_nothing_is_planned() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = snapshot_of(dir.path(), "etcd", None);
        assert!(matches!(e, Err(RestoreRefused::NoSnapshot(_))), "{e:?}");
        let e = snapshot_of(dir.path(), "etcd", Some(&dir.path().join("nope.db")));
        assert!(matches!(e, Err(RestoreRefused::NotAFile(_))), "{e:?}");
    }
}
