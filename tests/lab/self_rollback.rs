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
const WORKER01: &str = "k8s-worker01 = { address = \"10.77.0.12\"; roles = [ \"worker\" \"etcd\" ]; };";

/// The lab cluster with the drop-in (harmless: a comment) and the unit
/// that reloads sshd onto it, armed for 10 s; with `lock_out`,
/// k8s-worker01's drop-in refuses every user.
fn with_sshd(p: &Project, name: &str, lock_out: bool) -> std::path::PathBuf {
    let unit = "[Service]\\nType=oneshot\\nRemainAfterExit=yes\\nExecStart=/bin/systemctl reload ssh.service\\n[Install]\\nWantedBy=multi-user.target\\n";
    let settings = format!(
        "kdeploy.selfRollback.deadline = 10; \
         custom.files.\"{DROP_IN}\" = {{ phase = \"preinstall\"; text = \"# no restriction\\n\"; }}; \
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
    let open = with_sshd(&p, "open", false);
    let (out, _) = switch(&open);
    assert!(out.status.success(), "{}", text(&out));
    assert!(ssh(2, &format!("cat {DROP_IN}")).contains("# no restriction"));
    assert!(text(&out).contains("preinstall: confirmed over a new connection"), "{}", text(&out));
    let before: Vec<String> = [1, 3].iter().map(|&i| ssh(i, "readlink /var/lib/kdeploy/phases/preinstall")).collect();

    // k8s-worker01's sshd refuses every login once its preinstall switches
    let closed = with_sshd(&p, "closed", true);
    let t0 = std::time::Instant::now();
    let (out, _) = switch(&closed);
    let t = text(&out);
    eprintln!("locked out and rolled back in {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(t.contains("took no new connection after the phase switched"), "{t}");
    assert!(t.contains("[k8s-worker01] the node rolled back by itself: phase preinstall back to generation"), "{t}");
    assert!(ssh(2, &format!("cat {DROP_IN}")).contains("# no restriction"), "the drop-in is not back");
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
