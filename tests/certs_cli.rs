//! `kdeploy certs` on a temporary copy of the lab cluster, through the
//! binary: before anything is made every certificate is "not made yet";
//! once the secret store holds them (made through the store API, as
//! `switch` does) they are listed with subject, names and expiry; one
//! issued with a backdated clock (25 days left) is "due"; `--renew`
//! re-issues exactly the due one, keeping its key; no key byte is printed.

use std::path::{Path, PathBuf};

mod closures_support;
use closures_support::kdeploy;
use kdeploy::closure::{parse_cluster, Make};
use kdeploy::store::secrets::{makes, Made};
use kdeploy::store::SecretStore;
use time::{Duration, OffsetDateTime};

fn project() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kdeploy-certs-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("clusters/lab.nix");
    std::fs::copy(lab, dir.join("lab.nix")).unwrap();
    dir
}

fn certs_json(dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["certs", "lab.nix", "--output", "json"];
    args.extend_from_slice(extra);
    let (code, out, err) = kdeploy(&args, dir);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("PRIVATE KEY") && !err.contains("PRIVATE KEY"), "key material printed");
    serde_json::from_str(&out).unwrap()
}

fn find<'a>(rows: &'a [serde_json::Value], node: &str, path: &str) -> &'a serde_json::Value {
    rows.iter().find(|r| r["node"] == node && r["path"] == path).unwrap_or_else(|| panic!("no {node} {path}"))
}

#[test]
fn lists_not_made_then_made_then_due_and_renews_the_due_one() {
    let dir = project();
    // Before a switch: listed, nothing made.
    let rows = certs_json(&dir, &[]);
    // Per etcd member: CA, member, admin; the control plane also node-<name>.
    assert_eq!(rows.len(), 3 * 3 + 1, "{rows:#?}");
    assert!(rows.iter().all(|r| r["status"] == "not made yet"), "{rows:#?}");
    assert!(!dir.join(".kdeploy/secrets").exists(), "certs made secrets without --renew");

    // Make the secrets as switch does, from the evaluated cluster.
    let (code, json, err) = kdeploy(&["eval", "lab.nix", "--json"], &dir);
    assert_eq!(code, 0, "{err}");
    let cluster = parse_cluster(&json).unwrap();
    let store = SecretStore::new(SecretStore::default_dir(&dir));
    store.ensure(&cluster).unwrap();
    let rows = certs_json(&dir, &[]);
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:#?}");
    let member = find(&rows, "k8s-master", "/etc/ssl/etcd/ssl/member-k8s-master.pem");
    assert_eq!(member["subject"], "CN=etcd-member-k8s-master");
    let names: Vec<&str> = member["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(
        names.contains(&"DNS:k8s-master") && names.contains(&"IP:10.77.0.11") && names.contains(&"IP:::1"),
        "{names:?}"
    );
    assert!((363..=365).contains(&member["days_left"].as_i64().unwrap()), "{member}");
    let ca = find(&rows, "k8s-worker01", "/etc/ssl/etcd/ssl/ca.pem");
    assert_eq!(ca["is_ca"], true);

    // A certificate issued 340 days ago has 25 days left: due (window 30).
    let name = "lab/etcd/member-k8s-master.pem";
    let (_, make) = makes(&cluster).into_iter().find(|(n, _)| n == name).unwrap();
    assert!(matches!(make, Make::Cert(_)));
    let key_before = store.read("lab/etcd/member-k8s-master-key.pem").unwrap();
    std::fs::remove_file(store.path(name)).unwrap();
    let past = OffsetDateTime::now_utc() - Duration::days(340);
    store.ensure_one(name, &make, past, None, &mut Made::default()).unwrap();
    let rows = certs_json(&dir, &[]);
    let member = find(&rows, "k8s-master", "/etc/ssl/etcd/ssl/member-k8s-master.pem");
    assert_eq!(member["status"], "due", "{member}");
    assert_eq!(rows.iter().filter(|r| r["status"] == "due").count(), 1, "{rows:#?}");
    // A narrower window: not due.
    let rows = certs_json(&dir, &["--within", "10"]);
    assert_eq!(find(&rows, "k8s-master", "/etc/ssl/etcd/ssl/member-k8s-master.pem")["status"], "ok");

    // The text view says the same, readably.
    let (code, out, _) = kdeploy(&["certs", "lab.nix", "--node", "k8s-master"], &dir);
    assert_eq!(code, 0);
    assert!(
        out.contains("member-k8s-master.pem")
            && out.contains(" due ")
            && (out.contains("24 days left") || out.contains("25 days left")),
        "{out}"
    );
    assert!(!out.contains("k8s-worker01\n"), "--node k8s-master listed other nodes: {out}");

    // --renew re-issues the due one only, with its key kept.
    let others: Vec<Vec<u8>> = ["lab/etcd/admin-k8s-master.pem", "lab/etcd/member-k8s-worker01.pem"]
        .iter()
        .map(|n| store.read(n).unwrap())
        .collect();
    let (code, _, err) = kdeploy(&["certs", "lab.nix", "--renew"], &dir);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("renewed: lab/etcd/member-k8s-master.pem"), "{err}");
    assert_eq!(err.matches("renewed:").count(), 1, "{err}");
    let rows = certs_json(&dir, &[]);
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:#?}");
    assert_eq!(store.read("lab/etcd/member-k8s-master-key.pem").unwrap(), key_before, "renewal changed the key");
    for (n, b) in ["lab/etcd/admin-k8s-master.pem", "lab/etcd/member-k8s-worker01.pem"].iter().zip(others) {
        assert_eq!(store.read(n).unwrap(), b, "{n} re-issued though not due");
    }
    // A window longer than a lifetime renews every certificate once, never a CA.
    let (code, _, err) = kdeploy(&["certs", "lab.nix", "--renew", "--within", "400"], &dir);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("renewed:").count(), 3 * 2 + 1, "{err}");
    assert!(!err.contains("ca.pem"), "{err}");

    // Usage errors exit 2.
    let (code, _, _) = kdeploy(&["certs", "lab.nix", "--node", "nope"], &dir);
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
