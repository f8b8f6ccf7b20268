//! Backups and recovery on the real etcd lab: a switch that changes etcd
//! takes a snapshot first and keeps it on the deployer (0600, in a 0700
//! directory); two of the three members lose their data, so the cluster
//! has no majority and takes no write; `kdeploy restore` (refused without
//! consent, nothing touched) brings it back from that snapshot: three
//! voting members, every write acknowledged before the snapshot there,
//! none written after it, the data it replaced kept aside, and a switch
//! afterwards changes nothing.

use crate::support;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_any, lab_up};

const ETCDCTL: &str = "ETCDCTL_ENDPOINTS=https://127.0.0.1:2379 /usr/local/bin/etcdctl.sh";

fn snapshots(project: &Path) -> Vec<PathBuf> {
    let dir = project.join(".kdeploy/snapshots/etcd");
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir).map_or(vec![], |d| d.flatten().map(|e| e.path()).collect());
    all.sort();
    all
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Writes keys `prefix`1..=n on node 1, each acknowledged.
fn write_keys(prefix: &str, n: u32) {
    let out = ssh(
        1,
        &format!("for i in $(seq 1 {n}); do {ETCDCTL} put {prefix}$i v$i >/dev/null || {{ echo FAILED $i; exit 1; }}; done; echo done"),
    );
    assert!(out.trim_end().ends_with("done"), "writing {prefix}: {out}");
}

fn keys(prefix: &str) -> Vec<String> {
    let out = ssh(1, &format!("{ETCDCTL} --command-timeout=5s get {prefix} --prefix --keys-only"));
    out.lines().filter(|l| l.starts_with(prefix)).map(str::to_string).collect()
}

#[test]
fn two_of_three_members_wiped_are_restored_from_the_snapshot_a_switch_took() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    ssh(1, &format!("{ETCDCTL} del kd-restore/ --prefix >/dev/null"));
    write_keys("kd-restore/before-", 50);

    // 1. a switch that changes etcd takes a snapshot before it changes anything
    let before = snapshots(p.dir.path());
    let changed = p.variant("snapshot-count", "etcd.snapshotCount = 10003;");
    let (out, _) = switch(&changed);
    assert!(out.status.success(), "{}", text(&out));
    let taken = snapshots(p.dir.path());
    assert_eq!(taken.len(), before.len() + 1, "one snapshot taken: {taken:?}\n{}", text(&out));
    let snapshot = taken.last().unwrap().clone();
    assert_eq!(mode(snapshot.parent().unwrap()), 0o700, "snapshot directory");
    assert_eq!(mode(&snapshot), 0o600, "{}", snapshot.display());
    assert!(text(&out).contains("snapshot of"), "the run says so: {}", text(&out));
    // a switch that changes nothing takes none
    let (out, _) = switch(&changed);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(snapshots(p.dir.path()).len(), taken.len(), "a no-op took a snapshot");

    // writes after the snapshot: a restore from it does not have them
    write_keys("kd-restore/after-", 10);

    // 2. two of three members lose their data: no majority, no write
    for i in [2, 3] {
        let out =
            inside(i, "systemctl kill -s KILL etcd.service; systemctl stop etcd.service; rm -rf /var/lib/etcd/member");
        assert!(out.status.success(), "wiping node {i}: {}", text(&out));
    }
    let put = ssh(1, &format!("{ETCDCTL} --command-timeout=3s put kd-restore/lost x && echo WRITTEN"));
    assert!(!put.contains("WRITTEN"), "a write went through without a majority: {put}");

    // 3. without consent: refused, nothing touched
    let (out, _) = run(unconfirmed("restore", &changed, None, &[]));
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    assert!(text(&out).contains("restore"), "{}", text(&out));
    assert_eq!(ssh(1, "systemctl is-active etcd.service").trim(), "active", "node 1 untouched");
    assert!(ssh(1, "ls /var/lib/etcd").lines().all(|l| !l.starts_with("member.before-restore")), "nothing set aside");

    // 4. the restore
    let (out, _) = run(unconfirmed("restore", &changed, None, &["--yes"]));
    assert!(out.status.success(), "restore failed:\n{}", text(&out));
    let members = ssh(1, &format!("{ETCDCTL} member list"));
    let lines: Vec<&str> = members.lines().filter(|l| l.contains(", started, ")).collect();
    assert_eq!(lines.len(), 3, "three started members: {members}");
    assert!(lines.iter().all(|l| l.ends_with(", false")), "all voting (no learner left): {members}");
    let health = ssh(1, &format!("{ETCDCTL} endpoint health --cluster"));
    assert_eq!(health.matches("is healthy").count(), 3, "{health}");

    // every write acknowledged before the snapshot, none after it
    let present = keys("kd-restore/");
    for i in 1..=50 {
        assert!(present.contains(&format!("kd-restore/before-{i}")), "kd-restore/before-{i} missing: {present:?}");
    }
    assert!(!present.iter().any(|k| k.contains("after-")), "writes after the snapshot present: {present:?}");
    // the restored cluster takes writes again
    write_keys("kd-restore/again-", 3);
    // what the restore replaced on the member that still had data is kept
    assert!(ssh(1, "ls /var/lib/etcd").lines().any(|l| l.starts_with("member.before-restore.")), "node 1's data kept");

    // 5. the nodes' files and generations did not change: a switch is a no-op
    let (out, j) = switch(&changed);
    assert!(out.status.success(), "{}", text(&out));
    assert!(statuses(&j).iter().all(|(_, s)| s == "unchanged"), "{j}");
    assert_deployed(&changed);

    for i in 1..=3 {
        ssh(i, "rm -rf /var/lib/etcd/member.before-restore.*");
    }
    ssh(1, &format!("{ETCDCTL} del kd-restore/ --prefix >/dev/null"));
    p.restore();
}
