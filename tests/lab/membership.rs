//! etcd membership changed by editing the definition, on the real lab
//! (`lab/lab.sh up 3`): the etcd role taken from both workers (3 members
//! → 1) and given back (1 → 3), while a client writes the whole time. No
//! `initialClusterState` or other hand step: kdeploy asks a live member
//! who is in, removes leaving members one at a time before their etcd
//! stops, and adds joining ones one at a time as learners, promoted once
//! in sync. Then the same growth cut off by a killed deployer right after
//! its first `member add`, finished by the next plain switch. With the
//! lab's spare nodes kdnode9-10 (`lab/lab.sh up 10`, what `tests/run-all.sh` boots): etcd
//! 3 → 5 → 3 under the writer. And a leave the member list read leaves
//! out (a wrong answer), refused since the leaving node's own member says
//! otherwise. Lab down (or too small): skipped, or a failure when CI is set.

use crate::support;
use std::path::PathBuf;

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{etcd_writer, lab_has, lab_lock_nodes, lab_up};

const WORKER_ROLES: &str = "roles = [ \"worker\" \"etcd\" ];";
const LAST_NODE: &str = "k8s-worker02 = { address = \"10.77.0.13\"; roles = [ \"worker\" \"etcd\" ]; };";

/// The lab with its two spare nodes (kdnode9 and kdnode10), with `roles`.
fn five_nodes(p: &Project, name: &str, roles: &str) -> PathBuf {
    let more = format!(
        "{LAST_NODE}\n    k8s-worker03 = {{ address = \"10.77.0.19\"; roles = {roles}; }};\n    \
         k8s-worker04 = {{ address = \"10.77.0.20\"; roles = {roles}; }};"
    );
    p.edited(name, LAST_NODE, &more)
}

/// The lab with k8s-master as the only etcd member.
fn solo(p: &Project) -> PathBuf {
    p.edited("solo", WORKER_ROLES, "roles = [ \"worker\" ];")
}

/// `etcdctl member list` on k8s-master: (name, started, learner) sorted.
fn members() -> Vec<(String, bool, bool)> {
    let out = ssh(1, "ETCDCTL_ENDPOINTS=https://127.0.0.1:2379 /usr/local/bin/etcdctl.sh member list");
    let mut m: Vec<(String, bool, bool)> = out
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(", ").collect();
            (f.len() == 6).then(|| (f[2].to_string(), f[1] == "started", f[5].trim() == "true"))
        })
        .collect();
    m.sort();
    assert!(!m.is_empty(), "no member list: {out}");
    m
}

fn voters(names: &[&str]) -> Vec<(String, bool, bool)> {
    names.iter().map(|n| (n.to_string(), true, false)).collect()
}

/// A node that left etcd runs no etcd and keeps none of its data.
fn assert_left(i: u32) {
    let st = ssh(i, "systemctl is-active etcd; ls /var/lib/etcd/member 2>&1; ls /etc/etcd.env 2>&1");
    assert!(st.starts_with("inactive"), "node {i}: {st}");
    assert_eq!(st.matches("No such file").count(), 2, "node {i} keeps etcd data or config: {st}");
}

#[test]
fn etcd_shrinks_and_grows_by_role_edits_without_losing_a_write() {
    let _g = lab_lock_nodes([1, 2, 3, 9, 10]);
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));

    etcd_writer::start();
    let (out, _) = switch(&solo(&p));
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("3 -> 1 members", 20);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(log.matches("etcd: member k8s-worker0").filter(|_| true).count(), 2, "{log}");
    assert!(log.contains("etcd: member k8s-worker01 removed"), "{log}");
    assert_eq!(members(), voters(&["k8s-master"]));
    assert_left(2);
    assert_left(3);
    assert_deployed(&solo(&p));

    etcd_writer::start();
    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("1 -> 3 members", 20);
    let log = String::from_utf8_lossy(&out.stderr);
    for w in ["k8s-worker01", "k8s-worker02"] {
        assert!(log.contains(&format!("etcd: member {w} added as a learner")), "{log}");
        assert!(log.contains(&format!("etcd: member {w} promoted to a voting member")), "{log}");
    }
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));
    assert_deployed(&p.base());

    // going back to the one-member generation would stop two voters
    let (out, _) = run(kdeploy_cmd("rollback", &p.base(), None, &[]));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("rollback does not change a membership"), "{}", text(&out));
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));
}

#[test]
fn a_growth_cut_off_after_its_first_member_add_is_finished_by_the_next_run() {
    let _g = lab_lock_nodes([1, 2, 3, 9, 10]);
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let (out, _) = switch(&solo(&p));
    assert!(out.status.success(), "{}", text(&out));

    let mut killed = kdeploy_cmd("switch", &p.base(), None, &[]);
    killed.env("KDEPLOY_FAILPOINT", "after-member-change");
    let (out, _) = run(killed);
    assert!(!out.status.success(), "the failpoint did not fire:\n{}", text(&out));
    // one member added, never started
    let m = members();
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(m.iter().any(|(_, started, learner)| !started && *learner), "{m:?}");

    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));
    assert_deployed(&p.base());
}

#[test]
fn etcd_grows_3_to_5_and_shrinks_back_without_losing_a_write() {
    let _g = lab_lock_nodes([1, 2, 3, 9, 10]);
    if !lab_has(10) {
        return;
    }
    let p = Project::new();
    p.restore();
    let three = five_nodes(&p, "three-of-five", "[ \"worker\" ]");
    let five = five_nodes(&p, "five-of-five", "[ \"worker\" \"etcd\" ]");
    let (out, _) = switch(&three);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));

    etcd_writer::start();
    let (out, _) = switch(&five);
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("3 -> 5 members", 20);
    let all = ["k8s-master", "k8s-worker01", "k8s-worker02", "k8s-worker03", "k8s-worker04"];
    assert_eq!(members(), voters(&all));
    assert_deployed(&five);

    etcd_writer::start();
    let (out, _) = switch(&three);
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("5 -> 3 members", 20);
    assert_eq!(members(), voters(&all[..3]));
    assert_left(9);
    assert_left(10);
    assert_deployed(&three);
    p.restore();
}

/// Members leave (their etcd role taken away) while the member list the
/// run reads leaves one of them out (a wrong answer, as from a member cut off from
/// the others): without a `member remove` planned, its step would stop it
/// and the stdlib's hook would remove its data, leaving the cluster a
/// dead member. Its own member answers as one of the cluster, so the run
/// stops before changing anything, naming both answers.
#[test]
fn a_leaving_member_the_list_leaves_out_keeps_its_data_and_the_run_stops() {
    let _g = lab_lock_nodes([1, 2, 3, 9, 10]);
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // both workers leave (an even count is refused); the list leaves one out
    let leaves = solo(&p);
    // it leaves k8s-worker02 out everywhere but on k8s-worker02
    let anchor = "let kd = import <kdeploy>; in\nkd.cluster";
    let t = std::fs::read_to_string(&leaves).unwrap();
    assert!(t.contains(anchor));
    let wrong = " | { if [ -e /run/kdeploy-test-own ]; then cat; else grep -v k8s-worker02; fi; }";
    let t = t.replace(anchor, "let kd = import <kdeploy>; c = kd.cluster").trim_end().to_string()
        + &format!(
            ";\nin c // {{ memberships = c.memberships // {{ etcd = c.memberships.etcd // \
             {{ list = c.memberships.etcd.list + \"{wrong}\"; }}; }}; }}\n"
        );
    std::fs::write(&leaves, t).unwrap();
    ssh(3, "touch /run/kdeploy-test-own");
    let (out, _) = switch(&leaves);
    ssh(3, "rm -f /run/kdeploy-test-own");
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("k8s-worker02 leaves, but the member list read"), "{t}");
    assert!(t.contains("its own member answers as k8s-worker02 of the same cluster"), "{t}");
    assert_eq!(members(), voters(&["k8s-master", "k8s-worker01", "k8s-worker02"]));
    let st = ssh(3, "systemctl is-active etcd; ls /var/lib/etcd/member");
    assert!(st.starts_with("active\n") && st.contains("snap"), "k8s-worker02's member stopped or wiped: {st}");
    assert_deployed(&p.base());
}
