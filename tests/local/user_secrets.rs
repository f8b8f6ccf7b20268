//! Issue 28, item 2: the user's own keys and tokens are secrets, as
//! kdeploy's own are. A cluster naming `etcd.certDir`,
//! `kubeadm.tokenFile` and `kubeadm.certificateKeyFile` gets every key
//! file and token as a `secretFile` source (certificates stay plain: they
//! are public), `eval --file` prints a placeholder for them, and switched
//! to two nodes through a real binary cache (Debian's nginx on loopback)
//! no byte of a key reaches the cache while the certificates do; a
//! changed key is shown as "content changes (not shown)" by a dry run.
//! And the class: any plain source (`file`, `local`, inline `text`) that
//! holds a private key, or a file its owner keeps from others under a
//! key-like name, is refused and pointed at `secretFile`.

use crate::support;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kdeploy::closure;
use kdeploy::deploy::events::Collect;
use kdeploy::deploy::switch::{switch_reached, Reached};
use kdeploy::deploy::{Cancel, Outcome, SwitchOptions};
use kdeploy::deploy::{Report, RunOptions};
use kdeploy::store::cache::BinaryCache;
use kdeploy::store::{FileFetcher, Resolver, SecretStore, Store};
use kdeploy::transport::LocalHost;
use serde_json::{json, Value};
use support::closures::{kdeploy, one_phase, write_raw_project};
use support::http::nginx::Nginx;

/// A fresh PEM private key (ed25519, PKCS#8), as `openssl genpkey` writes it.
fn private_key() -> String {
    let out = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519"])
        .output()
        .expect("openssl runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The lines a leak of `pem` would show (its base64 body).
fn body_lines(pem: &str) -> Vec<&str> {
    pem.lines().filter(|l| !l.starts_with("-----")).collect()
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const CLUSTER: &str = r#"let kd = import <kdeploy>; in
kd.cluster {
  name = "own";
  nodes = {
    cp1 = { address = "10.0.0.11"; roles = [ "control-plane" "etcd" ]; };
    cp2 = { address = "10.0.0.12"; roles = [ "control-plane" "etcd" ]; };
    w1 = { address = "10.0.0.13"; roles = [ "worker" "etcd" ]; };
  };
  settings = {
    etcd.certDir = ./pki;
    kubeadm.tokenFile = "secrets/kubeadm-token";
    kubeadm.certificateKeyFile = "secrets/kubeadm-certificate-key";
  };
}
"#;

const NODES: [&str; 3] = ["cp1", "cp2", "w1"];

/// A project with the user's own etcd PKI (Kubespray's names, keys 0600)
/// and kubeadm secrets. Returns the directory and every key's text.
fn project() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.nix"), CLUSTER).unwrap();
    let pki = dir.path().join("pki");
    let mut keys = Vec::new();
    write(&pki.join("ca.pem"), "-----BEGIN CERTIFICATE-----\nY2EgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n", 0o644);
    for node in NODES {
        let kinds: &[&str] = if node == "w1" { &["member", "admin"] } else { &["member", "admin", "node"] };
        for kind in kinds {
            let cert = format!(
                "-----BEGIN CERTIFICATE-----\nY2VydCB7a2luZH0te25vZGV9\n# {kind}-{node}\n-----END CERTIFICATE-----\n"
            );
            write(&pki.join(format!("{kind}-{node}.pem")), &cert, 0o644);
            let key = private_key();
            write(&pki.join(format!("{kind}-{node}-key.pem")), &key, 0o600);
            keys.push(key);
        }
    }
    let token = "abcdef.0123456789abcdef\n";
    let cert_key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
    write(&dir.path().join("secrets/kubeadm-token"), token, 0o600);
    write(&dir.path().join("secrets/kubeadm-certificate-key"), cert_key, 0o600);
    keys.extend([token.to_string(), cert_key.to_string()]);
    (dir, keys)
}

fn eval_json(dir: &Path) -> Value {
    let (code, out, err) = kdeploy(&["eval", "c.nix", "--json"], dir);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Every file of every node: (node, path, source).
fn files(v: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (node, n) in v["nodes"].as_object().unwrap() {
        for p in n["phases"].as_array().unwrap() {
            for f in p["files"].as_array().unwrap() {
                out.push((node.clone(), f["path"].as_str().unwrap().to_string(), f["source"].clone()));
            }
        }
    }
    out
}

/// The user's key material (the CA pin beside the token is public: kdeploy derives it).
fn is_key_path(p: &str) -> bool {
    p.ends_with("-key.pem") || (p.starts_with("/etc/kubernetes/kdeploy/") && p != "/etc/kubernetes/kdeploy/ca-pin")
}

#[test]
fn the_users_keys_and_tokens_are_secret_sources_and_never_printed() {
    let (dir, keys) = project();
    let v = eval_json(dir.path());
    let all = files(&v);
    let keyed: Vec<&(String, String, Value)> = all.iter().filter(|(_, p, _)| is_key_path(p)).collect();
    // per node: member and admin keys; node keys on control planes; the token; the certificate key on both CPs
    assert_eq!(keyed.len(), 3 * 2 + 2 + 3 + 2, "{keyed:#?}");
    for (node, path, source) in &keyed {
        assert!(source.get("secretFile").is_some(), "{node} {path}: a key travels as {source}");
    }
    let cert = all.iter().find(|(n, p, _)| n == "cp1" && p == "/etc/ssl/etcd/ssl/member-cp1.pem").unwrap();
    assert!(cert.2.get("local").is_some(), "a certificate is public: {}", cert.2);

    for (node, path) in
        [("cp1", "/etc/ssl/etcd/ssl/member-cp1-key.pem"), ("w1", "/etc/kubernetes/kdeploy/kubeadm-token")]
    {
        let (code, out, err) = kdeploy(&["eval", "c.nix", "--node", node, "--file", path], dir.path());
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("never printed"), "{node} {path}: {out}");
        for key in &keys {
            for line in body_lines(key) {
                assert!(!out.contains(line.trim()), "{node} {path} printed key material: {out}");
            }
        }
    }
}

fn file(path: &str, source: Value) -> Value {
    json!({"group": "root", "mode": "0600", "owner": "root", "path": path, "source": source})
}

#[test]
fn a_plain_source_holding_key_material_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = private_key();
    write(&d.join("pki/member-x-key.pem"), &key, 0o600);
    write(&d.join("notes/readme.txt"), &format!("the old key, for the record:\n{key}"), 0o644);
    write(&d.join("secrets/api-token"), "hunter2\n", 0o600);
    write(&d.join("conf/app.conf"), "listen 80\n", 0o600);
    write(
        &d.join("pub/signing-key.pem"),
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
        0o644,
    );
    let local = d.join("pki/member-x-key.pem").display().to_string();

    write_raw_project(
        d,
        &one_phase(json!([
            file("/etc/a/key.pem", json!({"local": local})),
            file("/etc/a/readme.txt", json!({"file": "notes/readme.txt"})),
            file("/etc/a/token", json!({"file": "secrets/api-token"})),
            file("/etc/a/app.conf", json!({"file": "conf/app.conf"})),
            file("/etc/a/signing-key.pem", json!({"file": "pub/signing-key.pem"})),
        ])),
    );
    let (code, _, err) = kdeploy(&["eval", "c.nix"], d);
    assert_eq!(code, 1, "{err}");
    for (path, why) in [
        ("/etc/a/key.pem", "readable only by its owner and named like a key"),
        ("/etc/a/readme.txt", "holds a private key"),
        ("/etc/a/token", "readable only by its owner and named like a key"),
    ] {
        let line =
            err.lines().find(|l| l.contains(&format!("file {path}:"))).unwrap_or_else(|| panic!("{path}: {err}"));
        assert!(line.contains(why) && line.contains("secretFile"), "{path}: {line}");
    }
    assert!(!err.contains("/etc/a/app.conf") && !err.contains("/etc/a/signing-key.pem"), "{err}");
    for line in body_lines(&key) {
        assert!(!err.contains(line), "the error shows the key: {err}");
    }

    // inline text is a plain source too
    write_raw_project(d, &one_phase(json!([file("/etc/a/key.pem", json!({"text": key}))])));
    let (code, _, err) = kdeploy(&["eval", "c.nix"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("file /etc/a/key.pem") && err.contains("holds a private key"), "{err}");

    // the same files as secrets: accepted, and never printed
    write_raw_project(
        d,
        &one_phase(json!([
            file("/etc/a/key.pem", json!({"secretFile": local})),
            file("/etc/a/token", json!({"secretFile": "secrets/api-token"})),
        ])),
    );
    let (code, out, err) = kdeploy(&["eval", "c.nix"], d);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("secret"), "{out}");
    let (code, out, err) = kdeploy(&["eval", "c.nix", "--node", "a", "--file", "/etc/a/token"], d);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("never printed") && !out.contains("hunter2"), "{out}");
}

/// The stdlib's etcd certificate files of every node, as a closure of one
/// phase `etcd-pki` (no units, hooks or checks: nothing runs here), so the
/// real executor can switch them to directories on this machine.
fn pki_closure(v: &Value) -> Value {
    let mut nodes = serde_json::Map::new();
    for (node, n) in v["nodes"].as_object().unwrap() {
        let files: Vec<Value> = n["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "etcd")
            .flat_map(|p| p["files"].as_array().unwrap().clone())
            .filter(|f| f["path"].as_str().unwrap().starts_with("/etc/ssl/etcd/ssl/"))
            .collect();
        assert!(files.len() >= 5, "{node}: {files:?}");
        nodes.insert(
            node.clone(),
            json!({
                "address": "127.0.0.1", "roles": [], "settings": {},
                "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
                "phases": [{"activate": true, "checks": [], "directories": [], "files": files, "hooks": [],
                            "name": "etcd-pki", "units": []}],
            }),
        );
    }
    json!({"name": "own", "phaseOrder": ["etcd-pki"], "schemaVersion": closure::SCHEMA_VERSION,
           "settings": {}, "warnings": [], "nodes": nodes})
}

struct Deployer {
    root: PathBuf,
    cache: Arc<BinaryCache>,
}

impl Deployer {
    fn resolver(&self) -> Resolver {
        Resolver::new(&self.root, Store::new(self.root.join(".kdeploy/store")), Box::new(FileFetcher))
    }

    fn prefix(&self, node: &str) -> String {
        self.root.join("nodes").join(node).display().to_string()
    }

    async fn switch(&self, cluster: &Value, dry_run: bool) -> Report {
        let resolver = self.resolver();
        if !dry_run {
            // what `switch` does first: the hash key (and kdeploy's own secrets)
            SecretStore::new(SecretStore::default_dir(&self.root))
                .ensure(&closure::parse_cluster(&cluster.to_string()).unwrap())
                .unwrap();
        }
        let closures = closure::load(&cluster.to_string(), &resolver).unwrap();
        let hosts: Vec<LocalHost> = NODES.iter().map(|n| LocalHost::new(n)).collect();
        let prefixes: Vec<String> = NODES.iter().map(|n| self.prefix(n)).collect();
        let reached: Vec<Reached<'_>> =
            hosts.iter().zip(&prefixes).map(|(h, p)| Reached { host: h, prefix: p }).collect();
        let opts = SwitchOptions {
            run: RunOptions { dry_run, ..RunOptions::at(self.root.join(".kdeploy")) },
            cache: Some(self.cache.clone()),
            ..Default::default()
        };
        switch_reached(&closures, &resolver, &opts, &reached, Cancel::default(), &Collect::default()).await.unwrap()
    }
}

/// Every byte the cache holds, file by file.
fn cached(nginx: &Nginx) -> Vec<Vec<u8>> {
    std::fs::read_dir(nginx.cache_dir()).unwrap().map(|e| std::fs::read(e.unwrap().path()).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_users_etcd_keys_never_reach_the_binary_cache_and_a_dry_run_masks_them() {
    let (dir, keys) = project();
    let pki = pki_closure(&eval_json(dir.path()));
    let nginx = Nginx::on_loopback(dir.path());
    let cache = Arc::new(BinaryCache::new(&nginx.cache_url(), Duration::from_secs(5)).unwrap());
    let deployer = Deployer { root: dir.path().to_path_buf(), cache };

    let Report { outcome, .. } = deployer.switch(&pki, false).await;
    assert_eq!(outcome, Outcome::Ok);
    // the nodes hold their keys (sent over SSH), the cache only certificates
    let key = std::fs::read_to_string(dir.path().join("pki/member-cp2-key.pem")).unwrap();
    let on_node = std::fs::read_to_string(format!("{}/etc/ssl/etcd/ssl/member-cp2-key.pem", deployer.prefix("cp2")));
    assert_eq!(on_node.unwrap(), key);
    let blobs = cached(&nginx);
    assert!(!blobs.is_empty(), "the certificates went through the cache");
    let puts = nginx.requests().into_iter().filter(|r| r.method == "PUT").count();
    assert_eq!(puts, blobs.len(), "{:?}", nginx.requests());
    for b in &blobs {
        let text = String::from_utf8_lossy(b);
        assert!(!text.contains("PRIVATE KEY"), "a key in the cache: {text}");
        for k in &keys {
            assert!(!text.contains(k.trim()), "a token in the cache: {text}");
        }
    }

    // a new key, shown by a dry run without its content
    let new_key = private_key();
    write(&dir.path().join("pki/member-cp2-key.pem"), &new_key, 0o600);
    let Report { outcome, plan_text: plan, .. } = deployer.switch(&pki, true).await;
    assert_eq!(outcome, Outcome::Ok);
    let at = plan.find("/etc/ssl/etcd/ssl/member-cp2-key.pem").unwrap_or_else(|| panic!("{plan}"));
    assert!(plan[at..].contains("secret: content changes (not shown)"), "{plan}");
    for line in body_lines(&key).into_iter().chain(body_lines(&new_key)) {
        assert!(!plan.contains(line), "the dry run shows key material:\n{plan}");
    }
    assert_eq!(cached(&nginx).len(), blobs.len(), "a dry run uploads nothing");
}

/// A project whose `bin/pass` prints a token and logs each run to
/// `calls.log` (or, with `fail`, says why on stderr and exits 3).
fn pass_project(d: &Path, fail: bool) {
    let body = if fail {
        "echo not-this-one; echo 'pass: lab/token is not in the password store' >&2; exit 3"
    } else {
        "printf 'hunter2-from-pass\\n'"
    };
    write(&d.join("bin/pass"), &format!("#!/bin/sh\necho \"$*\" >>calls.log\n{body}\n"), 0o755);
}

/// The lab cluster with a token from `bin/pass` on every node (custom.files).
fn with_secret_command(d: &Path) {
    let lab = std::fs::read_to_string(support::repo().join("tests/clusters/lab-etcd.nix")).unwrap();
    let entry = "custom.files.\"/etc/app/token\" = { phase = \"preinstall\"; mode = \"0600\"; \
                 secretCommand = [ \"./bin/pass\" \"show\" \"lab/token\" ]; };";
    std::fs::write(d.join("c.nix"), lab.replacen("settings = {", &format!("settings = {{\n    {entry}"), 1)).unwrap();
}

/// `secretCommand` (colmena's keyCommand): a program of the deployer
/// prints the secret. It runs only with --allow-secret-commands (a
/// cluster file from elsewhere runs nothing), once per run however many
/// nodes use it, without a shell, in the project; its output is a secret
/// (never printed, named by its keyed hash); a failure quotes its stderr,
/// never its stdout.
#[test]
fn a_secret_command_runs_only_when_allowed_once_per_run_and_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pass_project(d, false);
    with_secret_command(d);
    let calls = || std::fs::read_to_string(d.join("calls.log")).unwrap_or_default();

    let (code, _, err) = kdeploy(&["eval", "c.nix"], d);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("secret command `./bin/pass show lab/token`") && err.contains("--allow-secret-commands"),
        "{err}"
    );
    assert_eq!(calls(), "", "the command ran without being allowed");

    let (code, out, err) = kdeploy(&["eval", "c.nix", "--allow-secret-commands", "--closures"], d);
    assert_eq!(code, 0, "{err}");
    assert_eq!(calls(), "show lab/token\n", "not once for the three nodes");
    assert!(!out.contains("hunter2") && !err.contains("hunter2"), "the secret was printed");
    let closures: Value = serde_json::from_str(&out).unwrap();
    let token = closures["nodes"]["k8s-worker02"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap())
        .find(|f| f["path"] == "/etc/app/token")
        .cloned()
        .expect("the token in the closure");
    assert!(token["content"].as_str().unwrap().starts_with("secret:"), "{token}");
    let (code, out, err) =
        kdeploy(&["eval", "c.nix", "--allow-secret-commands", "--node", "k8s-master", "--file", "/etc/app/token"], d);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("never printed") && !out.contains("hunter2"), "{out}");

    // a failing command: named, its stderr quoted, its stdout not
    pass_project(d, true);
    let (code, _, err) = kdeploy(&["eval", "c.nix", "--allow-secret-commands"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("secret command `./bin/pass show lab/token`: exited with 3"), "{err}");
    assert!(err.contains("is not in the password store") && !err.contains("not-this-one"), "{err}");

    // an empty argv, or a program that is no plain name or path, is refused
    // by the stdlib, naming the option and the value
    let c = std::fs::read_to_string(d.join("c.nix")).unwrap();
    for (argv, shown) in [("[ ]", "[ ]"), ("[ \"$(touch x)\" ]", "\"$(touch x)\": the program")] {
        std::fs::write(d.join("c.nix"), c.replace("[ \"./bin/pass\" \"show\" \"lab/token\" ]", argv)).unwrap();
        let (code, _, err) = kdeploy(&["eval", "c.nix", "--allow-secret-commands"], d);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("custom.files") && err.contains("secretCommand") && err.contains(shown), "{argv}: {err}");
    }
    assert!(!d.join("x").exists());
}

/// A `secretCommand`'s output reaches the node as a secret: in the node's
/// private secrets, the file 0600, never in the deployer's blob store.
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_commands_output_is_deployed_as_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pass_project(d, false);
    let cluster = support::closures::one_phase(json!([file(
        "/etc/app/token",
        json!({"secretCommand": ["./bin/pass", "show", "lab/token"]})
    )]));
    SecretStore::new(SecretStore::default_dir(d))
        .ensure(&closure::parse_cluster(&cluster.to_string()).unwrap())
        .unwrap();
    let resolver =
        Resolver::new(d, Store::new(d.join(".kdeploy/store")), Box::new(FileFetcher)).allow_secret_commands(true);
    let closures = closure::load(&cluster.to_string(), &resolver).unwrap();
    let host = LocalHost::new("a");
    let prefix = d.join("node").display().to_string();
    let reached = [Reached { host: &host, prefix: &prefix }];
    let opts = SwitchOptions { run: RunOptions::at(d.join(".kdeploy")), ..Default::default() };
    let report =
        switch_reached(&closures, &resolver, &opts, &reached, Cancel::default(), &Collect::default()).await.unwrap();
    assert_eq!(report.outcome, Outcome::Ok);
    let on_node = d.join("node/etc/app/token");
    assert_eq!(std::fs::read_to_string(&on_node).unwrap(), "hunter2-from-pass\n");
    assert_eq!(std::fs::metadata(&on_node).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(d.join("calls.log")).unwrap(), "show lab/token\n", "ran more than once");
    let stored = std::fs::read_dir(d.join(".kdeploy/store")).into_iter().flatten().flatten();
    for e in stored {
        if e.path().is_file() {
            assert!(!std::fs::read(e.path()).unwrap().windows(7).any(|w| w == b"hunter2"), "in the blob store: {e:?}");
        }
    }
}
