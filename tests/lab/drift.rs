//! Hand edits on real lab nodes: a managed file changed through its path,
//! every enabled unit of a node stopped. `kdeploy status` must name each without
//! changing anything; the edit must not reach kdeploy's store or any other
//! generation; the next `switch` must report the drift, repair it (and
//! restart what the file triggers) even though every node hash matches;
//! then status is clean and a re-run is a no-op.

use crate::support;
use std::process::Command;

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_any, lab_up};

fn status(p: &Project) -> (std::process::Output, serde_json::Value) {
    let mut c: Command = kdeploy_cmd("status", &p.base(), None, &[]);
    let out = c.output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, json)
}

#[test]
fn hand_edits_are_reported_kept_out_of_the_store_and_repaired() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    // staged by this version of the node program, then back to the lab
    let (out, _) = switch(&p.variant("b", "containerd.maxContainerLogLineSize = 34000;"));
    assert!(out.status.success(), "{}", text(&out));
    p.restore();
    let (out, j) = status(&p);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(j["nodes"]["k8s-worker01"]["drift"], serde_json::json!([]));

    // the hand edits
    let marker = format!("edited by hand {:?}", std::time::SystemTime::now());
    ssh(2, &format!("echo '# {marker}' >> /etc/containerd/config.toml"));
    // every enabled unit of one node stopped (systemctl's exit status is then
    // not 0 — the node must still answer, naming each)
    let enabled = "awk -F'\\t' '$1 == \"u\" && $4 == \"1\" { print $2 }' /var/lib/kdeploy/phases/*/manifest";
    let units: Vec<String> = ssh(3, enabled).split_whitespace().map(str::to_string).collect();
    assert!(units.len() >= 2 && units.iter().any(|u| u == "etcd.service"), "{units:?}");
    ssh(3, &format!("systemctl stop {}", units.join(" ")));
    let started = active_since(2, "containerd");
    let grep = format!("grep -rlF '{marker}' /var/lib/kdeploy/store /var/lib/kdeploy/generations || true");
    let marked = ssh(2, &grep);
    let live = ssh(2, "readlink -f /etc/containerd/config.toml");
    assert_eq!(marked.trim(), live.trim(), "the edit reached more than the live generation:\n{marked}");

    let (out, j) = status(&p);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let drift = |n: &str| j["nodes"][n]["drift"].to_string();
    assert!(drift("k8s-worker01").contains("/etc/containerd/config.toml"), "{}", text(&out));
    for u in &units {
        assert!(drift("k8s-worker02").contains(u.as_str()), "{u}: {}", text(&out));
    }
    assert_eq!(drift("k8s-master"), "[]");
    // status changed nothing
    assert!(ssh(2, "cat /etc/containerd/config.toml").contains(&marker));
    assert!(ssh(3, "systemctl is-active etcd").contains("inactive"));

    let (out, j) = switch(&p.base());
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("drift"), "{t}");
    assert!(j["nodes"]["k8s-worker01"]["drift"].to_string().contains("/etc/containerd/config.toml"), "{t}");
    assert_eq!(j["nodes"]["k8s-worker01"]["status"], "changed", "{t}");
    assert!(!ssh(2, "cat /etc/containerd/config.toml").contains(&marker));
    // the generation it left (now a rollback target) is as it was staged
    assert_eq!(ssh(2, &grep).trim(), "", "the hand edit is still in a generation");
    assert_ne!(active_since(2, "containerd"), started, "containerd still runs the hand-edited config");
    assert_deployed(&p.base());
    let (out, _) = status(&p);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (out, j) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    assert!(j["nodes"].as_object().unwrap().values().all(|n| n["status"] == "unchanged"), "{}", text(&out));
}
