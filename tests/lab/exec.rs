//! `kdeploy exec` on the real lab: one command on the selected nodes at
//! once, as root over SSH, with each node's output and exit status; a
//! failure on one node is exit 3 and names it; output past the limit is
//! cut, said so, and the deployer's memory stays bounded.

use crate::support;

use support::node::lab_project::{kdeploy_cmd, run, text, Project};
use support::node::{lab_has, lab_lock};

#[test]
fn exec_runs_one_command_on_the_selected_nodes_and_reports_each() {
    if !lab_has(3) {
        return;
    }
    let _lab = lab_lock();
    let p = Project::new();
    let exec = |extra: &[&str]| run(kdeploy_cmd("exec", &p.base(), None, extra));

    let (out, j) = exec(&["--on", "worker", "--", "id -u; ip -4 -o addr show | grep -o '10\\.77\\.0\\.1[0-9]'"]);
    assert!(out.status.success(), "{}", text(&out));
    let nodes = j["nodes"].as_object().expect("nodes");
    assert_eq!(nodes.keys().collect::<Vec<_>>(), ["k8s-worker01", "k8s-worker02"], "{j}");
    for (name, n) in nodes {
        assert_eq!(n["status"], 0, "{name}: {n}");
        // root, and really on that node
        let lines: Vec<&str> = n["stdout"].as_str().unwrap().lines().collect();
        assert_eq!(lines[0], "0", "{name}: {n}");
    }
    assert_eq!(nodes["k8s-worker01"]["stdout"], "0\n10.77.0.12\n", "{j}");
    assert_eq!(nodes["k8s-worker02"]["stdout"], "0\n10.77.0.13\n", "{j}");

    // a failure on one node: exit 3, its status and stderr kept
    let (out, j) = exec(&[
        "--on",
        "k8s-worker01,k8s-master",
        "--",
        "ip -4 -o addr show | grep -q '10\\.77\\.0\\.12/' && { echo no >&2; exit 7; }; true",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(j["nodes"]["k8s-worker01"]["status"], 7, "{j}");
    assert_eq!(j["nodes"]["k8s-worker01"]["stderr"], "no\n", "{j}");
    assert_eq!(j["nodes"]["k8s-master"]["status"], 0, "{j}");

    // 8 MiB of output: 1 MiB kept, the rest dropped and said so
    let (out, j) = exec(&["--on", "k8s-master", "--", "head -c 8388608 /dev/zero | tr '\\0' x"]);
    assert!(out.status.success(), "{}", text(&out));
    let n = &j["nodes"]["k8s-master"];
    assert_eq!(n["stdout"].as_str().unwrap().len(), 1 << 20, "kept");
    assert_eq!(n["truncated"], true, "{}", n["truncated"]);
}
