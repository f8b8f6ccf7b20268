//! Kubernetes version changes that Kubernetes does not support are refused
//! by `kdeploy switch` before any node is reached: a copy of the lab
//! cluster (Kubernetes 1.33.5) with a recorded generation at another
//! version, and nodes that do not exist (so reaching one would be an
//! "unreachable" failure, exit 4, not the refusal, exit 1). And the
//! stdlib's upgrade steps as `kdeploy plan` lists them.

use crate::support;
use std::path::{Path, PathBuf};

use support::closures::kdeploy;

fn project(recorded: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join(".kdeploy/generations")).unwrap();
    let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clusters/lab-etcd.nix");
    // Unroutable documentation addresses: a switch that got past the check
    // would fail to reach them.
    let text = std::fs::read_to_string(lab).unwrap().replace("10.77.0.", "192.0.2.");
    std::fs::write(dir.join("lab.nix"), text).unwrap();
    let record = serde_json::json!({
        "number": 1, "cluster": "lab", "time": 0, "phaseOrder": [],
        "kubernetesVersion": recorded, "nodes": {}
    });
    std::fs::write(dir.join(".kdeploy/generations/1.json"), record.to_string()).unwrap();
    tmp
}

fn switch(dir: &Path) -> (i32, String, String) {
    switch_with(dir, &[])
}

fn switch_with(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let args = ["switch", "lab.nix", "--dry-run", "--connect-timeout", "1", "--accept-new-host-keys"];
    kdeploy(&[&args[..], extra].concat(), dir)
}

#[test]
fn unsupported_version_changes_are_refused_before_any_node_is_reached() {
    for (recorded, why) in [
        ("1.31.2", "Kubernetes upgrades one minor version at a time; upgrade to 1.32.x first"),
        ("1.34.0", "does not support going back a version"),
        // kubeadm refuses a patch downgrade too
        ("1.33.9", "does not support going back a version; use `kdeploy rollback`"),
        ("0.33.5", "a change of major version is not supported"),
    ] {
        let tmp = project(recorded);
        let dir = tmp.path();
        let (code, _, err) = switch(dir);
        assert_eq!(code, 6, "{recorded}: {err}");
        assert!(err.contains(why), "{recorded}: {err}");
        assert!(!err.contains("unreachable") && !err.contains("192.0.2."), "{recorded}: a node was tried: {err}");
    }
}

/// An upgrade on some nodes only would record the new version with the
/// others behind, and no later run would finish it: refused.
#[test]
fn an_upgrade_on_some_nodes_only_is_refused() {
    let tmp = project("1.32.0");
    let dir = tmp.path();
    let (code, _, err) = switch_with(dir, &["--on", "k8s-master"]);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("an upgrade runs on every node of the cluster; run it without --on (1 of 3"), "{err}");
    assert!(!err.contains("192.0.2."), "a node was tried: {err}");
}

#[test]
fn one_minor_version_up_is_an_upgrade_in_the_upgrade_order() {
    let tmp = project("1.32.9");
    let dir = tmp.path();
    let (code, _, err) = switch(dir);
    assert!(err.contains("upgrade: Kubernetes 1.32.9 -> 1.33.5: the control plane before the kubelets"), "{err}");
    // Past the check, the switch goes on to the (unreachable) nodes.
    assert_eq!(code, 4, "{err}");
}

/// `kdeploy plan` of the HA example.
fn plan_ha() -> String {
    let (code, out, err) = kdeploy(&["plan", "clusters/ha.nix"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(code, 0, "{err}");
    out
}

fn line_of(out: &str, needle: &str) -> String {
    out.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not listed:\n{out}")).to_string()
}

/// The stdlib's upgrade steps as `kdeploy plan` lists them for the HA
/// example (three control planes, cp1 the anchor): kubeadm upgrade apply
/// on the anchor only, kubeadm upgrade node on the others, every node's
/// kubelet phase between a drain and an uncordon run on the anchor, all
/// marked upgrade-only, and the upgrade order named.
#[test]
fn plan_lists_the_upgrade_steps_of_the_stdlib() {
    let out = plan_ha();
    let line = |needle: &str| line_of(&out, needle);
    assert!(out.contains("upgrade order: preinstall → container-runtime → download → etcd → control-plane → kubelet"));
    assert!(line("post-hook kubeadm-upgrade-apply [upgrades only]").ends_with("[cp1]"));
    assert!(line("post-hook kubeadm-upgrade-node [upgrades only]").ends_with("[cp[2-3]]"));
    // one drain and one uncordon per node (each names its node), all on cp1
    for hook in ["pre-hook drain on cp1 [upgrades only]", "post-hook uncordon on cp1 [upgrades only]"] {
        let per_node: Vec<&str> = out.lines().filter(|l| l.contains(hook)).collect();
        assert_eq!(per_node.len(), 6, "{hook}: {per_node:#?}");
    }
    // the drain comes before the kubelet's unit, the uncordon after it
    let at = |s: &str| out.find(s).unwrap();
    assert!(at("pre-hook drain") < at("unit kubelet.service") && at("unit kubelet.service") < at("post-hook uncordon"));
}

/// Control planes join and leave in rollout batches: the anchor's
/// `kubeadm init` and the others' joins are marked so (the anchor's step
/// leads, the rest follow one at a time, each gated by apiserver-ready),
/// and a node that is a worker now runs `leave-control-plane` first —
/// guarded by the API server's static pod, so only a former control
/// plane drains, deletes and resets itself before joining as a worker.
/// Its upgrade hooks read kdeploy's kubeadm UpgradeConfiguration, which
/// keeps kubeadm off kdeploy's CoreDNS.
#[test]
fn plan_lists_control_planes_joining_in_batches_and_a_dropped_one_leaving() {
    let out = plan_ha();
    let line = |needle: &str| line_of(&out, needle);
    assert!(line("post-hook kubeadm-init [in rollout batches]").ends_with("[cp1]"));
    assert!(line("post-hook kubeadm-join-control-plane [in rollout batches]").ends_with("[cp[2-3]]"));
    // not rationed itself: it sits on every worker, and does something
    // only on a former control plane
    let leave = line("pre-hook leave-control-plane (unless");
    assert!(leave.contains("unless: test ! -e /etc/kubernetes/manifests/kube-apiserver.yaml"), "{leave}");
    assert!(leave.ends_with("[worker[1-3]]"), "{leave}");
    // a worker's join is not rationed: workers join at once, as with Kubespray
    assert!(line("post-hook kubeadm-join (unless").ends_with("[worker[1-3]]"));
    assert!(line("file /etc/kubernetes/kubeadm-upgrade.yaml").ends_with("[cp[1-3]]"));
    let (code, yaml, err) = kdeploy(
        &["eval", "clusters/ha.nix", "--node", "cp2", "--file", "/etc/kubernetes/kubeadm-upgrade.yaml"],
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    assert_eq!(code, 0, "{err}");
    assert!(yaml.contains("kind: UpgradeConfiguration") && yaml.contains("etcdUpgrade: false"), "{yaml}");
    assert_eq!(yaml.matches("skipPhases: [ addon/coredns ]").count(), 2, "{yaml}");
}
