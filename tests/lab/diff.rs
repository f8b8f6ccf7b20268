//! Diffs before switching, against the real lab: after a converge, one
//! containerd setting changed — `kdeploy diff` and `switch --dry-run` show,
//! for each node, the unified diff of /etc/containerd/config.toml against
//! the bytes the node runs (one line out, one in), the restart it would
//! take, and no secret's content; neither changes a node. A node as
//! deployed diffs as unchanged.

use crate::support;
use std::path::Path;
use std::process::{Command, Output};

use support::node::lab_project::{snapshot, switch, text, Project};
use support::node::{lab_has, lab_lock, lab_secrets, repo};

/// `kdeploy SUB CLUSTER` with the lab's key, text output (what a person reads).
fn kdeploy(sub: &str, cluster: &Path, extra: &[&str]) -> Output {
    let lab = repo().join(".lab");
    Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .arg(sub)
        .arg(cluster)
        .args(["--ssh-key", lab.join("id_ed25519").to_str().unwrap()])
        .args(["--known-hosts", lab.join("known_hosts").to_str().unwrap()])
        .env("KDEPLOY_SECRETS", lab_secrets())
        .args(extra)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The lines of `out` under node `node`'s entry, up to the next node's.
fn node_section<'a>(out: &'a str, node: &str) -> Vec<&'a str> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(&format!("{node}: ")));
    let first = lines.next().into_iter();
    first.chain(lines.take_while(|l| l.starts_with(' '))).collect()
}

#[test]
fn diff_and_dry_run_show_file_changes_and_change_nothing() {
    let _g = lab_lock();
    if !lab_has(3) {
        return;
    }
    let p = Project::new();
    let (out, _) = switch(&p.base());
    assert!(out.status.success(), "converge:\n{}", text(&out));

    let changed = p.variant("changed", "containerd.maxContainerLogLineSize = 32768;");
    let before = snapshot();
    for (sub, extra) in [("diff", &[][..]), ("switch", &["--dry-run"][..])] {
        let out = kdeploy(sub, &changed, extra);
        assert!(out.status.success(), "{sub}:\n{}", text(&out));
        let o = stdout(&out);
        for node in ["k8s-master", "k8s-worker01", "k8s-worker02"] {
            let s = node_section(&o, node);
            assert_eq!(s.first().copied(), Some(format!("{node}: changed").as_str()), "{sub}:\n{o}");
            let at = s
                .iter()
                .position(|l| l.trim() == "change /etc/containerd/config.toml")
                .unwrap_or_else(|| panic!("{o}"));
            let diff: Vec<&str> =
                s[at + 1..].iter().map(|l| l.trim_start()).take_while(|l| !l.starts_with("restart")).collect();
            assert!(diff.contains(&"--- a/etc/containerd/config.toml"), "{o}");
            assert!(diff.contains(&"-    max_container_log_line_size = 16384"), "{o}");
            assert!(diff.contains(&"+    max_container_log_line_size = 32768"), "{o}");
            let changed_lines = diff.iter().filter(|l| {
                (l.starts_with('-') || l.starts_with('+')) && !l.starts_with("---") && !l.starts_with("+++")
            });
            assert_eq!(changed_lines.count(), 2, "only the one setting differs:\n{o}");
            assert!(s.iter().any(|l| l.trim() == "restart containerd.service"), "{o}");
        }
        assert!(!o.contains("PRIVATE KEY"), "a secret was printed:\n{o}");
        assert!(!o.contains("\x1b["), "colour in a pipe:\n{o}");
    }
    assert_eq!(snapshot(), before, "diff or dry run changed a node");

    let out = kdeploy("diff", &p.base(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    for node in ["k8s-master", "k8s-worker01", "k8s-worker02"] {
        assert!(stdout(&out).contains(&format!("{node}: unchanged")), "{}", stdout(&out));
    }
}
