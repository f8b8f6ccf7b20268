//! Your own files, units, hooks and checks on the real lab, with the
//! example clusters/time-sync.nix (a phase of its own after preinstall: an
//! NTP drop-in, a service that logs the servers, a hook, a check): as it
//! is (its default server) it converges and its service runs; a re-run is a
//! no-op; a change of servers switches only that phase and restarts the
//! service, not etcd; a rollback brings the old servers and a restart back;
//! a hand edit of the file is reported and repaired; the lab cluster
//! without it removes the phase.

use crate::support;
use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_has, lab_lock_any, repo};

const CONF: &str = "/etc/systemd/timesyncd.conf.d/kdeploy-ntp.conf";

/// The lab cluster with clusters/time-sync.nix given `args` (`{ }`: as it is).
fn with_servers(p: &Project, name: &str, args: &str) -> std::path::PathBuf {
    std::fs::copy(repo().join("clusters/time-sync.nix"), p.dir.path().join("time-sync.nix")).unwrap();
    p.variant(name, &format!("custom = (import ./time-sync.nix {args}).custom;"))
}

fn all_unchanged(j: &serde_json::Value) -> bool {
    statuses(j).iter().all(|(_, s)| s == "unchanged")
}

#[test]
fn own_phase_converges_changes_alone_repairs_and_rolls_back() {
    let _g = lab_lock_any();
    if !lab_has(3) {
        return;
    }
    let p = Project::new();
    // the example as it is: its default server, the lab's host
    let one = with_servers(&p, "one", "{ }");
    let (out, _) = switch(&one);
    assert!(out.status.success(), "{}", text(&out));
    assert_deployed(&one);
    for i in 1..=3 {
        assert!(ssh(i, &format!("cat {CONF}")).contains("NTP=10.77.0.1\n"), "node {i}");
        assert_eq!(ssh(i, "systemctl is-active time-servers.service").trim(), "active", "node {i}");
        assert!(ssh(i, "readlink /var/lib/kdeploy/phases/time-sync").contains("generations/"), "node {i}");
    }
    let (out, j) = switch(&one);
    assert!(out.status.success() && all_unchanged(&j), "{}", text(&out));

    // another server: only time-sync switches; the service restarts, etcd does not
    let two = with_servers(&p, "two", "{ servers = [ \"10.77.0.1\" \"10.77.0.2\" ]; }");
    let (etcd, svc) = (active_since(1, "etcd"), active_since(1, "time-servers"));
    let (out, _) = switch(&two);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("activate time-sync") && !t.contains("activate etcd"), "{t}");
    assert_eq!(active_since(1, "etcd"), etcd, "etcd restarted for an NTP change");
    assert_ne!(active_since(1, "time-servers"), svc, "the service still runs the old servers");
    assert!(ssh(1, "journalctl -u time-servers --no-pager -o cat").contains("NTP=10.77.0.1 10.77.0.2"));
    assert_deployed(&two);

    // rollback: the previous servers, and the service restarted onto them
    let svc = active_since(1, "time-servers");
    let (out, _) = run(kdeploy_cmd("rollback", &two, None, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(ssh(1, &format!("cat {CONF}")).contains("NTP=10.77.0.1\n"));
    assert_ne!(active_since(1, "time-servers"), svc);

    let (out, _) = switch(&two);
    assert!(out.status.success(), "{}", text(&out));

    // a hand edit: reported by status, repaired by the next switch
    ssh(2, &format!("echo NTP=192.0.2.1 >> {CONF}"));
    let (out, j) = run(kdeploy_cmd("status", &two, None, &[]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(j["nodes"]["k8s-worker01"]["drift"].to_string().contains(CONF), "{}", text(&out));
    let (out, _) = switch(&two);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!ssh(2, &format!("cat {CONF}")).contains("192.0.2.1"));
    assert_deployed(&two);

    // the lab cluster without it: the phase, its file and its unit are gone
    p.restore();
    for i in 1..=3 {
        assert!(ssh(i, &format!("test -e {CONF} && echo present || echo gone")).contains("gone"), "node {i}");
        assert_ne!(ssh(i, "systemctl is-active time-servers.service").trim(), "active", "node {i}");
    }
}
