//! `--on` as a user types it, through the binary: names, roles, `@TAG`,
//! patterns and exclusions pick the same nodes for `switch`, `reset` and
//! `rollback`, and a word that picks nothing is refused before any node
//! is tried (exit 2). The lab cluster at unroutable addresses: a command
//! that goes past the selection finds its nodes unreachable (exit 4), and
//! its JSON recap lists exactly the nodes it picked.

use crate::support;
use std::path::PathBuf;

use support::closures::kdeploy;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clusters/lab-etcd.nix");
    let text = std::fs::read_to_string(lab)
        .unwrap()
        .replace("10.77.0.", "192.0.2.")
        .replace(r#"roles = [ "worker" "etcd" ]; };"#, r#"roles = [ "worker" "etcd" ]; tags = [ "rack-b" ]; };"#);
    assert!(text.contains("rack-b"));
    std::fs::write(dir.path().join("lab.nix"), text).unwrap();
    dir
}

/// The nodes a command's JSON recap lists, and its exit code.
fn picked(dir: &tempfile::TempDir, args: &[&str]) -> (i32, Vec<String>, String) {
    let mut all = args.to_vec();
    all.extend(["--output", "json", "--connect-timeout", "1", "--accept-new-host-keys"]);
    let (code, out, err) = kdeploy(&all, dir.path());
    let recap: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let nodes = recap["nodes"].as_object().map_or(vec![], |m| m.keys().cloned().collect());
    (code, nodes, err)
}

#[test]
fn tags_patterns_and_exclusions_pick_the_same_nodes_in_every_command() {
    let dir = project();
    for (on, want) in [
        ("@rack-b", &["k8s-worker01", "k8s-worker02"][..]),
        ("k8s-worker*,!k8s-worker02", &["k8s-worker01"][..]),
        ("!worker", &["k8s-master"][..]),
    ] {
        let (code, nodes, err) = picked(&dir, &["switch", "lab.nix", "--on", on]);
        assert_eq!(
            (code, nodes),
            (4, want.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            "switch --on {on}: {err}"
        );
        // a partial reset also holds the anchor, where the workers' drains run
        let mut held: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        if !held.contains(&"k8s-master".to_string()) {
            held.insert(0, "k8s-master".into());
        }
        let (code, nodes, err) = picked(&dir, &["reset", "lab.nix", "--yes", "--on", on]);
        assert_eq!((code, nodes), (4, held), "reset --on {on}: {err}");
    }
}

#[test]
fn a_word_that_picks_nothing_is_refused_before_any_node_is_tried() {
    let dir = project();
    for cmd in [&["switch", "lab.nix"][..], &["reset", "lab.nix", "--yes"][..]] {
        let (code, _, err) = picked(&dir, &[cmd, &["--on", "worker,@rack-c"][..]].concat());
        assert_eq!(code, 2, "{cmd:?}: {err}");
        assert!(err.contains("--on @rack-c: no node, role, @tag or name pattern"), "{cmd:?}: {err}");
        assert!(!err.contains("unreachable"), "{cmd:?}: a node was tried: {err}");
    }
}

#[test]
fn rollback_picks_by_the_roles_and_tags_a_generation_recorded() {
    let dir = project();
    let gens = dir.path().join(".kdeploy/generations");
    std::fs::create_dir_all(&gens).unwrap();
    let node = |address: &str, roles: &[&str], tags: &[&str]| {
        serde_json::json!({"address": address, "user": "root", "port": 22, "key": null, "generation": 1,
                           "hash": "00", "roles": roles, "tags": tags})
    };
    for number in [1, 2] {
        let record = serde_json::json!({"number": number, "cluster": "lab", "time": 0, "phaseOrder": [], "nodes": {
            "cp": node("192.0.2.11", &["control-plane", "etcd"], &[]),
            "w1": node("192.0.2.12", &["worker"], &["rack-b"]),
            "w2": node("192.0.2.13", &["worker"], &[]),
        }});
        std::fs::write(gens.join(format!("{number}.json")), record.to_string()).unwrap();
    }
    let (code, nodes, err) = picked(&dir, &["rollback", "lab.nix", "--on", "worker,!@rack-b"]);
    assert_eq!((code, nodes), (4, vec!["w2".to_string()]), "{err}");
    let (code, _, err) = picked(&dir, &["rollback", "lab.nix", "--on", "@rack-c"]);
    assert_eq!(code, 2, "{err}");
}
