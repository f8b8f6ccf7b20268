//! `kdeploy reset` and `switch --prune` on the real lab (systemd, etcd with
//! TLS, containerd). A reset node must be clean — no unit kdeploy
//! installed, active or enabled, no managed file, no etcd data, no
//! /var/lib/kdeploy — and the etcd members that remain must list exactly
//! themselves; a switch of the unchanged definition (the engine joins the
//! member again) brings it back. A node dropped from a copy of the lab
//! cluster is named and left running by `switch`, removed by `switch
//! --prune`, and re-added, with a client writing to etcd the whole time.
//! After the whole lab's reset each node's files and units are what they
//! were at boot, before any switch (lab.sh records them). Its time is
//! printed (a figure for BENCHMARKS.md, not asserted: a timed assertion
//! fails on a loaded machine). Every test ends on the unmodified lab
//! cluster.

use crate::support;
use std::time::Instant;

use support::node::lab_project::*;
use support::node::{etcd_writer, lab_has, lab_lock_any, lab_lock_nodes, lab_up, lane};

const W2: u32 = 3; // k8s-worker02 is lab node 3

const W2_LINE: &str = r#"k8s-worker02 = { address = "10.77.0.13"; roles = [ "worker" "etcd" ]; };"#;

/// The managed paths of node `i`, without those that held an original
/// before kdeploy (put back by a reset: they must exist, as plain files).
fn managed_paths(i: u32) -> Vec<String> {
    let out = ssh(i, "cat /var/lib/kdeploy/phases/*/manifest | awk -F'\\t' '$1 == \"f\" { print $6 }'");
    let displaced = ssh(i, "cd /var/lib/kdeploy/displaced && find . ! -type d | cut -c2-");
    let originals: Vec<&str> = displaced.lines().collect();
    out.lines().filter(|l| l.starts_with('/') && !originals.contains(l)).map(str::to_string).collect()
}

/// What is left of kdeploy on node `i` (empty: clean).
fn leftovers(i: u32, paths: &[String]) -> String {
    let check = format!(
        "test -e /var/lib/kdeploy && echo /var/lib/kdeploy; \
         test -e /var/lib/etcd && echo /var/lib/etcd; \
         for f in {}; do if test -e \"$f\" || test -L \"$f\"; then echo \"$f\"; fi; done; \
         for f in /etc/* /etc/*/* /usr/local/bin/*; do \
           case $(readlink \"$f\") in /var/lib/kdeploy/*) echo \"$f links into kdeploy\";; esac; \
         done; \
         for u in etcd containerd; do \
           systemctl is-active --quiet $u && echo \"$u active\"; \
           systemctl is-enabled --quiet $u 2>/dev/null && echo \"$u enabled\"; \
         done; true",
        paths.join(" ")
    );
    ssh(i, &check)
}

/// etcd member names as node `i` sees them.
fn members(i: u32) -> Vec<String> {
    let out = ssh(i, "/usr/local/bin/etcdctl.sh member list");
    let mut names: Vec<String> = out.lines().filter_map(|l| l.split(", ").nth(2).map(str::to_string)).collect();
    names.sort();
    names
}

fn reset(p: &Project, extra: &[&str]) -> (std::process::Output, serde_json::Value, f64) {
    let t0 = Instant::now();
    let (out, j) = run(kdeploy_cmd("reset", &p.base(), None, extra));
    (out, j, t0.elapsed().as_secs_f64())
}

#[test]
fn one_node_reset_to_clean_then_a_switch_brings_it_back() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let paths = managed_paths(W2);
    assert!(paths.iter().any(|f| f == "/etc/etcd.env"), "{paths:?}");
    // the switch recorded the node that runs kubeadm init
    let latest = kdeploy::deploy::record::Records::load(&p.dir.path().join(".kdeploy"))
        .unwrap()
        .latest()
        .cloned()
        .expect("a recorded generation");
    assert_eq!(latest.anchor.as_deref(), Some("k8s-master"));

    // not on a terminal and no --yes: refused once the plan is known,
    // naming what it would do; nothing touched
    let (out, _) = run(unconfirmed("reset", &p.base(), None, &["--on", "k8s-worker02"]));
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    assert!(text(&out).contains("--yes") && text(&out).contains("reset k8s-worker02"), "{}", text(&out));
    assert!(leftovers(W2, &paths).lines().count() >= paths.len() + 6);

    // k8s-worker02 leads: its reset hands leadership off before it leaves,
    // so a client writing the whole time loses nothing
    let id = ssh(1, "/usr/local/bin/etcdctl.sh member list | grep ', k8s-worker02, ' | cut -d, -f1");
    let all = lane::text("ETCDCTL_ENDPOINTS=https://10.77.0.11:2379,https://10.77.0.12:2379,https://10.77.0.13:2379");
    ssh(1, &format!("{all} /usr/local/bin/etcdctl.sh move-leader {}", id.trim()));
    assert!(ssh(3, "/usr/local/bin/etcdctl.sh endpoint status").contains(", true, "), "k8s-worker02 does not lead");
    etcd_writer::start();
    let (out, j, took) = reset(&p, &["--on", "k8s-worker02", "--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("the reset of the leading etcd member", 10);
    eprintln!("reset of one lab node: {took:.2} s");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "reset", "{}", text(&out));
    assert_eq!(leftovers(W2, &paths), "", "left on k8s-worker02 after reset");
    // it left the etcd cluster, which stays healthy without it
    assert_eq!(members(1), ["k8s-master", "k8s-worker01"]);
    assert!(ssh(1, "/usr/local/bin/etcdctl.sh endpoint health").contains("is healthy"));

    // the definition still names it: the next switch joins it again
    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(members(1), ["k8s-master", "k8s-worker01", "k8s-worker02"]);
    assert!(ssh(1, "/usr/local/bin/etcdctl.sh endpoint health --cluster").matches("is healthy").count() == 3);
    p.restore();
}

/// k8s-worker02 replaced by k8s-worker03 (lab node 9) as a worker and etcd member.
const W3_LINE: &str = r#"k8s-worker03 = { address = "10.77.0.19"; roles = [ "worker" "etcd" ]; };"#;

#[test]
fn a_dropped_member_is_named_and_left_then_pruned_then_re_added() {
    let _g = lab_lock_nodes([1, 2, 3, 9]);
    if !lab_has(9) {
        eprintln!("skipped: needs lab nodes 1-3 and 9 (lab/lab.sh up 10)");
        return;
    }
    let p = Project::new();
    p.restore();
    let paths = managed_paths(W2);
    let replaced = p.edited("replaced", W2_LINE, W3_LINE);

    // k8s-worker03 joins; k8s-worker02, gone from the definition, is named
    // and left as it is: still running, still a member
    etcd_writer::start();
    let (out, j) = switch(&replaced);
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("a join with a node left out of the definition", 10);
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "left", "{}", text(&out));
    assert!(text(&out).contains("--prune"), "{}", text(&out));
    assert!(ssh(W2, "systemctl is-active etcd containerd").lines().all(|l| l == "active"));
    assert!(ssh(W2, "test -f /var/lib/kdeploy/current && echo yes").contains("yes"));
    assert_eq!(members(1), ["k8s-master", "k8s-worker01", "k8s-worker02", "k8s-worker03"]);

    // --prune without --yes and without a terminal to ask on: refused
    // once the plan is known (it names what it would do), nothing changed
    let (out, _) = run(unconfirmed("switch", &replaced, None, &["--prune"]));
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    for said in ["--yes", "reset k8s-worker02", "remove member k8s-worker02"] {
        assert!(text(&out).contains(said), "{said}: {}", text(&out));
    }
    assert!(ssh(W2, "systemctl is-active etcd containerd").lines().all(|l| l == "active"));
    assert_eq!(members(1), ["k8s-master", "k8s-worker01", "k8s-worker02", "k8s-worker03"]);

    // --prune: it leaves etcd and is reset, while a client writes
    etcd_writer::start();
    let (out, j) = run(kdeploy_cmd("switch", &replaced, None, &["--prune"]));
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("the prune of an etcd member", 10);
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "reset", "{}", text(&out));
    assert_eq!(leftovers(W2, &paths), "", "left on k8s-worker02 after --prune");
    assert_eq!(members(1), ["k8s-master", "k8s-worker01", "k8s-worker03"]);

    // nothing left to name or prune
    let (out, j) = run(kdeploy_cmd("switch", &replaced, None, &["--prune"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(j["nodes"].get("k8s-worker02").is_none(), "{}", text(&out));

    // back to the lab in one run: k8s-worker02 joins again, k8s-worker03 is pruned
    let w3_paths = managed_paths(9);
    etcd_writer::start();
    let (out, j) = run(kdeploy_cmd("switch", &p.base(), None, &["--prune"]));
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("a join and a prune in one run", 10);
    assert_eq!(j["nodes"]["k8s-worker03"]["status"], "reset", "{}", text(&out));
    assert_eq!(leftovers(9, &w3_paths), "", "left on k8s-worker03 after --prune");
    assert_eq!(members(1), ["k8s-master", "k8s-worker01", "k8s-worker02"]);
    p.restore();
}

#[test]
fn the_whole_lab_resets_and_comes_back() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let paths: Vec<Vec<String>> = (1..=3).map(managed_paths).collect();

    let (out, j, took) = reset(&p, &["--yes"]);
    assert!(out.status.success(), "{}", text(&out));
    eprintln!("reset of the 3-node lab: {took:.2} s (kdeploy's own recap: {} s)", j["took"]);
    for (i, n) in [(1, "k8s-master"), (2, "k8s-worker01"), (3, "k8s-worker02")] {
        assert_eq!(j["nodes"][n]["status"], "reset", "{}", text(&out));
        assert_eq!(leftovers(i, &paths[i as usize - 1]), "", "left on {n}");
        // files and units as at boot, before any switch: what the stdlib's
        // hooks did imperatively (swap.target masked, say) undone too
        let differs = differs_from_boot(i);
        assert!(differs.is_empty(), "{n} after reset differs from its boot state:\n{}", differs.join("\n"));
    }

    // a fresh cluster again: etcd bootstraps as new on all three
    p.restore();
}
