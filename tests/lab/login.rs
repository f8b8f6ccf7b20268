//! Logging in as an OpenSSH user does, on the real lab: root login is
//! refused by every node's sshd, a `deploy` user has passwordless sudo, and
//! the only SSH settings are in `~/.ssh/config` (User, IdentityFile,
//! UserKnownHostsFile for the lab's addresses) — no flags, no agent. The
//! lab cluster converges through sudo, a re-run is a no-op, and a node
//! where sudo asks for a password is refused at connect time with advice,
//! before anything changes; an encrypted key's passphrase is asked once on
//! a terminal for all nodes. Root login is restored whatever happens.

use crate::support;
use std::path::Path;
use std::process::{Command, Output};

use support::node::lab_check::assert_deployed;
use support::node::lab_project::{snapshot, ssh, text, Project};
use support::node::{lab_has, lab_lock, lab_secrets, repo};

const USER: &str = "deploy";

/// Every lab node gets the `deploy` sudoer and refuses root logins; on
/// drop, root logins come back (the other lab tests log in as root).
struct RootLoginOff;

impl RootLoginOff {
    fn new() -> RootLoginOff {
        for i in 1..=3 {
            let setup = format!(
                "id {USER} >/dev/null 2>&1 || useradd -m -s /bin/sh {USER}; \
                 install -d -o {USER} -m 700 /home/{USER}/.ssh; \
                 install -o {USER} -m 600 /root/.ssh/authorized_keys /home/{USER}/.ssh/authorized_keys; \
                 echo '{USER} ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/{USER}; chmod 440 /etc/sudoers.d/{USER}; \
                 echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/00-no-root.conf; systemctl reload ssh && echo ready"
            );
            assert!(ssh(i, &setup).contains("ready"), "node {i} setup");
        }
        RootLoginOff
    }
}

impl Drop for RootLoginOff {
    fn drop(&mut self) {
        for i in 1..=3 {
            ssh(i, "rm -f /etc/ssh/sshd_config.d/00-no-root.conf; systemctl reload ssh");
        }
    }
}

/// A login with OpenSSH's client: what a user would try first.
fn openssh_login(user: &str, i: u32, cmd: &str) -> Output {
    let lab = repo().join(".lab");
    Command::new("ssh")
        .args(["-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-i")
        .arg(lab.join("id_ed25519"))
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", lab.join("known_hosts").display()))
        .arg(format!("{user}@10.77.0.1{i}"))
        .arg(cmd)
        .output()
        .unwrap()
}

/// A home whose ~/.ssh/config is all kdeploy is told about SSH.
fn home_with_ssh_config() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let lab = repo().join(".lab");
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let config = format!(
        "Host 10.77.0.*\n  User {USER}\n  IdentityFile {}\n  UserKnownHostsFile {}\n\nHost *\n  User nobody-should-use-this\n",
        lab.join("id_ed25519").display(),
        lab.join("known_hosts").display()
    );
    std::fs::write(home.path().join(".ssh/config"), config).unwrap();
    home
}

/// `kdeploy switch CLUSTER` with no SSH flag and no agent.
fn switch(cluster: &Path, home: &Path) -> (Output, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .arg("switch")
        .arg(cluster)
        .args(["--output", "json", "--connect-timeout", "5"])
        .env("HOME", home)
        .env_remove("SSH_AUTH_SOCK")
        .env("KDEPLOY_SECRETS", lab_secrets())
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, json)
}

/// `kdeploy switch CLUSTER` on a pseudo-terminal (util-linux `script`),
/// typing `input` once the passphrase prompt shows (typed earlier, the
/// terminal would echo it before kdeploy turns echo off). Returns the
/// exit status and everything the terminal showed.
fn on_a_terminal(cluster: &Path, home: &Path, input: &str) -> (std::process::ExitStatus, String) {
    use std::io::{Read, Write};
    let cmd = format!("{} switch {} --connect-timeout 5", env!("CARGO_BIN_EXE_kdeploy"), cluster.display());
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("HOME", home)
        .env_remove("SSH_AUTH_SOCK")
        .env("KDEPLOY_SECRETS", lab_secrets())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stdout.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&seen).contains("Enter passphrase for key") {
            if let Some(mut i) = stdin.take() {
                // as a person would: rpassword prints the prompt before it turns echo
                // off, so input typed within that instant would be echoed by the tty
                std::thread::sleep(std::time::Duration::from_millis(300));
                i.write_all(input.as_bytes()).unwrap();
                // kept open: an EOF on script's stdin would reach kdeploy as ^D
                std::mem::forget(i);
            }
        }
    }
    (child.wait().unwrap(), String::from_utf8_lossy(&seen).into_owned())
}

fn statuses(j: &serde_json::Value) -> Vec<String> {
    j["nodes"]
        .as_object()
        .map_or(vec![], |m| m.values().map(|n| n["status"].as_str().unwrap_or("").to_string()).collect())
}

#[test]
fn sudo_user_from_ssh_config_converges_with_root_login_refused() {
    let _g = lab_lock();
    if !lab_has(3) {
        return;
    }
    let _root_off = RootLoginOff::new();
    assert!(!openssh_login("root", 1, "true").status.success(), "root login must be refused for this test");
    assert_eq!(String::from_utf8_lossy(&openssh_login(USER, 1, "sudo -n id -u").stdout).trim(), "0");

    let project = Project::new();
    let home = home_with_ssh_config();

    // converge through sudo; the nodes end as `kdeploy eval` says
    let (out, j) = switch(&project.base(), home.path());
    assert!(out.status.success(), "switch as {USER} via ~/.ssh/config:\n{}", text(&out));
    assert!(statuses(&j).iter().all(|s| s == "changed" || s == "unchanged"), "{j}");
    assert_deployed(&project.base());
    for i in 1..=3 {
        // what kdeploy wrote is root's, not the login user's
        let owners = ssh(i, "stat -c %U /var/lib/kdeploy /var/lib/kdeploy/current /var/lib/kdeploy/store");
        assert_eq!(owners.split_whitespace().collect::<Vec<_>>(), ["root"; 3], "node {i}");
        assert_eq!(ssh(i, "systemctl is-active containerd etcd").split_whitespace().collect::<Vec<_>>(), ["active"; 2]);
    }
    // and the logins really were the deploy user's
    let log = ssh(1, "journalctl -u ssh --no-pager -o cat | grep -c 'Accepted publickey for deploy'");
    assert!(log.trim().parse::<u32>().unwrap_or(0) >= 2, "sshd saw no login as {USER}: {log}");

    // re-run: a no-op
    let (out, j) = switch(&project.base(), home.path());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(statuses(&j), ["unchanged"; 3], "{j}");

    // an encrypted key: its passphrase is asked once, on the terminal, for all nodes
    let enc_home = tempfile::tempdir().unwrap();
    let enc = enc_home.path().join("enc_key");
    let made =
        Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "s3cret", "-C", "", "-f"]).arg(&enc).status();
    assert!(made.unwrap().success());
    let public = std::fs::read_to_string(enc.with_extension("pub")).unwrap();
    for i in 1..=3 {
        ssh(i, &format!("echo '{}' >> /home/{USER}/.ssh/authorized_keys", public.trim()));
    }
    std::fs::create_dir_all(enc_home.path().join(".ssh")).unwrap();
    let config = std::fs::read_to_string(home.path().join(".ssh/config"))
        .unwrap()
        .replace(&repo().join(".lab/id_ed25519").display().to_string(), &enc.display().to_string());
    std::fs::write(enc_home.path().join(".ssh/config"), config).unwrap();
    let (status, t) = on_a_terminal(&project.base(), enc_home.path(), "s3cret\n");
    assert!(status.success(), "{t}");
    assert_eq!(t.matches("Enter passphrase for key").count(), 1, "asked once for three nodes:\n{t}");
    assert!(!t.contains("s3cret"), "the passphrase was echoed:\n{t}");

    // sudo that wants a password: refused at connect, nothing changes
    let before = snapshot();
    ssh(2, &format!("echo '{USER} ALL=(ALL) ALL' > /etc/sudoers.d/{USER}"));
    let changed = project.variant("changed", "containerd.maxContainerLogLineSize = 32768;");
    let (out, _) = switch(&changed, home.path());
    ssh(2, &format!("echo '{USER} ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/{USER}"));
    let err = text(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("does not make deploy root") && err.contains("NOPASSWD"), "{err}");
    assert_eq!(snapshot(), before, "a refused run changed a node");
}
