//! The plan every operation produces and the one executor runs
//! (`execute.rs`): per node, what to push and stage, the phase-link moves
//! ([`Step`]s) with their unit actions, and what to commit; across nodes,
//! the waves (one phase at a time, barrier between them) and, inside a
//! wave, the rollout batches (barrier between batches). `switch` and
//! `rollback` differ only in how they build it (`plan_switch.rs`,
//! `plan_rollback.rs`); a plan is computed before anything runs and
//! contains no I/O handle, so it can be printed (`--dry-run`) and tested
//! as a value. A batch names its steps by node and phase ([`StepRef`]),
//! not by position, so a plan reads by names; [`Steps`] finds them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::error::{Error, HookOn};
use super::membership::{Change, MembershipPlan};
use super::record::Generation;
use super::rollout::{self, Entry, Rollout};
use crate::closure::{Check, Hook, Source, When};
use crate::node::{Manifest, UnitPlan};
use crate::store::Digest;

/// One phase as recorded on the node when its current generation was
/// committed (see `state.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedPhase {
    pub hash: Digest,
    /// The generation the phase was staged in (and linked to, if active).
    pub generation: u64,
    pub active: bool,
}

/// Paths that differ between the live and the new manifest of a phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

impl FileDiff {
    pub fn between(old: Option<&Manifest>, new: Option<&Manifest>) -> FileDiff {
        let empty = Manifest::default();
        let a = old.unwrap_or(&empty).files_by_path();
        let b = new.unwrap_or(&empty).files_by_path();
        let mut d = FileDiff::default();
        for (p, f) in &b {
            match a.get(p) {
                None => d.added.push(p.to_string()),
                Some(o) if o != f => d.changed.push(p.to_string()),
                _ => {}
            }
        }
        d.removed = a.keys().filter(|p| !b.contains_key(*p)).map(|p| p.to_string()).collect();
        d
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// What changes inside each changed file, by (node, phase, path): the
/// lines `diff.rs` wrote for a dry run.
pub type Diffs = BTreeMap<(String, String, String), String>;

/// One phase link to move on one node, with everything that goes with it.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub phase: String,
    /// The generation the link points into now (`None`: not linked).
    pub from: Option<u64>,
    /// The generation it points into after the step (`None`: unlinked).
    pub to: Option<u64>,
    pub from_manifest: Option<Manifest>,
    pub to_manifest: Option<Manifest>,
    pub files: FileDiff,
    /// What systemd does going forward (decided with every file the
    /// node's plan changes, earlier phases included).
    pub units: UnitPlan,
    /// Hooks and checks going forward; a rollback runs none (they live in
    /// the closure, which it does not evaluate).
    pub hooks: Vec<Hook>,
    pub checks: Vec<Check>,
    /// The phase's self-rollback deadline (its `selfRollback`): armed on
    /// the node before the step, confirmed over a new connection after its
    /// checks (`step::forward`). `None`: not armed (the phase's setting, or
    /// a rollback or reset plan).
    pub guard: Option<std::time::Duration>,
}

impl Step {
    /// The self-rollback deadline the node is armed with before this step
    /// (`guard`, when the step links a generation; unlinking is never armed).
    pub fn armed(&self) -> Option<std::time::Duration> {
        self.guard.filter(|_| self.to.is_some())
    }

    /// Whether the node or the cluster is disturbed: a unit restarted or
    /// stopped, a hook that says so (a control plane joining), or an
    /// upgrade hook (`kubeadm upgrade` restarts static pods, a drain
    /// evicts pods).
    pub fn disrupts(&self) -> bool {
        !self.units.restart.is_empty() || !self.units.stop.is_empty() || self.runs_kubeadm_like()
    }

    /// Carries a hook that changes the cluster itself (marked `disrupts`
    /// or `upgrade`), not only this node's services.
    fn runs_kubeadm_like(&self) -> bool {
        self.hooks.iter().any(|h| h.upgrade || h.disrupts)
    }

    /// The hooks this step runs: a linking step its pre and post hooks, an
    /// unlinking one its reset hooks.
    pub fn hooks_run(&self) -> impl Iterator<Item = &Hook> {
        self.hooks.iter().filter(|h| (h.when == When::Reset) == self.to.is_none())
    }
}

/// Every hook the plan's steps run ([`Step::hooks_run`]) on a node other
/// than their own.
pub fn delegated(nodes: &[NodeWork]) -> impl Iterator<Item = HookOn> + '_ {
    nodes.iter().flat_map(|n| {
        n.steps.iter().flat_map(move |s| {
            s.hooks_run().filter_map(move |h| {
                let delegate = h.delegate.as_ref().filter(|d| **d != n.name)?;
                let hook = h.name.clone();
                Some(HookOn { node: n.name.clone(), phase: s.phase.clone(), hook, delegate: delegate.clone() })
            })
        })
    })
}

/// A hook of some step that runs on a node `held` does not name: the
/// run cannot do it, and says so before touching anything. Only the hooks
/// the step runs count ([`Step::hooks_run`]: a worker's drain, delegated
/// to the anchor, does not keep a switch `--on` that worker from running).
pub fn unheld_delegate(nodes: &[NodeWork], held: &[&str]) -> Result<(), Error> {
    delegated(nodes).find(|d| !held.contains(&d.delegate.as_str())).map_or(Ok(()), |d| Err(Error::UnheldDelegate(d)))
}

/// What a node records when its steps all succeeded.
#[derive(Debug, Clone)]
pub struct Commit {
    pub generation: u64,
    pub hash: Digest,
    /// The phase record to write with it; `None` when the generation has
    /// one already (a rollback returns to a committed generation).
    pub record: Option<BTreeMap<String, RecordedPhase>>,
}

/// Everything one node does in a run.
#[derive(Debug, Clone, Default)]
pub struct NodeWork {
    pub name: String,
    /// Blobs the new manifests name, with the source of their bytes (the
    /// executor asks the node which it lacks).
    pub push: BTreeMap<Digest, Source>,
    /// Phases staged in `stage_generation` before anything goes live.
    pub stage: Vec<(String, Manifest)>,
    pub stage_generation: u64,
    pub steps: Vec<Step>,
    /// What the node does once every step of the run succeeded.
    pub ending: Ending,
    /// How this node's disrupting steps are rationed (`None`: with every
    /// other node at once).
    pub rollout: Option<Rollout>,
    /// The anchor: in every wave its disrupting step runs first, in a
    /// batch of its own (`kubeadm upgrade apply` before any other control
    /// plane's `kubeadm upgrade node`).
    pub leads: bool,
}

/// How a node's work ends once every step of the run succeeded, and so
/// what a failure does to its steps.
#[derive(Debug, Clone, Default)]
pub enum Ending {
    /// Nothing to commit (the node is held only, or already there).
    #[default]
    Nothing,
    /// Commit a generation (`switch`, `rollback`); a failed run puts the
    /// node's touched steps back.
    Commit(Commit),
    /// A reset (`plan_reset.rs`): the node program forgets kdeploy on the
    /// node; a failed step is not undone (what a reset hook removed cannot
    /// come back), the next reset finishes it.
    Forget,
}

impl NodeWork {
    /// The generation to commit, if the node ends with a commit.
    pub fn commit(&self) -> Option<&Commit> {
        match &self.ending {
            Ending::Commit(c) => Some(c),
            _ => None,
        }
    }

    /// A reset: it forgets kdeploy at the end and is never undone.
    pub fn resets(&self) -> bool {
        matches!(self.ending, Ending::Forget)
    }

    /// Nothing to push, stage, move, commit or reset.
    pub fn unchanged(&self) -> bool {
        self.stage.is_empty() && self.steps.is_empty() && matches!(self.ending, Ending::Nothing)
    }

    /// Phases staged without a step (generate-only phases).
    pub fn staged_only(&self) -> Vec<String> {
        self.stage.iter().map(|(p, _)| p).filter(|p| !self.steps.iter().any(|s| &s.phase == *p)).cloned().collect()
    }
}

/// One phase across nodes: batches run one after the other, the steps of a
/// batch concurrently.
#[derive(Debug, Clone)]
pub struct Wave {
    pub phase: String,
    pub batches: Vec<Batch>,
    /// The membership changed in this phase, its changes each in a batch
    /// of their own.
    pub membership: Option<MembershipPlan>,
}

/// One step of a plan, by name: the node it runs on and the phase whose
/// link it moves (a node moves each phase's link once in a plan).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepRef {
    pub node: String,
    pub phase: String,
}

impl StepRef {
    pub fn new(node: &str, phase: &str) -> StepRef {
        StepRef { node: node.to_string(), phase: phase.to_string() }
    }
}

/// Steps run together, and the membership change they go with (an index
/// into the wave's `membership.changes`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batch {
    pub steps: Vec<StepRef>,
    pub change: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Plan {
    /// In the order of the nodes the executor was given.
    pub nodes: Vec<NodeWork>,
    pub waves: Vec<Wave>,
    /// The deployer record written when the run ends with every commit
    /// done (`None`: the history already says where the nodes are).
    pub record: Option<Generation>,
    /// Snapshots taken before the first change (`snapshot.rs`).
    pub snapshots: Vec<super::snapshot::SnapshotPlan>,
    /// Nodes removed without being reached, after the waves (`prune.rs`).
    pub removals: Vec<Removal>,
}

/// A node removed from the cluster without being reached (it did not
/// answer a `switch --prune`): the cluster's `removeNode` command (the
/// Kubernetes Node deleted through the API) run on `via`, a held control
/// plane, with `KDEPLOY_NODE_NAME` set to `node`. Its etcd member leaves
/// through the membership's plan, like any member the definition does not
/// want. `via` is `None` when the cluster has no such command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub node: String,
    pub via: Option<String>,
    pub run: Option<String>,
}

impl Plan {
    /// Nothing for any node to do, and nobody to remove.
    pub fn unchanged(&self) -> bool {
        self.nodes.iter().all(NodeWork::unchanged) && self.removals.is_empty()
    }
}

/// The steps a plan's waves name, found by name: each node's place in
/// `nodes` is looked up once, so a wave of thousands of steps is
/// resolved in time linear in its size.
pub struct Steps<'p> {
    plan: &'p Plan,
    at: HashMap<&'p str, usize>,
}

impl<'p> Steps<'p> {
    pub fn of(plan: &'p Plan) -> Steps<'p> {
        Steps { plan, at: plan.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect() }
    }

    pub fn plan(&self) -> &'p Plan {
        self.plan
    }

    /// The place in `nodes` of the node `r` runs on, and the step.
    pub fn find(&self, r: &StepRef) -> Option<(usize, &'p Step)> {
        let &i = self.at.get(r.node.as_str())?;
        Some((i, self.plan.nodes[i].steps.iter().find(|s| s.phase == r.phase)?))
    }

    /// The first step a batch names that the plan does not hold (a
    /// planner's mistake: the executor refuses such a plan).
    pub fn unknown(&self) -> Option<&'p StepRef> {
        let mut named = self.plan.waves.iter().flat_map(|w| &w.batches).flat_map(|b| &b.steps);
        named.find(|r| self.find(r).is_none())
    }

    /// [`Steps::find`], for a plan with no [`Steps::unknown`] step.
    pub fn get(&self, r: &StepRef) -> (usize, &'p Step) {
        self.find(r).expect("the executor checks that the plan holds every step it names")
    }
}

/// Waves for `nodes`: phases that get a generation in `order` (unknown ones
/// after, by name), then phases unlinked, in reverse of that order. Inside
/// a wave, steps that restart or stop units go in the batches of each
/// node's rollout (`rollout.rs`); the others with the first batch. A
/// phase with membership changes runs each in a batch of its own, with
/// its node's step: joins (and removals of members never started) before
/// the other batches, members leaving after them.
pub fn waves(order: &[String], nodes: &[NodeWork], memberships: &[MembershipPlan]) -> Vec<Wave> {
    let mut all: Vec<&String> = order.iter().collect();
    let mut extra: Vec<&String> =
        nodes.iter().flat_map(|n| n.steps.iter().map(|s| &s.phase)).filter(|p| !order.contains(p)).collect();
    extra.sort();
    extra.dedup();
    all.extend(extra);
    let wave = |phase: &String, linked: bool| {
        let membership = memberships.iter().find(|m| linked && &m.spec.phase == phase);
        let by_change = |n: &NodeWork| membership.is_some_and(|m| m.changes.iter().any(|c| c.node() == Some(&n.name)));
        let lead = nodes.iter().find(|n| n.leads).map(|n| n.name.as_str());
        let entries: Vec<_> = nodes
            .iter()
            .filter(|n| !by_change(n))
            .filter_map(|n| {
                let step = step_of(n, phase, linked)?;
                let mut r = n.rollout.unwrap_or(Rollout::ALL_AT_ONCE);
                // kubeadm (init, join, upgrade) on etcd and control-plane
                // nodes: one at a time, whatever the rollout setting
                if step.runs_kubeadm_like() && r.group != rollout::Group::Workers {
                    r.serial = rollout::Serial::Count(1);
                }
                let lead = lead == Some(n.name.as_str());
                Some(Entry { step: StepRef::new(&n.name, phase), lead, disrupts: step.disrupts(), rollout: r })
            })
            .collect();
        let regular = rollout::batches(&entries).into_iter().map(|steps| Batch { steps, change: None });
        let Some(m) = membership else {
            return (!entries.is_empty()).then(|| Wave {
                phase: phase.clone(),
                batches: regular.collect(),
                membership: None,
            });
        };
        let change_batch = |(j, c): (usize, &Change)| {
            let n = c.node().and_then(|n| nodes.iter().find(|w| w.name == n));
            let steps =
                n.and_then(|n| step_of(n, phase, true).map(|_| StepRef::new(&n.name, phase))).into_iter().collect();
            Batch { steps, change: Some(j) }
        };
        let leaving_last =
            |c: &&Change| matches!(c, Change::Leave { member, down: false, .. } if member.started && !member.learner);
        let first = m.changes.iter().enumerate().filter(|(_, c)| !leaving_last(c)).map(change_batch);
        let last = m.changes.iter().enumerate().filter(|(_, c)| leaving_last(c)).map(change_batch);
        let batches = first.chain(regular).chain(last).collect();
        Some(Wave { phase: phase.clone(), batches, membership: Some(m.clone()) })
    };
    let linked = all.iter().filter_map(|p| wave(p, true));
    let unlinked: Vec<Wave> = all.iter().rev().filter_map(|p| wave(p, false)).collect();
    linked.chain(unlinked).collect()
}

/// The node's step of `phase` that links it (`linked`) or unlinks it.
fn step_of<'n>(n: &'n NodeWork, phase: &str, linked: bool) -> Option<&'n Step> {
    n.steps.iter().find(|s| s.phase == phase && s.to.is_some() == linked)
}

/// The plan as `--dry-run` prints it: per node, each step with its files
/// and unit actions, and the phases only staged.
pub fn render(plan: &Plan) -> String {
    render_with(plan, &Diffs::new())
}

/// [`render`], with what changes inside each file (`diff.rs`) under it.
pub fn render_with(plan: &Plan, diffs: &Diffs) -> String {
    let mut s = String::new();
    let g = |x: Option<u64>| x.map_or("none".to_string(), |g| g.to_string());
    for snap in &plan.snapshots {
        let _ = writeln!(s, "first: a snapshot of {} from {}", snap.membership, snap.from.join(" or "));
    }
    for n in &plan.nodes {
        if n.steps.is_empty() && n.stage.is_empty() && !n.resets() {
            let _ = writeln!(s, "{}: unchanged", n.name);
            continue;
        }
        let _ = writeln!(s, "{}: {}", n.name, if n.resets() { "reset" } else { "changed" });
        for st in &n.steps {
            let what = if st.to.is_some() { "activate" } else { "remove" };
            let _ = writeln!(s, "  {} : {what} (generation {} -> {})", st.phase, g(st.from), g(st.to));
            for (k, v) in [("add", &st.files.added), ("change", &st.files.changed), ("remove", &st.files.removed)] {
                for f in v {
                    let _ = writeln!(s, "      {k:<7}{f}");
                    for l in
                        diffs.get(&(n.name.clone(), st.phase.clone(), f.clone())).into_iter().flat_map(|d| d.lines())
                    {
                        let _ = writeln!(s, "          {l}");
                    }
                }
            }
            let u = &st.units;
            for (k, v) in [("stop", &u.stop), ("start", &u.start), ("restart", &u.restart), ("reload", &u.reload)] {
                if !v.is_empty() {
                    let _ = writeln!(s, "      {k} {}", v.join(", "));
                }
            }
            for h in st.hooks.iter().filter(|h| h.upgrade || h.delegate.is_some()) {
                let on = h.delegate.as_deref().filter(|d| *d != n.name).map_or(String::new(), |d| format!(" on {d}"));
                let guard = if h.unless.is_some() { " (unless done)" } else { "" };
                let _ = writeln!(s, "      {} hook {}{on}{guard}", h.when.as_str(), h.name);
            }
        }
        for p in n.staged_only() {
            let _ = writeln!(s, "  {p} : stage only (generated, not activated)");
        }
        if n.resets() {
            let _ = writeln!(s, "  then: forget (directories kdeploy created, /var/lib/kdeploy)");
        }
    }
    for w in plan.waves.iter().filter(|w| w.batches.len() > 1 || w.membership.is_some()) {
        let batches: Vec<String> = w.batches.iter().map(|b| format!("[{}]", batch_text(w, b))).collect();
        let _ = writeln!(s, "rollout of {}: {}", w.phase, batches.join(" then "));
    }
    s
}

/// A batch's nodes, and its membership change if it has one.
fn batch_text(w: &Wave, b: &Batch) -> String {
    let mut s = b.steps.iter().map(|r| r.node.as_str()).collect::<Vec<_>>().join(", ");
    if let (Some(m), Some(j)) = (&w.membership, b.change) {
        let sep = if s.is_empty() { "" } else { ": " };
        let _ = write!(s, "{sep}{} {} via {}", m.name, m.changes[j].describe(), m.via);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(phase: &str, from: Option<u64>, to: Option<u64>) -> Step {
        Step {
            phase: phase.into(),
            from,
            to,
            from_manifest: None,
            to_manifest: None,
            files: FileDiff::default(),
            units: UnitPlan::default(),
            hooks: vec![],
            checks: vec![],
            guard: None,
        }
    }

    fn node(name: &str, steps: Vec<Step>) -> NodeWork {
        NodeWork { name: name.into(), steps, ..Default::default() }
    }

    /// The nodes of a batch's steps.
    fn names(b: &Batch) -> Vec<String> {
        b.steps.iter().map(|r| r.node.clone()).collect()
    }

    #[test]
    fn waves_follow_phase_order_then_removals_reversed() {
        let order: Vec<String> = ["a", "b", "c", "d"].map(String::from).into();
        let nodes = vec![
            node("n1", vec![step("b", Some(3), Some(4)), step("c", Some(3), None), step("z", None, Some(4))]),
            node("n2", vec![step("d", None, Some(4)), step("a", Some(1), None), step("b", Some(2), Some(4))]),
        ];
        let w = waves(&order, &nodes, &[]);
        let got: Vec<(&str, Vec<String>)> = w.iter().map(|w| (w.phase.as_str(), names(&w.batches[0]))).collect();
        let want = [("b", ["n1", "n2"].as_slice()), ("d", &["n2"]), ("z", &["n1"]), ("c", &["n1"]), ("a", &["n2"])];
        assert_eq!(got, want.map(|(p, ns)| (p, ns.iter().map(|n| n.to_string()).collect::<Vec<_>>())));
        // each step named is the node's step of the wave's phase, linking or unlinking as the wave does
        let plan = Plan { nodes, waves: w, record: None, snapshots: Vec::new(), removals: Vec::new() };
        let steps = Steps::of(&plan);
        assert_eq!(steps.unknown(), None);
        for w in &plan.waves {
            let (_, s) = steps.get(&w.batches[0].steps[0]);
            assert_eq!(s.phase, w.phase);
        }
        assert_eq!(steps.get(&StepRef::new("n1", "c")).1.to, None, "c is unlinked on n1");
        assert!(steps.find(&StepRef::new("n1", "a")).is_none(), "n1 has no step of a");
    }

    #[test]
    fn only_the_hooks_a_step_runs_need_their_delegate_held() {
        let drain = |when| Hook {
            delegate: Some("cp1".into()),
            disrupts: false,
            name: "drain".into(),
            run: "".into(),
            unless: None,
            upgrade: false,
            when,
        };
        let with = |from, to, when| {
            let mut s = step("cni", from, to);
            s.hooks = vec![drain(when)];
            vec![node("w1", vec![s])]
        };
        // a switch links the phase: its reset hook does not run, its post hook does
        let on_cp1 = |r| matches!(r, Err(Error::UnheldDelegate(d)) if d.delegate == "cp1");
        assert!(unheld_delegate(&with(None, Some(1), When::Reset), &["w1"]).is_ok());
        assert!(on_cp1(unheld_delegate(&with(None, Some(1), When::Post), &["w1"])));
        // a reset unlinks it: the reset hook runs, on cp1
        assert!(on_cp1(unheld_delegate(&with(Some(1), None, When::Reset), &["w1"])));
        assert!(unheld_delegate(&with(Some(1), None, When::Reset), &["w1", "cp1"]).is_ok());
    }

    #[test]
    fn a_disrupting_hook_rolls_its_step_and_the_lead_goes_first() {
        use crate::closure::{Hook, When};
        let order: Vec<String> = ["control-plane"].map(String::from).into();
        let hook = |disrupts| Hook {
            delegate: None,
            disrupts,
            name: "join".into(),
            run: "".into(),
            unless: None,
            upgrade: false,
            when: When::Post,
        };
        let mut nodes: Vec<NodeWork> = ["a", "b", "c", "w"]
            .iter()
            .map(|n| {
                let mut s = step("control-plane", None, Some(1));
                s.hooks = vec![hook(*n != "w")];
                let mut w = node(n, vec![s]);
                w.rollout = Some(Rollout { group: rollout::Group::ControlPlane, serial: rollout::Serial::Count(2) });
                w
            })
            .collect();
        nodes[2].leads = true;
        let w = waves(&order, &nodes, &[]);
        let batches: Vec<Vec<String>> = w[0].batches.iter().map(names).collect();
        // the lead alone, then one at a time although the rollout allows
        // two (kubeadm on control planes); the calm step after the lead
        assert_eq!(batches, [vec!["c"], vec!["a", "w"], vec!["b"]]);
    }

    fn restarting(phase: &str, unit: &str) -> Step {
        let mut s = step(phase, Some(1), Some(2));
        s.units.restart = vec![unit.into()];
        s
    }

    #[test]
    fn membership_changes_get_batches_of_their_own_joins_first_and_leaves_last() {
        use crate::deploy::membership::{Change, Listed, MembershipPlan};
        use crate::schema::Membership;
        let order: Vec<String> = ["etcd"].map(String::from).into();
        let one = Rollout::ALL_AT_ONCE;
        let mut nodes: Vec<NodeWork> =
            ["m1", "m2", "new", "old"].iter().map(|n| node(n, vec![restarting("etcd", "etcd.service")])).collect();
        for n in &mut nodes {
            n.rollout = Some(one);
        }
        let spec = Membership { phase: "etcd".into(), ..Default::default() };
        let member = Listed {
            id: "a".into(),
            started: true,
            name: "old".into(),
            peer: "p".into(),
            client: String::new(),
            learner: false,
        };
        let m = MembershipPlan {
            name: "etcd".into(),
            spec,
            via: "m1".into(),
            via_address: String::new(),
            changes: vec![
                Change::Leave { node: Some("old".into()), member, down: false },
                Change::Join { node: "new".into(), name: "new".into(), peer: "q".into(), listed: None },
            ],
        };
        let w = waves(&order, &nodes, &[m]);
        assert_eq!(w.len(), 1);
        let b = &w[0].batches;
        let etcd = |n| StepRef::new(n, "etcd");
        assert_eq!(b[0], Batch { steps: vec![etcd("new")], change: Some(1) }, "the join first");
        assert_eq!(b[1], Batch { steps: vec![etcd("m1"), etcd("m2")], change: None });
        assert_eq!(b[2], Batch { steps: vec![etcd("old")], change: Some(0) }, "the leave last");
        assert_eq!(b.len(), 3);
        let plan = Plan { nodes, waves: w, record: None, snapshots: Vec::new(), removals: Vec::new() };
        let text = render(&plan);
        assert!(text.contains("rollout of etcd: [new: etcd add member new (q) via m1] then [m1, m2] then [old: etcd remove member old (p) via m1]"), "{text}");
    }
}
