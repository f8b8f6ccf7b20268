//! What kdeploy refuses, each refusal naming its place: the engine's checks
//! of any closure (`src/closure/validate.rs`), tried on changed copies of the
//! lab's closure and through the binary on a cluster value that bypasses the
//! stdlib; and `local` sources outside the directories they may be read from
//! (`--allow-local`, `KDEPLOY_ALLOW_LOCAL`). The stdlib's option types have
//! their cases in `tests/stdlib/fail-*.nix` and `tests/cli/shell_payloads.rs`.

use crate::support;
use kdeploy::closure::{parse_cluster, validate};
use serde_json::{json, Value};
use support::closures::{kdeploy, repo};

/// The etcd-only lab's value (its first phases hold the files these tests change).
fn lab() -> Value {
    let (code, out, err) = kdeploy(&["eval", "tests/clusters/lab-etcd.nix", "--json"], &repo());
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The phase `i` of the lab's control plane.
fn phase(v: &mut Value, i: usize) -> &mut Value {
    &mut v["nodes"]["k8s-master"]["phases"][i]
}

fn refusal(v: &Value) -> String {
    let c = parse_cluster(&v.to_string()).unwrap_or_else(|e| panic!("does not parse: {e}"));
    validate(&c).expect_err("should be refused").to_string()
}

fn accepted(v: &Value) {
    let c = parse_cluster(&v.to_string()).unwrap();
    if let Err(e) = validate(&c) {
        panic!("refused: {e}");
    }
}

/// Give the first files of `files` these paths.
fn set_paths(files: &mut Value, paths: &[&str]) {
    for (i, p) in paths.iter().enumerate() {
        files[i]["path"] = (*p).into();
    }
}

fn assert_all(e: &str, wants: &[&str]) {
    for want in wants {
        assert!(e.contains(want), "missing {want:?} in:\n{e}");
    }
}

#[test]
fn the_lab_is_accepted() {
    accepted(&lab());
}

#[test]
fn managed_paths_must_be_absolute_normalised_and_printable() {
    let mut v = lab();
    set_paths(
        &mut phase(&mut v, 0)["files"],
        &["/etc/../etc/shadow", "/etc/./x", "/etc//x", "/etc/x/", "/etc/a\tb", "/etc/a\nb", "etc/x"],
    );
    phase(&mut v, 3)["directories"][0]["path"] = "/var/lib/etcd\u{7f}".into();
    assert_all(
        &refusal(&v),
        &[
            "node k8s-master, phase preinstall, file /etc/../etc/shadow: path must be normalised",
            "file /etc/./x: path must be normalised",
            "file /etc//x: path must be normalised",
            "file /etc/x/: path must be normalised",
            "file \"/etc/a\\tb\": path contains a control character",
            "file \"/etc/a\\nb\": path contains a control character",
            "file etc/x: path must be absolute",
            "node k8s-master, phase etcd, directory \"/var/lib/etcd\\u{7f}\": path contains a control character",
        ],
    );
}

#[test]
fn kdeploys_state_and_the_kernels_file_systems_are_never_managed() {
    let mut v = lab();
    set_paths(
        &mut phase(&mut v, 0)["files"],
        &["/var/lib/kdeploy/phases/etcd", "/var/lib/kdeploy", "/sys/kernel/x", "/dev/sda"],
    );
    phase(&mut v, 3)["directories"][0]["path"] = "/proc/sys/net".into();
    assert_all(
        &refusal(&v),
        &[
            "phase preinstall, file /var/lib/kdeploy/phases/etcd: path lies in /var/lib/kdeploy (kdeploy's own state directory)",
            "file /var/lib/kdeploy: path lies in /var/lib/kdeploy",
            "file /sys/kernel/x: path lies in /sys (a kernel file system)",
            "file /dev/sda: path lies in /dev",
            "phase etcd, directory /proc/sys/net: path lies in /proc",
        ],
    );
}

#[test]
fn system_directories_are_never_files_and_only_declared_as_they_are() {
    let mut v = lab();
    // etcd.dataDir = "/etc", had the stdlib let it through: chmod 0700 /etc.
    phase(&mut v, 3)["directories"][0]["path"] = "/etc".into();
    phase(&mut v, 0)["files"][0]["path"] = "/usr".into();
    phase(&mut v, 0)["directories"][0]["mode"] = "0700".into(); // /usr/local/bin
    assert_all(
        &refusal(&v),
        &[
            "phase etcd, directory /etc: a system directory; kdeploy declares it only as it is (mode 0755, root:root), not 0700 root:root",
            "phase preinstall, file /usr: a system directory, never a file",
            "phase preinstall, directory /usr/local/bin: a system directory",
        ],
    );
    // As it is, it is only "make sure it exists" (paths.binDir = /usr/local/bin does that).
    let mut v = lab();
    phase(&mut v, 0)["directories"].as_array_mut().unwrap().push(json!({
        "path": "/tmp", "mode": "1777", "owner": "root", "group": "root"
    }));
    accepted(&v);
}

#[test]
fn modes_are_three_or_four_octal_digits_and_owners_names() {
    let mut v = lab();
    let files = &mut phase(&mut v, 0)["files"];
    for (i, m) in ["00644", "u+x", "64", "0o644", "0648"].into_iter().enumerate() {
        files[i]["mode"] = m.into();
    }
    files[5]["mode"] = "755".into(); // accepted: what chmod takes
    files[6]["owner"] = "-R".into();
    files[7]["group"] = "wheel:x".into();
    let e = refusal(&v);
    for m in ["00644", "u+x", "64", "0o644", "0648"] {
        assert!(e.contains(&format!("mode \"{m}\" is not 3 or 4 octal digits")), "{m}: {e}");
    }
    assert!(!e.contains("mode \"755\""), "{e}");
    assert_all(&e, &["owner \"-R\" / group \"root\" must be user/group names", "group \"wheel:x\""]);
}

#[test]
fn unit_names_are_what_systemd_accepts() {
    let mut v = lab();
    let long = format!("{}.service", "a".repeat(248));
    for (i, n) in ["etcd", "a b.service", "@x.service", long.as_str()].into_iter().enumerate() {
        phase(&mut v, i + 1)["units"] = json!([{
            "name": n, "text": "[Service]\n", "onChange": "restart", "enable": true, "restartTriggers": []
        }]);
    }
    phase(&mut v, 5)["units"] = json!([{
        "name": "getty@.service", "text": "[Service]\n", "onChange": "restart", "enable": true, "restartTriggers": []
    }]);
    assert_all(
        &refusal(&v),
        &[
            "phase container-runtime, unit etcd: not a unit file name systemd accepts: it must end in one of .service",
            "phase download, unit a b.service: not a unit file name systemd accepts: character ' ' is not allowed",
            "phase etcd, unit @x.service: not a unit file name systemd accepts: '@' may not come first",
            "not a unit file name systemd accepts: longer than 255 bytes",
            "phase control-plane, unit getty@.service: a template unit cannot be started, enabled or restarted",
        ],
    );
    let mut v = lab();
    phase(&mut v, 5)["units"] = json!([
        { "name": "getty@.service", "text": "[Service]\n", "onChange": "none", "enable": false, "restartTriggers": [] },
        { "name": "getty@tty1.service", "text": "[Service]\n", "onChange": "restart", "enable": true, "restartTriggers": [] },
        { "name": &long[1..], "text": "[Service]\n", "onChange": "restart", "enable": true, "restartTriggers": [] }
    ]);
    accepted(&v);
}

#[test]
fn phase_hook_and_check_names_are_plain_and_scripts_hold_no_nul() {
    let mut v = lab();
    v["phaseOrder"][8] = "../resolvconf".into();
    for n in v["nodes"].as_object_mut().unwrap().values_mut() {
        n["phases"][8]["name"] = "../resolvconf".into();
    }
    phase(&mut v, 0)["hooks"][0]["name"] = "swap\noff".into();
    phase(&mut v, 0)["hooks"][1]["run"] = "true\u{0}".into();
    phase(&mut v, 3)["checks"][0]["run"] = "x\u{0}y".into();
    phase(&mut v, 3)["units"][0]["text"] = "[Unit]\u{0}".into();
    assert_all(
        &refusal(&v),
        &[
            "cluster: phase name \"../resolvconf\" is not a plain name",
            "node k8s-master, phase preinstall: hook name \"swap\\noff\" empty, longer than 255 bytes, not printable",
            "phase preinstall: hook mask-swap-target: its script holds a NUL byte",
            "phase etcd: check etcd-endpoint-health: its script holds a NUL byte",
            "phase etcd, unit etcd.service: the unit text holds a NUL byte",
        ],
    );
}

#[test]
fn deployer_files_are_absolute_and_normalised() {
    let mut v = lab();
    phase(&mut v, 2)["files"][0]["source"] = json!({ "local": "/usr/bin/../../etc/shadow" });
    phase(&mut v, 2)["files"][1]["source"] = json!({ "local": "usr/bin/etcdctl" });
    assert_all(
        &refusal(&v),
        &[
            "phase download, file /usr/local/bin/etcd: deployer file /usr/bin/../../etc/shadow: must be normalised",
            "phase download, file /usr/local/bin/etcdctl: deployer file usr/bin/etcdctl: must be absolute",
        ],
    );
}

/// A project with `c.nix` evaluating to `value` as it is (no stdlib).
fn raw_project(value: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.json"), value.to_string()).unwrap();
    std::fs::write(dir.path().join("c.nix"), "builtins.fromJSON (builtins.readFile ./c.json)\n").unwrap();
    dir
}

#[test]
fn the_binary_refuses_a_cluster_value_that_bypasses_the_stdlib() {
    let mut v = lab();
    phase(&mut v, 3)["directories"][0]["path"] = "/var/lib/kdeploy/generations".into();
    phase(&mut v, 3)["files"][0]["mode"] = "00644".into();
    let dir = raw_project(&v);
    for cmd in ["eval", "plan"] {
        let (code, _, err) = kdeploy(&[cmd, "c.nix"], dir.path());
        assert_eq!(code, 1, "{cmd}: {err}");
        assert_all(
            &err,
            &[
                "invalid closure",
                "node k8s-master, phase etcd, directory /var/lib/kdeploy/generations: path lies in /var/lib/kdeploy",
                "node k8s-master, phase etcd, file /etc/etcd.env: mode \"00644\" is not 3 or 4 octal digits",
            ],
        );
    }
}

/// A one-node project whose etcd binary is the deployer file `local`
/// (only etcd is taken from the deployer; the rest are artifacts, which
/// need no download to hash).
fn local_project(local: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.nix"),
        format!(
            r#"let kd = import <kdeploy>; in
kd.cluster {{
  name = "t";
  nodes.a = {{ address = "10.0.0.1"; roles = [ "control-plane" "etcd" ]; }};
  settings.download.local.etcd = "{local}";
}}
"#
        ),
    )
    .unwrap();
    dir
}

fn eval_env(dir: &std::path::Path, args: &[&str], env: Option<&str>) -> (i32, String) {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"));
    c.args(["eval", "c.nix"])
        .args(args)
        .current_dir(dir)
        .env_remove("KDEPLOY_STDLIB")
        .env_remove("KDEPLOY_ALLOW_LOCAL");
    if let Some(e) = env {
        c.env("KDEPLOY_ALLOW_LOCAL", e);
    }
    let out = c.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn local_sources_outside_the_allowed_directories_are_refused() {
    // /etc/passwd stands for /etc/shadow: readable here, never to be read.
    let dir = local_project("/etc/passwd");
    let (code, err) = eval_env(dir.path(), &[], None);
    assert_eq!(code, 1, "{err}");
    let root = dir.path().canonicalize().unwrap();
    assert_all(
        &err,
        &[
            "node a, phase download, file /usr/local/bin/etcd: deployer file /etc/passwd: outside the directories local sources may be read from (",
            "/usr/bin, /usr/sbin, /usr/local/bin",
            "/opt",
            "allow its directory with --allow-local DIR or KDEPLOY_ALLOW_LOCAL=DIR[:DIR...]",
        ],
    );
    assert!(err.contains(&format!("({}", dir.path().display())) || err.contains(&root.display().to_string()), "{err}");
    assert!(!err.contains("/etc,") && !err.contains("/home") && !err.contains("/root"), "{err}");
    // The user, not the cluster file, allows more: a flag or the environment.
    assert_eq!(eval_env(dir.path(), &["--allow-local", "/etc"], None).0, 0);
    assert_eq!(eval_env(dir.path(), &[], Some("/nonexistent:/etc")).0, 0);
    assert_eq!(eval_env(dir.path(), &["--allow-local", "/etc/ssl"], None).0, 1);
}

#[test]
fn local_sources_are_checked_after_symlinks_are_resolved() {
    let dir = local_project("LINK");
    let link = dir.path().join("etcd-link");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let text = std::fs::read_to_string(dir.path().join("c.nix")).unwrap();
    std::fs::write(dir.path().join("c.nix"), text.replace("LINK", &link.to_string_lossy())).unwrap();
    let (code, err) = eval_env(dir.path(), &[], None);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("deployer file {} (resolves to /etc/passwd): outside", link.display())), "{err}");

    // A file of the project itself is allowed; a directory is not a file.
    std::fs::remove_file(&link).unwrap();
    std::fs::write(&link, "a fake etcd\n").unwrap();
    let (code, err) = eval_env(dir.path(), &[], None);
    assert_eq!(code, 0, "{err}");
    let dir = local_project("/usr/lib");
    let (code, err) = eval_env(dir.path(), &[], None);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("deployer file /usr/lib: not a regular file"), "{err}");
}

#[test]
fn a_secret_named_by_absolute_path_is_a_deployer_file_too() {
    // A "user's own CA" at /etc/passwd would send that file to every node.
    let mut v = lab();
    let ca = json!({ "kind": "ca", "cert": "/etc/passwd", "key": "/etc/passwd", "commonName": "x" });
    phase(&mut v, 3)["files"][1]["source"] = json!({ "secret": { "name": "/etc/passwd", "make": ca } });
    let dir = raw_project(&v);
    let (code, _, err) = kdeploy(&["eval", "c.nix"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("phase etcd, file /etc/ssl/etcd/ssl/ca.pem")
            && err.contains("deployer file /etc/passwd: outside the directories local sources may be read from"),
        "{err}"
    );
}
