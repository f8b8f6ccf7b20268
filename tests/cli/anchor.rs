//! The anchor (the control plane that ran `kubeadm init`) is never moved by
//! a switch unless the definition asks: a copy of the lab cluster whose
//! last recorded generation names k8s-master as the anchor, with nodes at
//! unroutable addresses (reaching one would be "unreachable", exit 4, not
//! the refusal, exit 1). Adding a control plane whose name sorts first is
//! refused (it would `kubeadm init` a second cluster, kubespray#7962);
//! pinning `kubeadm.initNode` lets it join instead.

use crate::support;
use std::path::{Path, PathBuf};

use support::closures::kdeploy;

const FIRST: &str = r#"k8s-master = { address = "192.0.2.11"; roles = [ "control-plane" "etcd" ]; };"#;

fn project(extra_node: &str, settings: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join(".kdeploy/generations")).unwrap();
    let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clusters/lab-etcd.nix");
    let text = std::fs::read_to_string(lab).unwrap().replace("10.77.0.", "192.0.2.");
    assert!(text.contains(FIRST));
    let text = text
        .replace(FIRST, &format!("{FIRST}\n    {extra_node}"))
        .replace("settings = {", &format!("settings = {{\n    {settings}"));
    std::fs::write(dir.join("lab.nix"), text).unwrap();
    let record = serde_json::json!({
        "number": 1, "cluster": "lab", "time": 0, "phaseOrder": [], "anchor": "k8s-master", "nodes": {}
    });
    std::fs::write(dir.join(".kdeploy/generations/1.json"), record.to_string()).unwrap();
    tmp
}

fn switch(dir: &Path) -> (i32, String, String) {
    kdeploy(&["switch", "lab.nix", "--dry-run", "--connect-timeout", "1", "--accept-new-host-keys"], dir)
}

fn hooks_of(dir: &Path, node: &str) -> String {
    let (code, out, err) = kdeploy(&["eval", "lab.nix", "--node", node], dir);
    assert_eq!(code, 0, "{err}");
    out
}

const CP0: &str = r#"cp0 = { address = "192.0.2.20"; roles = [ "control-plane" ]; };"#;

#[test]
fn a_control_plane_sorting_first_does_not_take_over_kubeadm_init() {
    let tmp = project(CP0, "");
    let dir = tmp.path();
    // the stdlib alone would make cp0 the first control plane...
    assert!(hooks_of(dir, "cp0").contains("hook  kubeadm-init"), "{}", hooks_of(dir, "cp0"));
    // ...and the switch refuses before reaching any node
    let (code, _, err) = switch(dir);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("cp0 would run `kubeadm init` because its name sorts before k8s-master's"), "{err}");
    assert!(err.contains("kubeadm.initNode = \"k8s-master\""), "{err}");
    assert!(!err.contains("unreachable"), "a node was tried: {err}");

    // pinned: cp0 joins, k8s-master stays the anchor, the switch goes on
    let tmp = project(CP0, r#"kubeadm.initNode = "k8s-master";"#);
    let dir = tmp.path();
    assert!(!hooks_of(dir, "cp0").contains("hook  kubeadm-init"));
    assert!(hooks_of(dir, "k8s-master").contains("hook  kubeadm-init"));
    let (code, _, err) = switch(dir);
    assert_eq!(code, 4, "past the check, the nodes are unreachable: {err}");
}

#[test]
fn moving_the_anchor_is_a_choice_and_must_name_a_control_plane() {
    // k8s-master gives up its control-plane role: refused until another is named
    let tmp = project(CP0, "");
    let dir = tmp.path();
    let text = std::fs::read_to_string(dir.join("lab.nix")).unwrap();
    std::fs::write(
        dir.join("lab.nix"),
        text.replace(r#"roles = [ "control-plane" "etcd" ]"#, r#"roles = [ "worker" "etcd" ]"#),
    )
    .unwrap();
    let (code, _, err) = switch(dir);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("because k8s-master, which ran it") && err.contains("is no longer a control plane"), "{err}");

    // naming one that has not joined yet is refused too...
    let tmp = project(CP0, r#"kubeadm.initNode = "cp0";"#);
    let dir = tmp.path();
    let (code, _, err) = switch(dir);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("cp0 has not been deployed yet"), "{err}");
    // ...once the last switch recorded it (it joined), the anchor moves
    let record = serde_json::json!({
        "number": 2, "cluster": "lab", "time": 0, "phaseOrder": [], "anchor": "k8s-master",
        "nodes": { "cp0": { "address": "192.0.2.20", "user": "root", "port": 22, "key": null, "generation": 1, "hash": "00" } }
    });
    std::fs::write(dir.join(".kdeploy/generations/2.json"), record.to_string()).unwrap();
    assert_eq!(switch(dir).0, 4, "past the check, the nodes are unreachable");

    let tmp = project(CP0, r#"kubeadm.initNode = "k8s-worker01";"#);
    let dir = tmp.path();
    let (code, _, err) = kdeploy(&["eval", "lab.nix"], dir);
    assert_eq!(code, 1);
    assert!(err.contains("kubeadm.initNode is not a control plane") && err.contains("lab.nix:"), "{err}");
}

#[test]
fn the_anchor_is_not_reset_while_other_control_planes_stay() {
    let tmp = project(CP0, r#"kubeadm.initNode = "k8s-master";"#);
    let dir = tmp.path();
    let (code, _, err) = kdeploy(&["reset", "lab.nix", "--on", "k8s-master", "--yes", "--connect-timeout", "1"], dir);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("k8s-master ran `kubeadm init` (the anchor) and cp0 stay"), "{err}");
    assert!(!err.contains("unreachable"), "a node was tried: {err}");
    // the other control plane may go
    let (code, _, err) = kdeploy(&["reset", "lab.nix", "--on", "cp0", "--yes", "--connect-timeout", "1"], dir);
    assert_eq!(code, 4, "past the check, the node is unreachable: {err}");
}
