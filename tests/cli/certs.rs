//! `kdeploy certs` on a temporary copy of the lab cluster, through the
//! binary: before anything is made every certificate is "not made yet";
//! once the secret store holds them (made through the store API, as
//! `switch` does) they are listed with subject, names and expiry; one
//! issued with a backdated clock (25 days left) is "due"; `--renew`
//! re-issues exactly the due one, keeping its key; no key byte is printed.

use crate::support;
use std::path::{Path, PathBuf};

use kdeploy::closure::{parse_cluster, Make};
use kdeploy::store::secrets::{makes, Made};
use kdeploy::store::SecretStore;
use support::closures::kdeploy;
use time::{Duration, OffsetDateTime};

/// A temporary project holding a copy of the lab cluster, one per test
/// (tests of one binary run in parallel).
fn project(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kdeploy-certs-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lab = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clusters/lab-etcd.nix");
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
    let dir = project("renew");
    // Before a switch: listed, nothing made.
    let rows = certs_json(&dir, &[]);
    // Per etcd member: CA, member, admin; the control plane also node-<name>
    // and the Kubernetes CA kdeploy makes (on the first control plane).
    assert_eq!(rows.len(), 3 * 3 + 1 + 1, "{rows:#?}");
    find(&rows, "k8s-master", "/etc/kubernetes/ssl/ca.crt");
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
    std::fs::remove_file(store.path(name).unwrap()).unwrap();
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

/// Every file of the secret store below `dir`, by relative name.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn edit(dir: &Path, from: &str, to: &str) {
    let p = dir.join("lab.nix");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "lab.nix has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn try_ensure(dir: &Path) -> Result<Made, kdeploy::store::Error> {
    let (code, json, err) = kdeploy(&["eval", "lab.nix", "--json"], dir);
    assert_eq!(code, 0, "{err}");
    SecretStore::of_project(dir).ensure(&parse_cluster(&json).unwrap())
}

fn ensure(dir: &Path) -> Made {
    try_ensure(dir).unwrap()
}

#[test]
fn growing_etcd_issues_the_new_members_certificates_and_touches_no_other() {
    let dir = project("grow");
    ensure(&dir);
    let before = snapshot(&SecretStore::default_dir(&dir));
    let last = r#"k8s-worker02 = { address = "10.77.0.13"; roles = [ "worker" "etcd" ]; };"#;
    edit(
        &dir,
        last,
        &format!(
            "{last}\n    k8s-worker03 = {{ address = \"10.77.0.14\"; roles = [ \"worker\" \"etcd\" ]; }};\n    \
             k8s-worker04 = {{ address = \"10.77.0.15\"; roles = [ \"worker\" \"etcd\" ]; }};"
        ),
    );
    let made = ensure(&dir);
    let after = snapshot(&SecretStore::default_dir(&dir));
    for (name, bytes) in &before {
        assert_eq!(after.get(name), Some(bytes), "{name} changed when two members were added");
    }
    let mut new: Vec<&String> = after.keys().filter(|n| !before.contains_key(*n)).collect();
    new.sort();
    let mut want = Vec::new();
    for node in ["k8s-worker03", "k8s-worker04"] {
        for kind in ["admin", "member"] {
            want.extend([
                format!("lab/etcd/{kind}-{node}-key.pem"),
                format!("lab/etcd/{kind}-{node}.pem"),
                format!("lab/etcd/{kind}-{node}.pem.spec"),
            ]);
        }
    }
    want.sort();
    assert_eq!(new, want.iter().collect::<Vec<_>>());
    assert!(made.made.iter().all(|n| n.contains("k8s-worker03") || n.contains("k8s-worker04")), "{:?}", made.made);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn openssl(args: &[&str], dir: &Path) {
    let out = std::process::Command::new("openssl").args(args).current_dir(dir).output().expect("openssl runs");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_users_own_ca_signs_the_certificates_and_stays_where_it_is() {
    let dir = project("own-ca");
    std::fs::create_dir(dir.join("pki")).unwrap();
    let pki = dir.join("pki");
    // An RSA CA as Kubespray's, its key in the traditional PKCS#1 form.
    openssl(&["genrsa", "-traditional", "-out", "ca-key.pem", "2048"], &pki);
    openssl(
        &["req", "-x509", "-new", "-key", "ca-key.pem", "-days", "3650", "-subj", "/CN=site-etcd-ca", "-out", "ca.pem"],
        &pki,
    );
    edit(&dir, "settings = {", "settings = {\n    etcd.caDir = ./pki;");
    // Refused with the conversion to run; the key is not printed.
    let e = try_ensure(&dir).unwrap_err().to_string();
    assert!(e.contains("ca-key.pem") && e.contains("openssl pkcs8 -topk8"), "{e}");
    assert!(!e.contains("PRIVATE KEY-----\n"), "{e}");
    openssl(&["pkcs8", "-topk8", "-nocrypt", "-in", "ca-key.pem", "-out", "ca-key.pem.new"], &pki);
    std::fs::rename(pki.join("ca-key.pem.new"), pki.join("ca-key.pem")).unwrap();
    let ca_key = std::fs::read(pki.join("ca-key.pem")).unwrap();
    ensure(&dir);
    let store = SecretStore::default_dir(&dir);
    assert!(
        !store.join("lab/etcd/ca.pem").exists() && !store.join("lab/etcd/ca-key.pem").exists(),
        "kdeploy made a CA"
    );
    assert_eq!(std::fs::read(pki.join("ca-key.pem")).unwrap(), ca_key, "the user's CA key was rewritten");
    for cert in ["member-k8s-worker01.pem", "admin-k8s-master.pem", "node-k8s-master.pem"] {
        let path = store.join("lab/etcd").join(cert);
        openssl(&["verify", "-CAfile", "pki/ca.pem", path.to_str().unwrap()], &dir);
    }
    // Nodes get the user's CA certificate; certs shows it.
    let rows = certs_json(&dir, &[]);
    let ca = find(&rows, "k8s-worker02", "/etc/ssl/etcd/ssl/ca.pem");
    assert_eq!((&ca["subject"], &ca["status"]), (&"CN=site-etcd-ca".into(), &"ok".into()), "{ca}");

    // Extra names (a VIP, say) re-issue every certificate with them; the keys stay.
    let key = std::fs::read(store.join("lab/etcd/member-k8s-master-key.pem")).unwrap();
    edit(
        &dir,
        "etcd.caDir = ./pki;",
        "etcd.caDir = ./pki; etcd.certAltNames = [ \"etcd.example.internal\" ]; etcd.certAltIPs = [ \"10.77.0.100\" ];",
    );
    ensure(&dir);
    let rows = certs_json(&dir, &[]);
    let member = find(&rows, "k8s-master", "/etc/ssl/etcd/ssl/member-k8s-master.pem");
    let names: Vec<&str> = member["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(names.contains(&"DNS:etcd.example.internal") && names.contains(&"IP:10.77.0.100"), "{names:?}");
    assert!(!names.contains(&"DNS:etcd.kube-system"), "the default alt names stayed: {names:?}");
    assert_eq!(
        std::fs::read(store.join("lab/etcd/member-k8s-master-key.pem")).unwrap(),
        key,
        "re-issue changed the key"
    );
    edit(&dir, " etcd.certAltNames = [ \"etcd.example.internal\" ]; etcd.certAltIPs = [ \"10.77.0.100\" ];", "");

    // A relative string cannot be found again; both sources at once are refused.
    edit(&dir, "etcd.caDir = ./pki;", "etcd.caDir = \"pki\";");
    let (code, _, err) = kdeploy(&["eval", "lab.nix"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("etcd CA directory not absolute") && err.contains("lab.nix:"), "{err}");
    edit(&dir, "etcd.caDir = \"pki\";", "etcd.caDir = ./pki; etcd.certDir = ./pki;");
    let (code, _, err) = kdeploy(&["eval", "lab.nix"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("two sources of etcd certificates"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn renew_reads_a_users_ca_only_where_local_sources_may_be_read() {
    use kdeploy::store::{FileFetcher, Resolver, Store};
    let dir = project("renew-confined");
    // the user's CA outside the project and the system's directories
    let outside = tempfile::tempdir().unwrap();
    let pki = outside.path().join("pki");
    std::fs::create_dir(&pki).unwrap();
    openssl(&["genpkey", "-algorithm", "ed25519", "-out", "ca-key.pem"], &pki);
    openssl(
        &["req", "-x509", "-new", "-key", "ca-key.pem", "-days", "3650", "-subj", "/CN=site-ca", "-out", "ca.pem"],
        &pki,
    );
    edit(&dir, "settings = {", &format!("settings = {{\n    etcd.caDir = \"{}\";", pki.display()));
    let (code, json, err) = kdeploy(&["eval", "lab.nix", "--json"], &dir);
    assert_eq!(code, 0, "{err}");
    // made as switch makes them, with the CA's directory allowed (--allow-local)
    let resolver =
        Resolver::new(&dir, Store::new(dir.join(".kdeploy/store")), Box::new(FileFetcher)).allow_local([pki.clone()]);
    resolver.ensure_secrets(&parse_cluster(&json).unwrap()).unwrap();
    let before = snapshot(&SecretStore::default_dir(&dir));

    // without the same allowance, --renew does not read the CA key
    let (code, _, err) = kdeploy(&["certs", "lab.nix", "--renew", "--within", "4000"], &dir);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("{}/ca", pki.display())) && err.contains("outside the directories"), "{err}");
    assert!(!err.contains("renewed:"), "{err}");
    assert_eq!(snapshot(&SecretStore::default_dir(&dir)), before, "certificates renewed from an unallowed CA");

    let allow = pki.display().to_string();
    let (code, _, err) = kdeploy(&["certs", "lab.nix", "--renew", "--within", "4000", "--allow-local", &allow], &dir);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("renewed:").count(), 3 * 2 + 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
