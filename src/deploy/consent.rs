//! Asking before a plan that cannot be taken back by a rollback: it
//! resets nodes (`reset`, `switch --prune`), removes a phase whose reset
//! hooks destroy state (a role taken away: `kubeadm reset`, etcd data),
//! removes etcd members or a node that does not answer, or runs the hooks of an upgrade (a drain evicts
//! every pod of a node). [`destructive`] reads that off the
//! plan (a pure value, so the list is what will happen, not a guess);
//! the run asks through [`Consent`] after planning and before anything
//! changes: on a terminal the operator answers, without one the run is
//! refused unless `--yes` gave consent beforehand (Kubespray's
//! `reset.yml` asks "Are you sure"; a script must say so explicitly).

use std::fmt;
use std::sync::Arc;

use super::error::Error;
use super::membership::Change;
use super::plan::Plan;
use crate::closure::When;

/// The question put to the operator: shown the plan's destructive
/// actions, true to go on.
pub type Ask = Arc<dyn Fn(&[String]) -> bool + Send + Sync>;

/// How a run gets the operator's consent to a destructive plan.
#[derive(Clone, Default)]
pub enum Consent {
    /// Given beforehand (`--yes`; a library caller that decided itself).
    #[default]
    Given,
    /// Ask the operator.
    Ask(Ask),
    /// No one to ask (no terminal) and not given: a destructive plan is
    /// refused before it changes anything.
    Absent,
}

impl fmt::Debug for Consent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Consent::Given => "Given",
            Consent::Ask(_) => "Ask",
            Consent::Absent => "Absent",
        })
    }
}

impl Consent {
    /// `None` when the run may go on; otherwise the refusal.
    pub fn refusal(&self, plan: &Plan) -> Option<Error> {
        self.refusal_for(destructive(plan))
    }

    /// [`Consent::refusal`] for an operation that lists what it will do
    /// itself (`restore`); nothing listed: nothing to ask.
    pub fn refusal_for(&self, actions: Vec<String>) -> Option<Error> {
        if actions.is_empty() {
            return None;
        }
        match self {
            Consent::Given => None,
            Consent::Ask(ask) if ask(&actions) => None,
            Consent::Ask(_) => Some(Error::NotConfirmed { asked: true, actions }),
            Consent::Absent => Some(Error::NotConfirmed { asked: false, actions }),
        }
    }
}

/// What the plan does that a rollback does not undo, a line each, in
/// the plan's node order (empty: nothing to ask about).
pub fn destructive(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    for n in &plan.nodes {
        if n.resets() {
            out.push(format!("reset {}: every kdeploy phase removed, its reset hooks run", n.name));
            continue;
        }
        for s in &n.steps {
            // the hooks this step runs: its reset hooks when it unlinks,
            // else the upgrade ones among its pre and post hooks
            let linking = s.to.is_some();
            let hooks: Vec<&str> = s
                .hooks
                .iter()
                .filter(|h| (h.when == When::Reset) != linking && (!linking || h.upgrade))
                .map(|h| h.name.as_str())
                .collect();
            if hooks.is_empty() {
                continue;
            }
            let what = if linking { "upgrade" } else { "remove phase" };
            out.push(format!("{what} {} on {}: {}", s.phase, n.name, hooks.join(", ")));
        }
    }
    for m in plan.waves.iter().filter_map(|w| w.membership.as_ref()) {
        for c in &m.changes {
            if matches!(c, Change::Leave { .. }) {
                out.push(c.describe());
            }
        }
    }
    for r in &plan.removals {
        let api = r.via.as_ref().map(|v| format!(", deleted from the cluster's API on {v}")).unwrap_or_default();
        out.push(format!("remove {} without reaching it (it does not answer){api}", r.node));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::closure::Hook;
    use crate::deploy::membership::{Listed, MembershipPlan};
    use crate::deploy::plan::{Ending, NodeWork, Removal, Step, Wave};
    use crate::schema::Membership;

    fn hook(name: &str, when: When, upgrade: bool) -> Hook {
        Hook { delegate: None, disrupts: false, name: name.into(), run: "".into(), unless: None, upgrade, when }
    }

    fn step(phase: &str, to: Option<u64>, hooks: Vec<Hook>) -> Step {
        Step { phase: phase.into(), from: Some(1), to, hooks, ..Default::default() }
    }

    fn listed(name: &str) -> Listed {
        let peer = format!("https://{name}:2380");
        Listed { id: "1".into(), started: true, name: name.into(), peer, client: String::new(), learner: false }
    }

    fn plan(nodes: Vec<NodeWork>) -> Plan {
        Plan { nodes, waves: vec![], record: None, snapshots: Vec::new(), removals: Vec::new() }
    }

    fn node(name: &str, steps: Vec<Step>) -> NodeWork {
        NodeWork { name: name.into(), steps, ..Default::default() }
    }

    #[test]
    fn a_plain_change_asks_nothing() {
        // a restart, a new file, a rollback's unlinked phase without reset
        // hooks, an upgrade hook a linking step does not run (reset-only)
        let p = plan(vec![
            node("n1", vec![step("etcd", Some(2), vec![hook("etcd-data", When::Reset, false)])]),
            node(
                "n2",
                vec![step("custom", None, vec![]), step("kubelet", Some(2), vec![hook("x", When::Post, false)])],
            ),
        ]);
        assert_eq!(destructive(&p), Vec::<String>::new());
        assert!(Consent::Absent.refusal(&p).is_none());
    }

    #[test]
    fn resets_removals_with_reset_hooks_upgrades_and_leaving_members_are_listed() {
        let mut gone = node("w3", vec![step("cni", None, vec![hook("drain-and-delete", When::Reset, false)])]);
        gone.ending = Ending::Forget;
        let p = Plan {
            waves: vec![Wave {
                phase: "etcd".into(),
                batches: vec![],
                membership: Some(MembershipPlan {
                    name: "etcd".into(),
                    spec: Membership { phase: "etcd".into(), ..Default::default() },
                    via: "w1".into(),
                    via_address: String::new(),
                    changes: vec![Change::Leave { node: Some("w2".into()), member: listed("w2"), down: false }],
                }),
            }],
            ..plan(vec![
                gone,
                node("w2", vec![step("etcd", None, vec![hook("etcd-data", When::Reset, false)])]),
                node(
                    "w1",
                    vec![step(
                        "kubelet",
                        Some(2),
                        vec![hook("drain", When::Pre, true), hook("uncordon", When::Post, true)],
                    )],
                ),
            ])
        };
        let got = destructive(&p);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got[0].starts_with("reset w3"), "{got:?}");
        assert_eq!(got[1], "remove phase etcd on w2: etcd-data");
        assert_eq!(got[2], "upgrade kubelet on w1: drain, uncordon");
        assert!(got[3].contains("w2"), "{got:?}");

        let dead = Removal { node: "w4".into(), via: Some("cp1".into()), run: Some("kubectl delete node".into()) };
        let p = Plan { removals: vec![dead], ..plan(vec![]) };
        assert!(!p.unchanged(), "a plan that removes a node is not a no-op");
        assert_eq!(
            destructive(&p),
            ["remove w4 without reaching it (it does not answer), deleted from the cluster's API on cp1"]
        );
    }

    #[test]
    fn consent_given_asked_or_absent() {
        let mut gone = node("w3", vec![]);
        gone.ending = Ending::Forget;
        let p = plan(vec![gone]);
        assert!(Consent::Given.refusal(&p).is_none());
        assert!(Consent::Ask(Arc::new(|a: &[String]| a.len() == 1)).refusal(&p).is_none());
        let no = Consent::Ask(Arc::new(|_: &[String]| false)).refusal(&p).map(|e| e.to_string()).unwrap_or_default();
        assert!(no.starts_with("not confirmed") && no.contains("reset w3"), "{no}");
        let absent = Consent::Absent.refusal(&p).map(|e| e.to_string()).unwrap_or_default();
        assert!(absent.contains("--yes") && absent.contains("reset w3"), "{absent}");
    }
}
