//! The plan of a switch, computed before anything runs and without I/O:
//! given a node's new phases (hash, activation, manifest) and what the node
//! reported (committed hash, phase links, the phase hashes recorded at its
//! last commit, the manifests its links point at), decide per phase whether
//! it is unchanged, to be activated, only staged (`activate = false`) or
//! removed — and for activated phases which files change and which units
//! `node::plan_units` stops, starts, restarts or reloads.
//!
//! Files changed in earlier phases count for restart triggers of later
//! ones (a new etcd binary in `download` restarts `etcd.service` in `etcd`).
//!
//! A phase whose link is out of step with the committed record was moved
//! by a run that never committed (killed, cut off): its units may run the
//! old files or the new ones, so it is activated again and every enabled
//! unit of it restarted — after a crash the next run converges, it does not
//! trust what it cannot know.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::plan::{Commit, Ending, FileDiff, NodeWork, RecordedPhase, Step};
use crate::closure::{Phase, Source};
use crate::node::{changed_files, plan_units, Drift, Manifest, NodeStatus, UnitPlan};
use crate::store::Digest;

/// What a node reported about itself.
#[derive(Debug, Clone, Default)]
pub struct Deployed {
    /// (generation, node hash) last committed.
    pub committed: Option<(u64, Digest)>,
    /// Lowest unused generation number on the node.
    pub next: u64,
    /// Phase name → generation its link points into.
    pub links: BTreeMap<String, u64>,
    /// Phase hashes recorded with the committed generation.
    pub recorded: BTreeMap<String, RecordedPhase>,
    /// Manifest of each linked phase (the live one).
    pub manifests: BTreeMap<String, Manifest>,
    /// Hand edits and stopped units found on the node.
    pub drift: Vec<Drift>,
}

/// A new phase, as the plan needs it.
#[derive(Debug, Clone)]
pub struct PhaseInput<'a> {
    pub name: &'a str,
    pub hash: Digest,
    pub activate: bool,
    pub manifest: &'a Manifest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseAction {
    Unchanged,
    /// Stage, switch, units, hooks, checks.
    Activate,
    /// `activate = false`: staged in the new generation, never switched.
    StageOnly,
    /// The phase is gone (or no longer activated) but still linked: unlink
    /// it and stop its units.
    Remove,
}

#[derive(Debug, Clone)]
pub struct PhasePlan {
    pub name: String,
    pub action: PhaseAction,
    /// The new phase hash (`None` for a removed phase).
    pub hash: Option<Digest>,
    /// Generation the phase link points into now (`None`: not linked).
    pub old_generation: Option<u64>,
    pub files: FileDiff,
    pub units: UnitPlan,
}

#[derive(Debug, Clone)]
pub struct NodePlan {
    /// The committed node hash equals the new one: nothing to do at all.
    pub unchanged: bool,
    /// New phases in phase order, then removed ones.
    pub phases: Vec<PhasePlan>,
}

impl NodePlan {
    pub fn unchanged() -> NodePlan {
        NodePlan { unchanged: true, phases: Vec::new() }
    }

    /// Phases that change something on the node (everything but unchanged).
    pub fn changed_phases(&self) -> impl Iterator<Item = &PhasePlan> {
        self.phases.iter().filter(|p| p.action != PhaseAction::Unchanged)
    }

    pub fn phase(&self, name: &str) -> Option<&PhasePlan> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// The cheap test that costs one round trip: committed hash == new hash,
/// no run moved a link since that commit, and nothing drifted.
pub fn node_unchanged(new_hash: &Digest, status: &NodeStatus) -> bool {
    !status.pending && status.drift.is_empty() && status.current.as_ref().is_some_and(|(_, h)| h == new_hash)
}

/// Plan one changed node.
pub fn plan_node(new: &[PhaseInput<'_>], deployed: &Deployed) -> NodePlan {
    let mut changed: BTreeSet<PathBuf> = BTreeSet::new();
    let mut phases = Vec::new();
    for p in new {
        let rec = deployed.recorded.get(p.name);
        let link = deployed.links.get(p.name).copied();
        let old = link.and_then(|_| deployed.manifests.get(p.name));
        let drift: Vec<&Drift> = deployed.drift.iter().filter(|d| d.phase == p.name).collect();
        let action = if p.activate {
            let same =
                drift.is_empty() && rec.is_some_and(|r| r.hash == p.hash && r.active && link == Some(r.generation));
            if same {
                PhaseAction::Unchanged
            } else {
                PhaseAction::Activate
            }
        } else if link.is_some() {
            PhaseAction::Remove
        } else {
            let same = rec.is_some_and(|r| r.hash == p.hash);
            if same {
                PhaseAction::Unchanged
            } else {
                PhaseAction::StageOnly
            }
        };
        let (files, units) = match action {
            PhaseAction::Activate => {
                changed.extend(changed_files(old, Some(p.manifest)));
                // a hand-edited file is replaced; what it triggers restarts
                changed.extend(drift.iter().filter(|d| d.kind == "file").map(|d| PathBuf::from(&d.what)));
                let mut units = plan_units(old.map_or(&[][..], |m| &m.units[..]), &p.manifest.units, &changed);
                if interrupted(rec, link) {
                    restart_all(&mut units, old, p.manifest);
                }
                for d in drift.iter().filter(|d| d.kind == "unit") {
                    let listed = [&units.start, &units.stop, &units.restart].iter().any(|l| l.contains(&d.what));
                    if !listed && p.manifest.units.iter().any(|u| u.name == d.what && u.enable) {
                        units.restart.push(d.what.clone());
                    }
                }
                (FileDiff::between(old, Some(p.manifest)), units)
            }
            PhaseAction::Remove => {
                changed.extend(changed_files(old, None));
                let units = plan_units(old.map_or(&[][..], |m| &m.units[..]), &[], &changed);
                (FileDiff::between(old, None), units)
            }
            _ => (FileDiff::default(), UnitPlan::default()),
        };
        phases.push(PhasePlan {
            name: p.name.to_string(),
            action,
            hash: Some(p.hash),
            old_generation: link,
            files,
            units,
        });
    }
    let known: BTreeSet<&str> = new.iter().map(|p| p.name).collect();
    for (name, gen) in &deployed.links {
        if known.contains(name.as_str()) {
            continue;
        }
        let old = deployed.manifests.get(name);
        changed.extend(changed_files(old, None));
        let units = plan_units(old.map_or(&[][..], |m| &m.units[..]), &[], &changed);
        phases.push(PhasePlan {
            name: name.clone(),
            action: PhaseAction::Remove,
            hash: None,
            old_generation: Some(*gen),
            files: FileDiff::between(old, None),
            units,
        });
    }
    NodePlan { unchanged: false, phases }
}

/// What a changed node is to become: the closure's phases of the node and
/// their manifests, committed as `generation` with the node's closure `hash`.
pub struct Target<'a> {
    pub phases: &'a [Phase],
    pub manifests: &'a [Manifest],
    pub generation: u64,
    pub hash: Digest,
}

/// A changed node's work: stage every new activated or generate-only phase
/// of `target`, one step per phase to activate or remove (with the closure's
/// hooks and checks), and commit with the new phase record.
pub fn node_work(
    name: &str,
    plan: &NodePlan,
    target: Target<'_>,
    deployed: &Deployed,
    push: BTreeMap<Digest, Source>,
) -> NodeWork {
    let Target { phases, manifests, generation: gen, hash: node_hash } = target;
    let mut w = NodeWork { name: name.to_string(), stage_generation: gen, ..Default::default() };
    let mut record = BTreeMap::new();
    for pp in &plan.phases {
        let schema = phases.iter().zip(manifests).find(|(p, _)| p.name == pp.name);
        let new_manifest = schema.filter(|_| pp.action != PhaseAction::Remove).map(|(_, m)| m);
        match (pp.action, pp.hash) {
            (PhaseAction::Unchanged, _) => {
                if let Some(r) = deployed.recorded.get(&pp.name) {
                    record.insert(pp.name.clone(), r.clone());
                }
            }
            (PhaseAction::Activate | PhaseAction::StageOnly, Some(hash)) => {
                let active = pp.action == PhaseAction::Activate;
                record.insert(pp.name.clone(), RecordedPhase { hash, generation: gen, active });
            }
            _ => {}
        }
        if let (PhaseAction::Activate | PhaseAction::StageOnly, Some(m)) = (pp.action, new_manifest) {
            w.stage.push((pp.name.clone(), m.clone()));
        }
        if !matches!(pp.action, PhaseAction::Activate | PhaseAction::Remove) {
            continue;
        }
        let (hooks, checks, guard) = match (pp.action, schema) {
            (PhaseAction::Activate, Some((p, _))) => {
                (p.hooks.clone(), p.checks.clone(), p.self_rollback.map(|s| Duration::from_secs(s.into())))
            }
            _ => (Vec::new(), Vec::new(), None),
        };
        w.steps.push(Step {
            phase: pp.name.clone(),
            from: pp.old_generation,
            to: (pp.action == PhaseAction::Activate).then_some(gen),
            from_manifest: pp.old_generation.and_then(|_| deployed.manifests.get(&pp.name).cloned()),
            to_manifest: new_manifest.filter(|_| pp.action == PhaseAction::Activate).cloned(),
            files: pp.files.clone(),
            units: pp.units.clone(),
            hooks,
            checks,
            guard,
        });
    }
    let staged: BTreeSet<Digest> = w.stage.iter().flat_map(|(_, m)| m.files.iter().map(|f| f.hash)).collect();
    w.push = push.into_iter().filter(|(d, _)| staged.contains(d)).collect();
    w.ending = Ending::Commit(Commit { generation: gen, hash: node_hash, record: Some(record) });
    w
}

/// The link does not point where the committed record says it should.
fn interrupted(rec: Option<&RecordedPhase>, link: Option<u64>) -> bool {
    match rec {
        Some(r) if r.active => link != Some(r.generation),
        _ => link.is_some(),
    }
}

/// Every enabled unit that may have been running restarts (those already
/// planned to start or stop stay so), after a daemon-reload.
fn restart_all(units: &mut UnitPlan, old: Option<&Manifest>, new: &Manifest) {
    let was = |n: &str| old.is_some_and(|m| m.units.iter().any(|u| u.name == n));
    for u in new.units.iter().filter(|u| u.enable && was(&u.name)) {
        let listed = [&units.start, &units.stop, &units.restart].iter().any(|l| l.contains(&u.name));
        if !listed {
            units.reload.retain(|r| r != &u.name);
            units.restart.push(u.name.clone());
        }
    }
    units.restart.sort();
    units.daemon_reload = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{FileEntry, OnChange, UnitSpec};

    fn d(c: u8) -> Digest {
        Digest([c; 32])
    }

    fn file(path: &str, c: char) -> FileEntry {
        FileEntry {
            path: path.into(),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: Digest([c as u8; 32]),
        }
    }

    fn unit(name: &str, c: char, triggers: &[&str]) -> UnitSpec {
        UnitSpec {
            name: name.into(),
            text_hash: Digest([c as u8; 32]),
            on_change: OnChange::Restart,
            enable: true,
            restart_triggers: triggers.iter().map(PathBuf::from).collect(),
        }
    }

    fn m(files: Vec<FileEntry>, units: Vec<UnitSpec>) -> Manifest {
        Manifest { files, units, ..Default::default() }
    }

    /// A node deployed at generation 1 with phases `bin` (the binary) and
    /// `svc` (config + unit triggered by binary and config), plus `gen`
    /// (generate-only).
    fn deployed(bin: &Manifest, svc: &Manifest) -> Deployed {
        let mut dep = Deployed { committed: Some((1, d(9))), next: 2, ..Default::default() };
        for (name, h, active) in [("bin", 1, true), ("svc", 2, true), ("gen", 3, false)] {
            dep.recorded.insert(name.into(), RecordedPhase { hash: d(h), generation: 1, active });
            if active {
                dep.links.insert(name.into(), 1);
            }
        }
        dep.manifests.insert("bin".into(), bin.clone());
        dep.manifests.insert("svc".into(), svc.clone());
        dep
    }

    fn inputs<'a>(hashes: [u8; 3], bin: &'a Manifest, svc: &'a Manifest, gen: &'a Manifest) -> Vec<PhaseInput<'a>> {
        vec![
            PhaseInput { name: "bin", hash: d(hashes[0]), activate: true, manifest: bin },
            PhaseInput { name: "svc", hash: d(hashes[1]), activate: true, manifest: svc },
            PhaseInput { name: "gen", hash: d(hashes[2]), activate: false, manifest: gen },
        ]
    }

    #[test]
    fn unchanged_by_node_hash() {
        let st = |h: Option<u8>, pending| NodeStatus { current: h.map(|h| (1, d(h))), pending, ..Default::default() };
        assert!(node_unchanged(&d(9), &st(Some(9), false)));
        assert!(!node_unchanged(&d(9), &st(Some(8), false)));
        assert!(!node_unchanged(&d(9), &st(None, false)));
        // a run moved links after that commit and never committed
        assert!(!node_unchanged(&d(9), &st(Some(9), true)));
    }

    #[test]
    fn only_the_changed_phase_and_its_units() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(
            vec![file("/etc/x.conf", 'b'), file("/etc/systemd/system/x.service", 'c')],
            vec![unit("x.service", 'c', &["/bin/x", "/etc/x.conf"])],
        );
        let gen = m(vec![file("/etc/k.yaml", 'd')], vec![]);
        let dep = deployed(&bin, &svc);
        // config changed: only svc, x.service restarted
        let svc2 = m(vec![file("/etc/x.conf", 'e'), file("/etc/systemd/system/x.service", 'c')], svc.units.clone());
        let plan = plan_node(&inputs([1, 22, 3], &bin, &svc2, &gen), &dep);
        let acts: Vec<_> = plan.phases.iter().map(|p| (p.name.as_str(), p.action)).collect();
        assert_eq!(
            acts,
            [("bin", PhaseAction::Unchanged), ("svc", PhaseAction::Activate), ("gen", PhaseAction::Unchanged)]
        );
        let s = plan.phase("svc").unwrap();
        assert_eq!(s.files.changed, ["/etc/x.conf"]);
        assert_eq!(s.units.restart, ["x.service"]);
        assert!(!s.units.daemon_reload);
        assert_eq!(s.old_generation, Some(1));
    }

    #[test]
    fn trigger_in_an_earlier_phase_restarts() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b')], vec![unit("x.service", 'c', &["/bin/x"])]);
        let gen = m(vec![], vec![]);
        let dep = deployed(&bin, &svc);
        let bin2 = m(vec![file("/bin/x", 'z')], vec![]);
        // the closure hash of svc changes too (it covers trigger contents)
        let plan = plan_node(&inputs([11, 22, 3], &bin2, &svc, &gen), &dep);
        assert_eq!(plan.phase("bin").unwrap().files.changed, ["/bin/x"]);
        let s = plan.phase("svc").unwrap();
        assert!(s.files.is_empty());
        assert_eq!(s.units.restart, ["x.service"]);
    }

    #[test]
    fn an_activated_phase_lists_exactly_its_changed_files() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b'), file("/etc/y.conf", 'c'), file("/etc/z.conf", 'd')], vec![]);
        let gen = m(vec![], vec![]);
        let dep = deployed(&bin, &svc);
        let mut y = file("/etc/y.conf", 'c');
        y.mode = "0600".into();
        let svc2 = m(vec![file("/etc/x.conf", 'e'), y, file("/etc/w.conf", 'f')], vec![]);
        let plan = plan_node(&inputs([1, 22, 3], &bin, &svc2, &gen), &dep);
        let s = plan.phase("svc").unwrap();
        assert_eq!(s.action, PhaseAction::Activate);
        let want = FileDiff {
            added: vec!["/etc/w.conf".into()],
            changed: vec!["/etc/x.conf".into(), "/etc/y.conf".into()],
            removed: vec!["/etc/z.conf".into()],
        };
        assert_eq!(s.files, want);
        assert!(s.units.is_empty());
        let changed: Vec<&str> = plan.changed_phases().map(|p| p.name.as_str()).collect();
        assert_eq!(changed, ["svc"]);
        assert!(plan.phase("bin").unwrap().files.is_empty());
    }

    #[test]
    fn a_generate_only_phase_is_staged_not_activated() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b')], vec![unit("x.service", 'c', &[])]);
        let gen = m(vec![file("/etc/k.yaml", 'z')], vec![unit("k.service", 'k', &[])]);
        let dep = deployed(&bin, &svc);
        let plan = plan_node(&inputs([1, 2, 33], &bin, &svc, &gen), &dep);
        let g = plan.phase("gen").unwrap();
        assert_eq!((g.action, g.old_generation), (PhaseAction::StageOnly, None));
        // nothing of it goes live: no files switched, no unit touched
        assert!(g.files.is_empty() && g.units.is_empty());
        let changed: Vec<&str> = plan.changed_phases().map(|p| p.name.as_str()).collect();
        assert_eq!(changed, ["gen"]);
    }

    #[test]
    fn units_move_only_as_their_text_or_triggers_changed() {
        let bin = m(vec![file("/bin/x", 'a'), file("/bin/y", 'a')], vec![]);
        let reload = |c| UnitSpec { on_change: OnChange::Reload, ..unit("r.service", c, &["/etc/r.conf"]) };
        let old_units = vec![
            unit("x.service", 'x', &["/bin/x"]),
            unit("y.service", 'y', &["/bin/y"]),
            reload('r'),
            unit("old.service", 'o', &[]),
        ];
        let svc = m(vec![file("/etc/r.conf", 'r')], old_units.clone());
        let gen = m(vec![], vec![]);
        let dep = deployed(&bin, &svc);
        // a new /bin/x in the earlier phase; r.service's text changed;
        // old.service gone, new.service new; y.service as it was
        let bin2 = m(vec![file("/bin/x", 'b'), file("/bin/y", 'a')], vec![]);
        let new_units = vec![old_units[0].clone(), old_units[1].clone(), reload('R'), unit("new.service", 'n', &[])];
        let svc2 = m(vec![file("/etc/r.conf", 'r')], new_units);
        let plan = plan_node(&inputs([11, 22, 3], &bin2, &svc2, &gen), &dep);
        assert!(plan.phase("bin").unwrap().units.is_empty());
        let u = &plan.phase("svc").unwrap().units;
        assert_eq!(u.restart, ["x.service"]);
        assert_eq!(u.reload, ["r.service"]);
        assert_eq!(u.stop, ["old.service"]);
        assert_eq!(u.start, ["new.service"]);
        assert!(u.daemon_reload);
        // the same switch without the binary change restarts nothing
        let plan = plan_node(&inputs([1, 22, 3], &bin, &svc2, &gen), &dep);
        assert!(plan.phase("svc").unwrap().units.restart.is_empty());
    }

    #[test]
    fn fresh_node_activates_and_stages() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b')], vec![unit("x.service", 'c', &[])]);
        let gen = m(vec![file("/etc/k.yaml", 'd')], vec![]);
        let plan = plan_node(&inputs([1, 2, 3], &bin, &svc, &gen), &Deployed::default());
        let acts: Vec<_> = plan.phases.iter().map(|p| p.action).collect();
        assert_eq!(acts, [PhaseAction::Activate, PhaseAction::Activate, PhaseAction::StageOnly]);
        let s = plan.phase("svc").unwrap();
        assert_eq!(s.units.start, ["x.service"]);
        assert!(s.units.daemon_reload);
        assert_eq!(s.files.added, ["/etc/x.conf"]);
    }

    #[test]
    fn link_out_of_step_with_record_is_redone() {
        // e.g. a rollback that stopped half way: the link points elsewhere
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![], vec![]);
        let gen = m(vec![], vec![]);
        let mut dep = deployed(&bin, &svc);
        dep.links.insert("bin".into(), 7);
        let plan = plan_node(&inputs([1, 2, 3], &bin, &svc, &gen), &dep);
        assert_eq!(plan.phase("bin").unwrap().action, PhaseAction::Activate);
        assert_eq!(plan.phase("svc").unwrap().action, PhaseAction::Unchanged);
    }

    #[test]
    fn a_phase_flipped_by_a_run_that_never_committed_restarts_its_units() {
        // The run died after flipping `svc` to generation 2, before its
        // units: the live manifest already is the new one, so the diff is
        // empty, yet x.service may still run the old config.
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b')], vec![unit("x.service", 'c', &["/etc/x.conf"])]);
        let svc2 = m(vec![file("/etc/x.conf", 'e')], svc.units.clone());
        let gen = m(vec![], vec![]);
        let mut dep = deployed(&bin, &svc);
        dep.links.insert("svc".into(), 2);
        dep.manifests.insert("svc".into(), svc2.clone());
        let plan = plan_node(&inputs([1, 22, 3], &bin, &svc2, &gen), &dep);
        let s = plan.phase("svc").unwrap();
        assert_eq!(s.action, PhaseAction::Activate);
        assert!(s.files.is_empty());
        assert_eq!(s.units.restart, ["x.service"]);
        assert!(s.units.daemon_reload);
        // the phases it never reached are left alone
        assert_eq!(plan.phase("bin").unwrap().action, PhaseAction::Unchanged);
    }

    #[test]
    fn removed_and_deactivated_phases_stop_units() {
        let bin = m(vec![file("/bin/x", 'a')], vec![]);
        let svc = m(vec![file("/etc/x.conf", 'b')], vec![unit("x.service", 'c', &[])]);
        let dep = deployed(&bin, &svc);
        // svc now generate-only: unlink and stop
        let gen = m(vec![], vec![]);
        let mut ins = inputs([1, 22, 3], &bin, &svc, &gen);
        ins[1].activate = false;
        let plan = plan_node(&ins, &dep);
        let s = plan.phase("svc").unwrap();
        assert_eq!(s.action, PhaseAction::Remove);
        assert_eq!(s.units.stop, ["x.service"]);
        // svc gone from the closure entirely
        let plan = plan_node(&[ins[0].clone(), ins[2].clone()], &dep);
        let s = plan.phases.last().unwrap();
        assert_eq!((s.name.as_str(), s.action), ("svc", PhaseAction::Remove));
        assert_eq!(s.files.removed, ["/etc/x.conf"]);
    }
}
