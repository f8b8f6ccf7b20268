//! Partial availability: `switch --max-unreachable N` goes on without up
//! to N selected nodes that did not answer, as if `--on` had left them
//! out (their entries in the deployer's record stay as they were, and the
//! next switch that reaches them converges them), unless the plan needs
//! them. Skipping a node must not break what the run relies on, so the
//! run is refused before anything changes when:
//!
//! - it upgrades Kubernetes: an upgrade runs on every node
//!   ([`before_plan`]; `upgrade::whole`);
//! - a hook of the plan runs on the skipped node (a drain or a reset hook
//!   delegated to the anchor);
//! - the anchor is skipped and a node joins the control plane through it
//!   (a step that links its phase for the first time and runs a hook
//!   marked `disrupts`: `kubeadm join --control-plane`);
//! - a membership (etcd) changes its members while one of its members, or
//!   the node of a member that would join or leave, is skipped;
//! - a membership with a skipped member is disrupted (members restarted
//!   or stopped) so far that, counting the skipped members down, fewer
//!   than a quorum would be up: with three members and one unreachable,
//!   no member may restart; with five, one at a time may.
//!
//! Decided here without I/O, from the plan and what the definition and
//! the latest record say about the memberships.

use std::collections::BTreeSet;

use super::error::NeedsUnreachable;
use super::plan::{self, NodeWork, Plan, StepRef, Steps};
use super::upgrade::Upgrade;

/// A membership as these rules see it: the phase its members run in and
/// every node kdeploy takes to run one of them (wanted by the definition,
/// or made a member by the latest recorded switch).
#[derive(Debug, Clone)]
pub struct Members<'a> {
    pub name: &'a str,
    pub phase: &'a str,
    pub nodes: BTreeSet<&'a str>,
}

/// The refusal that needs no plan: an upgrade with any node unreachable.
pub fn before_plan(upgrade: Option<&Upgrade>, unreachable: &[String]) -> Result<(), NeedsUnreachable> {
    match upgrade {
        Some(u) if !unreachable.is_empty() => {
            Err(NeedsUnreachable::Upgrade { from: u.from, to: u.to, nodes: unreachable.to_vec() })
        }
        _ => Ok(()),
    }
}

/// Whether `plan` can run without the `skipped` nodes: the first need
/// found among the anchor's and the memberships' (the delegates are
/// [`delegate`]'s, checked as soon as the nodes' steps are known).
pub fn needed(
    plan: &Plan,
    members: &[Members<'_>],
    anchor: Option<&str>,
    skipped: &[String],
) -> Result<(), NeedsUnreachable> {
    if skipped.is_empty() {
        return Ok(());
    }
    joins_through(plan, anchor, skipped)?;
    members.iter().try_for_each(|m| membership(plan, m, skipped))
}

fn is_in(skipped: &[String], node: &str) -> bool {
    skipped.iter().any(|s| s == node)
}

/// A hook the nodes' steps run on a skipped node.
pub fn delegate(work: &[NodeWork], skipped: &[String]) -> Result<(), NeedsUnreachable> {
    plan::delegated(work).find(|d| is_in(skipped, &d.delegate)).map_or(Ok(()), |d| Err(NeedsUnreachable::Delegate(d)))
}

/// A node joining through a skipped anchor: a step that links its phase
/// for the first time (an already joined node's join hook is skipped by
/// its guard) and runs a hook that disrupts the cluster.
fn joins_through(plan: &Plan, anchor: Option<&str>, skipped: &[String]) -> Result<(), NeedsUnreachable> {
    let Some(anchor) = anchor.filter(|a| is_in(skipped, a)) else { return Ok(()) };
    for n in &plan.nodes {
        for s in n.steps.iter().filter(|s| s.from.is_none()) {
            if let Some(h) = s.hooks_run().find(|h| h.disrupts) {
                return Err(NeedsUnreachable::Anchor {
                    node: n.name.clone(),
                    phase: s.phase.clone(),
                    hook: h.name.clone(),
                    anchor: anchor.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// A membership's members changed with one of the nodes involved
/// skipped, or disrupted below its quorum with the skipped members down.
fn membership(plan: &Plan, m: &Members<'_>, skipped: &[String]) -> Result<(), NeedsUnreachable> {
    let waves: Vec<&plan::Wave> = plan.waves.iter().filter(|w| w.phase == m.phase).collect();
    let changes: Vec<&super::membership::Change> =
        waves.iter().filter_map(|w| w.membership.as_ref()).flat_map(|p| &p.changes).collect();
    let down: Vec<&str> = m.nodes.iter().copied().filter(|n| is_in(skipped, n)).collect();
    let involved = changes.iter().filter_map(|c| c.node()).find(|n| is_in(skipped, n));
    if let Some(node) = involved.or(down.first().copied()).filter(|_| !changes.is_empty()) {
        return Err(NeedsUnreachable::Members {
            membership: m.name.to_string(),
            node: node.to_string(),
            changes: changes.iter().map(|c| c.describe()).collect(),
        });
    }
    if down.is_empty() {
        return Ok(());
    }
    let disrupted = most_disrupted_at_once(plan, &waves, m);
    let members = m.nodes.len();
    let quorum = members / 2 + 1;
    let up = members.saturating_sub(down.len() + disrupted.len());
    if disrupted.is_empty() || up >= quorum {
        return Ok(());
    }
    Err(NeedsUnreachable::Quorum {
        membership: m.name.to_string(),
        phase: m.phase.to_string(),
        down: down.into_iter().map(str::to_string).collect(),
        disrupted,
        up,
        members,
        quorum,
    })
}

/// The members one batch of the membership's waves disrupts together, the
/// largest such batch (batches run one after the other, each waiting for
/// its checks: the members of one batch are the most down at once).
fn most_disrupted_at_once(plan: &Plan, waves: &[&plan::Wave], m: &Members<'_>) -> Vec<String> {
    let steps = Steps::of(plan);
    let disrupts = |r: &StepRef| m.nodes.contains(r.node.as_str()) && steps.find(r).is_some_and(|(_, s)| s.disrupts());
    waves
        .iter()
        .flat_map(|w| &w.batches)
        .map(|b| b.steps.iter().filter(|r| disrupts(r)).map(|r| r.node.clone()).collect::<Vec<_>>())
        // the first of the largest: the one the run would reach first
        .reduce(|most, b| if b.len() > most.len() { b } else { most })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::closure::{Hook, When};
    use crate::deploy::error::HookOn;
    use crate::deploy::membership::{Change, Listed, MembershipPlan};
    use crate::deploy::plan::{Batch, Step, Wave};
    use crate::deploy::upgrade::Version;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn step(phase: &str, from: Option<u64>, restart: bool) -> Step {
        let mut s = Step { phase: phase.into(), from, to: Some(2), ..Default::default() };
        if restart {
            s.units.restart = vec![format!("{phase}.service")];
        }
        s
    }

    fn hook(name: &str, delegate: Option<&str>, disrupts: bool) -> Hook {
        Hook {
            delegate: delegate.map(str::to_string),
            disrupts,
            name: name.into(),
            run: "".into(),
            unless: None,
            upgrade: false,
            when: When::Post,
        }
    }

    /// A plan of `steps` per node, in waves of one batch per given list
    /// of nodes, for each phase in `batches`.
    fn plan(steps: Vec<(&str, Step)>, batches: &[(&str, &[&[&str]])]) -> Plan {
        let mut nodes: Vec<NodeWork> = Vec::new();
        for (n, s) in steps {
            match nodes.iter_mut().find(|w| w.name == n) {
                Some(w) => w.steps.push(s),
                None => nodes.push(NodeWork { name: n.into(), steps: vec![s], ..Default::default() }),
            }
        }
        let waves = batches
            .iter()
            .map(|(phase, bs)| Wave {
                phase: phase.to_string(),
                batches: bs
                    .iter()
                    .map(|ns| Batch { steps: ns.iter().map(|n| StepRef::new(n, phase)).collect(), change: None })
                    .collect(),
                membership: None,
            })
            .collect();
        Plan { nodes, waves, record: None, snapshots: Vec::new(), removals: Vec::new() }
    }

    fn etcd<'a>(nodes: &[&'a str]) -> Members<'a> {
        Members { name: "etcd", phase: "etcd", nodes: nodes.iter().copied().collect() }
    }

    #[test]
    fn a_change_on_the_others_outside_the_membership_goes_on() {
        // the lab's case: containerd restarts on two of three etcd members
        let p = plan(
            vec![("m", step("container-runtime", Some(1), true)), ("w1", step("container-runtime", Some(1), true))],
            &[("container-runtime", &[&["m", "w1"]])],
        );
        assert_eq!(needed(&p, &[etcd(&["m", "w1", "w2"])], Some("m"), &v(&["w2"])), Ok(()));
        // an etcd step that restarts nothing (a file no unit watches) too
        let p = plan(vec![("m", step("etcd", Some(1), false))], &[("etcd", &[&["m"]])]);
        assert_eq!(needed(&p, &[etcd(&["m", "w1", "w2"])], Some("m"), &v(&["w2"])), Ok(()));
    }

    #[test]
    fn restarting_a_member_with_another_down_is_refused_below_quorum_only() {
        let p = plan(
            vec![("m", step("etcd", Some(1), true)), ("w1", step("etcd", Some(1), true))],
            &[("etcd", &[&["m"], &["w1"]])],
        );
        let three = needed(&p, &[etcd(&["m", "w1", "w2"])], None, &v(&["w2"])).unwrap_err();
        let want = NeedsUnreachable::Quorum {
            membership: "etcd".into(),
            phase: "etcd".into(),
            down: v(&["w2"]),
            disrupted: v(&["m"]),
            up: 1,
            members: 3,
            quorum: 2,
        };
        assert_eq!(three, want);
        let text = three.to_string();
        assert!(text.contains("w2 unreachable") && text.contains("1 of 3 members"), "{text}");
        // five members, one down, one restarted at a time: three stay up
        assert_eq!(needed(&p, &[etcd(&["m", "w1", "w2", "w3", "w4"])], None, &v(&["w2"])), Ok(()));
        // ... but not two at a time
        let together = plan(
            vec![("m", step("etcd", Some(1), true)), ("w1", step("etcd", Some(1), true))],
            &[("etcd", &[&["m", "w1"]])],
        );
        let e = needed(&together, &[etcd(&["m", "w1", "w2", "w3", "w4"])], None, &v(&["w2"])).unwrap_err();
        assert!(matches!(e, NeedsUnreachable::Quorum { up: 2, quorum: 3, .. }), "{e:?}");
        // a skipped node that is no member leaves the membership alone
        assert_eq!(needed(&p, &[etcd(&["m", "w1", "w3"])], None, &v(&["w2"])), Ok(()));
    }

    #[test]
    fn a_membership_change_needs_every_member() {
        let member =
            Listed { id: "a".into(), started: true, name: "w3".into(), peer: "p".into(), ..Default::default() };
        let mut p = plan(vec![("m", step("etcd", Some(1), false))], &[("etcd", &[&["m"]])]);
        p.waves[0].membership = Some(MembershipPlan {
            name: "etcd".into(),
            spec: crate::schema::Membership { phase: "etcd".into(), ..Default::default() },
            via: "m".into(),
            via_address: String::new(),
            changes: vec![Change::Leave { node: Some("w3".into()), member, down: false }],
        });
        // w2, a member, is down while w3 leaves
        let e = needed(&p, &[etcd(&["m", "w1", "w2", "w3"])], None, &v(&["w2"])).unwrap_err();
        assert!(matches!(&e, NeedsUnreachable::Members { node, .. } if node == "w2"), "{e:?}");
        assert!(e.to_string().contains("remove member w3 (p)"), "{e}");
        // the leaving node itself is down, though the definition no longer names it
        let e = needed(&p, &[etcd(&["m", "w1", "w2"])], None, &v(&["w3"])).unwrap_err();
        assert!(matches!(&e, NeedsUnreachable::Members { node, .. } if node == "w3"), "{e:?}");
        // every node involved reached: the change goes on
        assert_eq!(needed(&p, &[etcd(&["m", "w1", "w2", "w3"])], None, &v(&["x"])), Ok(()));
    }

    #[test]
    fn hooks_on_a_skipped_node_and_joins_through_a_skipped_anchor_are_refused() {
        let mut drained = step("kubelet", Some(1), true);
        drained.hooks = vec![hook("drain", Some("cp1"), false)];
        let p = plan(vec![("w1", drained)], &[("kubelet", &[&["w1"]])]);
        let e = delegate(&p.nodes, &v(&["cp1"])).unwrap_err();
        let want = NeedsUnreachable::Delegate(HookOn {
            node: "w1".into(),
            phase: "kubelet".into(),
            hook: "drain".into(),
            delegate: "cp1".into(),
        });
        assert_eq!(e, want);
        assert!(e.to_string().contains("runs on cp1, which is unreachable"), "{e}");
        assert_eq!(delegate(&p.nodes, &v(&["w2"])), Ok(()));

        let join = |from| {
            let mut s = step("control-plane", from, false);
            s.hooks = vec![hook("kubeadm-join-control-plane", None, true)];
            plan(vec![("cp2", s)], &[("control-plane", &[&["cp2"]])])
        };
        let e = needed(&join(None), &[], Some("cp1"), &v(&["cp1"])).unwrap_err();
        assert!(matches!(&e, NeedsUnreachable::Anchor { node, anchor, .. } if node == "cp2" && anchor == "cp1"));
        // already joined (its guard skips the join), or the anchor reached
        assert_eq!(needed(&join(Some(1)), &[], Some("cp1"), &v(&["cp1"])), Ok(()));
        assert_eq!(needed(&join(None), &[], Some("cp1"), &v(&["w9"])), Ok(()));
    }

    #[test]
    fn an_upgrade_needs_every_node() {
        let u =
            Upgrade { from: Version { major: 1, minor: 30, patch: 1 }, to: Version { major: 1, minor: 31, patch: 0 } };
        let e = before_plan(Some(&u), &v(&["w2"])).unwrap_err();
        assert!(e.to_string().contains("1.30.1 -> 1.31.0") && e.to_string().contains("w2 is unreachable"), "{e}");
        assert_eq!(before_plan(Some(&u), &[]), Ok(()));
        assert_eq!(before_plan(None, &v(&["w2"])), Ok(()));
    }
}
