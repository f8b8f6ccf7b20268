//! Every example in clusters/ evaluates as it is, from a fresh clone: the
//! directory is copied without its `.kdeploy/` (kdeploy makes the secrets)
//! and `kdeploy eval` and `kdeploy eval --json` (which forces every value)
//! succeed on each `.nix` file in it, found by listing the directory, so a
//! new example is covered without naming it here. A fragment to import
//! (clusters/time-sync.nix) evaluates with its defaults. clusters/lab.nix
//! names the lab's binaries, which lab/build-k8s.sh builds (tests/run-all.sh
//! does before the tests): its listing hashes them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// clusters/ as a fresh clone has it (hidden entries such as `.kdeploy/` left out).
fn fresh_copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            fresh_copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn every_example_evaluates_as_it_is() {
    let clone = tempfile::tempdir().unwrap();
    fresh_copy(&repo().join("clusters"), &clone.path().join("clusters"));
    let mut examples: Vec<String> = std::fs::read_dir(repo().join("clusters"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".nix"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 5 && examples.contains(&"time-sync.nix".to_string()), "{examples:?}");
    for name in &examples {
        let file = format!("clusters/{name}");
        for args in [&["eval", file.as_str()][..], &["eval", file.as_str(), "--json"]] {
            let out = Command::new(env!("CARGO_BIN_EXE_kdeploy"))
                .args(args)
                .current_dir(clone.path())
                .env_remove("KDEPLOY_STDLIB")
                // clusters/lab.nix names the binaries lab/build-k8s.sh built (tests/run-all.sh
                // builds them first): the listing hashes them, so they must be readable
                .env("KDEPLOY_ALLOW_LOCAL", "/var/cache/kdeploy-lab/bin")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "`kdeploy {}` fails in a fresh clone:\n{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
