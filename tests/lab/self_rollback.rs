//! Self-rollback on the real lab (deploy-rs's "magic rollback"): a change
//! to one node's sshd that refuses every login — a drop-in in preinstall,
//! applied by a unit that reloads sshd whenever it changes — locks the
//! deployer out of that node. The node, armed before preinstall switched
//! and never confirmed over a new connection, moves preinstall back by
//! itself (the drop-in back, sshd reloaded onto it) once its deadline has
//! passed and the run has let go; the run waits for that and says so; the
//! other nodes, which the change did not touch, stay as they were; the
//! next run is told too and converges; logins work again throughout after.

use crate::support;
use support::node::lab_check::assert_deployed;
use support::node::lab_project::*;
use support::node::{lab_has, lab_lock_any};

const DROP_IN: &str = "/etc/ssh/sshd_config.d/50-kdeploy-test.conf";
/// The drop-in as every node has it before the change.
const OPEN: &str = "# no restriction";
const WORKER01: &str = "k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" \"etcd\" ]; };";

/// The lab cluster with the drop-in (harmless: the comment `note`) and the
/// unit that reloads sshd onto it, armed for 10 s; with `lock_out`,
/// k8s-worker01's drop-in refuses every user.
fn with_sshd(p: &Project, name: &str, note: &str, lock_out: bool) -> std::path::PathBuf {
    let unit = "[Service]\\nType=oneshot\\nRemainAfterExit=yes\\nExecStart=/bin/systemctl reload ssh.service\\n[Install]\\nWantedBy=multi-user.target\\n";
    let settings = format!(
        "kdeploy.selfRollback.deadline = 10; \
         custom.files.\"{DROP_IN}\" = {{ phase = \"preinstall\"; text = \"{note}\\n\"; }}; \
         custom.units.\"sshd-reload.service\" = {{ phase = \"preinstall\"; text = \"{unit}\"; \
         restartTriggers = [ \"{DROP_IN}\" ]; }};"
    );
    let anchor = "containerd.version = \"1.6.20\";";
    let with_settings = format!("{anchor} {settings}");
    let worker01 = WORKER01.replace(
        "]; };",
        &format!("]; settings.custom.files.\"{DROP_IN}\" = {{ phase = \"preinstall\"; text = \"AllowUsers nobody-at-all\\n\"; }}; }};"),
    );
    let mut edits = vec![(anchor, with_settings.as_str())];
    if lock_out {
        edits.push((WORKER01, worker01.as_str()));
    }
    p.rewritten(name, &edits)
}

#[test]
fn an_sshd_change_that_locks_the_deployer_out_is_rolled_back_by_the_node_itself() {
    let _g = lab_lock_any();
    if !lab_has(3) {
        return;
    }
    let p = Project::new();
    p.restore(); // from the lab cluster as it is, whatever a failed run left
    let open = with_sshd(&p, "open", OPEN, false);
    let (out, _) = switch(&open);
    assert!(out.status.success(), "{}", text(&out));
    assert!(ssh(2, &format!("cat {DROP_IN}")).contains(OPEN));
    assert!(text(&out).contains("preinstall: confirmed over a new connection"), "{}", text(&out));
    let before: Vec<String> = [1, 3].iter().map(|&i| ssh(i, "readlink /var/lib/kdeploy/phases/preinstall")).collect();

    // k8s-worker01's sshd refuses every login once its preinstall switches
    let closed = with_sshd(&p, "closed", OPEN, true);
    let t0 = std::time::Instant::now();
    let (out, _) = switch(&closed);
    let t = text(&out);
    eprintln!("locked out and rolled back in {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(t.contains("took no new connection after the phase switched"), "{t}");
    assert!(t.contains("[k8s-worker01] the node rolled back by itself: phase preinstall back to generation"), "{t}");
    assert!(ssh(2, &format!("cat {DROP_IN}")).contains(OPEN), "the drop-in is not back");
    assert!(!ssh(2, "sshd -T | grep -i allowusers").contains("nobody-at-all"), "sshd still refuses every user");
    let after: Vec<String> = [1, 3].iter().map(|&i| ssh(i, "readlink /var/lib/kdeploy/phases/preinstall")).collect();
    assert_eq!(before, after, "the nodes the change did not touch moved");

    // the next run reaches it (a new login), is told, and converges
    let (out, _) = switch(&open);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("[k8s-worker01] the node rolled back by itself"), "the next run was not told: {t}");
    assert_deployed(&open);
    p.restore();
}

/// A deployer killed while a phase is armed (its units switched, nothing
/// confirmed: `kill -9` at the failpoint) cannot reach the nodes any more
/// than a locked-out one: each node it had armed moves the phase back by
/// itself once the deadline has passed and the dead run's lock let go, with
/// nobody running; the next run is told and converges.
#[test]
fn a_deployer_killed_while_a_phase_is_armed_leaves_the_nodes_to_roll_back() {
    let _g = lab_lock_any();
    if !lab_has(3) {
        return;
    }
    let p = Project::new();
    p.restore();
    let open = with_sshd(&p, "open", OPEN, false);
    let (out, _) = switch(&open);
    assert!(out.status.success(), "{}", text(&out));

    let changed = with_sshd(&p, "changed", "# changed, never confirmed", false);
    let mut c = kdeploy_cmd("switch", &changed, None, &[]);
    c.env("KDEPLOY_FAILPOINT", "after-units");
    let (out, _) = run(c);
    assert_eq!(out.status.code(), None, "the deployer must die by a signal\n{}", text(&out));
    let drop_in = |i: u32| ssh(i, &format!("cat {DROP_IN}"));
    let switched: Vec<u32> = (1..=3).filter(|&i| drop_in(i).contains("never confirmed")).collect();
    assert!(!switched.is_empty(), "no node had switched preinstall when the deployer died");
    let t0 = std::time::Instant::now();
    // (the record is written once the phase is back and its units restarted)
    let recorded = |i: u32| ssh(i, "cat /var/lib/kdeploy/rolled-back 2>/dev/null").contains("preinstall");
    wait_for("the nodes to move preinstall back", std::time::Duration::from_secs(90), || {
        switched.iter().all(|&i| recorded(i))
    });
    eprintln!("nodes {switched:?} back by themselves {:?} after the deployer died", t0.elapsed());
    for &i in &switched {
        let record = ssh(i, "cat /var/lib/kdeploy/rolled-back");
        assert!(record.contains(" ok"), "kdnode{i}: {record}");
        assert!(drop_in(i).contains(OPEN), "kdnode{i}: the drop-in is not back");
        assert_eq!(ssh(i, "systemctl is-active sshd-reload.service").trim(), "active", "kdnode{i}");
    }

    let (out, _) = switch(&changed);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("the node rolled back by itself: phase preinstall"), "the next run was not told: {t}");
    assert_deployed(&changed);
    p.restore();
}
