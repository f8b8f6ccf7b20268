//! Durable node state on real lab nodes: blobs truncated on a node are
//! never trusted (the next switch sends them again and every file equals
//! `kdeploy eval`); a full disk fails a switch with the node and the reason
//! named and leaves every node wholly on its committed generation, and the
//! next switch after space is freed converges; `kdeploy gc` removes old
//! generations and the blobs only they used, waits for no one (a switch
//! holding the lock makes it fail), and `rollback` still works after it.

use crate::support;
use std::process::{Output, Stdio};

use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_lock_any, lab_up, lane, repo};

/// Runs `cmd` inside node `i` (all its namespaces, full privileges) and
/// requires it to succeed.
fn inside_ok(i: u32, cmd: &str) -> String {
    let out: Output = inside(i, cmd);
    assert!(out.status.success(), "on node {i}: {cmd}\n{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `HASH PATH` of the first file of `phase`'s linked manifest on node `i`
/// whose blob is in `dir` (store or secrets) and matches `pattern` (grep -E).
fn blob_of(i: u32, phase: &str, dir: &str, pattern: &str) -> (String, String) {
    let out = ssh(
        i,
        &format!(
            "cd /var/lib/kdeploy && awk -F'\\t' '$1 == \"f\" {{ print $5, $6 }}' phases/{phase}/manifest | \
             grep -E ' {pattern}' | while read -r h p; do [ -f {dir}/$h ] && echo \"$h $p\" && break; done"
        ),
    );
    let mut w = out.split_whitespace();
    match (w.next(), w.next()) {
        (Some(h), Some(p)) if h.len() == 64 => (h.to_string(), p.to_string()),
        _ => panic!("no {dir} blob for {pattern} in {phase} on node {i}: {out}"),
    }
}

fn stat(i: u32, path: &str) -> String {
    ssh(i, &format!("stat -c '%s %a' {path}")).trim().to_string()
}

#[test]
fn truncated_blobs_are_sent_again_not_staged() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    // k8s-worker02: a config file and a secret (etcd key), each truncated in
    // the store and in the committed generation (drift: re-staged from the store)
    let (conf, conf_path) = blob_of(3, "container-runtime", "store", "/etc/containerd/config.toml");
    let (key, key_path) = blob_of(3, "etcd", "secrets", ".*key");
    let conf_size = stat(3, &format!("/var/lib/kdeploy/store/{conf}"));
    let key_size = stat(3, &format!("/var/lib/kdeploy/secrets/{key}"));
    assert!(key_size.ends_with(" 600"), "{key_size}");
    ssh(
        3,
        &format!(
            "cd /var/lib/kdeploy && truncate -s 7 store/{conf} secrets/{key} \
             \"$(readlink -f {conf_path})\" \"$(readlink -f {key_path})\""
        ),
    );
    // k8s-worker01: only store blobs, a small one (the unit file, checked by
    // sha256) and a binary (checked by size); no file of the node changed
    let (unit, _) = blob_of(2, "container-runtime", "store", "/etc/systemd/system/containerd.service");
    let (runc, _) = blob_of(2, "container-runtime", "store", "/usr/local/bin/runc");
    let unit_size = stat(2, &format!("/var/lib/kdeploy/store/{unit}"));
    let runc_size = stat(2, &format!("/var/lib/kdeploy/store/{runc}"));
    ssh(2, &format!("cd /var/lib/kdeploy/store && truncate -s 100 {runc} && truncate -s -1 {unit}"));

    let (out, j) = switch(&p.base());
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(j["nodes"]["k8s-worker02"]["status"], "changed", "{t}");
    assert_eq!(j["nodes"]["k8s-worker01"]["status"], "unchanged", "{t}");
    assert_eq!(stat(3, &format!("/var/lib/kdeploy/store/{conf}")), conf_size, "config blob not sent again");
    assert_eq!(stat(3, &format!("/var/lib/kdeploy/secrets/{key}")), key_size, "secret not sent again, or not 0600");
    assert_deployed(&p.base());

    // a phase re-staged on k8s-worker01 reuses its damaged blobs: sent again
    let b = p.variant("b", "containerd.maxContainerLogLineSize = 31000;");
    let (out, j) = switch(&b);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(j["nodes"]["k8s-worker01"]["status"], "changed", "{t}");
    assert_eq!(stat(2, &format!("/var/lib/kdeploy/store/{unit}")), unit_size);
    assert_eq!(stat(2, &format!("/var/lib/kdeploy/store/{runc}")), runc_size);
    assert_deployed(&b);
    p.restore();
}

/// A small tmpfs over node `i`'s /var/lib/kdeploy holding a copy of it
/// and room for one more generation of binaries, filled to the last byte; dropped: unmounted (lazily: units may run
/// binaries from it), which leaves the node's own state as it was before.
struct FullDisk(u32);

impl FullDisk {
    fn new(i: u32) -> FullDisk {
        inside_ok(
            i,
            // (the copy on the node's disk, not in /run: a node that many
            // runs left with gigabytes of generations filled /run, and every
            // later test on it failed)
            "set -e; trap 'rm -rf /var/tmp/kd-save' EXIT; used=$(du -sm /var/lib/kdeploy | cut -f1); \
             rm -rf /var/tmp/kd-save; cp -a /var/lib/kdeploy /var/tmp/kd-save; \
             mount -t tmpfs -o size=$((used + 256))m,mode=0711 kd-full /var/lib/kdeploy; \
             cp -a /var/tmp/kd-save/. /var/lib/kdeploy/",
        );
        let d = FullDisk(i);
        d.fill();
        d
    }

    fn fill(&self) {
        inside_ok(self.0, "dd if=/dev/zero of=/var/lib/kdeploy/filler bs=64k 2>/dev/null; true");
        let probe = inside(self.0, "head -c 1 /dev/zero > /var/lib/kdeploy/probe");
        assert!(!probe.status.success(), "the node's state directory is not full");
        assert!(String::from_utf8_lossy(&probe.stderr).contains("No space"), "{}", text(&probe));
    }

    fn free(&self) {
        inside_ok(self.0, "rm -f /var/lib/kdeploy/filler /var/lib/kdeploy/probe");
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        let _ = inside(self.0, "umount -l /var/lib/kdeploy");
    }
}

#[test]
fn a_full_disk_fails_cleanly_and_the_next_switch_converges() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    let b = p.variant("b", "containerd.maxContainerLogLineSize = 32000;");
    // b's blobs on the nodes already: the switch below fails while staging
    // (copying binaries into a new generation), not while pushing
    let (out, _) = switch(&b);
    assert!(out.status.success(), "{}", text(&out));
    p.restore();
    // what the tmpfs below must hold (the state directory whole) kept small
    let (out, _) = gc(&p, &["--keep", "2"]);
    assert!(out.status.success(), "{}", text(&out));
    let full = FullDisk::new(2);
    let before = snapshot();
    let (out, j) = switch(&b);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert_eq!(j["nodes"]["k8s-worker01"]["status"], "failed", "{t}");
    let err = j["nodes"]["k8s-worker01"]["error"].as_str().unwrap_or("");
    assert!(err.contains("No space left on device"), "the reason is not named: {t}");
    assert!(t.contains("k8s-worker01") && t.contains("No space left on device"), "{t}");
    assert!(err.contains("stage"), "not the stage that failed: {t}");
    // every node wholly where it was: links, committed generation, files,
    // units; nothing pending
    assert_eq!(snapshot(), before, "a node changed:\n{t}");
    for i in 1..=3 {
        assert_eq!(ssh(i, "test -e /var/lib/kdeploy/pending && echo pending || echo clean").trim(), "clean");
    }
    assert_deployed(&p.base());
    let half = ssh(2, "for d in /var/lib/kdeploy/generations/*/*/; do [ -f $d.complete ] || echo $d; done");
    assert_eq!(half.trim(), "", "the failed stage left its half-copied files");

    full.free();
    let (out, _) = switch(&b);
    assert!(out.status.success(), "after freeing space: {}", text(&out));
    assert_deployed(&b);
    p.restore();
    drop(full);
    assert_deployed(&p.base());
}

fn gc(p: &Project, extra: &[&str]) -> (Output, serde_json::Value) {
    run(kdeploy_cmd("gc", &p.base(), None, extra))
}

fn generations(i: u32) -> Vec<u64> {
    let mut v: Vec<u64> =
        ssh(i, "ls /var/lib/kdeploy/generations").split_whitespace().filter_map(|s| s.parse().ok()).collect();
    v.sort_unstable();
    v
}

#[test]
fn gc_removes_old_generations_and_rollback_still_works() {
    let _g = lab_lock_any();
    if !lab_up() {
        return;
    }
    let p = Project::new();
    p.restore();
    let variants: Vec<_> = (1..=3)
        .map(|k| p.variant(&format!("v{k}"), &format!("containerd.maxContainerLogLineSize = {};", 20000 + k)))
        .collect();
    let mut first_conf = String::new();
    for v in &variants {
        let (out, _) = switch(v);
        assert!(out.status.success(), "{}", text(&out));
        if first_conf.is_empty() {
            first_conf = blob_of(1, "container-runtime", "store", "/etc/containerd/config.toml").0;
        }
    }
    p.restore();
    let store_has = |h: &str| ssh(1, &format!("test -f /var/lib/kdeploy/store/{h} && echo yes || echo no"));
    assert_eq!(store_has(&first_conf).trim(), "yes");
    let before: Vec<Vec<u64>> = (1..=3).map(generations).collect();
    let records = || std::fs::read_dir(p.dir.path().join(".kdeploy/generations")).unwrap().count();
    let records_before = records();

    // a dry run says what would go and removes nothing
    let (out, j) = gc(&p, &["--keep", "1", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    let would = j["nodes"]["k8s-master"]["generations"].as_array().cloned().unwrap_or_default();
    assert!(!would.is_empty(), "nothing to collect after five switches: {}", text(&out));
    assert_eq!((1..=3).map(generations).collect::<Vec<_>>(), before);
    assert_eq!(records(), records_before);

    // never while a switch holds the lock
    let slow = p.slow_variant("slow", "containerd.maxContainerLogLineSize = 20009;", 25);
    let mut running =
        kdeploy_cmd("switch", &slow, None, &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(6));
    let (out, j) = gc(&p, &["--keep", "1"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(j["nodes"]["k8s-master"]["error"].as_str().unwrap_or("").contains("locked"), "{t}");
    assert_eq!(records(), records_before, "records dropped while a node was locked");
    assert!(running.wait().unwrap().success(), "the slow switch failed");
    p.restore();
    let before: Vec<Vec<u64>> = (1..=3).map(generations).collect();
    let records_before = records();

    // one node not reached (its host key unknown here): nothing removed,
    // on the nodes reached or among the records
    let kh = std::fs::read_to_string(repo().join(".lab/known_hosts")).unwrap();
    let node3 = lane::text("10.77.0.13");
    let is_node3 = |l: &&str| {
        l.split_whitespace().next().unwrap_or("").split(',').any(|h| h == node3 || h == format!("[{node3}]:22"))
    };
    let partial: String = kh.lines().filter(|l| !is_node3(l)).map(|l| format!("{l}\n")).collect();
    let f = p.dir.path().join("known_hosts");
    std::fs::write(&f, partial).unwrap();
    let (out, j) = run(kdeploy_cmd("gc", &p.base(), Some(&f), &["--keep", "1"]));
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert_eq!(j["nodes"]["k8s-worker02"]["unreachable"], true, "{t}");
    assert_eq!(records(), records_before, "records dropped with a node unreachable: {t}");
    assert_eq!(
        (1..=3).map(generations).collect::<Vec<_>>(),
        before,
        "generations removed with a node unreachable: {t}"
    );

    let (out, j) = gc(&p, &["--keep", "1"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(j["records"].as_array().is_some_and(|r| !r.is_empty()), "{t}");
    assert!(records() < records_before, "{t}");
    for (i, name) in [(1, "k8s-master"), (2, "k8s-worker01"), (3, "k8s-worker02")] {
        let after = generations(i);
        assert!(after.len() < before[i as usize - 1].len(), "{name}: {after:?} from {:?}\n{t}", before[i as usize - 1]);
        assert!(j["nodes"][name]["bytes"].as_u64().unwrap_or(0) > 0, "{t}");
        let current: u64 = ssh(i, "cut -d' ' -f1 /var/lib/kdeploy/current").trim().parse().unwrap();
        assert!(after.contains(&current), "{name}: the committed generation {current} went");
    }
    assert_eq!(store_has(&first_conf).trim(), "no", "the blob only old generations used is still there");
    assert_deployed(&p.base());

    // the rollback target survived: back to the slow variant's files
    let (out, _) = run(kdeploy_cmd("rollback", &p.base(), None, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert_deployed(&slow);
    let (out, j) = gc(&p, &["--keep", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(j["nodes"]["k8s-master"]["error"].is_null());
    p.restore();
}
