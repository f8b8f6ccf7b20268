//! Issue 9 against the real lab: etcd with mutual TLS from the PKI kdeploy
//! made forms and is healthy (with only `/etc/etcd.env`); a plain-HTTP
//! client and a TLS client without a certificate are refused; no secret
//! byte is readable by user `nobody` anywhere on a node; eval output holds
//! no key material; a re-run is a no-op. Takes the lab lock and ends with
//! the lab check, leaving the lab on `tests/clusters/lab-etcd.nix`.

use crate::support;
use std::process::{Command, Output};

use support::node::lab_check::assert_deployed;
use support::node::{lab_lock, lab_secrets, lab_up, repo};

fn kdeploy(args: &[&str]) -> Output {
    let lab = repo().join(".lab");
    Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .args(if args[0] == "switch" {
            vec![
                "--ssh-key".to_string(),
                lab.join("id_ed25519").display().to_string(),
                "--known-hosts".to_string(),
                lab.join("known_hosts").display().to_string(),
                "--output".into(),
                "json".into(),
            ]
        } else {
            vec![]
        })
        .env_remove("KDEPLOY_STDLIB")
        // the lab's one secret store (its etcd CA), whichever project the file is in
        .env("KDEPLOY_SECRETS", lab_secrets())
        .output()
        .unwrap()
}

fn ssh(i: u32, cmd: &str) -> (bool, String) {
    let out = Command::new(repo().join("lab/lab.sh")).args(["ssh", &i.to_string(), cmd]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// The key material of the lab's secret store: every private key and token,
/// as the lines a leak would show (PEM body lines, whole tokens).
fn secret_lines() -> Vec<String> {
    let dir = repo().join("clusters/.kdeploy/secrets/lab");
    let mut out = Vec::new();
    let mut todo = vec![dir];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                todo.push(p);
            } else if name.ends_with("-key.pem") || name == "token" || name == "certificate-key" {
                let text = std::fs::read_to_string(&p).unwrap();
                out.extend(text.lines().filter(|l| !l.starts_with("-----") && l.len() >= 16).map(str::to_string));
            }
        }
    }
    assert!(!out.is_empty(), "the secret store holds no key material");
    out
}

#[test]
fn tls_etcd_from_kdeploys_pki_and_no_secret_readable_by_others() {
    let _g = lab_lock();
    if !lab_up() {
        return;
    }
    let lab_nix = repo().join("tests/clusters/lab-etcd.nix");
    let lab = lab_nix.to_str().unwrap();
    let out = kdeploy(&["switch", lab]);
    if !out.status.success() {
        // A lab that ran plain-HTTP etcd before keeps http peer URLs in its data:
        // start the members afresh on TLS (the migration is not automated).
        for i in 1..=3 {
            ssh(i, "systemctl stop etcd; rm -rf /var/lib/etcd/member");
        }
        let out = kdeploy(&["switch", lab]);
        assert!(out.status.success(), "switch failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }

    // TLS etcd is healthy, using nothing but /etc/etcd.env.
    for i in 1..=3 {
        let (ok, text) = ssh(i, "set -a; . /etc/etcd.env; etcdctl endpoint health --cluster");
        assert!(ok && text.matches("is healthy").count() == 3, "node {i}: {text}");
    }
    // Plain HTTP, and TLS without a client certificate, are refused.
    let (ok, text) =
        ssh(2, "etcdctl --dial-timeout=2s --command-timeout=3s --endpoints=http://10.77.0.11:2379 endpoint health");
    assert!(!ok, "plain HTTP answered: {text}");
    let (ok, text) = ssh(
        2,
        "etcdctl --dial-timeout=2s --command-timeout=3s --endpoints=https://10.77.0.11:2379 \
         --cacert=/etc/ssl/etcd/ssl/ca.pem endpoint health",
    );
    assert!(!ok, "TLS without a client certificate answered: {text}");

    // No secret byte readable by `nobody`: every file nobody can read on the
    // node's disk and /run (not /proc, /sys, /dev) is searched for every line
    // of key material; the state directory's private parts are closed to it.
    let secrets = secret_lines();
    let patterns = secrets.join("\n");
    for i in 1..=3 {
        let (_, text) = ssh(
            i,
            &format!(
                "cat > /tmp/kd-patterns <<'EOF'\n{patterns}\nEOF\n\
                 chmod 0644 /tmp/kd-patterns; \
                 su -s /bin/sh nobody -c 'grep -rIlF -f /tmp/kd-patterns / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null | grep -vx /tmp/kd-patterns'; \
                 rm -f /tmp/kd-patterns; \
                 su -s /bin/sh nobody -c 'ls /var/lib/kdeploy /var/lib/kdeploy/store /var/lib/kdeploy/secrets /var/lib/kdeploy/objects 2>&1'; \
                 stat -c '%a %n' /var/lib/kdeploy"
            ),
        );
        let mut lines = text.lines();
        let readable: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("ls:")).collect();
        assert!(readable.is_empty(), "node {i}: readable by nobody: {readable:?}\n{text}");
        assert_eq!(text.matches("Permission denied").count(), 4, "node {i}: {text}");
        assert!(text.trim_end().ends_with("711 /var/lib/kdeploy"), "node {i}: {text}");
    }

    // Evaluation output never holds key material.
    for args in [
        vec!["eval", lab],
        vec!["eval", lab, "--json"],
        vec!["eval", lab, "--closures"],
        vec!["eval", lab, "--node", "k8s-master", "--file", "/etc/ssl/etcd/ssl/member-k8s-master-key.pem"],
        vec!["plan", lab],
    ] {
        let out = kdeploy(&args);
        let all = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(!secrets.iter().any(|s| all.contains(s.as_str())), "{args:?} printed key material");
    }

    // A re-run changes nothing (secrets are not re-made).
    let out = kdeploy(&["switch", lab]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (n, v) in j["nodes"].as_object().unwrap() {
        assert_eq!(v["status"], "unchanged", "{n}: {j}");
    }
    assert_deployed(&lab_nix);
}
