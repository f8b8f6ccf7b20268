//! Issue 28, item 3: a cluster file cannot make the deployer read, reveal
//! or write what lies outside the places it may. (a) A `file://` artifact
//! is read only where `local` sources may be (project root, system binary
//! directories, `--allow-local`), as a regular file of bounded size: one
//! outside is refused before it is read, so no checksum of it is ever
//! printed and nothing of it enters the store. (b) Every name a secret
//! definition holds — the secret's, a certificate's and key's, its CA's —
//! is one checked kind of name (relative, plain components; only a user's
//! CA may be absolute): `../` is refused by `eval` in each field, and the
//! secret store itself refuses it again before touching any file. (c) The
//! evaluator never reads kdeploy's private state (`.kdeploy/`, or the
//! `--secrets` directory), and neither do `file`, `local` or `secretFile`
//! sources.

use crate::support;
use std::path::Path;

use kdeploy::closure::parse_cluster;
use kdeploy::store::SecretStore;
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use support::closures::{kdeploy, one_phase, write_raw_project};

fn file(path: &str, source: Value) -> Value {
    json!({"group": "root", "mode": "0644", "owner": "root", "path": path, "source": source})
}

fn artifact(name: &str, url: &str, sha256: &str) -> Value {
    file(&format!("/opt/{name}"), json!({"artifact": {"member": null, "name": name, "sha256": sha256, "url": url}}))
}

fn sha256_of(p: &str) -> String {
    hex::encode(Sha256::digest(std::fs::read(p).unwrap()))
}

fn blobs_in(dir: &Path) -> usize {
    std::fs::read_dir(dir.join(".kdeploy/store/blobs")).map_or(0, |d| d.count())
}

fn fetch(dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.args(["fetch", "c.nix"]).current_dir(dir).env_remove("KDEPLOY_STDLIB").env_remove("KDEPLOY_ALLOW_LOCAL");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_file_url_outside_the_local_directories_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // /etc/passwd stands for /etc/shadow or a key of the deployer's user
    let real = sha256_of("/etc/passwd");
    for sha in ["0".repeat(64), real.clone()] {
        write_raw_project(d, &one_phase(json!([artifact("passwd", "file:///etc/passwd", &sha)])));
        let (code, err) = fetch(d, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains("/etc/passwd") && err.contains("outside the directories local sources may be read from"),
            "{err}"
        );
        assert!(!err.contains(&real), "the checksum of a file outside was revealed: {err}");
        assert_eq!(blobs_in(d), 0, "a file outside entered the store");
    }
    // a symlink in the project does not lead out either
    std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
    let url = format!("file://{}", d.join("link").display());
    write_raw_project(d, &one_phase(json!([artifact("passwd", &url, &"0".repeat(64))])));
    let (code, err) = fetch(d, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("resolves to /etc/passwd") && !err.contains(&real), "{err}");

    // inside the project: a mismatch names both sums, the right one is fetched
    std::fs::write(d.join("tool.bin"), vec![7u8; 4000]).unwrap();
    let url = format!("file://{}", d.join("tool.bin").display());
    let sum = hex::encode(Sha256::digest(vec![7u8; 4000]));
    write_raw_project(d, &one_phase(json!([artifact("tool", &url, &"0".repeat(64))])));
    let (code, err) = fetch(d, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("checksum mismatch") && err.contains(&sum), "{err}");
    // larger than the download limit: refused before it is read
    write_raw_project(d, &one_phase(json!([artifact("tool", &url, &sum)])));
    let (code, err) = fetch(d, &[("KDEPLOY_MAX_DOWNLOAD", "3000")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("4000 bytes") && err.contains("3000"), "{err}");
    let (code, err) = fetch(d, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(blobs_in(d), 1);
}

#[test]
fn a_file_url_to_a_device_is_refused() {
    // (not run against the code before the fix: it read /dev/zero until memory ran out)
    let dir = tempfile::tempdir().unwrap();
    write_raw_project(dir.path(), &one_phase(json!([artifact("zero", "file:///dev/zero", &"0".repeat(64))])));
    let (code, err) = fetch(dir.path(), &[("KDEPLOY_ALLOW_LOCAL", "/dev")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/dev/zero") && err.contains("not a regular file"), "{err}");
}

/// A token secret, a hex secret, a CA and a certificate, as the stdlib
/// writes them (names below the secret store).
fn secrets() -> Value {
    let ca = json!({"kind": "ca", "cert": "t/etcd/ca.pem", "key": "t/etcd/ca-key.pem", "commonName": "etcd-ca"});
    let cert = json!({
        "kind": "cert", "ca": {"cert": "t/etcd/ca.pem", "key": "t/etcd/ca-key.pem", "commonName": "etcd-ca"},
        "cert": "t/etcd/member-a.pem", "key": "t/etcd/member-a-key.pem", "commonName": "etcd-member-a",
        "organization": null, "server": true, "client": true, "dnsNames": ["a"], "ipAddresses": ["10.0.0.1"],
    });
    one_phase(json!([
        file("/etc/k/token", json!({"secret": {"name": "t/kubeadm/token", "make": {"kind": "token"}}})),
        file(
            "/etc/k/hex",
            json!({"secret": {"name": "t/kubeadm/certificate-key", "make": {"kind": "hex", "bytes": 32}}})
        ),
        file("/etc/k/ca.pem", json!({"secret": {"name": "t/etcd/ca.pem", "make": ca}})),
        file("/etc/k/member.pem", json!({"secret": {"name": "t/etcd/member-a.pem", "make": cert.clone()}})),
        file("/etc/k/member-key.pem", json!({"secret": {"name": "t/etcd/member-a-key.pem", "make": cert}})),
    ]))
}

/// Each secret-name field of [`secrets`] (a JSON pointer into file `i`'s
/// source), and the file it belongs to.
const FIELDS: [(usize, &str); 11] = [
    (0, "/secret/name"),
    (1, "/secret/name"),
    (2, "/secret/name"),
    (2, "/secret/make/cert"),
    (2, "/secret/make/key"),
    (3, "/secret/name"),
    (3, "/secret/make/cert"),
    (3, "/secret/make/key"),
    (3, "/secret/make/ca/cert"),
    (3, "/secret/make/ca/key"),
    (4, "/secret/make/key"),
];

#[test]
fn dotdot_in_any_secret_name_is_refused_before_a_file_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_raw_project(d, &secrets());
    let (code, _, err) = kdeploy(&["eval", "c.nix"], d);
    assert_eq!(code, 0, "the unchanged secrets are accepted: {err}");

    let outside = d.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("victim"), "precious\n").unwrap();
    for bad in ["../../outside/victim", "t/../../outside/victim", "/tmp/victim", "t/a\nb", ""] {
        for (i, field) in FIELDS {
            let mut v = secrets();
            let was = v["nodes"]["a"]["phases"][0]["files"][i]["source"].pointer(field).unwrap().clone();
            // a field the files of a key pair share changes in both
            for f in v.pointer_mut("/nodes/a/phases/0/files").unwrap().as_array_mut().unwrap() {
                if let Some(x) = f["source"].pointer_mut(field).filter(|x| **x == was) {
                    *x = bad.into();
                }
            }
            write_raw_project(d, &v);
            let (code, _, err) = kdeploy(&["eval", "c.nix"], d);
            assert_eq!(code, 1, "{bad:?} in {field} of file {i} accepted: {err}");
            // an absolute name is a user's own CA, confined as a deployer file
            let named = if bad.starts_with('/') { bad.to_string() } else { format!("{bad:?}") };
            assert!(err.contains("secret") && err.contains(&named), "{bad:?} in {field}: {err}");

            // the secret store refuses it too, whoever calls it
            let store = SecretStore::new(d.join(".kdeploy/secrets"));
            let r = store.ensure(&parse_cluster(&v.to_string()).unwrap());
            assert!(r.is_err(), "{bad:?} in {field} of file {i}: the store made {:?}", r.map(|m| m.made));
            assert_eq!(std::fs::read_to_string(outside.join("victim")).unwrap(), "precious\n");
            assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "{bad:?} in {field}: wrote outside");
            assert!(!Path::new("/tmp/victim").exists());
            let _ = std::fs::remove_dir_all(d.join(".kdeploy"));
        }
    }
}

#[test]
fn the_evaluator_never_reads_kdeploys_private_state() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n-----END PRIVATE KEY-----\n";
    std::fs::create_dir_all(d.join(".kdeploy/secrets/t/etcd")).unwrap();
    std::fs::write(d.join(".kdeploy/secrets/t/etcd/ca-key.pem"), key).unwrap();
    std::os::unix::fs::symlink(d.join(".kdeploy/secrets"), d.join("innocent")).unwrap();
    std::fs::create_dir_all(d.join("keys")).unwrap();
    std::fs::write(d.join("keys/x"), "in the --secrets directory\n").unwrap();
    for expr in [
        "builtins.readFile ./.kdeploy/secrets/t/etcd/ca-key.pem",
        "builtins.readFile ./innocent/t/etcd/ca-key.pem",
        "builtins.readDir ./.kdeploy/secrets",
        "builtins.readDir ./innocent",
        "builtins.pathExists ./.kdeploy/secrets/t/etcd/ca-key.pem",
        "import ./.kdeploy/secrets/t/etcd/ca-key.pem",
    ] {
        let (code, out, err) = kdeploy(&["eval", "--expr", expr], d);
        assert_eq!(code, 1, "{expr}: {out}{err}");
        assert!(err.contains("is not allowed") && err.contains(".kdeploy"), "{expr}: {err}");
        assert!(!out.contains("MC4C") && !err.contains("MC4C"), "{expr}: {out}{err}");
    }
    // the --secrets directory, wherever it is
    let (code, out, err) = kdeploy(&["eval", "--secrets", "keys", "--expr", "builtins.readFile ./keys/x"], d);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("is not allowed"), "{err}");
    let (code, out, _) = kdeploy(&["eval", "--expr", "builtins.readFile ./keys/x"], d);
    assert_eq!((code, out.as_str()), (0, "\"in the --secrets directory\\n\"\n"), "an ordinary project file is read");

    // nor do the sources that read files of the deployer
    let local = d.join(".kdeploy/secrets/t/etcd/ca-key.pem").display().to_string();
    for source in [
        json!({"file": ".kdeploy/secrets/t/etcd/ca-key.pem"}),
        json!({"file": "innocent/t/etcd/ca-key.pem"}),
        json!({"local": local}),
        json!({"secretFile": local}),
        json!({"secretFile": ".kdeploy/secrets/t/etcd/ca-key.pem"}),
    ] {
        write_raw_project(d, &one_phase(json!([file("/etc/x", source.clone())])));
        let (code, out, err) = kdeploy(&["eval", "c.nix"], d);
        assert_eq!(code, 1, "{source}: {out}{err}");
        assert!(err.contains("kdeploy's private state"), "{source}: {err}");
    }
    write_raw_project(d, &one_phase(json!([file("/etc/x", json!({"file": "keys/x"}))])));
    let (code, _, err) = kdeploy(&["eval", "c.nix", "--secrets", "keys"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("kdeploy's private state"), "{err}");
}
