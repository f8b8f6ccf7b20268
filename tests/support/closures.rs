//! Shared helpers of the closure tests: evaluate a cluster file into hashed
//! closures on a thread with a large stack (as the binary does), and
//! prepare copies of the example clusters whose project and deployer files
//! have fixed contents, so their hashes are the same on every machine.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kdeploy::closure::{self, Closures};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy_lang::{Arg, Session};

pub use super::repo;

/// Evaluate `file` (project root = its directory) and build its closures.
pub fn closures_of(file: &Path, args: &[(&str, Arg)]) -> Result<Closures, String> {
    let file = file.to_path_buf();
    let args: Vec<(String, Arg)> = args.iter().map(|(n, a)| (n.to_string(), a.clone())).collect();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let root = file.parent().unwrap().to_path_buf();
            let mut s = Session::new(vec![root.clone()], kdeploy::stdlib::stdlib(None));
            let v = s.eval_file(&file, &args).map_err(|e| s.render_error(&e, false))?;
            let json = s.to_json(&v).map_err(|e| s.render_error(&e, false))?;
            let store = Store::new(root.join(".kdeploy/store"));
            closure::load(&json, &Resolver::new(root, store, Box::new(FileFetcher))).map_err(|e| e.to_string())
        })
        .unwrap()
        .join()
        .unwrap()
}

/// `node phase hash` lines, in node and phase order.
pub fn summary(c: &Closures) -> String {
    let mut out = String::new();
    for (name, node) in &c.cluster.nodes {
        let nc = &c.nodes[name];
        out.push_str(&format!("{name} {}\n", nc.hash));
        for (p, pc) in node.phases.iter().zip(&nc.phases) {
            out.push_str(&format!("{name} {} {}\n", p.name, pc.hash));
        }
    }
    out
}

/// A copy of `clusters/<name>.nix` in a fresh directory, with fixed fake
/// kubeadm secrets and every deployer binary (`/usr/bin/…`, and the lab's
/// built ones below /var/cache/kdeploy-lab/bin) replaced by a fixed fake file
/// in the directory. Returns (tempdir guard, cluster file).
pub fn example_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(repo().join("clusters").join(format!("{name}.nix"))).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for prefix in ["/usr/bin/", "/usr/sbin/"] {
        while let Some(i) = text.find(&format!("\"{prefix}")) {
            let start = i + 1;
            let end = start + text[start..].find('"').unwrap();
            let tool = text[start + prefix.len()..end].to_string();
            std::fs::write(bin.join(&tool), format!("fake {tool} binary\n")).unwrap();
            text.replace_range(start..end, &bin.join(&tool).to_string_lossy());
        }
    }
    fake_lab_binaries(&mut text, dir.path());
    let secrets = dir.path().join("secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("kubeadm-token"), "abcdef.0123456789abcdef\n").unwrap();
    std::fs::write(
        secrets.join("kubeadm-certificate-key"),
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    let file = dir.path().join(format!("{name}.nix"));
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

/// Run the kdeploy binary in `cwd` with the built-in stdlib: (exit code,
/// stdout, stderr).
pub fn kdeploy(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .current_dir(cwd)
        .env_remove("KDEPLOY_STDLIB")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The lab cluster names the binaries lab/build-k8s.sh built through
/// `bin = "/var/cache/kdeploy-lab/bin"` (`"${bin}/etcd-3.5.33/etcd"`,
/// `"${k8s}/kubelet"` with `k8s = "${bin}/kubernetes-…"`, the directory
/// `"${bin}/cni-…"` of the CNI plugins stdlib/versions.nix lists): point `bin`
/// at `dir/labbin` and put a fixed fake file at each of those paths.
fn fake_lab_binaries(text: &mut String, dir: &Path) {
    const REAL: &str = "\"/var/cache/kdeploy-lab/bin\"";
    if !text.contains(REAL) {
        return;
    }
    let bin = dir.join("labbin");
    *text = text.replace(REAL, &format!("\"{}\"", bin.display()));
    let k8s = quoted_after(text, "k8s = \"${bin}/").unwrap_or_default();
    let versions = std::fs::read_to_string(repo().join("stdlib/versions.nix")).unwrap();
    let plugins_at = versions.find("plugins = [").unwrap();
    let plugins: Vec<String> = versions[plugins_at..versions[plugins_at..].find("];").unwrap() + plugins_at]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    let mut files = Vec::new();
    for (prefix, base) in [("\"${bin}/", String::new()), ("\"${k8s}/", format!("{k8s}/"))] {
        let mut rest = text.as_str();
        while let Some(i) = rest.find(prefix) {
            let tail = &rest[i + prefix.len()..];
            let path = format!("{base}{}", &tail[..tail.find('"').unwrap()]);
            if path.rsplit('/').next().is_some_and(|last| last.starts_with("cni-")) {
                files.extend(plugins.iter().map(|p| format!("{path}/{p}")));
            } else if !path.starts_with("kubernetes-") || path.contains('/') {
                files.push(path);
            }
            rest = tail;
        }
    }
    for f in files {
        let p = bin.join(&f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("fake {f}\n")).unwrap();
    }
}

/// The text between `start` and the next double quote.
fn quoted_after(text: &str, start: &str) -> Option<String> {
    let i = text.find(start)? + start.len();
    Some(text[i..i + text[i..].find('"')?].to_string())
}

/// A closure value of one node `a` (10.0.0.1) with one activated phase
/// `p` holding `files` (JSON file records): a cluster value that bypasses
/// the stdlib, for the engine's own checks.
pub fn one_phase(files: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "name": "t", "phaseOrder": ["p"], "schemaVersion": closure::SCHEMA_VERSION,
        "settings": {}, "warnings": [],
        "nodes": {"a": {
            "address": "10.0.0.1", "roles": [], "settings": {},
            "ssh": {"jumpHost": null, "key": null, "port": 22, "user": "root"},
            "phases": [{"activate": true, "checks": [], "directories": [], "files": files, "hooks": [],
                        "name": "p", "units": []}],
        }},
    })
}

/// Make `dir`/c.nix evaluate to `value` as it is (no stdlib).
pub fn write_raw_project(dir: &Path, value: &serde_json::Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("c.json"), value.to_string()).unwrap();
    std::fs::write(dir.join("c.nix"), "builtins.fromJSON (builtins.readFile ./c.json)\n").unwrap();
}
