//! `kdeploy import kubespray` on hostile inventories (they are shared and
//! downloaded: untrusted input). A variable name or a file name that tries
//! to end its comment line and write Nix code (a root hook, a
//! `builtins.trace` run during the import) only ever shows, escaped, in a
//! comment: the file evaluates to what the same inventory with a plain name
//! gives, `plan` lists no hook of its making, nothing is traced. A host
//! name that would name a file outside the inventory (`../`), and a
//! symlink out of it, are refused without the outside file's values being
//! shown.

use crate::support;
use std::path::Path;

use support::import::*;

/// A hook and a trace, written to end the comment line they are put in.
fn payload(newline: &str) -> String {
    format!(
        "{newline}    custom.hooks.pwn = builtins.trace \"INJECTED-TRACE\" {{ phase = \"preinstall\"; run = \"touch pwned\"; }}; #"
    )
}

/// A whole cluster after the file's last line, as a variable name can put it there.
fn cluster_payload(newline: &str) -> String {
    format!(
        "{newline}// builtins.trace \"INJECTED-TRACE\" (kd.cluster {{ name = \"x\"; nodes.cp1 = {{ address = \"10.20.0.11\"; roles = [ \"control-plane\" \"etcd\" ]; }}; settings.custom.hooks.pwn = {{ phase = \"preinstall\"; run = \"touch /tmp/pwned\"; }}; }}) #"
    )
}

/// The line ends Nix (or some editor or terminal) might honour.
const NEWLINES: &[&str] = &["\n", "\r\n", "\r", "\u{2028}", "\u{85}"];

/// `hostile` imports to exactly what `plain` imports to: nothing traced
/// during the import, the same evaluated cluster, no hook in the plan, and
/// the file holds no control character but its newlines.
fn assert_only_data(hostile: &Path, plain: &Path) {
    let h = import(hostile);
    let p = import(plain);
    let stderr = String::from_utf8_lossy(&h.run.stderr);
    assert!(!stderr.contains("INJECTED-TRACE") && !stderr.contains("trace:"), "code ran during the import:\n{stderr}");
    assert_eq!(h.value, p.value, "the hostile inventory changed the cluster:\n{}", h.nix);
    assert!(
        !h.nix.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{2028}')),
        "a raw control character or line separator in the file:\n{:?}",
        h.nix
    );
    for l in h.nix.lines().filter(|l| l.contains("INJECTED-TRACE")) {
        let code = l.split_once('#').map_or(l, |(code, _)| code);
        assert!(!code.contains("INJECTED-TRACE"), "the payload is outside a comment: {l}");
    }
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("c.nix"), &h.nix).unwrap();
    let plan = kdeploy(&["plan", "c.nix"], project.path());
    assert!(plan.status.success(), "{}", text(&plan));
    assert!(!String::from_utf8_lossy(&plan.stdout).contains("pwn"), "{}", text(&plan));
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_variable_name_cannot_write_code_into_the_cluster_file() {
    let (_p, plain) = sample_with(|inv| write(&inv.join("group_vars/all/flags.yml"), "kube_flag: 1\n"));
    for nl in NEWLINES {
        for key in [format!("kube_flag{}", cluster_payload(nl)), format!("kube_flag{}", payload(nl))] {
            let doc = serde_yaml_ng::to_string(&serde_json::json!({ key: 1 })).unwrap();
            let (_h, hostile) = sample_with(|inv| write(&inv.join("group_vars/all/flags.yml"), &doc));
            assert_only_data(&hostile, &plain);
        }
    }
    // a host line's inline variable, too
    let line = |k: &str| format!("[kube_node]\nworker9 ansible_host=10.20.0.29 '{k}'=1\n");
    let (_p, plain) = sample_with(|inv| write(&inv.join("inventory.ini"), &read_sample_ini(&line("kube_flag"))));
    let (_h, hostile) = sample_with(|inv| {
        write(&inv.join("inventory.ini"), &read_sample_ini(&line(&format!("kube_flag{}", payload("\r")))))
    });
    assert_only_data(&hostile, &plain);
}

/// The sample's inventory.ini with `more` appended.
fn read_sample_ini(more: &str) -> String {
    std::fs::read_to_string(sample().join("inventory.ini")).unwrap() + more
}

#[test]
fn a_file_name_cannot_write_code_into_the_cluster_file() {
    let vars = "kubelet_pod_pids_limit: 4096\n";
    let (_p, plain) = sample_with(|inv| write(&inv.join("group_vars/all/net.yml"), vars));
    for nl in NEWLINES {
        let name = format!("net.yml{}", payload(nl));
        let (_h, hostile) = sample_with(|inv| write(&inv.join("group_vars/all").join(&name), vars));
        assert_only_data(&hostile, &plain);
    }
}

/// An inventory whose directory has a file `secret.yml` next to it.
fn beside_a_secret(edit: impl FnOnce(&Path)) -> (tempfile::TempDir, std::path::PathBuf) {
    let (d, inv) = sample_with(edit);
    write(&d.path().join("secret.yml"), "kube_made_up_token: hunter2-outside\n");
    (d, inv)
}

/// The import refuses `inv` as unreadable (exit 2) with an error that
/// says `says`, and shows nothing of the file outside it.
fn assert_refused(inv: &Path, says: &str) {
    let project = tempfile::tempdir().unwrap();
    let out = kdeploy(&["import", "kubespray", inv.to_str().unwrap()], project.path());
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(!t.contains("hunter2-outside"), "a value from outside the inventory is shown:\n{t}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(says), "should say `{says}`:\n{t}");
}

#[test]
fn a_host_name_cannot_name_a_file_outside_the_inventory() {
    // INI: host_vars/../../secret is the file beside the inventory
    let ini = read_sample_ini("[kube_node]\n../../secret ansible_host=10.20.0.29\n");
    let (_d, inv) = beside_a_secret(|inv| write(&inv.join("inventory.ini"), &ini));
    assert_refused(&inv, "host name \"../../secret\"");
    // YAML inventory
    let yaml = "all:\n  hosts:\n    cp1: {ip: 10.20.0.11}\n    ../../secret: {ip: 10.20.0.29}\n  children:\n    kube_control_plane: {hosts: {cp1: }}\n    etcd: {hosts: {cp1: }}\n    kube_node: {hosts: {../../secret: }}\n";
    let (_d, inv) = beside_a_secret(|inv| {
        std::fs::remove_file(inv.join("inventory.ini")).unwrap();
        write(&inv.join("hosts.yaml"), yaml);
    });
    assert_refused(&inv, "host name \"../../secret\"");
    // a slash, a control character or a lone `..` cannot name a host either
    for bad in ["a/b", "..", "a\u{1b}b"] {
        let ini = read_sample_ini(&format!("[kube_node]\n{bad} ansible_host=10.20.0.29\n"));
        let (_d, inv) = sample_with(|inv| write(&inv.join("inventory.ini"), &ini));
        assert_refused(&inv, "host name");
    }
}

#[test]
fn a_symlink_out_of_the_inventory_is_refused() {
    use std::os::unix::fs::symlink;
    // a variables file, a host's variables directory, the inventory file
    type Make = fn(&Path);
    let cases: [(&str, Make); 3] = [
        ("group_vars/all/link.yml", |inv| symlink("../../../secret.yml", inv.join("group_vars/all/link.yml")).unwrap()),
        ("host_vars/cp1", |inv| {
            std::fs::create_dir_all(inv.join("host_vars")).unwrap();
            symlink("../..", inv.join("host_vars/cp1")).unwrap()
        }),
        ("inventory.ini", |inv| {
            std::fs::rename(inv.join("inventory.ini"), inv.join("../inventory.ini")).unwrap();
            symlink("../inventory.ini", inv.join("inventory.ini")).unwrap()
        }),
    ];
    for (what, make) in cases {
        let (_d, inv) = beside_a_secret(make);
        assert_refused(&inv, &format!("{what}: outside the inventory"));
    }
    // a symlink that stays inside is followed
    let (_d, inv) = beside_a_secret(|inv| {
        write(&inv.join("common.yml"), "kubelet_pod_pids_limit: 4096\n");
        symlink("../../common.yml", inv.join("group_vars/all/link.yml")).unwrap()
    });
    assert_eq!(import(&inv).value["nodes"]["cp1"]["settings"]["kubelet"]["podPidsLimit"], 4096);
}
