//! `kdeploy eval` / `plan` / `options` on clusters, through the binary:
//! outputs, exit codes (0 ok, 1 error, 2 usage), and hashes that do not
//! depend on the current directory.

mod closures_support;
use closures_support::kdeploy;

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn file_prints_the_generated_etcd_env() {
    let (code, out, err) =
        kdeploy(&["eval", "clusters/lab.nix", "--node", "k8s-worker01", "--file", "/etc/etcd.env"], &repo());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# Environment file for etcd 3.4.23"), "{out}");
    assert!(
        out.contains("ETCD_NAME=k8s-worker01\n") && out.contains("ETCD_LISTEN_PEER_URLS=https://10.77.0.12:2380\n")
    );
    // A unit is reachable by its installed path.
    let (code, out, _) = kdeploy(
        &["eval", "clusters/lab.nix", "--node", "k8s-master", "--file", "/etc/systemd/system/etcd.service"],
        &repo(),
    );
    assert_eq!(code, 0);
    assert!(out.contains("EnvironmentFile=/etc/etcd.env"), "{out}");
}

#[test]
fn closures_json_is_the_same_from_any_directory() {
    let abs = repo().join("tests/clusters/locality.nix");
    let (c1, here, _) = kdeploy(&["eval", "tests/clusters/locality.nix", "--closures"], &repo());
    let (c2, there, _) = kdeploy(&["eval", abs.to_str().unwrap(), "--closures"], std::path::Path::new("/"));
    assert_eq!((c1, c2), (0, 0));
    assert_eq!(here, there);
    let v: serde_json::Value = serde_json::from_str(&here).unwrap();
    assert_eq!(v["nodes"]["w1"]["hash"].as_str().unwrap().len(), 64);
}

#[test]
fn json_stays_the_plain_value() {
    let (code, out, _) = kdeploy(&["eval", "clusters/lab.nix", "--json"], &repo());
    assert_eq!(code, 0);
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("tests/stdlib/golden/lab.json")).unwrap()).unwrap();
    assert_eq!(got, want);
}

#[test]
fn listing_plan_and_options() {
    let (code, out, _) = kdeploy(&["eval", "clusters/lab.nix"], &repo());
    assert_eq!(code, 0);
    assert!(out.contains("node k8s-master 10.77.0.11 [control-plane, etcd]"), "{out}");
    assert!(out.contains("unit  etcd.service (on change: restart, enabled)"));
    assert!(out.contains(" kubelet (generated, not activated)"));
    let (code, out, _) = kdeploy(&["plan", "clusters/lab.nix"], &repo());
    assert_eq!(code, 0);
    assert!(out.contains("phase #4 etcd: 3 of 3 nodes, 3 distinct closures"), "{out}");
    assert!(out.contains("check etcd-endpoint-health (20 × 3s)  [all]"), "{out}");
    let (_, tasks, _) = kdeploy(&["eval", "clusters/lab.nix", "--list-tasks"], &repo());
    assert_eq!(tasks, out);
    let (code, out, _) = kdeploy(&["options", "maxpods"], &repo());
    assert_eq!(code, 0);
    assert!(out.starts_with("kubelet.maxPods  (an integer from 1 to 2500; node)\n    default: 110\n"), "{out}");
    let (code, out, _) = kdeploy(&["options", "--json"], &repo());
    assert_eq!(code, 0);
    // Every option declared in the stdlib's decls/ is listed, once.
    let declared: usize = std::fs::read_dir(repo().join("stdlib/options/decls"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap().matches("= opt {").count())
        .sum();
    assert_eq!(serde_json::from_str::<Vec<serde_json::Value>>(&out).unwrap().len(), declared);
}

#[test]
fn exit_codes() {
    let r = repo();
    // 2: usage — missing file, unknown node, unknown file, --file without
    // --node, not a cluster, missing argument. Each says what was wrong.
    for (args, says) in [
        (&["eval", "clusters/nope.nix"][..], "error: clusters/nope.nix: no such file or directory"),
        (
            &["eval", "clusters/lab.nix", "--node", "k8s-nobody"],
            "error: no node \"k8s-nobody\" in cluster lab (nodes: k8s-master, k8s-worker01, k8s-worker02)",
        ),
        (
            &["eval", "clusters/lab.nix", "--node", "k8s-master", "--file", "/etc/nothing"],
            "error: node k8s-master has no file /etc/nothing",
        ),
        (
            &["eval", "clusters/lab.nix", "--file", "/etc/etcd.env"],
            "required arguments were not provided:\n  --node <NAME>",
        ),
        (&["eval", "--expr", "{ a = 1; }", "--closures"], "need a cluster value (with schemaVersion and nodes)"),
        (&["plan"], "required arguments were not provided:\n  <FILE>"),
    ] {
        let (code, _, err) = kdeploy(args, &r);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say `{says}`, said:\n{err}");
    }
    // 1: evaluation or closure error — the user's own token file is missing.
    let (code, _, err) = kdeploy(&["eval", "tests/clusters/own-token.nix"], &r);
    assert_eq!(code, 1);
    assert!(err.contains("secrets/kubeadm-token"), "{err}");
    assert_eq!(kdeploy(&["plan", "tests/clusters/own-token.nix"], &r).0, 1);
    // 0: every example cluster evaluates from a fresh clone (kdeploy makes its secrets).
    for c in ["clusters/seed.nix", "clusters/ha.nix", "clusters/lab.nix"] {
        let (code, _, err) = kdeploy(&["eval", c], &r);
        assert_eq!(code, 0, "{c}: {err}");
    }
    assert_eq!(kdeploy(&["eval", "--expr", "throw \"x\""], &r).0, 1);
    // 0: -A still selects and prints the value.
    let (code, out, _) = kdeploy(&["eval", "clusters/lab.nix", "-A", "nodes.k8s-master.address"], &r);
    assert_eq!((code, out.as_str()), (0, "\"10.77.0.11\"\n"));
}
