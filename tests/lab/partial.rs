//! `switch --max-unreachable` against the real lab: k8s-worker02 (node 3)
//! cut off by taking its link to the lab bridge down (`ip link set kdvN
//! down`, as `crash.rs` does), while the switch's change concerns only
//! k8s-master and k8s-worker01 (containerd's config there: containerd
//! restarts, etcd does not) — they converge, k8s-worker02 is reported
//! unreachable and skipped, the run exits 8, and the next switch with the
//! link up converges it; then a change that needs it (etcd's settings:
//! each member restarts, and with k8s-worker02's member down one of three
//! would be up) is refused with exit 6 and nothing touched. All three lab
//! nodes are etcd members. Then k8s-worker02 down for good, pruned without
//! being reached, and reset once back. The pure rules are
//! `src/deploy/partial.rs`'s unit tests, the engine's `tests/local/partial.rs`.

use crate::support;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use support::node::lab_check::{assert_deployed, deployed_differences};
use support::node::lab_project::*;
use support::node::link::{wait_for_sshd, LinkDown};
use support::node::{addr, lab_lock_any, lab_up};

/// The lab file's first two nodes, as they are written there.
const FIRST_TWO: &str = "roles = [ \"control-plane\" \"etcd\" ]; };
    k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" \"etcd\" ]; };";

/// [`FIRST_TWO`] with a containerd setting of their own.
const FIRST_TWO_CHANGED: &str = "roles = [ \"control-plane\" \"etcd\" ]; settings.containerd.maxContainerLogLineSize = 32768; };
    k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" \"etcd\" ]; settings.containerd.maxContainerLogLineSize = 32768; };";

/// Waits (up to a minute) until node `i` answers on port 22 again and its
/// etcd member is healthy (it rejoins its peers once the link is up).
fn wait_until_back(i: u32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let sshd: SocketAddr = format!("{}:22", addr(i)).parse().unwrap();
    let health = "set -a; . /etc/etcd.env; unset ETCDCTL_ENDPOINTS; \
                  etcdctl --endpoints=\"$ETCD_ADVERTISE_CLIENT_URLS\" endpoint health";
    while TcpStream::connect_timeout(&sshd, Duration::from_secs(1)).is_err() || !ssh(i, health).contains("is healthy") {
        assert!(Instant::now() < deadline, "node {i} not back a minute after its link came up");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn switch_tolerating_one(cluster: &std::path::Path) -> (std::process::Output, serde_json::Value) {
    run(kdeploy_cmd("switch", cluster, None, &["--max-unreachable", "1"]))
}

#[test]
fn a_worker_cut_off_is_skipped_by_a_change_of_the_others_and_converged_when_back() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let node3 = ssh(3, "readlink /var/lib/kdeploy/phases/*; cat /var/lib/kdeploy/current /etc/containerd/config.toml");
    let containerd3 = active_since(3, "containerd");
    let others = p.edited("others", FIRST_TWO, FIRST_TWO_CHANGED);

    let down = LinkDown::take(3);
    // without the flag: nothing changes, as ever
    let (out, _) = switch(&others);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(!config(1).contains("32768"), "a run stopped by an unreachable node changed node 1");
    let t0 = Instant::now();
    let (out, j) = switch_tolerating_one(&others);
    eprintln!("switch without k8s-worker02 took {:?}", t0.elapsed());
    let t = text(&out);
    assert_eq!(out.status.code(), Some(8), "{t}");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "unreachable", "{j}");
    assert_eq!(j["nodes"]["k8s-worker02"]["skipped"], true, "{j}");
    assert_eq!(j["counts"]["unreachable"], 1, "{j}");
    for n in ["k8s-master", "k8s-worker01"] {
        assert_eq!(j["nodes"][n]["status"], "changed", "{n}: {j}");
        assert_eq!(j["nodes"][n]["units"]["restarted"], serde_json::json!(["containerd.service"]), "{n}: {j}");
    }
    assert!(config(1).contains("32768") && config(2).contains("32768"), "{t}");
    // k8s-worker02 untouched (looked at from inside, not over its link)
    let same3 = ssh(3, "readlink /var/lib/kdeploy/phases/*; cat /var/lib/kdeploy/current /etc/containerd/config.toml");
    assert_eq!(same3, node3, "k8s-worker02 changed while cut off");
    assert_eq!(active_since(3, "containerd"), containerd3);
    drop(down);
    wait_until_back(3);

    // back: it was not concerned, so the lab now runs `others` exactly,
    // and the next switch (without the flag) has nothing left to do
    assert_deployed(&others);
    let (out, j) = switch(&others);
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{j}");

    // a change of every node's containerd config with k8s-worker02 cut
    // off: the others converge, its change waits for it
    let all = p.variant("all", "containerd.maxContainerLogLineSize = 32769;");
    let down = LinkDown::take(3);
    let (out, j) = switch_tolerating_one(&all);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(8), "{t}");
    let said = j["nodes"]["k8s-worker02"]["error"].as_str().unwrap_or_default().to_string();
    assert!(said.contains("its change waits for the next switch"), "{j}");
    assert!(!config(3).contains("32769"), "{t}");
    drop(down);
    wait_until_back(3);
    let behind = deployed_differences(&all);
    assert!(!behind.is_empty() && behind.iter().all(|d| d.starts_with("k8s-worker02:")), "{behind:#?}");
    let (out, j) = switch(&all);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "changed", "{j}");
    for n in ["k8s-master", "k8s-worker01"] {
        assert_eq!(j["nodes"][n]["status"], "unchanged", "{n}: {j}");
    }
    assert_deployed(&all);
    p.restore();
}

#[test]
fn a_change_that_needs_the_cut_off_worker_is_refused_and_touches_nothing() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let before = snapshot();
    let etcd_since: Vec<String> = (1..=3).map(|i| active_since(i, "etcd")).collect();
    // every member restarts, one at a time: with k8s-worker02's down, the
    // first restart would leave one of three up
    let members = p.variant("members", "etcd.snapshotCount = 10001;");
    let down = LinkDown::take(3);
    let (out, _) = switch_tolerating_one(&members);
    drop(down);
    // (a refused run prints its reason, no recap)
    let t = text(&out);
    assert_eq!(out.status.code(), Some(6), "{t}");
    assert!(t.contains("k8s-worker02 unreachable") && t.contains("quorum"), "{t}");
    assert!(t.contains("nothing was changed"), "{t}");
    wait_until_back(3);
    assert_eq!(snapshot(), before, "a refused run changed a node");
    let after: Vec<String> = (1..=3).map(|i| active_since(i, "etcd")).collect();
    assert_eq!(after, etcd_since, "a refused run restarted an etcd member");
    assert_deployed(&p.base());
}

/// The lab file's third node, as it is written there.
const WORKER02: &str = "\n    k8s-worker02 = { address = \"10.77.0.13\"; roles = [ \"worker\" \"etcd\" ]; };";

/// `etcdctl member list` as node `i`'s own member answers it.
fn members(i: u32) -> String {
    ssh(
        i,
        "set -a; . /etc/etcd.env; unset ETCDCTL_ENDPOINTS; \
         etcdctl --endpoints=\"$ETCD_ADVERTISE_CLIENT_URLS\" member list",
    )
}

/// A node whose link is down for good (k8s-worker02), left out of the
/// definition and pruned: removed without being reached (exit 0, "gone"),
/// its etcd member removed through a live member — with k8s-worker01's,
/// which leaves as the definition says, the one left takes writes — never
/// asked to do anything itself; a plain
/// switch while it stays down goes on; once its link is up, the next plain
/// switch resets it; the lab file as written brings it back as a member.
#[test]
fn a_dead_member_is_removed_through_the_others_and_reset_when_it_comes_back() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // (k8s-worker01 stops being a member too: etcd runs an odd number)
    let without = p.rewritten(
        "without",
        &[
            (WORKER02, ""),
            (
                "k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" \"etcd\" ]; };",
                "k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" ]; };",
            ),
        ],
    );
    let peer3 = format!("{}:2380", addr(3));
    assert!(members(1).contains(&peer3), "{}", members(1));
    let phases3 = ssh(3, "readlink /var/lib/kdeploy/phases/*");

    let down = LinkDown::take(3);
    // not confirmed (no terminal, no --yes): refused, nothing changed
    let (out, _) = run(unconfirmed("switch", &without, None, &["--prune"]));
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    assert!(text(&out).contains("remove k8s-worker02 without reaching it"), "{}", text(&out));
    assert!(members(1).contains(&peer3), "a refused run removed the member");

    let t0 = Instant::now();
    let (out, j) = run(kdeploy_cmd("switch", &without, None, &["--prune", "--yes"]));
    let t = text(&out);
    eprintln!("removed k8s-worker02 without reaching it in {:?}:\n{t}", t0.elapsed());
    assert!(out.status.success(), "{t}");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "gone", "{j}");
    let list = members(1);
    assert!(!list.contains(&peer3) && list.lines().count() == 1, "{list}");
    let put = "set -a; . /etc/etcd.env; unset ETCDCTL_ENDPOINTS; \
               etcdctl --endpoints=\"$ETCD_ADVERTISE_CLIENT_URLS\" put kdeploy-test/after-removal yes";
    assert!(ssh(1, put).contains("OK"), "the two members left take no write");
    assert_eq!(ssh(3, "readlink /var/lib/kdeploy/phases/*"), phases3, "k8s-worker02 was changed");

    // still down: a plain switch goes on without it
    let (out, _) = switch(&without);
    assert!(out.status.success(), "{}", text(&out));
    drop(down);
    wait_for_sshd(3);

    // back: the next plain switch resets it
    let (out, j) = switch(&without);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "reset", "{j}");
    assert!(ssh(3, "test -e /var/lib/kdeploy && echo still || echo none").contains("none"), "{t}");
    assert_ne!(ssh(3, "systemctl is-active etcd").trim(), "active");
    let (out, j) = switch(&without);
    assert!(out.status.success() && statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{}", text(&out));

    // the lab file as written: it joins again
    p.restore();
    assert!(members(1).contains(&peer3), "{}", members(1));
}
