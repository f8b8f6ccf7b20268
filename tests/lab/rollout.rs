//! Rolling changes on the real lab (`lab/lab.sh up 3`, three etcd
//! members): an etcd setting change restarts the members one at a time,
//! each healthy again before the next, while a client writes the whole
//! time. The client retries each write 5 times, 0.2 s apart (what the
//! issue names); it must lose none, and every write it saw acknowledged
//! must be in etcd afterwards. Lab down: skipped, or a failure when CI is
//! set.

use crate::support;
use std::process::Output;

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{etcd_writer, lab_lock_any, lab_secrets, lab_up};

/// When etcd last became active on node `i`, in µs of the host's
/// monotonic clock (the lab's nodes share the host's kernel).
fn etcd_restarted_at(i: u32) -> u64 {
    let s = active_since(i, "etcd.service");
    s.trim().rsplit('=').next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("node {i}: {s:?}"))
}

/// Runs `run` (a switch) while the writer writes; returns its result,
/// after checking that every member's
/// etcd restarted, one after the other, in three batches, that the writer
/// lost no write and that every acknowledged key is in etcd.
fn switch_under_writer(run: impl FnOnce() -> (Output, serde_json::Value)) -> (Output, serde_json::Value) {
    let before: Vec<u64> = (1..=3).map(etcd_restarted_at).collect();
    etcd_writer::start();
    let (out, j) = run();
    assert!(out.status.success(), "{}", text(&out));
    etcd_writer::stop_and_check("the rolling restart", 30);

    // Every member restarted, one after the other: each became active
    // again well after the one before (a restart and a health check).
    let after: Vec<u64> = (1..=3).map(etcd_restarted_at).collect();
    for i in 0..3 {
        assert_ne!(before[i], after[i], "etcd on node {} did not restart", i + 1);
    }
    let mut order = after.clone();
    order.sort();
    for w in order.windows(2) {
        assert!(w[1] - w[0] > 200_000, "members restarted together: {after:?}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    for b in 1..=3 {
        assert!(stderr.contains(&format!("== etcd: batch {b} of 3 on ")), "{stderr}");
    }

    (out, j)
}

#[test]
fn an_etcd_setting_change_restarts_members_one_at_a_time_without_losing_a_write() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let changed = p.variant("snapshots", "etcd.snapshotCount = 10001;");
    let (_, j) = switch_under_writer(|| switch(&changed));
    assert_eq!(statuses(&j).iter().filter(|(_, s)| s == "changed").count(), 3, "{j}");
    p.restore();
    assert_deployed(&p.base());
}

#[test]
fn renewing_every_certificate_keeps_etcd_writable() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // A window longer than any lifetime: every certificate but the CA is due.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .arg("certs")
        .arg(p.base())
        .args(["--renew", "--within", "100000"])
        .env("KDEPLOY_SECRETS", lab_secrets())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("renewed: lab/etcd/member-k8s-worker02.pem"), "{}", text(&out));
    switch_under_writer(|| switch(&p.base()));
    assert_deployed(&p.base());
}
