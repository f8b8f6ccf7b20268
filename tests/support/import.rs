//! Shared helpers of the import tests: run the `kdeploy` binary, import an
//! inventory into a fresh project and evaluate the result, and make copies
//! of the inventory in Kubespray's sample layout (tests/import/kubespray-sample)
//! to change.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub use super::repo;

pub fn kdeploy(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdeploy"))
        .args(args)
        .current_dir(cwd)
        .env_remove("KDEPLOY_STDLIB")
        .output()
        .unwrap()
}

pub use super::text;

/// What importing an inventory gave: the import's own output, the file's
/// text and its value as `kdeploy eval --json` prints it.
pub struct Imported {
    pub run: Output,
    pub nix: String,
    pub value: Value,
}

/// Import `inventory` into a fresh project and evaluate the file; both
/// must succeed.
pub fn import(inventory: &Path) -> Imported {
    let project = tempfile::tempdir().unwrap();
    let run = kdeploy(&["import", "kubespray", inventory.to_str().unwrap(), "-o", "cluster.nix"], project.path());
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let nix = std::fs::read_to_string(project.path().join("cluster.nix")).unwrap();
    let ev = kdeploy(&["eval", "cluster.nix", "--json"], project.path());
    assert!(ev.status.success(), "the imported cluster does not evaluate:\n{}\n{nix}", text(&ev));
    Imported { run, nix, value: serde_json::from_slice(&ev.stdout).unwrap() }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

pub fn sample() -> PathBuf {
    repo().join("tests/import/kubespray-sample")
}

/// A copy of the sample inventory under its own name (the cluster is named
/// after the directory), changed by `edit`; the directory it is in.
pub fn sample_with(edit: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("kubespray-sample");
    copy_dir(&sample(), &inv);
    edit(&inv);
    (dir, inv)
}
