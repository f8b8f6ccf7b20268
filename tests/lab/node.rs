//! The node program on real lab nodes over SSH (`lab/lab.sh up 3`): blob
//! store with sha256 verification, staging and the one-rename phase switch
//! with rollback, the run lock (exclusive, recovered from a dead holder),
//! and units started / restarted by a restart trigger / stopped when removed
//! by real systemd; and that the lab gives each node its own cgroup tree.
//! Tests use separate nodes (store and files: kdnode2; units: kdnode3;
//! the lock: kdnode1) so they can run in parallel; each takes its lab node
//! from the other lab tests (`lab_lock_nodes`) and holds the node's own
//! lock while it changes the node, as a run does.
//! Skipped with a message when the lab is down, failed when CI is set.

use crate::support;
use std::time::{Duration, Instant};

use kdeploy::node::{changed_files, Manifest, Node, NodeError, OnChange, UnitSpec};
use kdeploy::store::Digest;
use kdeploy::transport::Host;
use support::node::{blob, connect, file, hold, lab_lock_nodes, lab_up, manifest, push, record, wanted, Blob};

async fn sh(h: &dyn Host, cmd: &str) -> String {
    let out = h.exec(cmd, None).await.unwrap();
    assert!(out.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout_str()
}

#[tokio::test(flavor = "multi_thread")]
async fn store_put_have_and_verify() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(2..=2);
    let h = connect(2).await;
    let node = Node::install(&h).await.unwrap();
    let _lock = hold(&node, "node-lab-test").await;
    let stamp = format!("{:?}", Instant::now());
    let (a, b) = (blob(format!("blob a {stamp}")), blob(format!("blob b {stamp}\0\u{ff}")));
    let hashes = vec![a.b3, b.b3];
    let want = [wanted(&a), wanted(&b)];
    assert_eq!(node.missing(&want).await.unwrap(), hashes);
    // a corrupted transfer (bytes differ from the sha256 sent along) is rejected
    let err = node.put_bytes(&a.b3, &a.sha, b"not the blob").await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("kdnode2") && msg.contains("rejected") && msg.contains(&a.sha), "{msg}");
    assert_eq!(node.missing(&want).await.unwrap(), hashes);
    // Only this blob's temp files: other tests upload to the same node at once.
    let leftover = format!("ls /var/lib/kdeploy/store/.tmp | grep -c '^{}' || true", a.b3);
    assert_eq!(sh(&h, &leftover).await.trim(), "0", "temp file left behind");
    node.put_bytes(&a.b3, &a.sha, &a.bytes).await.unwrap();
    assert_eq!(node.missing(&want).await.unwrap(), vec![b.b3]);
    node.put_bytes(&b.b3, &b.sha, &b.bytes).await.unwrap();
    assert!(node.missing(&want).await.unwrap().is_empty());
    // stored bytes are exactly what was sent, read-only
    let out = h.exec(&format!("cat /var/lib/kdeploy/store/{}", b.b3), None).await.unwrap();
    assert_eq!(out.stdout, b.bytes);
    assert_eq!(sh(&h, &format!("stat -c %a /var/lib/kdeploy/store/{}", b.b3)).await.trim(), "444");
    // putting a blob that is there already is a no-op
    node.put_bytes(&a.b3, &a.sha, &a.bytes).await.unwrap();
    h.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn stage_switch_and_rollback_a_phase() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(2..=2);
    let h = connect(2).await;
    let node = Node::install(&h).await.unwrap();
    let _lock = hold(&node, "node-lab-test").await;
    let phase = "kdtest-files";
    // start from a node without this phase (a previous run may have left it)
    node.switch(None, phase).await.unwrap();
    sh(&h, "mkdir -p /etc/kdtest && echo original > /etc/kdtest/c.conf && rm -f /etc/kdtest/a.conf /etc/kdtest/b.conf")
        .await;

    let (a1, b1, a2, b2, c2) = (blob("a one\n"), blob("b one\n"), blob("a two\n"), blob("b two\n"), blob("c two\n"));
    push(&node, &[&a1, &b1, &a2, &b2, &c2]).await;
    let one = manifest(vec![file("/etc/kdtest/a.conf", "0644", &a1), file("/etc/kdtest/b.conf", "0640", &b1)]);
    let two = manifest(vec![
        file("/etc/kdtest/a.conf", "0644", &a2),
        file("/etc/kdtest/b.conf", "0640", &b2),
        file("/etc/kdtest/c.conf", "0600", &c2),
    ]);
    let g1 = node.status().await.unwrap().next;
    let g2 = g1 + 1;
    node.stage(g1, phase, &one).await.unwrap();
    node.stage(g2, phase, &two).await.unwrap();
    // staging changes nothing visible
    assert_eq!(sh(&h, "cat /etc/kdtest/c.conf").await, "original\n");
    assert!(h.exec("test -e /etc/kdtest/a.conf", None).await.unwrap().status != 0);

    node.switch(Some(g1), phase).await.unwrap();
    let both = "cat /etc/kdtest/a.conf /etc/kdtest/b.conf";
    assert_eq!(sh(&h, both).await, "a one\nb one\n");
    // every managed path goes through the one phase link: flipping it is what
    // changes both files, in one rename
    assert_eq!(
        sh(&h, "readlink /etc/kdtest/a.conf /etc/kdtest/b.conf").await,
        "/var/lib/kdeploy/phases/kdtest-files/files/etc/kdtest/a.conf\n/var/lib/kdeploy/phases/kdtest-files/files/etc/kdtest/b.conf\n"
    );
    assert_eq!(
        sh(&h, "readlink /var/lib/kdeploy/phases/kdtest-files").await,
        format!("../generations/{g1}/kdtest-files\n")
    );

    node.switch(Some(g2), phase).await.unwrap();
    assert_eq!(sh(&h, both).await, "a two\nb two\n");
    assert_eq!(
        sh(&h, "cat /etc/kdtest/c.conf; stat -L -c '%a %U' /etc/kdtest/c.conf /etc/kdtest/b.conf").await,
        "c two\n600 root\n640 root\n"
    );
    // the old generation's files are intact
    assert_eq!(
        sh(&h, &format!("cat /var/lib/kdeploy/generations/{g1}/kdtest-files/files/etc/kdtest/a.conf")).await,
        "a one\n"
    );
    assert_eq!(node.status().await.unwrap().phases.get(phase), Some(&g2));
    assert_eq!(node.manifest(g2, phase).await.unwrap(), two);
    assert_eq!(
        changed_files(Some(&one), Some(&two)).into_iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        ["/etc/kdtest/a.conf", "/etc/kdtest/b.conf", "/etc/kdtest/c.conf"]
    );

    // rollback = the same rename backwards; c.conf left the phase and the
    // file it had displaced comes back
    node.switch(Some(g1), phase).await.unwrap();
    assert_eq!(sh(&h, both).await, "a one\nb one\n");
    assert_eq!(sh(&h, "cat /etc/kdtest/c.conf; test -L /etc/kdtest/c.conf || echo plain").await, "original\nplain\n");
    node.switch(Some(g2), phase).await.unwrap();
    assert_eq!(sh(&h, both).await, "a two\nb two\n");

    node.commit(g2, &Digest([0xab; 32]), Some(&record(phase, Digest([1; 32]), g2))).await.unwrap();
    let st = node.status().await.unwrap();
    assert_eq!(st.current, Some((g2, Digest([0xab; 32]))));
    assert!(node.gc_info().await.unwrap().iter().any(|g| g.number == g2 && g.committed));
    node.switch(None, phase).await.unwrap();
    assert_eq!(sh(&h, "ls /etc/kdtest; cat /etc/kdtest/c.conf").await, "c.conf\noriginal\n");
    // the node as booted: a whole-lab reset after this test compares the
    // node's /etc with its boot record
    sh(&h, "rm -r /etc/kdtest").await;
    h.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_is_exclusive_and_a_dead_holder_is_recovered() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=1);
    // node 1: the other tests here hold the locks of nodes 2 and 3 while they run
    let (h1, h2) = (connect(1).await, connect(1).await);
    let (n1, n2) = (Node::install(&h1).await.unwrap(), Node::install(&h2).await.unwrap());
    let lock = hold(&n1, "test-run-1").await;
    match n2.lock("test-run-2").await {
        Err(NodeError::Locked { host, owner }) => {
            assert_eq!(host, "kdnode1");
            assert!(owner.contains("test-run-1"), "{owner}");
        }
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("second lock granted"),
    }
    lock.release().await;
    let lock2 = n2.lock("test-run-2").await.unwrap();

    // the holder process is killed: the lock is free again
    let pid = sh(&h1, "sed -n 's/.* pid=\\([0-9]*\\) .*/\\1/p' /var/lib/kdeploy/lock.owner").await;
    sh(&h1, &format!("kill -9 {}", pid.trim())).await;
    let _l = retry_lock(&n1, "after-kill").await;
    drop(_l);
    drop(lock2);

    // the connection of the holder dies: the lock is free again
    let h3 = connect(1).await;
    let n3 = Node::install(&h3).await.unwrap();
    let held = n3.lock("connection-dropped").await.unwrap();
    h3.close().await.unwrap();
    let _l = retry_lock(&n1, "after-disconnect").await;
    drop(held);
    h1.close().await.unwrap();
    h2.close().await.unwrap();
}

async fn retry_lock(node: &Node<'_>, owner: &str) -> kdeploy::node::NodeLock {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match node.lock(owner).await {
            Ok(l) => return l,
            Err(NodeError::Locked { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("lock not recovered: {e}"),
        }
    }
}

fn unit(name: &str, text: &Blob, triggers: &[&str]) -> UnitSpec {
    UnitSpec {
        name: name.into(),
        text_hash: text.b3,
        on_change: OnChange::Restart,
        enable: true,
        restart_triggers: triggers.iter().map(Into::into).collect(),
    }
}

/// Stage `new` as the next generation of `phase` and switch to it the way a
/// run does; returns the unit operations that ran.
async fn deploy(node: &Node<'_>, phase: &str, new: &Manifest) -> Result<(Vec<String>, Vec<String>), NodeError> {
    let st = node.status().await?;
    let old = match st.phases.get(phase) {
        Some(&g) => Some(node.manifest(g, phase).await?),
        None => None,
    };
    let gen = st.next;
    node.stage(gen, phase, new).await?;
    let changed = changed_files(old.as_ref(), Some(new));
    let plan = kdeploy::node::plan_units(old.as_ref().map_or(&[][..], |m| &m.units), &new.units, &changed);
    let ops = (plan.before_switch(), plan.after_switch());
    node.switch_phase(gen, phase, old.as_ref(), new, &changed).await?;
    Ok(ops)
}

#[tokio::test(flavor = "multi_thread")]
async fn units_start_restart_on_trigger_and_stop() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(3..=3);
    let h = connect(3).await;
    let node = Node::install(&h).await.unwrap();
    let _lock = hold(&node, "node-lab-test").await;
    let phase = "kdtest-unit";
    deploy(&node, phase, &Manifest::default()).await.unwrap(); // clean slate

    let text = blob("[Unit]\nDescription=kdeploy test sleeper\n[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n");
    let (v1, v2) = (blob("v1\n"), blob("v2\n"));
    push(&node, &[&text, &v1, &v2]).await;
    let with = |conf: &Blob| {
        let mut m = manifest(vec![file("/etc/kdtest-unit/sleeper.conf", "0644", conf)]);
        m.add_unit(unit("kdtest-sleeper.service", &text, &["/etc/kdtest-unit/sleeper.conf"]));
        m
    };
    let pid = "systemctl show -p MainPID --value kdtest-sleeper.service";

    let ops = deploy(&node, phase, &with(&v1)).await.unwrap();
    assert_eq!(ops.1, ["daemon-reload", "enable:kdtest-sleeper.service", "start:kdtest-sleeper.service"]);
    assert_eq!(
        sh(&h, "systemctl is-active kdtest-sleeper; systemctl is-enabled kdtest-sleeper").await,
        "active\nenabled\n"
    );
    let p1 = sh(&h, pid).await;

    // same unit text, changed restart trigger: restarted
    let ops = deploy(&node, phase, &with(&v2)).await.unwrap();
    assert_eq!(ops, (vec![], vec!["restart:kdtest-sleeper.service".to_string()]));
    let p2 = sh(&h, pid).await;
    assert_ne!(p1, p2, "not restarted");
    assert_eq!(sh(&h, "systemctl is-active kdtest-sleeper").await, "active\n");
    // nothing changed: nothing touched
    let ops = deploy(&node, phase, &with(&v2)).await.unwrap();
    assert_eq!(ops, (vec![], vec![]));
    assert_eq!(sh(&h, pid).await, p2);

    // removed from the closure: stopped, disabled, unit file gone
    let ops = deploy(&node, phase, &Manifest::default()).await.unwrap();
    assert_eq!(ops.0, ["stop:kdtest-sleeper.service", "disable:kdtest-sleeper.service"]);
    assert_eq!(ops.1, ["daemon-reload"]);
    let state = h.exec("systemctl is-active kdtest-sleeper", None).await.unwrap().stdout_str();
    assert_eq!(state, "inactive\n");
    assert_eq!(
        sh(&h, "ls /etc/systemd/system/kdtest-sleeper.service /etc/systemd/system/multi-user.target.wants/kdtest-sleeper.service 2>&1 | grep -c 'No such' || true").await.trim(),
        "2"
    );

    // a unit that fails to start: reported with its journal
    let bad = blob("[Unit]\nDescription=kdeploy failing test unit\n[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo kdtest-boom-marker; exit 3'\n");
    push(&node, &[&bad]).await;
    let mut m = Manifest::default();
    m.add_unit(unit("kdtest-fail.service", &bad, &[]));
    match deploy(&node, phase, &m).await {
        Err(NodeError::UnitFailed { host, journal, .. }) => {
            assert_eq!(host, "kdnode3");
            assert!(journal.contains("kdtest-fail.service failed to start"), "{journal}");
            assert!(journal.contains("kdtest-boom-marker"), "{journal}");
            // and its status: state and the exit status of the process that failed
            assert!(journal.contains("Active: failed"), "{journal}");
            assert!(journal.contains("status=3"), "{journal}");
        }
        other => panic!("expected UnitFailed, got {:?}", other.map(|_| ())),
    }
    deploy(&node, phase, &Manifest::default()).await.unwrap();
    sh(&h, "systemctl reset-failed kdtest-fail.service 2>/dev/null; true").await;
    h.close().await.unwrap();
}

/// Sets `cg` to the node's systemd cgroup hierarchy: the unified one, or its
/// own named hierarchy on the legacy (cgroup v1) nodes of a Kubernetes lab.
const SYSTEMD_CGROUPS: &str = "cg=/sys/fs/cgroup; if [ -d $cg/systemd/init.scope ]; then cg=$cg/systemd; fi";

/// A unit operation that fails is reported with the unit's status and the
/// journal lines of systemd's forked child (logged before it is in the
/// unit's cgroup, so `journalctl -u` leaves them out), even when the unit is
/// still active afterwards. The failure is made deterministic by taking the
/// unit's cgroup away behind systemd's back: its next process cannot be
/// spawned (status=219/CGROUP), as happened to containerd when lab nodes
/// shared one cgroup tree.
#[tokio::test(flavor = "multi_thread")]
async fn failed_unit_operation_reports_status_and_spawn_errors() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(3..=3);
    let h = connect(3).await;
    let node = Node::install(&h).await.unwrap();
    let _lock = hold(&node, "node-lab-test").await;
    let u = "kdtest-nocgroup.service";
    sh(
        &h,
        &format!(
            "printf '[Service]\\nExecStart=/bin/sleep infinity\\nExecReload=/bin/true\\n' >/etc/systemd/system/{u} \
             && systemctl daemon-reload && systemctl restart {u}"
        ),
    )
    .await;
    let pid = sh(&h, &format!("systemctl show -p MainPID --value {u}")).await.trim().to_string();
    sh(&h, &format!("{SYSTEMD_CGROUPS}; echo {pid} >$cg/init.scope/cgroup.procs && rmdir $cg/system.slice/{u}")).await;
    let r = node.units(&[format!("reload:{u}")]).await;
    sh(&h, &format!("systemctl stop {u}; kill {pid} 2>/dev/null; rm -f /etc/systemd/system/{u}; systemctl daemon-reload; systemctl reset-failed {u} 2>/dev/null; true")).await;
    h.close().await.unwrap();
    match r {
        Err(NodeError::UnitFailed { journal, .. }) => {
            assert!(journal.contains(&format!("unit {u} failed to reload")), "{journal}");
            assert!(journal.contains("status=219/CGROUP"), "systemctl status expected:\n{journal}");
            assert!(journal.contains("Failed at step CGROUP"), "the forked child's journal lines expected:\n{journal}");
        }
        other => panic!("expected UnitFailed, got {:?}", other.map(|_| ())),
    }
}

/// Each lab node has a cgroup tree of its own. When all nodes shared one
/// (every nspawn started in the same cgroup), a unit's cgroup was one
/// directory in every node: a concurrent `systemctl restart containerd` on
/// all nodes could then fail with status=219/CGROUP ("Failed to attach to
/// cgroup /system.slice/containerd.service: No such file or directory"),
/// one node's systemd having removed the directory another's was using.
#[tokio::test(flavor = "multi_thread")]
async fn each_node_has_its_own_cgroup_tree() {
    if !lab_up() {
        return;
    }
    let _lab = lab_lock_nodes(1..=3);
    let mut ids = Vec::new();
    for i in 1..=3 {
        let h = connect(i).await;
        // the inode of a cgroup directory identifies the cgroup (kernfs node id)
        ids.push(sh(&h, &format!("{SYSTEMD_CGROUPS}; stat -c %i $cg/init.scope")).await.trim().to_string());
        h.close().await.unwrap();
    }
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 3, "nodes share cgroups (init.scope inodes {ids:?}): see lab/lab.sh, node_cgroups");
}
