//! Shared helpers of the closure tests: evaluate a cluster file into hashed
//! closures on a thread with a large stack (as the binary does), and
//! prepare copies of the example clusters whose project and deployer files
//! have fixed contents, so their hashes are the same on every machine.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kdeploy::closure::{self, Closures};
use kdeploy::store::{FileFetcher, Resolver, Store};
use kdeploy_lang::{Arg, Session};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

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
            closure::load(&json, &Resolver::new(root, store, Box::new(FileFetcher))).map_err(|e| e.0)
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
/// kubeadm secrets and every deployer binary (`/usr/bin/…`) replaced by a
/// fixed fake file in the directory. Returns (tempdir guard, cluster file).
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
