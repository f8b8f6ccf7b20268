//! `kdeploy eval` / `plan` / `options` on clusters, through the binary:
//! outputs, exit codes (0 ok, 1 error, 2 usage), and hashes that do not
//! depend on the current directory.

use crate::support;
use support::closures::kdeploy;

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn file_prints_the_generated_etcd_env() {
    let (code, out, err) =
        kdeploy(&["eval", "tests/clusters/lab-etcd.nix", "--node", "k8s-worker01", "--file", "/etc/etcd.env"], &repo());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# Environment file for etcd 3.4.23"), "{out}");
    assert!(
        out.contains("ETCD_NAME=k8s-worker01\n") && out.contains("ETCD_LISTEN_PEER_URLS=https://10.77.0.12:2380\n")
    );
    // A unit is reachable by its installed path.
    let (code, out, _) = kdeploy(
        &["eval", "tests/clusters/lab-etcd.nix", "--node", "k8s-master", "--file", "/etc/systemd/system/etcd.service"],
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
    let (code, out, _) = kdeploy(&["eval", "tests/clusters/lab-etcd.nix"], &repo());
    assert_eq!(code, 0);
    assert!(out.contains("node k8s-master 10.77.0.11 [control-plane, etcd]"), "{out}");
    assert!(out.contains("unit  etcd.service (on change: restart, enabled)"));
    assert!(out.contains(" kubelet (generated, not activated)"));
    let (code, out, _) = kdeploy(&["plan", "tests/clusters/lab-etcd.nix"], &repo());
    assert_eq!(code, 0);
    assert!(out.contains("phase #4 etcd: 3 of 3 nodes, 3 distinct closures"), "{out}");
    assert!(out.contains("check etcd-endpoint-health (20 × 3s)  [all]"), "{out}");
    let (_, tasks, _) = kdeploy(&["eval", "tests/clusters/lab-etcd.nix", "--list-tasks"], &repo());
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
    let listed = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&out).unwrap();
    assert_eq!(listed.len(), declared);
}

#[test]
fn exit_codes() {
    let r = repo();
    // 2: usage — missing file, unknown node, unknown file, --file without
    // --node, not a cluster, missing argument. Each says what was wrong.
    for (args, says) in [
        (&["eval", "clusters/nope.nix"][..], "error: clusters/nope.nix: no such file or directory"),
        (
            &["eval", "tests/clusters/lab-etcd.nix", "--node", "k8s-nobody"],
            "error: no node \"k8s-nobody\" in cluster lab (nodes: k8s-master, k8s-worker01, k8s-worker02)",
        ),
        (
            &["eval", "tests/clusters/lab-etcd.nix", "--node", "k8s-master", "--file", "/etc/nothing"],
            "error: node k8s-master has no file /etc/nothing",
        ),
        (
            &["eval", "tests/clusters/lab-etcd.nix", "--file", "/etc/etcd.env"],
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
    // 0: every example evaluates: tests/cli/examples.rs, from a fresh clone.
    assert_eq!(kdeploy(&["eval", "--expr", "throw \"x\""], &r).0, 1);
    // 0: -A still selects and prints the value.
    let (code, out, _) = kdeploy(&["eval", "tests/clusters/lab-etcd.nix", "-A", "nodes.k8s-master.address"], &r);
    assert_eq!((code, out.as_str()), (0, "\"10.77.0.11\"\n"));
}

/// The artifacts (url, sha256) of `node` in `eval --json` output.
fn artifacts_of(value: &serde_json::Value, node: &str) -> Vec<(String, String)> {
    fn walk(v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) => match (m.get("url"), m.get("sha256")) {
                (Some(serde_json::Value::String(u)), Some(serde_json::Value::String(s))) => {
                    out.push((u.clone(), s.clone()))
                }
                _ => m.values().for_each(|v| walk(v, out)),
            },
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&value["nodes"][node], &mut out);
    out
}

#[test]
fn each_node_downloads_the_build_of_its_architecture_from_the_mirror() {
    let (code, out, err) = kdeploy(&["eval", "tests/clusters/mirrored.nix", "--json"], &repo());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let amd = artifacts_of(&v, "amd");
    let arm = artifacts_of(&v, "arm");
    assert!(amd.len() > 5 && arm.len() == amd.len(), "{amd:?} {arm:?}");
    for (url, _) in amd.iter().chain(&arm) {
        assert!(url.starts_with("http://mirror.internal:8080/files/"), "{url}");
    }
    assert!(amd.iter().all(|(u, _)| u.contains("amd64") && !u.contains("arm64")), "{amd:?}");
    assert!(arm.iter().all(|(u, _)| u.contains("arm64") && !u.contains("amd64")), "{arm:?}");
    // Kubespray's recorded sha256 of kubelet 1.33.5 for each architecture
    let kubelet = |list: &[(String, String)]| list.iter().find(|(u, _)| u.ends_with("/kubelet")).unwrap().clone();
    assert_eq!(
        kubelet(&amd),
        (
            "http://mirror.internal:8080/files/dl.k8s.io/release/v1.33.5/bin/linux/amd64/kubelet".into(),
            "8f6106b970259486c5af5cbee404d4f23406d96d99dfb92a6965b299c2a4db0e".into()
        )
    );
    assert_eq!(
        kubelet(&arm),
        (
            "http://mirror.internal:8080/files/dl.k8s.io/release/v1.33.5/bin/linux/arm64/kubelet".into(),
            "c6ad0510c089d49244eede2638b4a4ff125258fd29a0649e7eef05c7f79c737f".into()
        )
    );
}

#[test]
fn every_image_comes_from_the_registries_the_cluster_names() {
    for plugin in ["calico", "flannel"] {
        let (code, out, err) =
            kdeploy(&["eval", "tests/clusters/mirrored.nix", "--argstr", "plugin", plugin, "--json"], &repo());
        assert_eq!(code, 0, "{err}");
        // image references as manifests (`image: X`), pre-pulls (`crictl pull 'X'`) and
        // kubeadm (`imageRepository: X`) name them
        let text = out.replace("\\n", "\n").replace("\\\"", "\"");
        let mut images = Vec::new();
        for key in ["image: ", "imageRepository: ", "crictl pull "] {
            for (pos, _) in text.match_indices(key) {
                let rest = text[pos + key.len()..].trim_start_matches(['"', '\'']);
                images.push(rest.split(['"', '\'', ' ', ',', '\n']).next().unwrap().to_string());
            }
        }
        assert!(images.len() > 20, "{plugin}: found only {images:?}");
        for image in &images {
            assert!(image.starts_with("registry.internal:5000/"), "{plugin}: {image} bypasses the mirror");
        }
    }
}
