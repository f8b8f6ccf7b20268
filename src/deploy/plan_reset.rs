//! The plan of a reset, pure: from what a node runs (its phase links and
//! the manifest each points at, `state.rs`) to the work that returns it to
//! how it was before its first switch. Every linked phase becomes one step
//! to no generation (`to: None`, as a switch unlinks a phase it dropped):
//! its reset hooks first (kept in the phase's manifest, so a node pruned
//! from the definition is reset from what it runs, no closure needed), then
//! its units stopped and disabled and its files removed (displaced
//! originals put back). `plan::waves` runs unlinking steps last phase
//! first, so a phase's hooks still find every earlier phase in place
//! (`kubeadm reset` its binary). The node's work is marked
//! [`NodeWork::reset`]: after its last step the executor has the node
//! program `forget` kdeploy (the directories switches created, then the
//! state directory), and a failed reset is not undone.
//!
//! Hooks learn whether other nodes remain from `KDEPLOY_RESET`: `cluster`
//! when the run resets every node of the cluster, `nodes` otherwise (an
//! etcd member then leaves the cluster it would otherwise break).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::plan::{Ending, FileDiff, NodeWork, Step};
use super::plan_switch::Deployed;
use super::record::{Generation, NodeRecord};
use crate::closure::{Hook, When};
use crate::node::{changed_files, plan_units, Manifest};

/// Whether the nodes of a reset are the whole cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every node of the cluster is reset in this run.
    Cluster,
    /// Other nodes remain (`reset --on`).
    Nodes,
    /// Nodes pruned from the definition by `switch --prune`: others
    /// remain, and the engine has already taken them out of etcd.
    Pruned,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cluster => "cluster",
            Scope::Nodes => "nodes",
            Scope::Pruned => "pruned",
        }
    }
}

/// A reset hook of a manifest as the step runs it: `KDEPLOY_RESET` set
/// for the hook and its guard.
fn hook(r: &crate::node::manifest::ResetHook, scope: Scope) -> Hook {
    let env = |s: &str| format!("KDEPLOY_RESET={}; export KDEPLOY_RESET\n{s}", scope.as_str());
    Hook {
        delegate: r.delegate.clone(),
        disrupts: false,
        name: r.name.clone(),
        run: env(&r.run).into(),
        unless: r.unless.as_deref().map(env),
        upgrade: false,
        when: When::Reset,
    }
}

/// The work that resets one node: one unlinking step per linked phase,
/// then `forget`.
pub fn node_work(name: &str, deployed: &Deployed, scope: Scope) -> NodeWork {
    let mut w = NodeWork { name: name.to_string(), ending: Ending::Forget, ..Default::default() };
    let live = |p: &str| deployed.manifests.get(p);
    // every file the reset removes: restart triggers of nothing remain,
    // but the unit plan is decided as for any unlink
    let changed: BTreeSet<PathBuf> = deployed.links.keys().flat_map(|p| changed_files(live(p), None)).collect();
    for (phase, &gen) in &deployed.links {
        let old = live(phase);
        let units = old.map_or(&[][..], |m: &Manifest| &m.units[..]);
        w.steps.push(Step {
            phase: phase.clone(),
            from: Some(gen),
            to: None,
            from_manifest: old.cloned(),
            to_manifest: None,
            files: FileDiff::between(old, None),
            units: plan_units(units, &[], &changed),
            hooks: old.map_or(Vec::new(), |m| m.resets.iter().map(|r| hook(r, scope)).collect()),
            checks: Vec::new(),
            guard: None,
        });
    }
    w
}

/// The deployer record after a reset (or a prune) that succeeded: the
/// latest one without the `gone` nodes, as a new generation (`None`: no
/// node of `gone` was recorded).
pub fn record_without(latest: Option<&Generation>, gone: &[String], number: u64, time: u64) -> Option<Generation> {
    let latest = latest?;
    if !gone.iter().any(|n| latest.nodes.contains_key(n)) {
        return None;
    }
    let nodes: BTreeMap<String, NodeRecord> =
        latest.nodes.iter().filter(|(n, _)| !gone.contains(n)).map(|(n, r)| (n.clone(), r.clone())).collect();
    let mut g = Generation { number, time, rollback_of: None, nodes, ..latest.clone() };
    if g.nodes.is_empty() {
        // nothing runs any more: the next switch is a first one
        (g.kubernetes_version, g.anchor, g.members) = (None, None, None);
    }
    Some(g)
}

/// Nodes the latest record of `cluster` lists but the definition does not
/// name: deployed once, left out of the definition since.
pub fn left_nodes<'g>(latest: Option<&'g Generation>, cluster: &str, defined: &BTreeSet<&str>) -> Vec<&'g String> {
    latest
        .filter(|g| g.cluster == cluster)
        .map_or(Vec::new(), |g| g.nodes.keys().filter(|n| !defined.contains(n.as_str())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::plan::waves;
    use crate::node::manifest::ResetHook;
    use crate::node::{FileEntry, OnChange, UnitSpec};
    use crate::store::Digest;

    fn file(path: &str) -> FileEntry {
        FileEntry {
            path: path.into(),
            mode: "0644".into(),
            owner: "root".into(),
            group: "root".into(),
            hash: Digest([1; 32]),
        }
    }

    fn unit(name: &str, triggers: &[&str]) -> UnitSpec {
        UnitSpec {
            name: name.into(),
            text_hash: Digest([2; 32]),
            on_change: OnChange::Restart,
            enable: true,
            restart_triggers: triggers.iter().map(PathBuf::from).collect(),
        }
    }

    /// A node with `bin` (a binary), `etcd` (config, unit, a reset hook)
    /// linked, and nothing of the generate-only `kubelet`.
    fn deployed() -> Deployed {
        let mut dep = Deployed::default();
        let bin = Manifest { files: vec![file("/usr/local/bin/etcd")], ..Default::default() };
        let mut etcd = Manifest { files: vec![file("/etc/etcd.env")], ..Default::default() };
        etcd.add_unit(unit("etcd.service", &["/etc/etcd.env", "/usr/local/bin/etcd"]));
        etcd.resets.push(ResetHook {
            name: "etcd-data".into(),
            run: "rm -rf /var/lib/etcd".into(),
            unless: Some("test ! -d /var/lib/etcd".into()),
            delegate: None,
        });
        dep.links.insert("bin".into(), 3);
        dep.links.insert("etcd".into(), 4);
        dep.manifests.insert("bin".into(), bin);
        dep.manifests.insert("etcd".into(), etcd);
        dep
    }

    #[test]
    fn every_linked_phase_is_unlinked_with_its_units_stopped_and_its_hooks() {
        let w = node_work("n1", &deployed(), Scope::Nodes);
        assert!(w.resets() && w.stage.is_empty() && w.push.is_empty() && w.commit().is_none());
        let s: Vec<(&str, Option<u64>, Option<u64>)> =
            w.steps.iter().map(|s| (s.phase.as_str(), s.from, s.to)).collect();
        assert_eq!(s, [("bin", Some(3), None), ("etcd", Some(4), None)]);
        let etcd = &w.steps[1];
        assert_eq!(etcd.units.stop, ["etcd.service"]);
        assert_eq!(etcd.units.disable, ["etcd.service"]);
        assert!(etcd.units.start.is_empty() && etcd.units.restart.is_empty());
        assert_eq!(etcd.files.removed, ["/etc/etcd.env", "/etc/systemd/system/etcd.service"]);
        assert_eq!(w.steps[0].files.removed, ["/usr/local/bin/etcd"]);
        assert_eq!(etcd.hooks.len(), 1);
        let h = &etcd.hooks[0];
        assert_eq!((h.name.as_str(), h.when), ("etcd-data", When::Reset));
        assert_eq!(&*h.run, "KDEPLOY_RESET=nodes; export KDEPLOY_RESET\nrm -rf /var/lib/etcd");
        assert_eq!(h.unless.as_deref(), Some("KDEPLOY_RESET=nodes; export KDEPLOY_RESET\ntest ! -d /var/lib/etcd"));
        let whole = node_work("n1", &deployed(), Scope::Cluster);
        assert!(whole.steps[1].hooks[0].run.starts_with("KDEPLOY_RESET=cluster;"));
        assert!(w.steps[0].hooks.is_empty());
    }

    #[test]
    fn a_delegated_reset_hook_runs_where_its_manifest_says() {
        let mut dep = deployed();
        if let Some(m) = dep.manifests.get_mut("etcd") {
            m.resets.push(ResetHook {
                name: "drain-and-delete".into(),
                run: "kubectl drain n1".into(),
                delegate: Some("cp1".into()),
                ..Default::default()
            });
        }
        let w = node_work("n1", &dep, Scope::Pruned);
        let hooks: Vec<(&str, Option<&str>)> =
            w.steps[1].hooks.iter().map(|h| (h.name.as_str(), h.delegate.as_deref())).collect();
        assert_eq!(hooks, [("etcd-data", None), ("drain-and-delete", Some("cp1"))]);
        assert!(w.steps[1].hooks[1].run.starts_with("KDEPLOY_RESET=pruned;"));
    }

    #[test]
    fn phases_are_reset_last_first() {
        let order: Vec<String> = ["bin", "etcd", "kubelet"].map(String::from).into();
        let w = vec![node_work("n1", &deployed(), Scope::Cluster), node_work("n2", &deployed(), Scope::Cluster)];
        let got: Vec<String> = waves(&order, &w, &[]).iter().map(|w| w.phase.clone()).collect();
        assert_eq!(got, ["etcd", "bin"]);
    }

    #[test]
    fn a_node_with_nothing_linked_still_forgets() {
        let w = node_work("n1", &Deployed::default(), Scope::Nodes);
        assert!(w.steps.is_empty() && w.resets());
        assert!(!w.unchanged());
    }

    #[test]
    fn a_phase_whose_manifest_could_not_be_read_is_still_unlinked() {
        let mut dep = deployed();
        dep.manifests.remove("etcd");
        let w = node_work("n1", &dep, Scope::Nodes);
        let e = &w.steps[1];
        assert_eq!((e.phase.as_str(), e.to), ("etcd", None));
        assert!(e.units.is_empty() && e.hooks.is_empty());
    }

    fn gen(nodes: &[&str]) -> Generation {
        let r: NodeRecord = serde_json::from_value(serde_json::json!({
            "address": "10.0.0.1", "user": "root", "port": 22, "key": null, "generation": 2, "hash": "00",
        }))
        .unwrap();
        Generation {
            number: 5,
            cluster: "lab".into(),
            time: 1,
            phase_order: vec!["a".into()],
            rollback_of: Some(3),
            kubernetes_version: None,
            members: None,
            anchor: None,
            nodes: nodes.iter().map(|n| (n.to_string(), r.clone())).collect(),
            gone: Default::default(),
        }
    }

    #[test]
    fn the_record_drops_reset_nodes() {
        let g = gen(&["n1", "n2", "n3"]);
        let r = record_without(Some(&g), &["n3".into()], 6, 9).unwrap();
        assert_eq!(r.nodes.keys().collect::<Vec<_>>(), ["n1", "n2"]);
        assert_eq!((r.number, r.time, r.rollback_of, r.cluster.as_str()), (6, 9, None, "lab"));
        assert!(record_without(Some(&g), &["n9".into()], 6, 9).is_none());
        assert!(record_without(None, &["n1".into()], 6, 9).is_none());
    }

    #[test]
    fn left_nodes_are_recorded_but_not_defined() {
        let g = gen(&["n1", "n2", "n3"]);
        let defined: BTreeSet<&str> = ["n1", "n2", "n4"].into();
        assert_eq!(left_nodes(Some(&g), "lab", &defined), ["n3"]);
        // another cluster's history names nothing of this one
        assert!(left_nodes(Some(&g), "other", &defined).is_empty());
        assert!(left_nodes(None, "lab", &defined).is_empty());
    }
}
